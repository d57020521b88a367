"""Public bin edges for continuous axes, or a private estimate of them.

The order of precedence is the same for every binned stat:

1. ``breaks`` given by the user (public);
2. a range from ``limits=`` or from user scale limits (``xlim`` /
   ``scale_x_continuous(limits=)``), cut by ``bins`` or ``binwidth``
   (public);
3. DP stats only: a range estimated under DP from the data
   (:func:`~plotnine_private.mechanisms.domains.ranges.private_range`: a
   private
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

from ..exceptions import PlotninePrivateError
from ..families import bin_index  # moved; kept importable here
from ..mechanisms.domains.ranges import private_range, range_privacy_map
from ..mechanisms.errors import PrivacyWarning
from ..mechanisms.release.engine import (
    Charge,
    Release,
    charge,
    charging,
    keyed_digest,
    stream_key,
)
from ..mechanisms.streams.keys import kept_identity
from ..units import with_unit
from ..validation import fail as _fail
from .dates import (
    CalendarStep,
    calendar_edges,
    check_breaks,
    check_limits,
    check_width,
    is_date_axis,
    point_in_axis_units,
    to_axis_units,
    width_in_axis_units,
)

__all__ = [
    "AxisBreaks",
    "RowsNeeded",
    "advise_edge_mass",
    "axis_breaks",
    "bin_index",
    "user_limits",
]


class RowsNeeded(PlotninePrivateError):
    """The domain is not public: it would be a private estimate from the
    rows (a DP range), so it cannot be declared without them."""


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
    #: edges on calendar boundaries: bins are closed on the left
    calendar: bool = False
    #: the edges to show where they differ from ``breaks`` (plotnine's
    #: ``stat_bin_2d`` grid: records are cut at edges moved out by one
    #: relative epsilon, the tiles are drawn at the grid's own edges)
    shown: np.ndarray | None = None
    #: user scale limits: records outside them are left out (plotnine
    #: censors them before any stat) even where a bin reaches past them
    within: tuple[float, float] | None = None

    @property
    def edges_shown(self) -> np.ndarray:
        """The edges the layer shows (``shown``, else ``breaks``)."""
        return self.breaks if self.shown is None else self.shown


def user_limits(scale) -> tuple[float, float] | None:
    """The finite ``(low, high)`` limits a user set on a position scale
    (public), or None: none set, a callable, or not two numbers."""
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


def _bin2d_grid(rng, bins, binwidth) -> np.ndarray:
    """plotnine's ``stat_bin_2d`` grid over a range: edges on multiples
    of the width from the one at or below the low end (``bins`` sets the
    width as range / bins) to past the high end, by the same arange as
    plotnine's, so the count of edges agrees to the last float. The tiles
    are shown at these edges."""
    lo, hi = rng
    width = (hi - lo) / (30 if bins is None else bins)
    if binwidth is not None:
        width = binwidth
    start = np.floor(lo / width) * width
    return np.arange(start, hi + width, width)


def _bin2d_edges(rng, bins, binwidth) -> np.ndarray:
    """The edges of :func:`_bin2d_grid` that cut the records: each moved
    out by one relative epsilon (the first one down), so that a value on
    an edge up to float error falls in the bin closed on its right, as
    in plotnine. (The first of them lies below a low limit the grid
    starts on, where the scale would censor a tile drawn there: the
    tiles show the grid's own edges.)"""
    edges = _bin2d_grid(rng, bins, binwidth)
    tiny = np.finfo(float).eps
    fuzzy = np.where(edges > 0, edges * (1 + tiny), edges * (1 - tiny))
    fuzzy[edges == 0] = tiny
    first = edges[0]
    fuzzy[0] = -tiny if first == 0 else first * (1 + np.sign(first) * -tiny)
    return fuzzy


def _breaks_over(
    rng,
    bins,
    binwidth,
    center,
    boundary,
    name,
    axis,
    scale=None,
    rule="exact",
):
    """Edges over a public range, and the edges to show where they
    differ (else None). ``rule``: "exact" (``bins`` equal bins spanning
    the range, for fine histograms and private ranges), "bin" (plotnine's
    ``stat_bin``: end bins centred on the ends) or "bin_2d" (plotnine's
    ``stat_bin_2d`` grid, shown at its own edges)."""
    plain = center is None and boundary is None and not is_date_axis(scale)
    if rule == "bin_2d" and plain and not isinstance(binwidth, CalendarStep):
        if binwidth is not None and not (
            np.isfinite(binwidth) and binwidth > 0
        ):
            raise _fail(name, f"binwidth must be > 0, got {binwidth!r}.")
        if bins is not None and (int(bins) != bins or bins < 1):
            raise _fail(
                name, f"bins must be a whole number >= 1, got {bins!r}."
            )
        grid = _bin2d_edges(rng, bins, binwidth)
        return grid, _bin2d_grid(rng, bins, binwidth)
    return _edges_over(
        rng, bins, binwidth, center, boundary, name, axis, scale, rule
    ), None


def _edges_over(
    rng, bins, binwidth, center, boundary, name, axis, scale, rule
):
    """The edges of :func:`_breaks_over` by every rule but plotnine's
    ``stat_bin_2d`` grid."""
    plain = center is None and boundary is None and not is_date_axis(scale)
    if isinstance(binwidth, CalendarStep):
        if center is not None or boundary is not None:
            raise _fail(
                name,
                f"binwidth='{binwidth}' puts the {axis} edges on calendar "
                "boundaries; drop center/boundary, or give a duration "
                "(pd.Timedelta) to place the edges yourself.",
            )
        return calendar_edges(name, axis, rng, binwidth, scale)
    if binwidth is not None:
        if not (np.isfinite(binwidth) and binwidth > 0):
            raise _fail(name, f"binwidth must be > 0, got {binwidth!r}.")
        if is_date_axis(scale) and center is None and boundary is None:
            # fixed widths on dates start at the lower limit (plotnine's
            # default boundary, half a width, is an odd time of day)
            boundary = rng[0]
        return np.asarray(
            breaks_from_binwidth(rng, binwidth, center, boundary), float
        )
    bins = 30 if bins is None else bins
    if int(bins) != bins or bins < 1:
        raise _fail(name, f"bins must be a whole number >= 1, got {bins!r}.")
    if center is None and boundary is None and (rule != "bin" or not plain):
        # exactly `bins` equal bins spanning the public range
        return np.linspace(rng[0], rng[1], int(bins) + 1)
    return np.asarray(
        breaks_from_bins(rng, int(bins), center, boundary), dtype=float
    )


def _public_bins_hint(stat, axis: str) -> str:
    """How to give ``stat`` public bins on ``axis``, with the parameters
    it takes (hexagons take no breaks; 2-D stats take pairs)."""
    params = getattr(stat, "params", {})
    two_d = "y" in getattr(stat, "REQUIRED_AES", ())
    scale = f"the scale limits ({axis}lim(lo, hi))"
    if two_d:
        limits = "limits=((xlo, xhi), (ylo, yhi))"
        if "breaks" in params:
            return (
                "give breaks=(x_edges, y_edges), or "
                f"{limits} with bins=/binwidth=, or set {scale}"
            )
        return (
            f"give {limits} with bins= or binwidth= (the lattice of a "
            f"hexagon stat is fixed by its box; it takes no breaks), or "
            f"set {scale}"
        )
    return (
        "give breaks=[...], or limits=(lo, hi) with bins=/binwidth=, or "
        f"set {scale}"
    )


def axis_breaks(
    stat,
    axis: str,
    values: np.ndarray | None,
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
    rule="exact",
) -> AxisBreaks:
    """Bin edges for one axis of one panel (see module docstring).

    ``rule`` places the edges over public limits as the plotnine stat
    does ("bin", "bin_2d"; see ``_breaks_over``), or cuts them into
    ``bins`` exact bins ("exact").

    On a date axis (:mod:`~plotnine_private.stats.dates`) ``breaks``,
    ``limits``, ``center`` and ``boundary`` are dates, ``binwidth`` a
    number of days, a duration or a calendar step.

    ``values`` (the records' positions) are read only by a private range
    estimate; ``None`` declares the edges from public facts alone and
    raises :class:`RowsNeeded` where they would be estimated.
    """
    name = stat.name
    if breaks is not None and limits is not None:
        raise _fail(
            name,
            f"breaks= and limits= both given for {axis}: the breaks are the "
            "bins and would ignore the limits. Give breaks=[...] alone "
            "(bins outside the range you want left out of the list), or "
            "limits=(lo, hi) with bins=/binwidth=.",
        )
    if breaks is not None:
        param = f"breaks ({axis})"
        arr = to_axis_units(
            name, param, check_breaks(name, param, breaks), scale, axis
        )
        # a decreasing transform (scale_x_reverse) reverses the breaks
        arr = np.sort(np.asarray(arr))
        return AxisBreaks(arr, "public: breaks", clamp=False)
    width = width_in_axis_units(
        name,
        "binwidth",
        check_width(name, "binwidth", binwidth),
        scale,
        axis,
    )
    center = point_in_axis_units(name, "center", center, scale, axis)
    boundary = point_in_axis_units(name, "boundary", boundary, scale, axis)
    rng = None
    source = ""
    if limits is not None:
        param = f"limits ({axis})"
        lim = check_limits(name, param, limits)
        # limits= is in data units; the stat sees transformed positions
        # (sorted: a decreasing transform, scale_x_reverse, reverses them)
        rng = tuple(
            sorted(
                float(v) for v in to_axis_units(name, param, lim, scale, axis)
            )
        )
        source = "public: limits"
    elif user_limits(scale) is not None:
        # plotnine keeps scale limits already transformed
        rng = user_limits(scale)
        source = "public: scale limits"
    if rng is not None:
        if not all(np.isfinite(rng)) or rng[0] >= rng[1]:
            raise _fail(
                name,
                f"the {axis} range {rng} is not valid on this scale (e.g. "
                "limits <= 0 on a log scale); give limits inside the "
                "scale's domain.",
            )
        arr, shown = _breaks_over(
            rng, bins, width, center, boundary, name, axis, scale, rule
        )
        return AxisBreaks(
            arr,
            source,
            clamp=False,
            calendar=isinstance(width, CalendarStep),
            shown=shown,
            within=(
                (float(rng[0]), float(rng[1]))
                if source == "public: scale limits"
                else None
            ),
        )
    if is_date_axis(scale):
        raise _fail(
            name,
            f"{axis} is a date axis without public bins: give its limits as "
            "dates, e.g. limits=(pd.Timestamp('2020-01-01'), "
            "pd.Timestamp('2021-01-01')) with bins= or binwidth='1 month', "
            f"or breaks=pd.date_range(...), or {axis}lim(...) / "
            f"scale_{axis}_datetime(limits=...). A private range is not "
            "estimated on dates: it needs n*eps of about 1000 records at "
            "the default range_share, and below that it starts near "
            "1970-01-01.",
        )
    if not getattr(stat, "DP", False) or mechanism is None:
        raise _fail(
            name,
            f"needs public bins on {axis}: {_public_bins_hint(stat, axis)}. "
            "CKM has no budget to estimate a range privately, and the data "
            "range would disclose the extremes.",
        )
    if values is None:
        raise RowsNeeded(
            f"{name}(): has no public bins on {axis} and would estimate a "
            "private range from the rows. Give public limits=(lo, hi) or "
            f"breaks=[...] (or {axis}lim(lo, hi))."
        )
    return _private_axis(
        stat,
        axis,
        values,
        bins,
        width,
        center,
        boundary,
        mechanism,
        panel,
    )


def _private_axis(
    stat, axis, values, bins, binwidth, center, boundary, mechanism, panel
):
    share = stat.params["range_share"]
    eps_range = mechanism.eps * share
    unit = stat.build.door.unit
    query = with_unit(
        stat.range_query(
            axis, eps=eps_range, adjacency=mechanism.adjacency, method="v2"
        ),
        unit,
    )
    secret = query.secret()
    identity = query.identity(secret)
    digest = stat.range_digest(values)
    eps_charged, delta = range_privacy_map(eps_range, mechanism.adjacency)
    if charging():
        charge(
            [
                Charge.of(
                    query,
                    identity,
                    keyed_digest(secret, digest),
                    "durfee_quantile",
                    eps_charged,
                    delta,
                    mechanism.adjacency,
                )
            ]
        )
    key = stream_key(secret, identity, digest, "range")
    est = private_range(
        values,
        eps_range,
        key=key,
        adjacency=mechanism.adjacency,
        records=unit.max_records,
    )
    lo, hi, details = est.lo, est.hi, dict(est.details)
    # each search runs with eps / k for a unit of k records
    per_unit = (
        f" * max_records ({unit.max_records})" if unit.max_records > 1 else ""
    )
    warnings.warn(
        f"{stat.name}: the range of {axis} was estimated privately with "
        f"{share:.0%} of eps (eps={eps_range:.3g}); it is useful for about "
        f"n*eps >= 200{per_unit}, i.e. n >= "
        f"{200 * unit.max_records / eps_range:.0f} records. Give "
        "limits=(lo, hi) or breaks=[...] for exact public bins and the "
        "whole eps on the counts.",
        PrivacyWarning,
        stacklevel=2,
    )
    arr, _ = _breaks_over(
        (lo, hi), bins, binwidth, center, boundary, stat.name, axis
    )
    release = Release(
        identity=kept_identity(secret, identity),
        family="range",
        mechanism="durfee_quantile",
        eps=eps_charged,
        delta=delta,
        adjacency=mechanism.adjacency,
        sensitivity=float(unit.max_records),
        domain="private estimate",
        cells=2,
        policy=secret.policy,
        source=query.source,
        composition="centre and two ends (Durfee searches)",
        details={"what": f"{axis} range", "range": (lo, hi), **details},
    )
    return AxisBreaks(arr, "private estimate", clamp=True, release=release)


#: share of a layer's clear mass in the edge bands of a private range
#: above which the range is called too narrow
EDGE_SHARE = 0.9


def _data_units(scale, values):
    inverse = getattr(scale, "inverse", None)
    if callable(inverse):
        try:
            return [float(v) for v in inverse(np.asarray(values, float))]
        except (TypeError, ValueError):
            pass
    return [float(v) for v in values]


def _edge_share(frame, axis, ab, box, ncells, scale_b, mean_pos):
    """(share of the clear mass in the edge bands, clear edge mass) of one
    axis: cells are pooled into bands along the axis (a bin of a
    histogram, a column or row of a grid), so that mass spread along an
    edge row of a 2-D grid counts as one band."""
    lo, hi = float(ab.breaks[0]), float(ab.breaks[-1])
    if f"{axis}min" not in frame or f"{axis}max" not in frame:
        return 0.0, 0.0
    tol = 1e-9 * (hi - lo)
    amin = frame[f"{axis}min"].to_numpy(float)
    amax = frame[f"{axis}max"].to_numpy(float)
    key = np.round((amin - lo) / (hi - lo), 9)
    bands, band = np.unique(key, return_inverse=True)
    nb = len(bands) if box else max(len(ab.breaks) - 1, 1)
    k = max(ncells / nb, 1.0)  # noised cells per band
    count = np.clip(frame["count"].to_numpy(float), 0.0, None)
    mass = np.bincount(band, weights=count, minlength=len(bands))
    # what noise alone may put in a band (the mean of the positive part
    # of the noise a cell, plus a tail bound over the bands: about
    # 1 / (20 bands) chance to pass it for a band without records)
    tail = np.log(10.0 * nb)
    allowance = k * mean_pos + scale_b * max(
        tail, 0.87 * np.sqrt(2.0 * k * tail)
    )
    clear = np.clip(mass - allowance, 0.0, None)
    edge_cell = (amin <= lo + tol) | (amax >= hi - tol)
    edge = np.zeros(len(bands), dtype=bool)
    edge[band[edge_cell]] = True
    if clear[edge].sum() <= 0:
        return 0.0, 0.0  # the edge bands hold nothing noise cannot explain
    # masses less the noise's mean (mean_pos a noised cell): the edge
    # bands' over the layer's
    edge_mass = max(mass[edge].sum() - k * edge.sum() * mean_pos, 0.0)
    total = max(count.sum() - ncells * mean_pos, edge_mass)
    return edge_mass / total, clear[edge].sum()


def advise_edge_mass(stat, frame, released) -> None:
    """Warn, once per layer, when nearly all of what a layer released sits
    in the edge bins of a privately estimated range: the range is then
    probably too narrow for this eps (records outside it are clamped into
    its edge bins).

    Post-processing: computed from released values only (the released
    counts, the released range, the public noise scale), so the warning
    may depend on them. Along each privately ranged axis the released
    counts are pooled into bands (bins; columns or rows of a grid); a
    band's *clear* mass is what exceeds what noise alone could put there
    (see :func:`_edge_share`). The advice is given for an axis whose edge
    bands hold more than :data:`EDGE_SHARE` of its clear mass.
    """
    release = released.release
    scale_b = (release.details or {}).get("scale")
    if not release.formal or not scale_b or "count" not in frame:
        return
    if not len(frame):
        return
    ncells = max(len(released.values), 1)
    b = float(scale_b)
    if release.mechanism == "discrete_laplace":
        q = np.exp(-1.0 / b)  # E max(N, 0), N discrete Laplace of scale b
        mean_pos = q / ((1.0 + q) * (1.0 - q))
    else:
        mean_pos = b / 2
    named = []
    for key, ab in stat.build.axis_cache.items():
        if not (isinstance(ab, AxisBreaks) and ab.clamp):
            continue
        axis = key.split()[-1]
        share, clear = _edge_share(
            frame, axis, ab, key.startswith("box"), ncells, b, mean_pos
        )
        if share > EDGE_SHARE and clear > 0:
            named.append((axis, share, ab))
    if not named:
        return
    scales = stat.build.door.scales
    parts = []
    for axis, share, ab in named:
        a, b = _data_units(
            getattr(scales, axis, None), [ab.breaks[0], ab.breaks[-1]]
        )
        parts.append(f"{share:.0%} along {axis} (range {a:.4g} to {b:.4g})")
    warnings.warn(
        f"{stat.name}: nearly all released counts beyond the noise sit in "
        "the edge bins of the privately estimated range: "
        f"{', '.join(parts)}. The range is probably too narrow for this "
        "eps, and records outside it were put in its edge bins. Public "
        f"bins fix it: {_public_bins_hint(stat, named[0][0])}, from public "
        "knowledge of the variable's range (not from the data); a larger "
        "eps or range_share improves the estimate.",
        PrivacyWarning,
        stacklevel=2,
    )
