"""Means and totals of a numeric dimension drawn from a synopsis:
``ggplot(syn, aes("class", "hwy")) + geom_pointrange(stat="summary_dp")``.

Post-processing of the synopsis's one release, as every figure drawn
from it (:mod:`.draw`). A summary of ``y`` (a declared numeric
dimension) by ``x`` (a declared categorical one) reads the counts
``n[x, k]`` of their 2-way marginal over ``y``'s fine bins, whose
centres are ``c_k`` (lo + (k + 1/2) * resolution), in its linear
estimate (:meth:`~.result.Synopsis.linear`: the centre of the
intervals below, so a drawn mean lies in its interval):

- ``n(x) = sum_k n[x, k]``, ``sum(x) = sum_k n[x, k] * c_k`` and the
  mean ``sum(x) / n(x)`` within ``y``'s limits (a total at or above 0
  when they are); where the linear ``n(x)`` is not above 0, the
  consistent (clipped) tables' ``n``, ``sum`` and mean, with the limits
  as interval;
- **the discretisation**: a record's value is within half a resolution
  of its fine bin's centre, so the mean of the records counted is within
  ``resolution / 2`` of the mean of the centres, and their total within
  ``n(x) * resolution / 2`` (taken at the released ``n``). Records
  outside the declared limits of ``y`` (or missing) are counted in no
  marginal of the synopsis, so in no mean;
- **the intervals** (``y_low``/``y_high``, drawn as ``ymin``/``ymax``
  with ``errorbar="noise"``): about the linear estimate (the consistency
  step without clipping, :meth:`~.result.Synopsis.linear`), whose error
  is ``L`` of the noise, simulated from the public scales
  (:func:`.draw.simulated_errors`, ``DRAWS`` draws). A total: its linear
  estimate minus the quantiles of its simulated error. A mean: the means
  ``m`` whose linear equation ``sum - m * n`` (0 at the true tables)
  lies within the quantiles of its simulated error (:func:`mean_set`, a
  Fieller interval: exact up to the simulation). With ``covers="data"``
  (the default) widened by the discretisation bound; kept within the
  declared limits (a mean) or at or above 0 (a total of a ``y`` whose
  limits are >= 0). Not widened to hold the drawn value
  (:data:`HOLD_MARK`).

``fun_data`` (``mean_se``, ``mean_cl_normal``, ``mean_sdl``): plotnine's
ends around the mean from the spread of the fine-bin centres, widened
to hold the values' and the noise (:func:`_data_ends`).

Refused: a group (fill, colour) of another column than x, or a facet
(their marginal has three columns), medians and quantiles,
``eps``/``seed``, and ``bounds`` or ``resolution`` other than the
declared limits and resolution of ``y``.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from .._compat import given_arguments, keep_build
from ..cells import Dimension
from ..door import LayerBuild, _source_frame, make_door
from ..engines.push import assemble_counts
from ..exceptions import PlotninePrivateError
from ..mechanisms.release.records import Released
from ..stats.marks import mark_layer
from ..stats.summary.data import sampling_halfwidth
from .draw import (
    SIMS,
    check_method,
    declared_columns,
    evaluated_types,
    refusal,
    simulated_errors,
)
from .result import Synopsis

if TYPE_CHECKING:
    from plotnine import ggplot
    from plotnine.layer import layer

__all__ = [
    "DRAWS",
    "SUMMARIES",
    "bootstrap",
    "draw_summary",
    "is_summary",
    "mean_set",
    "summary_of",
]

#: the stats drawn here
SUMMARIES = ("stat_summary_dp",)
#: simulated errors of a summary's interval (those of the synopsis's
#: other figures, :data:`~.draw.SIMS`)
DRAWS = SIMS
#: means on the grid over y's limits that :func:`mean_set` tries
MEAN_GRID = 801
#: whether a mean's (total's) interval is widened to hold its drawn value:
#: off, as the drawn value is the linear estimate, the interval's own
#: centre (only where the linear estimate has no records is it the
#: clipped tables', and its interval then spans the limits)
HOLD_MARK = False
#: parameters that would make a new release
_RELEASE_PARAMS = ("eps", "seed", "sum_share", "shares")


def _words(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else repr(v)


def _check(name: str, stat, syn: Synopsis, cols: dict[str, str]) -> None:
    p = stat.params
    args = given_arguments(stat)
    given = [k for k in _RELEASE_PARAMS if args.get(k) is not None]
    if given:
        raise refusal(
            name,
            syn,
            f"{given[0]}={_words(p[given[0]])} would make a new release; a "
            "figure "
            f"from the synopsis is post-processing of its one release "
            f"(eps={syn.eps:g}, charged once): remove "
            f"{', '.join(f'{k}=' for k in given)}.",
        )
    for ae in ("x", "y"):
        if ae not in cols:
            raise refusal(name, syn, f"aes({ae}=...) is required.")
    x, y = syn.dims[cols["x"]], syn.dims[cols["y"]]
    if x.numeric:
        raise refusal(
            name,
            syn,
            f"x={cols['x']!r} is a numeric dimension: a summary from a "
            "synopsis is of y by the levels of a categorical x.",
        )
    if not y.numeric:
        raise refusal(
            name,
            syn,
            f"y={cols['y']!r} is a categorical dimension: its mean or "
            "total needs numbers; draw its bars with stat='count_dp'.",
        )
    if p.get("fun") not in ("mean", "sum"):
        raise refusal(
            name,
            syn,
            "a median or quantile (fun='median', fun_y=np.quantile) is not "
            "drawn from a synopsis yet (its box plots are: "
            "stat='boxplot_dp'); give fun='mean' or fun='sum'.",
        )
    assert y.limits is not None and y.resolution is not None
    b = p.get("bounds")
    if b is not None and tuple(float(v) for v in b) != tuple(y.limits):
        raise refusal(
            name,
            syn,
            f"bounds=({float(b[0]):g}, {float(b[1]):g}) would clamp y to "
            f"other limits than the declared ({y.limits[0]:g}, "
            f"{y.limits[1]:g}) of {cols['y']!r} (a new "
            "release): remove bounds=.",
        )
    r = p.get("resolution")
    if getattr(stat, "resolution_given", False) and not math.isclose(
        float(r), y.resolution
    ):
        raise refusal(
            name,
            syn,
            f"resolution={r!r}: y is known on the declared fine grid of "
            f"{cols['y']!r} (resolution {y.resolution:g}) only: remove "
            "resolution=.",
        )


def bootstrap(
    syn: Synopsis, held: tuple[str, ...], draws: int | None = None
) -> np.ndarray:
    """``(draws, *shape)``: the held table ``held``'s linear estimate
    (:meth:`Synopsis.linear`) plus ``draws`` simulated errors of it
    (:func:`~.draw.simulated_errors`: ``L`` of fresh noise of each
    table's public scale), read-only; a function of released tables and
    public scales only."""
    draws = DRAWS if draws is None else draws
    key = ("bootstrap", held, draws)
    if key in syn.derived:
        return syn.derived[key]
    out = syn.linear()[held] + simulated_errors(syn, draws)[held]
    out.flags.writeable = False  # shared by the synopsis's figures
    syn.derived[key] = out
    return out


def summary_of(
    syn: Synopsis,
    x: str,
    y: str,
    fun: str,
    level: float,
    draws: int | None = None,
    fun_data: str | None = None,
    fun_args: dict | None = None,
    covers: str = "data",
) -> dict[str, np.ndarray]:
    """The mean (or total) of ``y`` per level of ``x`` and its interval
    (see the module docstring): ``y``, ``ymin``, ``ymax`` (the
    interval), ``n`` and ``sum``, one value per declared level of ``x``;
    with ``fun_data`` (and its ``fun_args``) also plotnine's ends of it,
    ``data_min`` and ``data_max`` (:func:`_data_ends`).
    """
    dy = syn.dims[y]
    assert dy.limits is not None and dy.resolution is not None
    held = syn._holder((x, y))
    t = syn.counts((x, y))
    lin = syn.counts((x, y), linear=True)
    sims = bootstrap(syn, held, draws)
    if held.index(x) != 0:
        sims = np.transpose(sims, (0, 2, 1))
    centre = dy.limits[0] + (np.arange(dy.bins) + 0.5) * dy.resolution
    n = t.sum(axis=1)
    total = t @ centre
    n_lin = lin.sum(axis=1)
    total_lin = lin @ centre
    sim_n = sims.sum(axis=2)
    sim_total = sims @ centre
    half = dy.resolution / 2
    # covers="data": the records' mean (or total), within half a
    # resolution of the fine-bin centres'; "histogram": the centres'
    grid = half if covers == "data" else 0.0
    a = (1 - level) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        if fun == "sum":
            value, centred, simulated = total, total_lin, sim_total
            slack = np.maximum(n, 0.0) * grid
        else:
            value = np.where(n > 0, total / n, np.nan)
            centred = np.where(n_lin > 0, total_lin / n_lin, np.nan)
            simulated = np.where(sim_n > 0, sim_total / sim_n, np.nan)
            slack = np.full(len(n), grid)
        err = simulated - centred
        with warnings.catch_warnings():
            # a level released with n = 0 has no mean (NaN), nor interval
            warnings.simplefilter("ignore", RuntimeWarning)
            q_lo = np.nanquantile(err, a, axis=0)
            q_hi = np.nanquantile(err, 1 - a, axis=0)
    low, high = centred - q_hi, centred - q_lo
    if fun == "mean":
        # the mean by inverting its linear equation (exact; the basic
        # interval above where the inversion accepts no mean)
        inv_low, inv_high = mean_set(
            total_lin, n_lin, sim_total - total_lin, sim_n - n_lin, dy, a
        )
        found = np.isfinite(inv_low)
        low = np.where(found, inv_low, low)
        high = np.where(found, inv_high, high)
    low, high = low - slack, high + slack
    if fun == "sum":
        if dy.limits[0] >= 0:  # a total of values >= 0 is >= 0
            low = np.maximum(low, 0.0)
            high = np.maximum(high, 0.0)
    else:
        # a linear estimate with no records: nothing known of the mean
        # but its limits
        low = np.where(np.isnan(centred), dy.limits[0], low)
        high = np.where(np.isnan(centred), dy.limits[1], high)
        low = np.clip(low, *dy.limits)
        high = np.clip(high, *dy.limits)
    # the drawn mean (total) is the linear estimate's, the centre of its
    # interval (the clipped tables' is pulled towards the middle of the
    # limits where the clipping is active, and could lie outside it);
    # where the linear estimate has no records, the clipped tables'
    linear = (n_lin > 0) if fun == "mean" else np.isfinite(total_lin)
    shown = np.clip(centred, *dy.limits) if fun == "mean" else centred
    if fun == "sum" and dy.limits[0] >= 0:
        shown = np.maximum(shown, 0.0)
    value = np.where(linear, shown, value)
    n = np.where(linear, n_lin, n)
    total = np.where(linear, total_lin, total)
    second = np.where(linear, lin @ centre**2, t @ centre**2)
    if HOLD_MARK:
        low, high = np.fmin(low, value), np.fmax(high, value)
    low = np.where(np.isnan(value), np.nan, low)
    high = np.where(np.isnan(value), np.nan, high)
    out = {"y": value, "ymin": low, "ymax": high, "n": n, "sum": total}
    if fun_data is not None:
        spread = second / np.maximum(n, 1e-300) - value**2
        out["data_min"], out["data_max"] = _data_ends(
            fun_data, dict(fun_args or {}), value, n, spread, err, dy
        )
    return out


def mean_set(
    total: np.ndarray,
    n: np.ndarray,
    err_total: np.ndarray,
    err_n: np.ndarray,
    dy: Any,
    alpha: float,
    points: int = MEAN_GRID,
) -> tuple[np.ndarray, np.ndarray]:
    """The means ``m`` in ``dy``'s limits whose linear equation the
    linear estimate satisfies at level ``1 - 2 alpha``: ``total - m * n``
    (the linear estimate's sum and count of one level, a linear function
    of its table, 0 at the true tables for the true mean) within the
    ``alpha`` and ``1 - alpha`` quantiles of its simulated error
    ``err_total - m * err_n`` (``(draws, levels)``). The true mean is in
    the set exactly when its error is within them, so it covers at the
    level up to the simulation's error (a Fieller interval). Its ends,
    on a grid of ``points`` means, interpolated where the margin changes
    sign; NaN where no mean is accepted. Post-processing of released
    tables and public scales."""
    lo, hi = dy.limits
    m = np.linspace(lo, hi, points)
    low = np.full(len(n), np.nan)
    high = np.full(len(n), np.nan)
    for g in range(len(n)):
        if not np.isfinite(n[g]) or not np.isfinite(total[g]):
            continue
        sim = err_total[:, g, None] - err_n[:, g, None] * m[None, :]
        q = np.quantile(sim, [alpha, 1 - alpha], axis=0)
        d = total[g] - m * n[g]
        margin = np.minimum(d - q[0], q[1] - d)
        ok = np.flatnonzero(margin >= 0)
        if not len(ok):
            continue
        low[g] = _crossing(m, margin, ok[0], -1)
        high[g] = _crossing(m, margin, ok[-1], 1)
    return low, high


def _crossing(m: np.ndarray, margin: np.ndarray, i: int, step: int) -> float:
    """Where ``margin`` (>= 0 at ``m[i]``) reaches 0 between ``m[i]``
    and its neighbour ``m[i + step]`` (linearly); ``m[i]`` at a limit."""
    j = i + step
    if not 0 <= j < len(m):
        return float(m[i])
    share = margin[i] / (margin[i] - margin[j])
    return float(m[i] + share * (m[j] - m[i]))


def _data_ends(fun_data, args, mean, n, spread, err, dy):
    """plotnine's ``fun_data`` ends around a drawn mean, holding the
    noise and the fine bins: the sampling part from the spread of the
    fine-bin centres widened by half a resolution (the values' standard
    deviation is within that of the centres': Minkowski), combined with
    the mean's simulated noise (its bootstrap ``err``) as the released
    summaries combine theirs (:func:`~..stats.summary.data.dp_interval`:
    quantile half-widths in quadrature for ``mean_cl_normal``, variances
    for ``mean_se`` and ``mean_sdl``), then widened by the mean's own
    discretisation bound; within the declared limits."""
    lo, hi = dy.limits
    half_r = dy.resolution / 2
    most = ((hi - lo) / 2) ** 2
    n_eff = np.maximum(np.asarray(n, dtype=float), 1.0)
    sd = np.sqrt(np.clip(np.nan_to_num(spread), 0.0, most)) + half_r
    var0 = np.minimum(sd * sd, most)
    with np.errstate(divide="ignore", invalid="ignore"):
        var1 = np.where(n_eff >= 2, var0 * n_eff / (n_eff - 1), most)
    var1 = np.minimum(var1, most)
    h_sample = sampling_halfwidth(fun_data, args, n_eff, var0, var1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if fun_data == "mean_cl_normal":
            a = (1 - args["confidence_interval"]) / 2
            q = np.nanquantile(err, [a, 1 - a], axis=0)
            h_noise = (q[1] - q[0]) / 2
            half = np.sqrt(h_sample**2 + h_noise**2)
        else:
            v_noise = np.nanvar(err, axis=0)
            per_record = (h_sample / args["mult"]) ** 2
            half = args["mult"] * np.sqrt(per_record + v_noise)
    half = half + half_r
    return np.clip(mean - half, lo, hi), np.clip(mean + half, lo, hi)


def draw_summary(lyr: layer, plot: ggplot) -> None:
    """Draw a private summary layer from the synopsis that is its data;
    sets the layer's data to its rows."""
    syn = _source_frame(plot, lyr)
    stat = lyr.stat
    name = type(stat).__name__
    check_method(name, syn, stat)
    cols = declared_columns(name, syn, lyr)
    _check(name, stat, syn, cols)
    evaled = evaluated_types(lyr, plot)
    build = LayerBuild(make_door(plot, lyr, None))
    run = stat.for_build(build)
    dy = syn.dims[cols["y"]]
    # the synopsis's budget and y's declared grid stand in for the
    # layer's (on a copy: the user's stat is left as made)
    run.params = {
        **stat.params,
        "eps": syn.eps,
        "bounds": tuple(dy.limits or ()),
        "resolution": dy.resolution,
    }
    door = build.door
    build.records = evaled
    fam = run.declare_domain(door.scales)
    # after the domain: a group of x's own column (colour="class" on
    # x="class") is x's levels again, not a column of the marginal
    extra = run.group_columns(evaled)
    if extra or door.facet_columns:
        what = [cols.get(g, g) for g in extra] + list(door.facet_columns)
        raise refusal(
            name,
            syn,
            f"grouped or facetted by {what}, the summary needs a marginal "
            f"of {[cols['x'], cols['y'], *what]}, three columns; a synopsis "
            "holds 1- and 2-way marginals.",
        )
    levels = list(syn.dims[cols["x"]].levels or ())
    try:
        est = summary_of(
            syn,
            cols["x"],
            cols["y"],
            run.params["fun"],
            run.params.get("level", 0.95),
            fun_data=run.params.get("fun_data"),
            fun_args=run.params.get("fun_args"),
            covers=run.params.get("covers", "data"),
        )
    except PlotninePrivateError as e:
        raise refusal(
            name,
            syn,
            f"the figure needs the marginal {cols['x'], cols['y']}: {e}",
        ) from None
    # the family's cells are the declared levels of x, in its order
    order = [levels.index(v) for v in fam.frame["x"].tolist()]
    est = {k: np.asarray(v, dtype=float)[order] for k, v in est.items()}
    panel = run.panel_dimension(evaled, door)
    fdim = Dimension(
        "cell", np.zeros(0, np.int64), fam.content, fam.frame.index, True
    )
    table, idx = assemble_counts([panel, fdim], np.zeros(0, np.int64))
    if syn.release is None:
        raise refusal(name, syn, "it has no release record to draw from.")
    keep = np.ones(len(idx), bool)
    release = dataclasses.replace(syn.release, domain=f"from {syn.name}")
    build.releases.append(release)
    build.hidden_cells = 0
    released = Released(est["n"], est["n"], keep, release)
    cells = run.cell_frame(fam, panel, [], idx, table, released, door)
    est["keep"] = keep
    lyr.data = mark_layer(run, run.shape(cells, est))
    keep_build(lyr, build.done())


def is_summary(lyr: Any) -> bool:
    """Whether a layer's stat is drawn here."""
    return type(lyr.stat).__name__ in SUMMARIES
