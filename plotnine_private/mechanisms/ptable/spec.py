"""Validated parameters of a p-table (docs/ptables.md §1, §2, §3).

:class:`TableSpec` is the hashable form of the arguments of
:func:`~.build.create_cnt_ptable` and :func:`~.build.create_num_ptable`,
checked here before any optimisation (moved out of :mod:`.build`, which
solves the rows).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError
from .values import TYPES

#: R refuses magnitude tables with ``D * step >= 50`` (``pt_create_pParams``).
MAX_D_STEP = 50


@dataclass(frozen=True)
class TableSpec:
    """Validated, hashable parameters of one table (R ``ptable_params``)."""

    kind: str  # "counts" or "magnitudes"
    D: int
    V: float
    js: int
    step: int
    rows: tuple[int, ...]  # the positive rows i (R icat)
    pstay: tuple[float, ...]  # per row; 0.0 means no bound
    optim: tuple[int, ...]
    mono: tuple[bool, ...]
    type: str

    @property
    def source(self) -> str:
        return (
            "create_cnt_ptable"
            if self.kind == "counts"
            else "create_num_ptable"
        )


# ---------------------------------------------------------------------------
# Parameter validation (docs/ptables.md §1, §2, §3)
# ---------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(
        value, (int, float, np.integer, np.floating)
    )


def _whole(value: Any, name: str, minimum: int, hint: str) -> int:
    """Return ``value`` as an int, or raise naming ``name``."""
    ok = (
        _is_number(value)
        and math.isfinite(value)
        and float(value).is_integer()
        and value >= minimum
    )
    if not ok:
        raise ParameterError(
            f"{name} must be a whole number >= {minimum}, got {value!r}; "
            f"{hint}"
        )
    return int(value)


def _variance(V: Any) -> float:
    if not _is_number(V):
        raise ParameterError(
            f"V must be a positive number (the noise variance), got {V!r}"
        )
    if not (math.isfinite(V) and V > 0):
        raise ParameterError(
            f"V must be a positive finite number (the noise variance), "
            f"got {V!r}; e.g. V=2.01"
        )
    return float(V)


def _check_blocking(D: int, V: float, js: int) -> None:
    """Refuse blocking thresholds no table can satisfy (docs/ptables.md §3)."""
    if js == 0:
        return
    if js >= D:
        # Row 1 must reach js+1 (needs D >= js), and row js+1 needs a
        # downward target: 0 is reachable only if D >= js+1, and js+1-D..js
        # are blocked. Otherwise the solver fails (docs/ptables.md §3;
        # R states only D >= js, yet D == js is infeasible at row js+1).
        raise ParameterError(
            f"D={D} must be greater than js={js}: a count of {js + 1} can "
            f"only move down to 0, which needs D >= {js + 1}; use "
            f"D >= {js + 1} or a smaller js"
        )
    # A blocked row i <= js can only move to 0 or to >= js+1, so its
    # variance is at least i*(js+1-i) (docs/ptables.md §3, feasibility rule).
    need = max(i * (js + 1 - i) for i in range(1, js + 1))
    if need >= V:
        raise ParameterError(
            f"V={V:g} is infeasible with js={js}: a blocked count i in "
            f"1..{js} must move to 0 or above {js}, so its variance is "
            f"at least i*(js+1-i), which is {need} at its largest; use "
            f"V > {need} or a smaller js"
        )


def _rows_text(rows: tuple[int, ...]) -> str:
    """``1..8`` for a run of rows, ``1, 3, 5`` otherwise."""
    if rows == tuple(range(1, len(rows) + 1)) and len(rows) > 2:
        return f"1..{len(rows)}"
    return ", ".join(map(str, rows))


def _per_row(value: Any, name: str, rows: tuple[int, ...]) -> tuple:
    """Expand a scalar or a one-per-row vector to one value per row."""
    ncat = len(rows)
    if isinstance(value, (str, bytes)) or not np.iterable(value):
        return (value,) * ncat
    values = tuple(np.asarray(value).tolist())
    if len(values) == 1:
        return values * ncat
    if len(values) != ncat:
        raise ParameterError(
            f"{name} has {len(values)} values but the table has ncat="
            f"{ncat} positive rows (i = {_rows_text(rows)}); give one "
            f"value or {ncat} values"
        )
    return values


def _pstay_values(pstay: Any, rows: tuple[int, ...]) -> tuple[float, ...]:
    """Lower bounds on p(v=0) per row; None / NaN mean no bound (0.0)."""
    if pstay is None:
        return (0.0,) * len(rows)
    clean = []
    for p in _per_row(pstay, "pstay", rows):
        if p is None or (isinstance(p, float) and math.isnan(p)):
            clean.append(0.0)  # NA: no bound, as in R
            continue
        if not _is_number(p) or not (0 < float(p) < 1):
            raise ParameterError(
                f"pstay must lie strictly between 0 and 1 (a lower bound "
                f"on the probability that a value stays unchanged), got "
                f"{p!r}; use e.g. pstay=0.5 or None"
            )
        clean.append(float(p))
    return tuple(clean)


def _optim_values(optim: Any, rows: tuple[int, ...]) -> tuple[int, ...]:
    values = _per_row(optim, "optim", rows)
    for o in values:
        if not _is_number(o) or o not in (1, 2, 3, 4):
            raise ParameterError(
                f"optim must be 1, 2, 3 or 4 (4 makes the variance an "
                f"equality), got {o!r}"
            )
    return tuple(int(o) for o in values)


def _mono_values(mono: Any, rows: tuple[int, ...]) -> tuple[bool, ...]:
    values = _per_row(mono, "mono", rows)
    for m in values:
        if not isinstance(m, (bool, np.bool_)):
            raise ParameterError(
                f"mono must be True or False (or one per row), got {m!r}"
            )
    return tuple(bool(m) for m in values)


def _icat_values(icat: Any, D: int) -> tuple[int, ...]:
    """R ``icat``: sorted unique whole rows, holding 1 and D, none > D."""
    if icat is None or isinstance(icat, (str, bytes)):
        raise ParameterError(
            f"icat must list the rows i of the magnitude table, with 1 and "
            f"D={D} among them (R: \"There must be 1 and 'D' in 'icat'\"), "
            f"got {icat!r}; e.g. icat=[1, {D}]"
        )
    values = icat if np.iterable(icat) else [icat]
    rows = sorted(
        {_whole(x, "icat", 1, "icat lists rows i >= 1") for x in values}
    )
    if 1 not in rows or D not in rows:
        fixed = sorted({1, D, *(r for r in rows if r <= D)})
        raise ParameterError(
            f"There must be 1 and 'D' in 'icat' (R ptable): icat={rows} "
            f"with D={D}; use e.g. icat={fixed}"
        )
    if rows[-1] > D:
        raise ParameterError(
            f"The largest entry of 'icat' can be 'D' (R ptable): icat="
            f"{rows} has {rows[-1]} > D={D}; drop it or raise D"
        )
    return tuple(rows)


def _step_value(step: Any, D: int) -> int:
    step = _whole(
        step, "step", 1, "step is the number of targets per unit, e.g. step=2"
    )
    if D * step >= MAX_D_STEP:
        largest = (MAX_D_STEP - 1) // D
        fix = (
            f"use step <= {largest} or a smaller D"
            if largest >= 1
            else f"use D < {MAX_D_STEP}"
        )
        raise ParameterError(
            f"D * step must be below {MAX_D_STEP} (R ptable: 'Please reduce "
            f"either D or step'), got D={D}, step={step} (D * step = "
            f"{D * step}); {fix}"
        )
    return step


def _type_value(type: Any) -> str:
    if type not in TYPES:
        raise ParameterError(
            f"type must be one of {TYPES} (the 'type' column: parity of the "
            f"number of contributors), got {type!r}"
        )
    return str(type)


def _count_spec(D, V, js, pstay, optim, mono) -> TableSpec:
    """Validate ``create_cnt_ptable`` parameters (docs/ptables.md §1, §3)."""
    D = _whole(D, "D", 1, "D is the maximum absolute noise, e.g. D=5")
    js = _whole(js, "js", 0, "js is the blocking threshold, e.g. js=0")
    V = _variance(V)
    _check_blocking(D, V, js)
    ncat = D if js == 0 else D + js + 1
    rows = tuple(range(1, ncat + 1))
    return TableSpec(
        kind="counts",
        D=D,
        V=V,
        js=js,
        step=1,
        rows=rows,
        pstay=_pstay_values(pstay, rows),
        optim=_optim_values(optim, rows),
        mono=_mono_values(mono, rows),
        type="all",
    )


def _num_spec(D, V, pstay, optim, mono, step, icat, type) -> TableSpec:
    """Validate ``create_num_ptable`` parameters (docs/ptables.md §2)."""
    D = _whole(D, "D", 1, "D is the maximum absolute noise factor, e.g. D=5")
    V = _variance(V)
    rows = _icat_values(icat, D)
    step = _step_value(step, D)
    type = _type_value(type)
    if any(_pstay_values(pstay, tuple(range(np.size(pstay))))):
        # R validates pstay, then drops it for magnitude tables
        warnings.warn(
            "pstay is ignored for magnitude tables (as in R ptable "
            "1.0.0); leave pstay=None",
            UserWarning,
            stacklevel=3,
        )
    return TableSpec(
        kind="magnitudes",
        D=D,
        V=V,
        js=0,
        step=step,
        rows=rows,
        pstay=(0.0,) * len(rows),
        optim=_optim_values(optim, rows),
        mono=_mono_values(mono, rows),
        type=type,
    )
