"""Parameter checks of the private PCA, beside the package's shared ones.

The generic checks (``eps``, ``delta``, ``seed``, choices) are those of
:mod:`plotnine_private.validation`; this module adds what only a PCA has:
budget shares, bins, axes, feature columns, groups, public scales and
given directions. Every error names the function, the parameter, the bad
value and a fix.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..cells import categorical_dimension
from ..door import declared_levels
from ..mechanisms.finite import all_finite
from ..validation import (
    check_flat_columns,
    fail,
    is_integer,
    is_polars_frame,
    validate_choice,
    validate_delta,
    validate_eps,
)

__all__ = [
    "METHODS",
    "Groups",
    "as_frame",
    "check_axes",
    "check_bins",
    "check_budget",
    "check_choices",
    "check_directions",
    "check_k",
    "check_scale",
    "check_shares",
    "feature_columns",
    "group_labels",
    "groups_from",
    "numeric_matrix",
]

METHODS = ("sparse", "add")
CALIBRATIONS = ("analytic", "classic")
ESTIMATORS = ("auto", "exact", "incomplete")


def _real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def check_budget(fn: str, eps: Any, delta: Any) -> tuple[float, float]:
    """``eps > 0`` and ``0 < delta < 1`` (a PCA always spends delta: the
    directions and the histogram are Gaussian or thresholded)."""
    if delta is None:
        raise fail(
            fn,
            "delta is required: the PCA's Gaussian directions and its "
            "histogram spend it; a number in (0, 1) such as 1e-5 (at most "
            "1/n).",
        )
    return validate_eps(fn, eps), validate_delta(fn, delta)


def check_shares(
    fn: str, shares: Any, needed: tuple[str, ...]
) -> dict[str, float]:
    """Shares of the budget per component; default equal shares.

    >>> check_shares("f", None, ("loading", "score"))
    {'loading': 0.5, 'score': 0.5}
    """
    if shares is None:
        return {k: 1 / len(needed) for k in needed}
    if not isinstance(shares, Mapping):
        raise fail(
            fn,
            f"shares must be a dict with keys {needed}, got {shares!r}; e.g. "
            f"shares={dict.fromkeys(needed, round(1 / len(needed), 3))}.",
        )
    if set(shares) != set(needed):
        raise fail(
            fn,
            f"shares must have exactly the keys {needed}, got "
            f"{tuple(shares)}.",
        )
    vals = {k: shares[k] for k in needed}
    if any(not _real(v) or not v > 0 for v in vals.values()):
        raise fail(fn, f"shares must be numbers > 0, got {shares!r}.")
    if abs(sum(vals.values()) - 1) > 1e-8:
        raise fail(
            fn,
            f"shares must sum to 1, got {sum(vals.values())!r} ({shares!r}).",
        )
    return {k: float(v) for k, v in vals.items()}


def check_bins(fn: str, bins: Any) -> tuple[int, int]:
    """``(m_x, m_y)`` positive integers; an int means a square grid.

    >>> check_bins("f", 20)
    (20, 20)
    """
    if _real(bins):
        bins = (bins, bins)
    try:
        mx, my = bins
    except (TypeError, ValueError):
        raise fail(
            fn, f"bins must be an int or a pair of ints, got {bins!r}."
        ) from None
    for b in (mx, my):
        if not _real(b) or not float(b).is_integer() or b < 1:
            raise fail(
                fn,
                f"bins must be positive integers, got {bins!r}; e.g. "
                "bins=(20, 20).",
            )
    return int(mx), int(my)


def check_axes(fn: str, axes: Any, k: int) -> tuple[int, int]:
    """Two different components in ``1..k``."""
    try:
        a, b = axes
    except (TypeError, ValueError):
        raise fail(
            fn, f"axes must be two component numbers, got {axes!r}."
        ) from None
    for v in (a, b):
        if not is_integer(v):
            raise fail(fn, f"axes must be integers, got {axes!r}.")
        if not 1 <= v <= k:
            raise fail(
                fn,
                f"axes must lie in 1..{k} (the number of components), got "
                f"{axes!r}.",
            )
    if a == b:
        raise fail(fn, f"axes must be two different components, got {axes!r}.")
    return int(a), int(b)


def check_k(fn: str, k: Any, p: int) -> int:
    """Number of private eigenvalues, in ``2..p`` (default ``p``)."""
    if k is None:
        return p
    if not is_integer(k) or not (2 <= k <= p):
        raise fail(fn, f"k must be an integer in [2, {p}], got {k!r}.")
    return int(k)


def check_choices(fn: str, method: Any, calibration: Any, estimator: Any):
    """The histogram method, Gaussian calibration and Kendall estimator."""
    validate_choice(fn, "method", method, METHODS)
    validate_choice(fn, "calibration", calibration, CALIBRATIONS)
    validate_choice(fn, "estimator", estimator, ESTIMATORS)


def check_scale(fn: str, scale: Any, p: int) -> np.ndarray | None:
    """Public positive column scales (never sample SDs)."""
    if scale is None:
        return None
    s = np.asarray(scale, dtype=float).ravel()
    if s.size != p or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise fail(
            fn,
            f"scale must be {p} public positive numbers (one per column), "
            f"got {scale!r}. Never pass sample SDs: they are not private.",
        )
    return s


def check_directions(
    fn: str, directions: Any, columns: list[str]
) -> np.ndarray:
    """A ``p x p`` orthonormal matrix released before (public)."""
    p = len(columns)
    if isinstance(directions, pd.DataFrame):
        if list(map(str, directions.index)) not in (
            columns,
            [f"X{i + 1}" for i in range(p)],
        ) and not isinstance(directions.index, pd.RangeIndex):
            raise fail(
                fn,
                "directions row names must equal the feature columns "
                f"{columns!r}.",
            )
        directions = directions.to_numpy(dtype=float)
    v = np.asarray(directions, dtype=float)
    if v.shape != (p, p) or not np.all(np.isfinite(v)):
        raise fail(
            fn,
            f"directions must be a finite {p}x{p} orthonormal matrix, got "
            f"shape {v.shape}.",
        )
    if np.abs(v.T @ v - np.eye(p)).max() > 1e-6:
        raise fail(
            fn, "directions must be orthonormal (V^T V = I within 1e-6)."
        )
    return v


def _numeric(col: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(col) and not (
        pd.api.types.is_bool_dtype(col)
    )


def as_frame(fn: str, data: Any) -> pd.DataFrame:
    """A DataFrame from a DataFrame or a 2-D array (columns X1..Xp)."""
    check_flat_columns(fn, data)
    if isinstance(data, pd.DataFrame):
        return data
    if hasattr(data, "declared_levels"):  # a table in an engine
        raise fail(
            fn,
            "the private PCA needs the rows (its directions and scores "
            "are not group-by counts), which a table in an engine does "
            "not hand out: collect the feature columns into a pandas or "
            "polars DataFrame and pass that.",
        )
    if is_polars_frame(data):
        return data.to_pandas()  # a polars DataFrame works as pandas does
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise fail(
            fn,
            "data must be a DataFrame or a 2-D array, got an array of "
            f"shape {arr.shape}.",
        )
    return pd.DataFrame(
        arr, columns=[f"X{i + 1}" for i in range(arr.shape[1])]
    )


def feature_columns(
    fn: str,
    df: pd.DataFrame,
    columns: Sequence[str] | str | None,
    exclude: Sequence[str] = (),
    where: str = "the data",
) -> list[str]:
    """The numeric feature columns: given, or every numeric column not in
    ``exclude``."""
    if columns is None:
        return [c for c in df.columns if c not in exclude and _numeric(df[c])]
    if isinstance(columns, str):
        columns = [columns]
    columns = list(columns)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise fail(
            fn,
            f"columns {missing!r} are not in {where}; available: "
            f"{list(map(str, df.columns))!r}.",
        )
    bad = [c for c in columns if not _numeric(df[c])]
    if bad:
        raise fail(
            fn,
            f"columns {bad!r} are not numeric; PCA needs numeric "
            "columns (encode categories yourself or drop them).",
        )
    if len(set(columns)) != len(columns):
        raise fail(fn, f"columns has duplicates: {columns!r}.")
    return columns


def numeric_matrix(
    fn: str, df: pd.DataFrame, columns: list
) -> tuple[np.ndarray, list[str]]:
    """The ``(n, p)`` feature matrix: at least 2 columns and 2 rows.

    A missing or infinite value is replaced by 0 (in the data's units,
    before any public ``scale``): a rule, not an error, because an error
    would tell whether some record has one, and dropping the row would
    change the public ``n``. Replacing one record's value is a
    neighbouring data set, so the privacy guarantee covers it.
    """
    if len(columns) < 2:
        raise fail(
            fn,
            f"PCA needs at least 2 numeric columns, got {list(columns)!r}.",
        )
    x = df[list(columns)].to_numpy(dtype=float)
    if x.shape[0] < 2:
        raise fail(fn, f"data must have at least 2 rows, got {x.shape[0]}.")
    # no copy when finite and already in one block (the layout, hence the
    # BLAS path of x @ v, is then the one np.where would give)
    if not (x.flags.forc and all_finite(x)):
        x = np.where(np.isfinite(x), x, 0.0)
    return x, [str(c) for c in columns]


@dataclass(frozen=True)
class Groups:
    """Group labels of the rows and their levels.

    Attributes
    ----------
    codes
        Level of each row (-1: a value outside the declared levels, not
        counted in any histogram).
    levels
        Declared levels in their declared order, or the values seen,
        sorted.
    declared
        Whether ``levels`` were fixed without looking at the data.
    name
        The column (or aesthetic expression) they come from.
    """

    codes: np.ndarray
    levels: list
    declared: bool
    name: str | None


def group_labels(fn: str, data: Any, group: Any, n: int) -> Groups | None:
    """The groups of ``dp_pca(group=...)``: a column name or one label per
    row. A pandas Categorical (or polars Enum) declares its levels; other
    labels are observed, which only the thresholded ``"sparse"`` histogram
    may release."""
    if group is None:
        return None
    name = None
    declared = None
    if isinstance(group, str):
        if not hasattr(data, "columns") or group not in data.columns:
            raise fail(fn, f"group column {group!r} is not in the data.")
        name = group
        declared = declared_levels(data, group)
        values = pd.Series(np.asarray(data[group], dtype=object))
        if isinstance(data, pd.DataFrame):
            values = data[group]
    else:
        values = pd.Series(group)
        if len(values) != n:
            raise fail(
                fn,
                f"group must be a column name or have one label per row "
                f"({n}), got length {len(values)}.",
            )
        if isinstance(values.dtype, pd.CategoricalDtype):
            declared = list(values.cat.categories)
    return groups_from(values, declared, name)


def groups_from(
    values: pd.Series, declared: list | None, name: str | None
) -> Groups:
    """Codes of ``values`` in the declared levels (or the sorted values
    seen); missing labels get -1."""
    dim = categorical_dimension(name or "group", values, declared)
    return Groups(dim.codes, list(dim.values), dim.public, name)
