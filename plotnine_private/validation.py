"""Parameter validation: one place, used by stats, tables, PCA and report.

Every check raises :class:`~plotnine_private.exceptions.PlotninePrivateError`
naming the function, the parameter, the bad value and what would be valid
(scikit-learn style), before anything is computed or drawn.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from .exceptions import PlotninePrivateError, PrivacyWarning
from .mechanisms.samplers import laplace as lap

__all__ = [
    "MAX_NAME",
    "validate_dataset",
    "validate_label",
    "as_ptable",
    "fail",
    "is_integer",
    "is_real",
    "frame_type_fix",
    "from_polars",
    "is_polars_frame",
    "validate_layer_data",
    "check_flat_columns",
    "validate_breaks",
    "validate_choice",
    "validate_delta",
    "validate_eps",
    "validate_range",
    "validate_range_share",
    "renamed",
    "validate_seed",
    "validate_threshold",
]


def is_real(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real number (:class:`numbers.Real`: int,
    float, Fraction, numpy scalars) and not a bool.

    Typed as a guard to ``float`` (the numeric tower of PEP 484), so that
    the checks that follow it compare and convert it as a number.

    >>> is_real(0.5), is_real(True), is_real("1")
    (True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_integer(value: object) -> TypeGuard[int]:
    """Whether ``value`` is an integer (:class:`numbers.Integral`: int,
    numpy integers) and not a bool.

    >>> is_integer(3), is_integer(True), is_integer(3.0)
    (True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def fail(name: str, message: str) -> PlotninePrivateError:
    """The error of ``name()`` (a stat, table or function) with a message
    that names the parameter, the value and the fix."""
    return PlotninePrivateError(f"{name}(): {message}")


def validate_eps(name: str, eps: Any) -> float:
    """A finite number ``eps > 0`` that the exact sampler can use.

    Parameters
    ----------
    name
        The stat, table or function, for the message.
    eps
        The value given.

    Returns
    -------
    float
        ``eps``.

    Raises
    ------
    PlotninePrivateError
        If ``eps`` is missing, not a number, or not finite and positive.
    """
    if eps is None:
        raise fail(
            name,
            "eps is required: the privacy budget of this layer, a number "
            "> 0 (e.g. eps=1). Smaller eps means more noise.",
        )
    if not is_real(eps):
        raise fail(name, f"eps must be a number > 0, got {eps!r}.")
    if not math.isfinite(eps) or eps <= 0:
        raise fail(name, f"eps must be a finite number > 0, got {eps!r}.")
    try:
        lap.exact_epsilon(eps)
    except ValueError as err:
        raise fail(name, str(err)) from None
    if eps > 10:
        # a public fact (the parameter), so the same on any data
        warnings.warn(
            f"{name}: eps={eps:g} gives little protection: above 10 one "
            f"record can make an output e**{eps:g} times more likely. Use "
            "eps <= 10 (typically 0.1 to 2) and plan the accuracy with "
            "pp.accuracy / pp.eps_for.",
            PrivacyWarning,
            stacklevel=3,
        )
    return float(eps)


def validate_delta(name: str, delta: Any) -> float:
    """A number ``0 < delta < 1``.

    Parameters
    ----------
    name
        The stat, table or function, for the message.
    delta
        The value given.

    Returns
    -------
    float
        ``delta``.

    Raises
    ------
    PlotninePrivateError
        If ``delta`` is not a number in (0, 1).
    """
    if not is_real(delta):
        raise fail(name, f"delta must be a number in (0, 1), got {delta!r}.")
    if not (0 < delta < 1):
        raise fail(
            name,
            f"delta must lie in (0, 1), got {delta!r}; use a small value "
            "such as 1e-6 (at most 1/n).",
        )
    return float(delta)


def validate_seed(name: str, seed: Any) -> int | str | None:
    """A seed is an int or a non-empty str (a label of the release under a
    key file; the secret without one) or None (session entropy)."""
    if seed is None:
        return None
    if isinstance(seed, str) and seed:
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise fail(
            name,
            f"seed must be an int, a non-empty str or None, got {seed!r} "
            f"({type(seed).__name__}); a Generator is not accepted because "
            "plotnine deep-copies parameters on every '+'.",
        )
    return int(seed)


#: the longest label or data set name kept in the ledger
MAX_NAME = 200


def validate_label(name: str, label: Any) -> str | None:
    """A release label (``label="F01 flights by carrier"``): None, or a
    text of printable characters on one line, at most :data:`MAX_NAME`
    long, returned with its outer spaces stripped. Public: it goes to the
    ledger and the bundle as it is, never into a release's identity or
    noise.

    >>> validate_label("stat_count_dp", "  F01 flights by carrier ")
    'F01 flights by carrier'
    """
    return _public_name(name, "label", label, "F01 flights by carrier")


def validate_dataset(name: str, dataset: Any) -> str | None:
    """A data set's name for the ledger (``dataset="flights"``): None, or
    a text as :func:`validate_label` checks one."""
    return _public_name(name, "dataset", dataset, "flights 2024")


def _public_name(
    name: str, param: str, value: Any, example: str
) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise fail(
            name,
            f"{param} must be a text such as {param}={example!r} (or "
            f"None), got {value!r} ({type(value).__name__}).",
        )
    text = value.strip()
    if not text:
        raise fail(
            name,
            f"{param}={value!r} is empty; give a text such as "
            f"{param}={example!r}, or leave {param} out.",
        )
    if len(text) > MAX_NAME:
        raise fail(
            name,
            f"{param} is {len(text)} characters long; keep it to at most "
            f"{MAX_NAME} (e.g. {param}={example!r}).",
        )
    if not text.isprintable():
        raise fail(
            name,
            f"{param}={value!r} holds a line break or another character "
            "that is not printable; give one line of text, e.g. "
            f"{param}={example!r}.",
        )
    return text


def validate_choice(name: str, param: str, value: Any, choices) -> str:
    """``value`` if it is one of ``choices``, else an error that lists
    them.

    >>> validate_choice("stat_count_dp", "noise", "laplace",
    ...                 ("discrete_laplace", "laplace"))
    'laplace'
    """
    if value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise fail(name, f"{param} must be one of {valid}; got {value!r}.")
    return value


def validate_range(name: str, param: str, value: Any) -> tuple[float, float]:
    """A public (lo, hi) pair of finite numbers with lo < hi."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise fail(
            name,
            f"{param} must be a pair (low, high) of numbers (or, for the "
            f"binned stats on a date axis, of dates), got {value!r}.",
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise fail(
            name,
            f"{param} must be finite with low < high, got {value!r}.",
        )
    _check_magnitude(name, param, value, max(abs(lo), abs(hi)))
    return lo, hi


#: the largest magnitude of a public limit, bound or edge: an axis spans
#: at most twice this, and its breaks square the span (mizani's coverage
#: overflows past about 1e154), so a larger one failed only while the
#: figure was drawn, after its release was charged
MAX_MAGNITUDE = 1e150


def _check_magnitude(name: str, param: str, value: Any, top: float) -> None:
    if top > MAX_MAGNITUDE:
        raise fail(
            name,
            f"{param} must lie within +-{MAX_MAGNITUDE:g}, got {value!r}: "
            "rescale the variable (e.g. to thousands or millions) and "
            "give its limits in those units.",
        )


def renamed(
    name: str, old: str, new: str, old_value: Any, new_value: Any, unset=None
) -> Any:
    """The value of a parameter renamed by the naming rule (see
    docs/architecture.md, "Names"): ``new``'s, or, when only the old name
    is given, the old one's with a ``DeprecationWarning`` naming the new.

    Parameters
    ----------
    name
        The function or stat, for the messages.
    old, new
        The parameter's old and new names.
    old_value, new_value
        What was given under each (``unset``: not given).

    Raises
    ------
    PlotninePrivateError
        Both names given.

    Examples
    --------
    >>> renamed("f", "split", "shares", None, {"a": 1.0})
    {'a': 1.0}
    """
    if old_value is unset:
        return new_value
    # a number default (adjust=1.0) is "not given" when equal to it
    if not (new_value is unset or (is_real(new_value) and new_value == unset)):
        raise fail(
            name,
            f"{old}= is the old name of {new}=; give {new}= only (got "
            f"both: {old}={old_value!r}, {new}={new_value!r}).",
        )
    warnings.warn(
        f"{name}(): {old}= is deprecated and will be removed; use {new}= "
        "(the same parameter under its new name).",
        DeprecationWarning,
        stacklevel=3,
    )
    return old_value


def validate_range_share(name: str, share: Any) -> float | None:
    """Share of a layer's eps for *each* privately estimated axis range;
    the counts get what is left, so at most two axes need share < 0.5."""
    if share is None:
        return None
    if not is_real(share) or not 0 < share < 0.5:
        raise fail(
            name,
            f"range_share must be a number in (0, 0.5), got {share!r}: it "
            "is taken out of eps for each axis whose range is estimated.",
        )
    return float(share)


def validate_breaks(name: str, param: str, value: Any) -> np.ndarray:
    """Public bin edges: at least two finite, strictly increasing numbers.

    Parameters
    ----------
    name
        The stat, table or function, for the message.
    param
        The parameter's name (``"breaks"``).
    value
        The edges given.

    Returns
    -------
    numpy.ndarray
        The edges as floats.

    Raises
    ------
    PlotninePrivateError
        Naming the parameter, the value and the fix.
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise fail(
            name,
            f"{param} must be numbers (or, for the binned stats on a date "
            f"axis, all dates), got {value!r}.",
        ) from None
    if arr.ndim != 1 or arr.size < 2:
        raise fail(
            name, f"{param} must list at least two bin edges, got {value!r}."
        )
    if not np.all(np.isfinite(arr)):
        raise fail(name, f"{param} must be finite numbers, got {value!r}.")
    _check_magnitude(name, param, value, float(np.abs(arr).max()))
    if np.any(np.diff(arr) <= 0):
        raise fail(
            name,
            f"{param} must be strictly increasing, got {value!r}; sort them "
            "and remove duplicates.",
        )
    return arr


def as_ptable(name: str, obj: Any):
    """A PTable from a PTable, a DataFrame or a path (any known format);
    any other type is refused naming the type and how to make a table."""
    from .mechanisms.ptable import PTable, read_ptable
    from .mechanisms.ptable.io import is_ptable_source, ptable_type_message

    if isinstance(obj, PTable):
        return obj
    if not is_ptable_source(obj):
        raise fail(name, ptable_type_message(obj))
    try:
        return read_ptable(obj)
    except (ValueError, OSError, TypeError) as err:
        raise fail(name, f"ptable: {err}") from None


def validate_threshold(name: str, thr: Any) -> float | None:
    """A CKM display threshold: None or a finite number >= 0."""
    if thr is None:
        return None
    if (
        isinstance(thr, bool)
        or not isinstance(thr, numbers.Real)
        or not math.isfinite(thr)
        or thr < 0
    ):
        raise fail(
            name,
            f"threshold must be None or a number >= 0, got {thr!r}; cells "
            "whose perturbed count is below it are hidden.",
        )
    return float(thr)


def from_polars(obj: Any) -> bool:
    """Whether ``obj`` is a polars object (a frame, lazy frame or
    series), told by its class's module so that polars, an optional
    extra, is never imported to ask."""
    return type(obj).__module__.split(".")[0] == "polars"


def is_polars_frame(obj: Any) -> bool:
    """Whether ``obj`` is an eager polars object (no ``collect``: a
    DataFrame or Series, not a LazyFrame)."""
    return from_polars(obj) and not hasattr(obj, "collect")


def _type_name(obj: Any) -> str:
    kind = type(obj)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__.split('.')[0]}.{kind.__qualname__}"


def frame_type_fix(data: Any) -> str:
    """``"got <type>; <how to make a frame of it>"``, for data that is not
    a frame the package takes (a pandas or an eager polars DataFrame)."""
    if from_polars(data) and hasattr(data, "collect"):
        fix = "collect it first: data.collect()"
    elif isinstance(data, pd.Series):
        fix = "make a frame of it: series.to_frame()"
    elif isinstance(data, dict):
        fix = "make a frame of it: pandas.DataFrame(data)"
    elif isinstance(data, np.ndarray):
        fix = (
            "make a frame with named columns: pandas.DataFrame(array, "
            "columns=[...])"
        )
    elif isinstance(data, (list, tuple)):
        fix = (
            "make a frame of it: pandas.DataFrame(rows) (a list of dicts or "
            "of tuples with columns=[...])"
        )
    else:
        fix = "convert it to a pandas (or polars) DataFrame first"
    return f"got {_type_name(data)}; {fix}."


def validate_layer_data(name: str, *args: Any) -> None:
    """The ``mapping``/``data`` arguments of a private stat: plotnine takes
    them in either order; data must be a frame (pandas, or anything with
    ``to_pandas`` such as a polars DataFrame) or a function of the plot's
    data."""
    from plotnine.mapping.aes import aes

    for arg in args:
        if (
            arg is None
            or isinstance(arg, (aes, pd.DataFrame))
            or callable(arg)
            or hasattr(arg, "to_pandas")
        ):
            continue
        raise fail(
            name,
            "data must be a pandas or polars DataFrame (or a function of "
            f"the plot's data), {frame_type_fix(arg)}",
        )


def check_flat_columns(name: str, frame: Any) -> None:
    """Refuse a frame whose columns are a MultiIndex (a schema fact): its
    columns cannot be named in a mapping or a table, and pandas' own
    error would come from deep inside the build."""
    columns = getattr(frame, "columns", None)
    if isinstance(columns, pd.MultiIndex):
        raise fail(
            name,
            "the data's columns are a MultiIndex "
            f"({list(columns[:3])}...); give them one level first, e.g. "
            "df.columns = ['_'.join(map(str, c)) for c in df.columns] "
            "(and df.reset_index() for index levels you want as columns).",
        )
