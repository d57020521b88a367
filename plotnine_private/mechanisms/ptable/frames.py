"""Validation of p-tables given as frames (R-style and ONS columns).

Each function checks one property of the rows, intervals or
probabilities; :func:`uniform_arrays` and :func:`ons_values` give the
validated content of a frame, from which
:meth:`~.table.PTable.from_frame` makes the table (this module knows no
table object, so the object can read frames without an import cycle;
:mod:`.io` handles formats and files).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .values import (
    BOUND_DIGITS,
    BOUND_SCALE,
    J_SCALES,
    TYPES,
    diagnostics_from,
)

ONS_COLUMNS = ["pcv", "ckey", "pvalue"]

# ---------------------------------------------------------------------------
# Column parsers
# ---------------------------------------------------------------------------


def _number_column(df: pd.DataFrame, col: str) -> np.ndarray:
    """Column ``col`` as finite floats, or raise naming the line."""
    values = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
    if not np.all(np.isfinite(values)):
        k = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ParameterError(
            f"p-table column {col!r} must be numeric; line {k + 1} has "
            f"{df[col].iloc[k]!r}"
        )
    return values


def _grid_column(df: pd.DataFrame, col: str, scale: int) -> np.ndarray:
    """Column ``col`` as integers in units of ``1 / scale``.

    ``scale = 1`` asks for whole numbers; ``10**4`` for the 4-decimal
    targets of magnitude tables.
    """
    values = _number_column(df, col) * scale
    units = np.round(values)
    # scaled decimals carry float error (0.1 * 10**4); whole numbers do not
    tol = 0 if scale == 1 else 1e-6 * np.maximum(1, np.abs(values))
    bad = np.abs(values - units) > tol
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        what = (
            "whole numbers"
            if scale == 1
            else f"numbers with at most {len(str(scale)) - 1} decimals"
        )
        raise ParameterError(
            f"p-table column {col!r} must hold {what}; line {k + 1} has "
            f"{df[col].iloc[k]!r}"
        )
    return units.astype(np.int64)


def _to_bound_units(x: np.ndarray) -> np.ndarray:
    """Probabilities rounded to 8 decimals, as integers
    (docs/ptables.md §5)."""
    return np.rint(np.round(x, BOUND_DIGITS) * BOUND_SCALE).astype(np.int64)


# ---------------------------------------------------------------------------
# R-style frames: one job per function
# ---------------------------------------------------------------------------


def _check_r_columns(cols: set) -> None:
    if (
        "i" not in cols
        or not cols & {"j", "v"}
        or not cols & {"p", "p_int_ub"}
    ):
        raise ParameterError(
            f"an R-style p-table needs columns i, j (or v) and p_int_ub "
            f"(or p); got {sorted(cols)}. ONS tables need pcv, ckey, pvalue"
        )


def _table_type(df: pd.DataFrame) -> str:
    """The single value of the ``type`` column (``"all"`` if absent)."""
    if "type" not in df.columns:
        return "all"
    types = pd.unique(df["type"].astype(str).str.strip().str.strip('"'))
    if len(types) != 1:
        raise ParameterError(
            f"a p-table has one type; found {list(types)} (split an "
            f"even/odd export into one table per type before loading)"
        )
    if types[0] not in TYPES:
        raise ParameterError(
            f"p-table column 'type' must be one of {TYPES}, got {types[0]!r}"
        )
    return str(types[0])


def _detect_kind(df: pd.DataFrame, type_: str) -> str:
    """Magnitude table if its targets are fractional or it is even/odd.

    A magnitude table with whole targets (``step=1``) cannot be told from
    a count table by its content; read it with ``kind="magnitudes"``.
    """
    if type_ != "all":
        return "magnitudes"
    for col in ("j", "v"):
        if col in df.columns:
            x = _number_column(df, col)
            if np.any(x != np.round(x)):
                return "magnitudes"
    return "counts"


def _targets(df: pd.DataFrame, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``i`` and targets ``j`` (units ``1/scale``); checks ``j=i+v``."""
    cols = set(df.columns)
    i = _grid_column(df, "i", 1)
    if "j" not in cols:
        return i, i * scale + _grid_column(df, "v", scale)
    j = _grid_column(df, "j", scale)
    if "v" in cols:
        v = _grid_column(df, "v", scale)
        bad = np.flatnonzero(j != i * scale + v)
        if len(bad):
            k = bad[0]
            raise ParameterError(
                f"p-table row i={i[k]}: j={j[k] / scale:g} is not i + v = "
                f"{i[k] + v[k] / scale:g}"
            )
    return i, j


def _entry_order(i, lb, ub) -> np.ndarray:
    """Stable order: by row, then by interval (upper, then lower bound)."""
    if ub is None:
        return np.argsort(i, kind="stable")
    if lb is None:
        return np.lexsort((ub, i))
    return np.lexsort((lb, ub, i))


def _upper_from_p(i: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Cumulative sums of ``p`` restarted at each row (sorted by row)."""
    cum = np.cumsum(p)
    starts = np.flatnonzero(np.r_[True, i[1:] != i[:-1]])
    offset = np.repeat(
        np.r_[0.0, cum[starts[1:] - 1]], np.diff(np.r_[starts, len(p)])
    )
    return cum - offset


def _bounds(i, first, p, lb, ub) -> tuple[np.ndarray, np.ndarray]:
    """Integer ``lb, ub``; ``ub`` from ``p`` and ``lb`` from ``ub`` if
    missing (Tau-Argus files carry only ``p_int_ub``)."""
    ub_int = _to_bound_units(_upper_from_p(i, p) if ub is None else ub)
    if lb is not None:
        return _to_bound_units(lb), ub_int
    prev_ub = np.r_[0, ub_int[:-1]]
    return np.where(first, 0, prev_ub), ub_int


def _check_rows(i: np.ndarray, kind: str) -> None:
    """Counts: rows 0..max_i without gaps. Magnitudes: 0 and 1 present."""
    rows = np.unique(i)
    if rows[0] < 0:
        raise ParameterError("p-table rows i must be >= 0; found negative i")
    if kind == "magnitudes":
        missing = sorted({0, 1} - set(rows.tolist()))
        if missing:
            raise ParameterError(
                f"a magnitude p-table needs rows i = 0 and i = 1 (R: 'There "
                f"must be 1 and D in icat'); missing i={missing}"
            )
        return
    if rows[0] != 0 or len(rows) != rows[-1] + 1:
        missing = sorted(set(range(int(rows[-1]) + 1)) - set(rows.tolist()))
        raise ParameterError(
            f"p-table rows must be i = 0, 1, ..., max_i without gaps; "
            f"missing i={missing} (a magnitude table from "
            f"create_num_ptable? read it with kind='magnitudes')"
        )


def _fail_row(i, k, what) -> None:
    raise ParameterError(f"p-table row i={i[k]}: {what}")


def _check_intervals(i, j, lb, ub, first, scale) -> None:
    """Each row tiles [0, 1) with consecutive, non-reversed intervals."""
    prev_ub = np.r_[0, ub[:-1]]
    for k in np.flatnonzero(j < 0)[:1]:
        _fail_row(
            i, k, f"target j={j[k] / scale:g} is negative (values stay >= 0)"
        )
    for k in np.flatnonzero(first & (lb != 0))[:1]:
        _fail_row(i, k, f"first interval starts at {lb[k] / BOUND_SCALE}, "
                  f"not 0")  # fmt: skip
    for k in np.flatnonzero(~first & (lb != prev_ub))[:1]:
        _fail_row(
            i,
            k,
            f"intervals overlap or leave a gap: [{lb[k] / BOUND_SCALE}, "
            f"{ub[k] / BOUND_SCALE}) follows an interval ending at "
            f"{prev_ub[k] / BOUND_SCALE}",
        )
    for k in np.flatnonzero(ub < lb)[:1]:
        _fail_row(
            i,
            k,
            f"interval [{lb[k] / BOUND_SCALE}, {ub[k] / BOUND_SCALE}) is "
            f"reversed",
        )


def _check_probabilities(i, j, p, lb, ub, scale) -> None:
    """Given ``p`` sum to 1 per row and match the interval widths."""
    if p is None:
        return
    sums = pd.Series(p).groupby(i).sum()
    bad = sums[(sums - 1).abs() > 1e-6]
    if len(bad):
        raise ParameterError(
            f"p-table row i={bad.index[0]}: probabilities sum to "
            f"{bad.iloc[0]:.8g}, not 1 (tolerance 1e-6)"
        )
    widths = (ub - lb) / BOUND_SCALE
    for k in np.flatnonzero(np.abs(widths - p) > 1e-6)[:1]:
        _fail_row(
            i,
            k,
            f"p={p[k]} at j={j[k] / scale:g} differs from the interval "
            f"width {widths[k]:.8f}",
        )


def _check_row_ends(i, ub, last) -> None:
    for k in np.flatnonzero(last & (ub != BOUND_SCALE))[:1]:
        _fail_row(i, k, f"last interval ends at {ub[k] / BOUND_SCALE}, not 1")


def _check_row_zero(i, j, lb, ub, scale) -> None:
    row0 = (i == 0) & (ub > lb)
    if np.any(j[row0] != 0):
        targets = sorted({x / scale for x in j[row0].tolist()})
        raise ParameterError(
            "p-table row i=0 must map 0 to 0 (empty cells stay empty); "
            f"found targets {targets}"
        )


def uniform_arrays(df: pd.DataFrame, kind) -> dict:
    """Validate an R-style / Tau-Argus frame: the arguments of a
    uniform-key table (``PTable._from_arrays``) but its ``params``."""
    cols = set(df.columns)
    _check_r_columns(cols)
    if len(df) == 0:
        raise ParameterError("the p-table is empty")
    type_ = _table_type(df)
    kind = _detect_kind(df, type_) if kind is None else kind
    scale = J_SCALES[kind]
    i, j = _targets(df, scale)
    p = _number_column(df, "p") if "p" in cols else None
    ub = _number_column(df, "p_int_ub") if "p_int_ub" in cols else None
    lb = _number_column(df, "p_int_lb") if "p_int_lb" in cols else None
    order = _entry_order(i, lb, ub)
    i, j = i[order], j[order]
    p, lb, ub = (None if x is None else x[order] for x in (p, lb, ub))
    first = np.r_[True, i[1:] != i[:-1]]
    last = np.r_[i[1:] != i[:-1], True]
    lb, ub = _bounds(i, first, p, lb, ub)
    _check_rows(i, kind)
    _check_intervals(i, j, lb, ub, first, scale)
    _check_probabilities(i, j, p, lb, ub, scale)
    _check_row_ends(i, ub, last)
    _check_row_zero(i, j, lb, ub, scale)
    v = j - i * scale
    used = ub > lb
    return {
        "i": i,
        "j": j,
        "lb": lb,
        "ub": ub,
        "type_": type_,
        "diagnostics": diagnostics_from(i, v / scale, (ub - lb) / BOUND_SCALE),
        "max_noise": np.abs(v[used]).max() / scale,
        "kind": kind,
    }


# ---------------------------------------------------------------------------
# ONS frames
# ---------------------------------------------------------------------------


def _ons_columns(df: pd.DataFrame) -> tuple[np.ndarray, ...]:
    missing = [c for c in ONS_COLUMNS if c not in df.columns]
    if missing:
        raise ParameterError(
            f"an ONS p-table needs columns pcv, ckey, pvalue; missing "
            f"{missing}"
        )
    pcv, ckey, pvalue = (_grid_column(df, c, 1) for c in ONS_COLUMNS)
    if len(pcv) == 0:
        raise ParameterError("the ONS p-table is empty")
    zero = pcv == 0
    if np.any(pvalue[zero] != 0):
        raise ParameterError("ONS p-table: pcv 0 must have pvalue 0")
    pcv, ckey, pvalue = pcv[~zero], ckey[~zero], pvalue[~zero]
    if len(pcv) == 0 or pcv.min() < 1 or ckey.min() < 0:
        raise ParameterError("ONS p-table: pcv must be >= 1 and ckey >= 0")
    return pcv, ckey, pvalue


def _ons_dense(pcv, ckey, pvalue) -> np.ndarray:
    """The ``(max_pcv + 1, K)`` array of deviations; every cell once."""
    M, K = int(pcv.max()), int(ckey.max()) + 1
    if M * K > 50_000_000:
        raise ParameterError(f"ONS p-table too large: {M} x {K} entries")
    seen = np.zeros((M + 1, K), dtype=np.int64)
    np.add.at(seen, (pcv, ckey), 1)
    if np.any(seen[1:] != 1):
        bad = np.argwhere(seen[1:] != 1)[0]
        n = seen[1 + bad[0], bad[1]]
        raise ParameterError(
            f"ONS p-table must list every pcv 1..{M} with every ckey "
            f"0..{K - 1} exactly once; pcv={bad[0] + 1}, ckey={bad[1]} "
            f"appears {n} times"
        )
    values = np.zeros((M + 1, K), dtype=np.int64)
    values[pcv, ckey] = pvalue
    return values


def _check_ons_nonnegative(values: np.ndarray) -> None:
    neg = np.argwhere(values + np.arange(len(values))[:, None] < 0)
    if len(neg):
        raise ParameterError(
            f"ONS p-table row pcv={neg[0][0]}: pvalue "
            f"{values[neg[0][0], neg[0][1]]} makes the count negative"
        )


def ons_values(df: pd.DataFrame) -> np.ndarray:
    """Validate an ONS frame: the dense ``(max_pcv + 1, K)`` deviations of
    an integer-key table (``PTable._from_ons``)."""
    values = _ons_dense(*_ons_columns(df))
    _check_ons_nonnegative(values)
    return values
