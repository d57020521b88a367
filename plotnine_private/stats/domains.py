"""Public bin edges for continuous axes, or a private estimate of them.

The order of precedence is the same for every binned stat:

1. ``breaks`` given by the user (public);
2. a range from ``limits=`` or from user scale limits (``xlim`` /
   ``scale_x_continuous(limits=)``), cut by ``bins`` or ``binwidth``
   (public);
3. DP stats only: a range estimated under DP from the data
   (:func:`~plotnine_private.mechanisms.ranges.private_range`: a private
   centre and two ends, widened), charged to the layer as a share
   ``range_share`` of its eps. Records outside it are clamped into the edge
   bins, so each record is in exactly one bin.

Never the data min/max or the trained scale range (they would leak the
extremes).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from plotnine.stats.binning import breaks_from_bins, breaks_from_binwidth

from ..mechanisms.errors import PrivacyWarning
from ..mechanisms.ranges import private_range, range_privacy_map
from ..mechanisms.release import Release, stream_key
from ..validation import fail as _fail
from ..validation import validate_breaks, validate_range

__all__ = ["AxisBreaks", "axis_breaks", "bin_index"]


@dataclass
class AxisBreaks:
    """The bin edges of one axis and where they came from.

    Attributes
    ----------
    breaks
        The edges (increasing).
    source
        ``"public: breaks"``, ``"public: limits"`` (or scale limits), or
        ``"private estimate"``.
    clamp
        Whether records outside go into the edge bins (a private range);
        with public edges they are left out.
    release
        The record of the private range estimate, if any.
    """

    breaks: np.ndarray
    source: str  # "public: breaks" / "public: limits" / "private estimate"
    clamp: bool  # clamp records outside into the edge bins
    release: Release | None = None


def _user_limits(scale):
    limits = getattr(scale, "limits", None)
    if limits is None or callable(limits):
        return None
    try:
        lo, hi = (float(v) for v in limits)
    except (TypeError, ValueError):
        return None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None  # e.g. xlim(0, None): one side open is not public
    return lo, hi


def _breaks_over(rng, bins, binwidth, center, boundary, name, axis):
    if binwidth is not None:
        if not (np.isfinite(binwidth) and binwidth > 0):
            raise _fail(name, f"binwidth must be > 0, got {binwidth!r}.")
        return np.asarray(
            breaks_from_binwidth(rng, binwidth, center, boundary), float
        )
    bins = 30 if bins is None else bins
    if int(bins) != bins or bins < 1:
        raise _fail(name, f"bins must be a whole number >= 1, got {bins!r}.")
    if center is None and boundary is None:
        # exactly `bins` equal bins spanning the public range
        return np.linspace(rng[0], rng[1], int(bins) + 1)
    return np.asarray(
        breaks_from_bins(rng, int(bins), center, boundary), dtype=float
    )


def axis_breaks(
    stat,
    axis: str,
    values: np.ndarray,
    scale,
    *,
    breaks=None,
    limits=None,
    bins=None,
    binwidth=None,
    center=None,
    boundary=None,
    mechanism=None,
    panel=None,
) -> AxisBreaks:
    """Bin edges for one axis of one panel (see module docstring)."""
    name = stat.name
    if breaks is not None:
        arr = validate_breaks(name, f"breaks ({axis})", breaks)
        if hasattr(scale, "transform"):
            arr = np.asarray(scale.transform(arr), dtype=float)
        return AxisBreaks(arr, "public: breaks", clamp=False)
    rng = None
    source = ""
    if limits is not None:
        rng = validate_range(name, f"limits ({axis})", limits)
        source = "public: limits"
        # limits= is in data units; the stat sees transformed positions
        if hasattr(scale, "transform"):
            rng = tuple(float(v) for v in scale.transform(np.asarray(rng)))
    elif _user_limits(scale) is not None:
        # plotnine keeps scale limits already transformed
        rng = _user_limits(scale)
        source = "public: scale limits"
    if rng is not None:
        if not all(np.isfinite(rng)) or rng[0] >= rng[1]:
            raise _fail(
                name,
                f"the {axis} range {rng} is not valid on this scale (e.g. "
                "limits <= 0 on a log scale); give limits inside the "
                "scale's domain.",
            )
        arr = _breaks_over(rng, bins, binwidth, center, boundary, name, axis)
        return AxisBreaks(arr, source, clamp=False)
    if not getattr(stat, "DP", False) or mechanism is None:
        raise _fail(
            name,
            f"needs public bins on {axis}: give breaks=..., or limits=(lo, "
            f"hi) with bins/binwidth, or set the scale limits "
            f"({axis}lim(lo, hi)). CKM has no budget to estimate a range "
            "privately, and the data range would disclose the extremes.",
        )
    return _private_axis(
        stat, axis, values, bins, binwidth, center, boundary, mechanism,
        panel,
    )


def _private_axis(
    stat, axis, values, bins, binwidth, center, boundary, mechanism, panel
):
    share = stat.params["range_share"]
    eps_range = mechanism.eps * share
    query = stat.range_query(
        axis, eps=eps_range, adjacency=mechanism.adjacency, method="v2"
    )
    secret = query.secret()
    identity = query.identity(secret)
    key = stream_key(secret, identity, stat.range_digest(values), "range")
    est = private_range(
        values, eps_range, key=key, adjacency=mechanism.adjacency
    )
    lo, hi, details = est.lo, est.hi, dict(est.details)
    warnings.warn(
        f"{stat.name}: the range of {axis} was estimated privately with "
        f"{share:.0%} of eps (eps={eps_range:.3g}); it is useful for about "
        f"n*eps >= 200, i.e. n >= {200 / eps_range:.0f} records. Give "
        "limits=(lo, hi) or breaks=[...] for exact public bins and the "
        "whole eps on the counts.",
        PrivacyWarning,
        stacklevel=2,
    )
    arr = _breaks_over((lo, hi), bins, binwidth, center, boundary, stat.name,
                       axis)
    eps_charged, delta = range_privacy_map(eps_range, mechanism.adjacency)
    release = Release(
        identity=identity,
        family="range",
        mechanism="durfee_quantile",
        eps=eps_charged,
        delta=delta,
        adjacency=mechanism.adjacency,
        sensitivity=1.0,
        domain="private estimate",
        cells=2,
        policy=secret.policy,
        source=query.source,
        composition="centre and two ends (Durfee searches)",
        details={"what": f"{axis} range", "range": (lo, hi), **details},
    )
    return AxisBreaks(arr, "private estimate", clamp=True, release=release)


def bin_index(
    values: np.ndarray, breaks: np.ndarray, closed: str, clamp: bool
) -> np.ndarray:
    """Bin of each value; -1 outside the breaks unless ``clamp``.

    ``closed="right"``: bins (a, b], the first one [a, b]; ``"left"``:
    [a, b), the last one [a, b].

    >>> bin_index(np.array([0., 1., 1.5, 3.]), np.array([0., 1., 2.]),
    ...           "right", False)
    array([ 0,  0,  1, -1])
    """
    nb = len(breaks) - 1
    if closed == "right":
        idx = np.searchsorted(breaks, values, side="left") - 1
        idx[values == breaks[0]] = 0
    else:
        idx = np.searchsorted(breaks, values, side="right") - 1
        idx[values == breaks[-1]] = nb - 1
    if clamp:
        return np.clip(idx, 0, nb - 1).astype(np.int64)
    idx[(idx < 0) | (idx >= nb)] = -1
    return idx.astype(np.int64)
