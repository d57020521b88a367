"""Constants and small value helpers of p-tables (no table object).

The integer grids of bounds and targets, the formats and kinds of
table (:func:`check_choice`), the ONS row mapping :func:`ons_pcv`,
argument conversion for lookups and the diagnostics frame (moved out
of :mod:`.table`, which holds :class:`~.table.PTable`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..errors import ParameterError

#: Interval bounds are rounded to this many decimals (docs/ptables.md §5).
BOUND_DIGITS = 8
#: Integer scale of the interval bounds: bounds are ``k / BOUND_SCALE``.
BOUND_SCALE = 10**BOUND_DIGITS
#: Magnitude targets ``j`` and deviations ``v`` carry 4 decimals (R
#: ``pt_create_pTable`` rounds them so); they are held as ``k / 10**4``.
J_DIGITS = 4
#: Rows 501..750 of an ONS table are reused with this period
#: (docs/ptables.md §5).
ONS_CYCLE = 250
#: Columns of an R-style table, in R's order (docs/ptables.md §5).
TABLE_COLUMNS = ["i", "j", "p", "v", "p_int_lb", "p_int_ub", "type"]
#: Values of the ``type`` column (R ``ptable``: parity of contributors).
TYPES = ("all", "even", "odd")
#: The two kinds of table and the scale of their targets ``j``.
J_SCALES = {"counts": 1, "magnitudes": 10**J_DIGITS}
#: The text formats a table is read from and written to.
FORMATS = ("r", "tau_argus", "ons")
#: The kinds of table, as ``kind=`` names them.
KINDS = tuple(J_SCALES)
#: Columns of a Tau-Argus count table and of a magnitude table (R
#: ``pt_export(SDCtool = "TauArgus")``).
TAU_ARGUS_COLUMNS = ["i", "j", "p", "v", "p_int_ub"]
TAU_ARGUS_MAGNITUDES = ["i", "j", "p", "v", "p_int_ub", "type"]


# ---------------------------------------------------------------------------
# Small pure helpers
# ---------------------------------------------------------------------------


def check_choice(value, name: str, choices: tuple, none_ok: bool) -> None:
    """Refuse ``value`` unless it is one of ``choices`` (or None, if
    ``none_ok``), naming the parameter.

    >>> check_choice("r", "format", FORMATS, none_ok=False)
    """
    if value is None and none_ok:
        return
    if value not in choices:
        extra = " or None" if none_ok else ""
        raise ParameterError(
            f"{name} must be one of {choices}{extra}, got {value!r}"
        )


def ons_pcv(
    counts: Any, max_pcv: int = 750, cycle: int = ONS_CYCLE
) -> np.ndarray:
    """Map counts to ONS p-table rows (``pcv``), spec section 4.3.

    ``pcv = count`` for ``count <= max_pcv``; larger counts cycle through
    the last ``cycle`` rows ``max_pcv - cycle + 1 .. max_pcv``. With the
    ONS defaults (750, 250) this is ``((count - 1) mod 250) + 501``. For a
    table with fewer than ``cycle`` rows the whole table is the cycle.

    Parameters
    ----------
    counts : array of int
        Counts (>= 0).
    max_pcv : int
        Largest row of the ONS table.
    cycle : int
        Period of the reused rows.

    Returns
    -------
    numpy.ndarray of int64
        The row ``pcv`` of each count.

    Examples
    --------
    >>> ons_pcv([0, 1, 750, 751, 1000, 1001]).tolist()
    [0, 1, 750, 501, 750, 501]
    """
    counts = np.asarray(counts, dtype=np.int64)
    cycle = min(int(cycle), int(max_pcv))
    start = max_pcv - cycle + 1
    big = counts > max_pcv
    out = counts.copy()
    out[big] = (counts[big] - start) % cycle + start
    return out


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _as_int_array(x: Any, name: str) -> np.ndarray:
    """``x`` as int64, refusing fractions, NaN and non-numeric input."""
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        return a.astype(np.int64, copy=False)
    if a.dtype == object:
        try:
            a = a.astype(float)
        except (TypeError, ValueError):
            raise ParameterError(
                f"{name} must be whole numbers, got dtype object"
            ) from None
    elif a.dtype.kind != "f":
        raise ParameterError(
            f"{name} must be an integer array, got dtype {a.dtype}"
        )
    if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
        raise ParameterError(
            f"{name} must be finite whole numbers; found non-integer or "
            f"NaN values (sum integer record keys exactly, see "
            f"record_key_integers)"
        )
    return a.astype(np.int64)


def _as_ratio_array(x: Any) -> np.ndarray:
    """Magnitude ratios ``|x / x_delta|`` as finite floats >= 0."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(
            "ratios must be numbers >= 0 (|value / x_delta| per cell)"
        ) from None
    if not np.all(np.isfinite(a)) or (a.size and a.min() < 0):
        raise ParameterError(
            "ratios must be finite numbers >= 0 (|value / x_delta| per "
            "cell); found negative, infinite or NaN values"
        )
    return a


def _broadcast(a: np.ndarray, b: np.ndarray, names: str) -> tuple:
    try:
        return np.broadcast_arrays(a, b)
    except ValueError:
        raise ParameterError(
            f"{names} must have the same shape (one value per cell); got "
            f"{a.shape} and {b.shape}"
        ) from None


def diagnostics_from(i: Any, v: Any, p: Any) -> pd.DataFrame:
    """Per-row checks of a table, as R ``pt_check`` reports them.

    Parameters
    ----------
    i, v, p : array-like
        Row, deviation and probability of each entry.

    Returns
    -------
    pandas.DataFrame
        ``i, p_mean, p_var, p_sum, p_stay`` (rounded to 5 decimals) and
        ``iter`` (missing: the number of solver passes is unknown).

    Examples
    --------
    >>> diagnostics_from([0, 1, 1], [0, -1, 1], [1, 0.5, 0.5])[
    ...     ["i", "p_mean", "p_var", "p_stay"]].values.tolist()
    [[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0]]
    """
    frame = pd.DataFrame({"i": i, "v": v, "p": p})
    frame["pv"] = frame["p"] * frame["v"]
    frame["pv2"] = frame["pv"] * frame["v"]
    frame["stay"] = np.where(frame["v"] == 0, frame["p"], 0.0)
    g = frame.groupby("i", sort=True)
    out = pd.DataFrame(
        {
            "p_mean": g["pv"].sum(),
            "p_var": g["pv2"].sum(),
            "p_sum": g["p"].sum(),
            "p_stay": g["stay"].sum(),
        }
    ).round(5)
    out["iter"] = pd.array([pd.NA] * len(out), dtype="Int64")
    return out.reset_index()


def _ons_runs(values: np.ndarray):
    """Runs of equal deviations along the keys of each ONS row."""
    vals = values[1:]
    M, K = vals.shape
    start = np.ones((M, K), dtype=bool)
    start[:, 1:] = vals[:, 1:] != vals[:, :-1]
    r, c = np.nonzero(start)
    nxt = np.r_[c[1:], K]
    nxt[np.r_[r[1:] != r[:-1], True]] = K
    i = np.r_[0, r + 1].astype(np.int64)
    lb = np.r_[0, c].astype(np.int64)
    ub = np.r_[K, nxt].astype(np.int64)
    j = i + np.r_[0, vals[r, c]]
    return i, j, lb, ub


def _number(x: float) -> int | float:
    """A whole float as int (``5.0 -> 5``), others unchanged."""
    return int(x) if float(x).is_integer() else float(x)
