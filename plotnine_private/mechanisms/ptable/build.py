"""Construction of p-tables, as R ``ptable`` 1.0.0 builds them.

Each row ``i`` of a p-table is the solution of one maximum-entropy problem
(spec ``cell-key-method.md`` 1.3): over the targets ``j`` of the row, with
deviations ``v = j - i``,

    maximise  -sum p log p
    subject to  sum p = 1,  sum p v = 0,  sum p v**2 <= V (= V if optim=4),
                1e-8 <= p <= 1  (p(v=0) >= pstay),
                p non-decreasing from the most negative v up to v = 0
                (if mono).

:func:`create_cnt_ptable` builds count tables (rows ``0..ncat``, whole
targets, no target in ``1..js``); :func:`create_num_ptable` builds
magnitude tables (rows ``{0} | icat``, targets on a ``1/step`` grid). The
problem is strictly convex, so its unique optimum is what R finds through
``nloptr`` (SLSQP); we solve its three-variable dual by Newton's method
(:mod:`.maxent`, about 1 ms a row) and keep scipy's SLSQP as the
fallback. Tables are cached by parameters.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from ..errors import ParameterError, PTableVarianceWarning
from . import maxent
from .table import BOUND_DIGITS, BOUND_SCALE, J_DIGITS, J_SCALES, TYPES, PTable

__all__ = ["create_cnt_ptable", "create_num_ptable"]

#: Lower bound of every probability in the optimisation (docs/ptables.md §3).
EPSILON = 1e-8
#: Passes of the pstay relaxation loop (docs/ptables.md §3).
MAX_PASSES = 20
#: Relaxation of the pstay bound per pass (docs/ptables.md §3).
PSTAY_STEP = 0.05
#: R refuses magnitude tables with ``D * step >= 50`` (``pt_create_pParams``).
MAX_D_STEP = 50
#: A row whose variance falls short of V by more than this is reported
#: (R compares the variance rounded to 3 decimals with V).
VARIANCE_TOLERANCE = 5e-4


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


# ---------------------------------------------------------------------------
# The per-row maximum-entropy problem (docs/ptables.md §3)
# ---------------------------------------------------------------------------


def _support(i: int, spec: TableSpec) -> np.ndarray:
    """Targets ``j`` of row ``i``, in units of ``1 / J_SCALES[kind]``.

    Counts: ``max(i-D, 0) .. i+D`` without ``1..js``. Magnitudes: the same
    range in steps of ``1/step``, rounded to 4 decimals as R does.
    """
    low = max(i - spec.D, 0)
    n = (i + spec.D - low) * spec.step + 1
    if spec.kind == "counts":
        j = low + np.arange(n)
        return j[(j == 0) | (j > spec.js)]
    j = np.round(low + np.arange(n) / spec.step, J_DIGITS)
    return np.rint(j * J_SCALES["magnitudes"]).astype(np.int64)


def _constraints(v, V, zero, mono, optim) -> list[dict]:
    """SLSQP constraints: sum 1, mean 0, variance, monotonicity."""
    n = len(v)
    v2 = v * v
    eq_a = np.vstack([np.ones(n), v])
    eq_b = np.array([1.0, 0.0])
    out: list[dict[str, Any]] = [
        {
            "type": "eq",
            "fun": lambda p: eq_a @ p - eq_b,
            "jac": lambda p: eq_a,
        },
        {
            "type": "eq" if optim == 4 else "ineq",
            "fun": lambda p: np.array([V - v2 @ p]),
            "jac": lambda p: -v2[None, :],
        },
    ]
    if mono and zero > 0:
        # p_1 <= p_2 <= ... <= p_z, left side only (docs/ptables.md §3)
        mono_a = np.zeros((zero, n))
        for k in range(zero):
            mono_a[k, k] = -1.0
            mono_a[k, k + 1] = 1.0
        out.append(
            {
                "type": "ineq",
                "fun": lambda p: mono_a @ p,
                "jac": lambda p: mono_a,
            }
        )
    return out


def _entropy(p: np.ndarray) -> float:
    q = np.maximum(p, 1e-300)
    return float(np.sum(q * np.log(q)))


def _entropy_gradient(p: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(p, 1e-300)) + 1.0


def _solve_row(
    v: np.ndarray,
    V: float,
    lower: np.ndarray,
    zero: int,
    mono: bool,
    optim: int,
) -> np.ndarray:
    """Maximise the entropy of one row (docs/ptables.md §3): exactly in
    the dual (:mod:`.maxent`), or with scipy SLSQP if Newton fails."""
    v = v.astype(float)
    p = maxent.solve_row(v, V, lower, zero, mono, optim)
    if p is not None:
        return p
    n = len(v)
    res = minimize(
        _entropy,
        np.full(n, 1.0 / n),
        jac=_entropy_gradient,
        method="SLSQP",
        bounds=[(lo, 1.0) for lo in lower],
        constraints=_constraints(v, V, zero, mono, optim),
        options={"ftol": 1e-15, "maxiter": 10000},
    )
    return np.asarray(res.x, dtype=float)


def _violation(p, v, V, lower, optim) -> float:
    """Largest violation of the row's constraints by ``p``."""
    var = float(v * v @ p)
    return max(
        abs(float(v @ p)),
        abs(var - V) if optim == 4 else var - V,
        float(np.max(lower - p)),
    )


def _check_solution(p, v, V, lower, optim, i, spec: TableSpec) -> None:
    """R's abort (docs/ptables.md §3), plus a check that the constraints
    hold."""
    if (
        round(float(p.sum()), 10) != 1
        or _violation(p, v, V, lower, optim) > 1e-6
    ):
        raise ParameterError(
            f"The ptable can't be calculated without a violation of the "
            f"constraints (row i={i}, D={spec.D}, V={spec.V:g}, "
            f"js={spec.js}); try another specification (changing the "
            f"variance V is sufficient in most cases, or mono=False / "
            f"optim for this row)"
        )


def _optimise_row(i, v, lower, zero, r, spec: TableSpec):
    """Solve row ``i``, relaxing ``pstay`` until the variance is V.

    R runs up to 20 passes; each lowers the bound on p(v=0) by 0.05 and
    stops once ``round(variance, 3) == V`` (docs/ptables.md §3). An unchanged
    problem has the same (unique) optimum: R solves it again, we reuse it.
    Returns the probabilities and the number of passes.
    """
    V, optim, mono = spec.V, spec.optim[r], spec.mono[r]
    p = None
    for passes in range(1, MAX_PASSES + 1):
        changed = p is None
        if passes > 1 and zero >= 0:
            new = max(lower[zero] - PSTAY_STEP, EPSILON)
            changed = new != lower[zero]
            lower[zero] = new
        if changed:
            p = _solve_row(v, V, lower, zero, mono, optim)
            _check_solution(p, v, V, lower, optim, i, spec)
        if round(float(v * v @ p), 3) == V or i <= spec.js:
            break
    return p, passes


def _build_row(i: int, r: int, spec: TableSpec):
    """Targets (integer units), probabilities and diagnostics of row ``i``."""
    j = _support(i, spec)
    scale = J_SCALES[spec.kind]
    v = (j - i * scale) / scale
    zero_at = np.flatnonzero(j == i * scale)
    zero = int(zero_at[0]) if len(zero_at) else -1
    lower = np.full(len(v), EPSILON)
    if zero >= 0:
        lower[zero] = max(spec.pstay[r], EPSILON)
    p, passes = _optimise_row(i, v, lower, zero, r, spec)
    diag = (
        i,
        *(
            round(float(d), 5) + 0.0
            for d in (
                v @ p,
                v * v @ p,
                p.sum(),
                p[zero] if zero >= 0 else 0.0,
            )
        ),
        passes,
    )
    return j, p, diag


def _rounded_bounds(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative bounds rounded to 8 decimals, as integers
    (docs/ptables.md §5);
    the published ``p`` is then ``ub - lb``."""
    ub = np.cumsum(p)
    lb = ub - p
    ub_int = np.rint(np.round(ub, BOUND_DIGITS) * BOUND_SCALE)
    lb_int = np.rint(np.round(lb, BOUND_DIGITS) * BOUND_SCALE)
    return lb_int.astype(np.int64), ub_int.astype(np.int64)


def _params(spec: TableSpec) -> dict:
    """The ``params`` dict of a built table (scalars where constant)."""

    def compact(values):
        return values[0] if len(set(values)) == 1 else list(values)

    common: dict[str, Any] = {
        "D": spec.D,
        "V": spec.V,
        "pstay": None if not any(spec.pstay) else compact(spec.pstay),
        "optim": compact(spec.optim),
        "mono": compact(spec.mono),
    }
    if spec.kind == "counts":
        extra: dict[str, Any] = {"js": spec.js}
    else:
        extra = {"step": spec.step, "icat": list(spec.rows), "type": spec.type}
    return {
        **common,
        **extra,
        "ncat": len(spec.rows),
        "source": spec.source,
    }


@functools.lru_cache(maxsize=64)
def _create_cached(spec: TableSpec) -> PTable:
    """Build (once per parameters) the table of a validated spec."""
    i_all, j_all, lb_all, ub_all = [0], [0], [0], [BOUND_SCALE]
    diags = [(0, 0.0, 0.0, 1.0, 1.0, 0)]
    for r, i in enumerate(spec.rows):
        j, p, diag = _build_row(i, r, spec)
        lb, ub = _rounded_bounds(p)
        i_all.extend([i] * len(j))
        j_all.extend(j.tolist())
        lb_all.extend(lb.tolist())
        ub_all.extend(ub.tolist())
        diags.append(diag)
    diagnostics = pd.DataFrame(
        diags, columns=["i", "p_mean", "p_var", "p_sum", "p_stay", "iter"]
    )
    return PTable._from_arrays(
        i=np.array(i_all, dtype=np.int64),
        j=np.array(j_all, dtype=np.int64),
        lb=np.array(lb_all, dtype=np.int64),
        ub=np.array(ub_all, dtype=np.int64),
        type_=spec.type,
        params=_params(spec),
        diagnostics=diagnostics,
        max_noise=spec.D,
        kind=spec.kind,
    )


# ---------------------------------------------------------------------------
# Variance check (rows that cannot reach V)
# ---------------------------------------------------------------------------


def _variance_advice(spec: TableSpec) -> str:
    """What to change so that the widest row can reach V."""
    # the widest row is symmetric; max entropy spreads it at most to the
    # uniform distribution on -D..D (step 1/step): variance D(D+1/s)/3
    s = spec.step
    need = spec.D
    # the smallest D whose bound reaches V (a row at V is not short)
    while need * (need + 1 / s) / 3 < spec.V - VARIANCE_TOLERANCE:
        need += 1
    reach = spec.D * (spec.D + 1 / s) / 3
    return (
        f"With deviations bounded by D={spec.D}, a row reaches at most "
        f"D*(D+1/step)/3 = {reach:.4g}; use a larger D (D >= {need}) or a "
        f"smaller V"
    )


@functools.lru_cache(maxsize=64)
def _variance_shortfall(spec: TableSpec) -> str | None:
    """The warning text if the widest row of ``spec`` ends below V.

    The last row serves every value >= max_i, i.e. most cells. Rows near 0
    may end below V by design (targets are cut at 0, and monotonicity
    holds them), as in R; they are listed in the message when the last
    row is short too, and always in ``PTable.diagnostics``. Cached with
    the table, so a repeated call costs a dictionary lookup.
    """
    diag = _create_cached(spec)._diagnostics
    low = spec.V - VARIANCE_TOLERANCE
    short = diag[(diag["i"] > 0) & (diag["p_var"] < low)]
    if short.empty or short["i"].iloc[-1] != spec.rows[-1]:
        return None
    last = float(short["p_var"].iloc[-1])
    gap = spec.V - last
    rows = ", ".join(str(int(i)) for i in short["i"])
    return (
        f"{spec.source}(D={spec.D}, V={spec.V:g}): the noise variance "
        f"stays below V: {last:.4g} in the last row i={spec.rows[-1]} "
        f"(used for every larger value), short by {gap:.4g} "
        f"({gap / spec.V:.0%} of V); rows below V: i = {rows}. "
        f"{_variance_advice(spec)}. The table is kept as R ptable builds "
        f"it; see PTable.diagnostics."
    )


def _build(spec: TableSpec) -> PTable:
    """The (cached) table of ``spec``; warns on every call if it cannot
    reach V (R only reports it in its diagnostics)."""
    message = _variance_shortfall(spec)
    if message:
        warnings.warn(message, PTableVarianceWarning, stacklevel=3)
    return _create_cached(spec)


# ---------------------------------------------------------------------------
# Public constructors
# ---------------------------------------------------------------------------


def create_cnt_ptable(
    D: int,
    V: float,
    js: int = 0,
    pstay: float | Sequence[float] | None = None,
    optim: int | Sequence[int] = 1,
    mono: bool | Sequence[bool] = True,
) -> PTable:
    """Build a count p-table exactly like R ``ptable::create_cnt_ptable``.

    Rows ``i = 0..ncat`` (``ncat = D`` if ``js == 0`` else ``D + js + 1``);
    row ``i >= 1`` spreads its probability over targets ``j = max(i-D, 0)
    .. i+D`` without ``1..js``, maximising entropy subject to mean 0,
    variance <= ``V``, probabilities >= 1e-8 and (if ``mono``) probabilities
    non-decreasing from the most negative deviation up to 0. The last row
    applies to every count >= ``ncat``. Results are cached by parameters.

    Parameters
    ----------
    D : int
        Maximum absolute noise, a whole number > 0.
    V : float
        Noise variance (an upper bound; an equality with ``optim=4``).
    js : int
        Blocking threshold: perturbed counts never land in ``1..js``.
        Requires ``D > js`` (for ``js > 0``) and ``V > max_i i*(js+1-i)``
        (js=2: V > 2).
    pstay : float, sequence of float or None
        Lower bound(s) in (0, 1) on the probability of no change, one
        value or one per row ``i = 1..ncat``. It is relaxed by 0.05 per
        pass (up to 20 passes) until the rounded variance equals ``V``.
    optim : int or sequence of int
        1, 2, 3 (variance inequality) or 4 (variance equality), per row.
    mono : bool or sequence of bool
        Left-side monotonicity constraint, per row.

    Returns
    -------
    PTable
        Immutable table of kind ``"counts"``; see :attr:`PTable.table`
        and :attr:`PTable.diagnostics`.

    Raises
    ------
    ParameterError
        For invalid or infeasible parameters, before any optimisation.

    Warns
    -----
    PTableVarianceWarning
        When rows end with a variance below ``V`` (e.g. ``D=3, V=50``).

    Examples
    --------
    >>> pt = create_cnt_ptable(D=2, V=0.9)
    >>> pt.table.query("i == 1")["p"].round(4).tolist()
    [0.3625, 0.3625, 0.1875, 0.0875]
    >>> pt.max_i, pt.max_noise
    (2, 2)
    """
    return _build(_count_spec(D, V, js, pstay, optim, mono))


def create_num_ptable(
    D: int,
    V: float,
    pstay: float | Sequence[float] | None = None,
    optim: int | Sequence[int] = 1,
    mono: bool | Sequence[bool] = True,
    step: int = 2,
    icat: Sequence[int] | None = None,
    type: Literal["all", "even", "odd"] = "all",
) -> PTable:
    """Build a magnitude p-table exactly like R ``ptable::create_num_ptable``.

    Rows ``i`` in ``{0} | icat``; row ``i >= 1`` spreads its probability
    over the targets ``j = max(i-D, 0), max(i-D, 0) + 1/step, ..., i+D``
    (rounded to 4 decimals), maximising entropy subject to mean 0,
    variance <= ``V`` (equality with ``optim=4``), probabilities >= 1e-8
    and (if ``mono``) left-side monotonicity. cellKey reads the deviation
    ``v`` of a cell from the row of its ratio ``|x / x_delta|``,
    interpolating between rows (:meth:`PTable.magnitude_noise`).

    Parameters
    ----------
    D : int
        Maximum absolute noise factor, a whole number > 0.
    V : float
        Noise variance.
    pstay : None
        Accepted for R's signature; ignored with a warning (R ptable 1.0.0
        ignores it for magnitude tables). Values are still checked.
    optim : int or sequence of int
        1, 2, 3 (variance inequality) or 4 (equality), one or one per
        row of ``icat``.
    mono : bool or sequence of bool
        Left-side monotonicity constraint, one or one per row of ``icat``.
    step : int
        Targets per unit of ``v``; ``D * step`` must be below 50.
    icat : sequence of int
        The rows ``i`` to build; must hold 1 and ``D``, none above ``D``.
    type : {"all", "even", "odd"}
        The ``type`` column (separate tables by parity of the number of
        contributors).

    Returns
    -------
    PTable
        Immutable table of kind ``"magnitudes"``.

    Raises
    ------
    ParameterError
        For invalid parameters (e.g. "There must be 1 and 'D' in 'icat'").

    Warns
    -----
    PTableVarianceWarning
        When rows end with a variance below ``V``.

    Examples
    --------
    >>> pt = create_num_ptable(D=2, V=1, step=2, icat=[1, 2])
    >>> pt.table.query("i == 1")["j"].tolist()
    [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    >>> len(create_num_ptable(D=10, V=3, step=2, optim=[4, 1, 1],
    ...                       icat=[1, 5, 10]).table)
    96
    """
    return _build(_num_spec(D, V, pstay, optim, mono, step, icat, type))
