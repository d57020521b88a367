"""Figures drawn from a synopsis: post-processing of its one release.

``ggplot(syn, aes("class", fill="drv")) + geom_bar(stat="count_dp")``
draws the synopsis's consistent counts with the stat's own shaping, with
no new noise and no new charge: the layer's release record is the
synopsis's (the same identity, so the report composes one release).

A layer on a synopsis is a private count or histogram layer
(:data:`DRAWN`) whose columns are declared dimensions of the synopsis
and whose marginal (its position, group and facet columns) the synopsis
holds or sums from one it holds. Its cells are the held table's cells
(each a row with its consistent count as the weight); a histogram's bins
must be unions of the declared fine bins (checked on each fine bin's two
ends). Anything else is refused before any drawing, naming what the
synopsis holds.

Intervals are about the linear estimate ``L(raw)`` (the consistency
step without its clipping, :meth:`Synopsis.linear`), whose error ``L``
of the noise does not depend on the data: ``SIMS`` draws of the
release's noise (discrete Laplace of each table's public scale, a fixed
public seed) added to a large consistent table (so no count is clipped:
the estimator is then ``L``), made consistent as the release was. A
drawn cell's interval is its linear estimate minus the ``(1 +- level) /
2`` quantiles of its simulated error, clipped at 0; a curve's is its
family's own simulation around the linear fine counts. Both are widened
to hold the drawn (consistent) mark (:data:`HOLD_MARK`).

A CKM synopsis (``method="ckm"``) is drawn by the CKM stats
(``count_ckm``, ``bin_ckm``, ``bin2d_ckm``), each drawn cell one
perturbed cell of a held marginal (never a sum of them), with the stat's
own intervals from the p-table's noise; a DP stat on it, or a CKM stat
on a DP synopsis, is refused naming the twin (:func:`check_method`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from plotnine.mapping.aes import aes
from plotnine.mapping.evaluation import evaluate

from .._compat import keep_build, layer_mapping
from ..cells import categorical_dimension, combined_codes
from ..door import (
    LayerBuild,
    _source_frame,
    charged_as,
    is_private,
    make_door,
)
from ..engines.push import assemble_counts
from ..exceptions import PlotninePrivateError
from ..mechanisms.release.records import Released
from ..mechanisms.samplers.laplace import dlap_variance
from ..stats.intervals import NoiseModel, add_count_bounds
from .ckm import ptable_words
from .consistency import make_consistent
from .result import Synopsis

if TYPE_CHECKING:
    from plotnine import ggplot
    from plotnine.layer import layer

__all__ = [
    "SIMS",
    "compute_from_synopsis",
    "simulated_errors",
    "synopsis_layer",
]

#: the stats a synopsis draws, and the aesthetics its family reads
DRAWN = {
    "stat_count_dp": ("x",),
    "stat_bin_dp": ("x",),
    "stat_bin2d_dp": ("x", "y"),
    "stat_bin_2d_dp": ("x", "y"),
    "stat_density_dp": ("x",),
    "stat_ecdf_dp": ("x",),
    "stat_boxplot_dp": ("y",),
    "stat_violin_dp": ("y",),
    # from a CKM synopsis: its perturbed cells, one drawn cell each
    "stat_count_ckm": ("x",),
    "stat_bin_ckm": ("x",),
    "stat_bin2d_ckm": ("x", "y"),
    "stat_bin_2d_ckm": ("x", "y"),
}
#: curves from a fine histogram: the synopsis's fine bins are theirs
_FINE = {
    "stat_density_dp",
    "stat_ecdf_dp",
    "stat_boxplot_dp",
    "stat_violin_dp",
}
#: the stats whose positions are numeric dimensions (the others: levels)
_BINNED = {
    "stat_bin_dp",
    "stat_bin2d_dp",
    "stat_bin_2d_dp",
    "stat_bin_ckm",
    "stat_bin2d_ckm",
    "stat_bin_2d_ckm",
    *_FINE,
}
#: parameters that would make a new release: a synopsis figure has none
_RELEASE_PARAMS = ("eps", "seed")
#: simulated draws of the release's noise for the intervals, and their
#: public seed
SIMS = 1000
SIM_SEED = 5_2026
#: whether an interval is widened to hold its drawn mark (the consistent
#: estimate's, which the interval around the linear estimate may miss)
HOLD_MARK = True
#: the smallest cell of the simulation's consistent table, in noise
#: scales: the noise reaches it with chance exp(-1e4), so the estimator
#: never clips
_LARGE = 1e4


def synopsis_layer(plot: ggplot, lyr: layer) -> bool:
    """Whether a layer's data are a :class:`Synopsis`."""
    return isinstance(_source_frame(plot, lyr), Synopsis)


def refusal(name: str, syn: Synopsis, why: str) -> PlotninePrivateError:
    return PlotninePrivateError(
        f"{name} on {syn.name}: {why} The synopsis holds the marginals "
        f"{syn.marginals} of the declared columns {syn.columns}."
    )


def compute_from_synopsis(lyr: layer, plot: ggplot) -> None:
    """Draw a private layer from a synopsis (refuse anything else); sets
    the layer's data to the stat's rows of the synopsis's cells."""
    syn = _source_frame(plot, lyr)
    name = type(lyr.stat).__name__
    if not is_private(lyr):
        raise refusal(
            name,
            syn,
            "a layer that is not private would need the records, and a "
            "synopsis holds none. Use stat="
            + (
                "'count_ckm' or 'bin_ckm'."
                if syn.ckm
                else "'count_dp' or 'bin_dp'."
            ),
        )
    check_method(name, syn, lyr.stat)
    if name not in DRAWN:
        kind = "CKM" if syn.ckm else "this stat"
        drawn = [k for k in DRAWN if k.endswith("_ckm") == syn.ckm]
        raise refusal(
            name,
            syn,
            f"{kind} is not drawn from a synopsis: use one of {drawn}.",
        )
    given = [k for k in _RELEASE_PARAMS if lyr.stat.params.get(k) is not None]
    if syn.ckm:
        _check_ckm_params(name, syn, lyr.stat.params)
    elif given:
        raise refusal(
            name,
            syn,
            f"{given[0]}={lyr.stat.params[given[0]]:g} would make a new "
            f"release; a figure from the synopsis is post-processing of its "
            f"one release (eps={syn.eps:g}, charged once): remove "
            f"{', '.join(f'{k}=' for k in given)}.",
        )
    cols = declared_columns(name, syn, lyr)
    evaled = evaluated_types(lyr, plot)
    build = LayerBuild(make_door(plot, lyr, None))
    with charged_as(plot, lyr):
        lyr.data = _draw(lyr.stat, cols, evaled, build, syn)
    keep_build(lyr, build.done())


def check_method(name: str, syn: Synopsis, stat: Any) -> None:
    """A DP stat draws from a DP synopsis, a CKM stat from a CKM one
    (the other is refused, naming the twin that draws it)."""
    dp = bool(getattr(stat, "DP", False))
    family = name.removeprefix("stat_").rsplit("_", 1)[0]
    if dp and syn.ckm:
        raise refusal(
            name,
            syn,
            "a DP stat does not draw a CKM synopsis (its cells were "
            "perturbed by the Cell Key Method, with no eps): use its CKM "
            f"twin, stat='{family}_ckm'.",
        )
    if not dp and not syn.ckm:
        raise refusal(
            name,
            syn,
            "CKM is not drawn from a synopsis released with DP (its counts "
            f"carry discrete Laplace noise): use stat='{family}_dp', or "
            "release a CKM table set (pp.synopsis(..., method='ckm')).",
        )


def _check_ckm_params(name: str, syn: Synopsis, params: dict) -> None:
    """A CKM figure from the synopsis draws its perturbed cells: a
    ``ptable=`` or ``threshold=`` other than its own would be another
    perturbation."""
    pt = params.get("ptable")
    if pt is not None and pt != syn.ptable:
        raise refusal(
            name,
            syn,
            "ptable= is not the synopsis's p-table "
            f"({ptable_words(syn.ptable, _ptable_params(syn))}); a figure "
            "from the synopsis "
            "draws its perturbed cells: remove ptable=.",
        )
    thr = params.get("threshold")
    if thr is not None and thr != syn.threshold:
        raise refusal(
            name,
            syn,
            f"threshold={thr:g} is not the synopsis's ({syn.threshold}); "
            "a figure from the synopsis draws its perturbed cells: remove "
            "threshold=.",
        )


def _ptable_params(syn: Synopsis) -> dict | None:
    """The p-table's parameters as its release record names them (a
    loaded synopsis's p-table was read from text: its own are not)."""
    return None if syn.release is None else syn.release.details.get("ptable")


def declared_columns(name: str, syn: Synopsis, lyr: layer) -> dict[str, str]:
    """Aesthetic -> the declared column of the synopsis it names (a bare
    name, refused otherwise)."""
    cols: dict[str, str] = {}
    for ae, expr in layer_mapping(lyr).items():
        column = getattr(expr, "_expr", expr)
        if not isinstance(column, str) or column not in syn.dims:
            raise refusal(
                name,
                syn,
                f"aes({ae}={column!r}) must name a declared column of the "
                "synopsis.",
            )
        cols[str(ae)] = column
    return cols


def evaluated_types(lyr: layer, plot: ggplot) -> pd.DataFrame:
    """The layer's mapping evaluated on the synopsis's typed frame of no
    rows, its scales trained on the types (no value), a ``PANEL``
    column: what the door reads of the rows."""
    evaled = evaluate(layer_mapping(lyr), lyr.data, plot.environment)
    plot.scales.add_defaults(evaled, aes(**{str(c): c for c in evaled}))
    evaled["PANEL"] = pd.Series([], dtype=int)
    return evaled


def _cell_rows(
    syn: Synopsis, columns: list[str], edges: bool
) -> tuple[dict[str, np.ndarray], np.ndarray, tuple[str, ...]]:
    """One row per cell of the marginal of ``columns``: each column's
    value (a level, or a fine bin's centre; ``edges``: its two ends
    instead, as ``(left, right)``), the consistent counts, and the
    marginal's column order."""
    want = tuple(dict.fromkeys(columns))
    counts = syn.counts(want)
    grids = np.meshgrid(
        *(np.arange(syn.dims[d].bins) for d in want), indexing="ij"
    )
    values: dict[str, Any] = {}
    for d, g in zip(want, grids):
        dim = syn.dims[d]
        if dim.levels is not None:
            values[d] = pd.Categorical.from_codes(
                g.ravel(), categories=pd.Index(list(dim.levels))
            )
        else:
            assert dim.limits is not None and dim.resolution is not None
            left = dim.limits[0] + g.ravel() * dim.resolution
            right = left + dim.resolution
            values[d] = (left, right) if edges else (left + right) / 2
    return values, counts.ravel(), want


def _draw(stat, cols, evaled, build, syn: Synopsis) -> pd.DataFrame:
    name = type(stat).__name__
    stat = stat.for_build(build)
    # the copy's own parameters: what is set below never reaches the
    # user's stat (a second build, pp.geom_noise() after the layer)
    stat.params = dict(stat.params)
    door = build.door
    # the mechanism a family makes to lay out its bins draws nothing here
    if syn.ckm:
        stat.params["ptable"] = build.ptable = syn.ptable
        stat.params["threshold"] = syn.threshold
    else:
        stat.params["eps"] = syn.eps
    for ae in DRAWN[name]:
        if ae not in cols:
            raise refusal(name, syn, f"aes({ae}=...) is required.")
    position = {ae: cols[ae] for ae in DRAWN[name]}
    numeric = [ae for ae, c in position.items() if syn.dims[c].numeric]
    if name not in _BINNED and numeric:
        raise refusal(
            name,
            syn,
            f"x={cols['x']!r} is a numeric dimension: draw its histogram "
            "with stat='bin_dp'.",
        )
    if name in _BINNED:
        levels = [ae for ae in position if ae not in numeric]
        if levels:
            raise refusal(
                name,
                syn,
                f"{levels[0]}={cols[levels[0]]!r} is a categorical "
                "dimension: draw its bars with stat='count_dp'.",
            )
        _on_declared_grid(stat, name, [syn.dims[c] for c in position.values()])
    stat.check_input(evaled)
    stat.build.records = evaled
    gcols = stat.group_columns(evaled)
    facets = list(door.facet_columns)
    for f in facets:
        if f not in syn.dims:
            raise refusal(
                name,
                syn,
                f"the facet variable {f!r} is not a declared column.",
            )
    columns = (
        [cols[ae] for ae in DRAWN[name]] + [cols[g] for g in gcols] + facets
    )
    try:
        values, counts, want = _cell_rows(syn, columns, edges=False)
    except PlotninePrivateError:
        raise refusal(
            name,
            syn,
            f"the figure needs the marginal "
            f"{tuple(dict.fromkeys(columns))}, which is not held"
            + (
                " (a CKM synopsis draws the marginals it holds, never a "
                "sum of perturbed cells)"
                if syn.ckm
                else ", nor summed from a marginal held"
            )
            + ": declare it in the synopsis's workload=[...] (a new "
            "release), or draw one it holds.",
        ) from None
    rows = _rows(values, cols, gcols, facets, door, name)
    fam = stat.family_cells(rows, door.scales)
    if numeric:
        _check_on_grid(stat, syn, cols, door, name)
        if syn.ckm:
            _one_fine_bin_each(stat, syn, cols, door, name)
    gdims = [
        categorical_dimension(c, rows[c], stat.declared_of(c)) for c in gcols
    ]
    panel = stat.panel_dimension(rows, door)
    dims = [panel, *gdims, fam.dimension()]
    table, idx = assemble_counts(
        dims, np.ones(len(rows), dtype=np.int64), weighted=counts
    )
    values_out = np.asarray(table.weighted, dtype=float)
    release = syn.release
    if release is None:
        raise refusal(name, syn, "it has no release record to draw from.")
    keep = np.ones(len(values_out), bool)
    if syn.ckm and syn.threshold is not None:
        # shown as count_ckm shows them: a count below the threshold is
        # hidden (each drawn cell is one cell of the synopsis)
        keep = ~(values_out < syn.threshold)
    # the linear estimate of the same cells (DP), which the intervals
    # centre on: its error is L of the noise, simulated exactly
    linear = values_out
    if not syn.ckm:
        lin = syn.counts(want, linear=True).ravel()
        lin_table, _ = assemble_counts(
            dims, np.ones(len(rows), dtype=np.int64), weighted=lin
        )
        linear = np.asarray(lin_table.weighted, dtype=float)
    # a count layer's unclipped count (noisy_count) is the linear
    # estimate, as a release's is its noisy count before clipping; a
    # curve's fine histogram is the consistent counts it draws
    unclipped = values_out.copy() if name in _FINE else linear.copy()
    released = Released(values_out, unclipped, keep, release)
    # the synopsis's release, said to be drawn from it: the same identity,
    # so the report composes it once however many figures repeat it
    release = dataclasses.replace(release, domain=f"from {syn.name}")
    stat.build.releases.append(release)
    # CKM: whole perturbed counts, shown as count_ckm shows them
    stat.build.weighted = not syn.ckm
    # CKM: how many cells with records a threshold hid is not known here
    stat.build.hidden_cells = None if syn.ckm else 0
    cells = stat.cell_frame(fam, panel, gdims, idx, table, released, door)
    if syn.ckm:
        # each drawn cell is one perturbed cell: the stat's own
        # intervals, from the p-table's noise (set above)
        pass
    elif name in _FINE:
        # a curve's intervals: the family's own simulation around the
        # linear estimate's fine histogram, with the synopsis's simulated
        # errors as the noise of its fine bins
        linear_hist = stat.fine_histogram(
            cells, Released(values_out, linear, keep, released.release)
        )
        stat.add_intervals = _curve_intervals(
            stat, syn, want, cols, linear_hist
        )
    else:
        # a count's intervals, simulated through the estimator
        stat.add_intervals = _count_intervals(
            stat,
            syn,
            want,
            dims,
            (fam, panel, gdims, idx, table, released),
            linear,
        )
    return stat.finish_output(cells, released)


@dataclasses.dataclass(frozen=True)
class SynopsisNoise(NoiseModel):
    """The noise of a fine histogram drawn from a synopsis, for the
    curve families' interval simulations (:class:`~plotnine_private.
    stats.intervals.NoiseModel`'s ``draw``): the synopsis's simulated
    errors of the fine bins of one group (:func:`simulated_errors`; the
    groups of one table are alike under the estimator, which treats its
    levels alike), summed into the family's bins. Draws repeat the
    ``SIMS`` simulated ones when more are asked for. Public: a function
    of the synopsis's shape and scale."""

    shape: tuple = ()
    scales: float | tuple = 0.0
    want: tuple = ()
    fine: str = ""
    family_bin: tuple = ()

    def errors(self) -> np.ndarray:
        """``(SIMS, k)``: one group's simulated fine-bin errors."""
        held = next(m for m, _ in self.shape if set(self.want) <= set(m))
        marginals = [m for m, _ in self.shape]
        err = _simulated(self.shape, self.scales, SIMS)[marginals.index(held)]
        drop = tuple(1 + k for k, d in enumerate(held) if d not in self.want)
        err = err.sum(axis=drop) if drop else err
        kept = [d for d in held if d in self.want]
        # the fine axis last, the first level of every other
        axis = 1 + kept.index(self.fine)
        err = np.moveaxis(err, axis, -1)
        err = err.reshape(err.shape[0], -1, err.shape[-1])[:, 0, :]
        k = max(self.family_bin) + 1
        out = np.zeros((err.shape[0], k))
        np.add.at(out.T, np.asarray(self.family_bin), err.T)
        return out

    def draw(self, u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
        err = self.errors()
        sims = u1.shape[-2] if u1.ndim > 1 else 1
        reps = -(-sims // err.shape[0])
        err = np.tile(err, (reps, 1))[:sims]
        return np.broadcast_to(err, u1.shape).copy()


def _curve_intervals(stat, syn, want, cols, linear_hist):
    """A fine family's ``add_intervals`` for this build: its own
    simulation (``curve_intervals``) under :class:`SynopsisNoise`, around
    ``linear_hist`` (the drawn fine histogram's groups, with the linear
    estimate as their unclipped counts)."""
    fine = cols[DRAWN[type(stat).__name__][0]]
    dim = syn.dims[fine]
    assert dim.limits is not None and dim.resolution is not None
    centres = dim.limits[0] + (np.arange(dim.bins) + 0.5) * dim.resolution

    def curve_intervals(out: pd.DataFrame, released: Released) -> None:
        hist = stat.build.fine
        if not len(out) or not len(hist.info):
            for col in stat.INTERVALS:
                out[f"{col}_low"] = out[f"{col}_high"] = out[col]
            return
        edges = np.asarray(stat.edges, dtype=float)
        family_bin = np.clip(
            np.searchsorted(edges, centres, side="right") - 1,
            0,
            len(edges) - 2,
        )
        key = _scale_key(syn)
        model = SynopsisNoise(
            "synopsis",
            float(np.max(key)),
            shape=tuple((m, syn.tables[m].shape) for m in syn.marginals),
            scales=key,
            want=tuple(want),
            fine=fine,
            family_bin=tuple(int(b) for b in family_bin),
        )
        stat.curve_intervals(out, linear_hist, model)
        if HOLD_MARK:
            hold_marks(out, stat.INTERVALS)

    return curve_intervals


def hold_marks(out: pd.DataFrame, columns) -> None:
    """Widen each interval of ``columns`` to hold its drawn mark (the
    consistent estimate's), in place."""
    for col in columns:
        mark = out[col].to_numpy(dtype=float)
        low = out[f"{col}_low"].to_numpy(dtype=float)
        high = out[f"{col}_high"].to_numpy(dtype=float)
        out[f"{col}_low"] = np.fmin(low, mark)
        out[f"{col}_high"] = np.fmax(high, mark)


def _count_intervals(stat, syn, want, dims, parts, linear):
    """The count layer's ``add_intervals`` for this build: its cells'
    ``linear`` estimates minus the quantiles of their simulated errors
    (:func:`simulated_errors`), mapped to its rows."""
    fam, panel, gdims, idx, table, released = parts
    code, bad = combined_codes(dims)
    errors = _cell_errors(syn, want, code, bad, table.n.size)
    door = stat.build.door
    order = _row_cells(stat, fam, panel, gdims, idx, table, released, door)
    level = stat.params.get("level", 0.95)
    lo_q, hi_q = np.quantile(
        errors, [(1 - level) / 2, (1 + level) / 2], axis=0
    )
    col = stat.COUNT_COLUMN

    def simulated_intervals(out: pd.DataFrame, _released: Released) -> None:
        if not len(out):
            return
        base = linear[order]
        n_low, n_high = lo_q[order], hi_q[order]
        if HOLD_MARK:
            # the noise's ends moved out to the drawn count: its interval
            # (and its scaled columns') holds it
            shift = base - out[col].to_numpy(dtype=float)
            n_low, n_high = np.minimum(n_low, shift), np.maximum(n_high, shift)
        add_count_bounds(out, (n_low, n_high), column=col, base=base)

    return simulated_intervals


def _on_declared_grid(stat, name: str, dims: list) -> None:
    """Without breaks, a binned layer on a synopsis cuts its declared
    grid: its limits, bins from their first edge, and (2-D, unless bins
    or binwidth are given) the declared resolution."""
    p = stat.params
    limits = [d.limits for d in dims]
    if name in _FINE:
        # the fine histogram is the synopsis's: its limits and bins
        if p.get("limits") is None:
            p["limits"] = limits[0]
            p["bins"] = dims[0].bins
        return
    if p.get("breaks") is not None:
        return
    if name in ("stat_bin_dp", "stat_bin_ckm"):
        if p.get("limits") is None:
            p["limits"] = limits[0]
        if p.get("boundary") is None and p.get("center") is None:
            p["boundary"] = limits[0][0]
        # CKM draws the declared fine bins (never a sum of them)
        if (
            name == "stat_bin_ckm"
            and p.get("binwidth") is None
            and p.get("bins") == type(stat).DEFAULT_PARAMS["bins"]
        ):
            p["binwidth"] = dims[0].resolution
        return
    if p.get("limits") is None:
        p["limits"] = tuple(limits)
    default_bins = type(stat).DEFAULT_PARAMS["bins"]
    if p.get("binwidth") is None and p.get("bins") == default_bins:
        p["binwidth"] = tuple(d.resolution for d in dims)


def _rows(values, cols, gcols, facets, door, name) -> pd.DataFrame:
    """The marginal's cells as the layer's rows (aesthetic columns and
    ``PANEL``, from each cell's facet values)."""
    n = len(next(iter(values.values())))
    rows = pd.DataFrame(index=pd.RangeIndex(n))
    for ae in DRAWN[name]:
        rows[ae] = values[cols[ae]]
    for g in gcols:
        rows[g] = values[cols[g]]
    if facets:
        index = {tuple(v): k + 1 for k, v in enumerate(door.panel_values)}
        keys = zip(*(np.asarray(values[f], dtype=object) for f in facets))
        rows["PANEL"] = [index.get(tuple(k), 0) for k in keys]
    else:
        rows["PANEL"] = 1
    return rows


def _check_on_grid(stat, syn, cols, door, name):
    """A histogram's bins must be unions of fine bins: both ends of every
    fine bin of each position (nudged inwards; the other position at its
    first fine bin's centre) fall in one bin."""
    positions = DRAWN[name]
    firsts = {}
    for ae in positions:
        d = syn.dims[cols[ae]]
        assert d.limits is not None and d.resolution is not None
        firsts[ae] = d.limits[0] + d.resolution / 2
    for ae in positions:
        column = cols[ae]
        dim = syn.dims[column]
        assert dim.resolution is not None and dim.limits is not None
        left, right = _fine_edges(dim)
        nudge = dim.resolution * 1e-6
        probe = pd.DataFrame(
            {ae: np.concatenate([left + nudge, right - nudge])}
        )
        for other in positions:
            if other != ae:
                probe[other] = firsts[other]
        codes = np.asarray(stat.family_cells(probe, door.scales).code)
        k = len(left)
        if not np.array_equal(codes[:k], codes[k:]):
            raise refusal(
                name,
                syn,
                f"its bins do not follow the declared fine bins of "
                f"{column!r} (width {dim.resolution:g} from "
                f"{dim.limits[0]:g}, limits {dim.limits}): give binwidth= "
                f"a whole multiple of {dim.resolution:g} and boundary= on "
                "that grid (or breaks= on it).",
            )


def _fine_edges(dim) -> tuple[np.ndarray, np.ndarray]:
    """The two ends of each declared fine bin of a numeric dimension."""
    assert dim.limits is not None and dim.resolution is not None
    left = dim.limits[0] + np.arange(dim.bins) * dim.resolution
    return left, left + dim.resolution


def _one_fine_bin_each(stat, syn, cols, door, name) -> None:
    """CKM: each bin is one declared fine bin (a wider one would be a
    sum of perturbed cells, which is not a perturbed cell)."""
    for ae in DRAWN[name]:
        column = cols[ae]
        dim = syn.dims[column]
        assert dim.resolution is not None
        left, right = _fine_edges(dim)
        probe = pd.DataFrame({ae: (left + right) / 2})
        for other in DRAWN[name]:
            if other != ae:
                d = syn.dims[cols[other]]
                assert d.limits is not None and d.resolution is not None
                probe[other] = d.limits[0] + d.resolution / 2
        codes = np.asarray(stat.family_cells(probe, door.scales).code)
        if len(np.unique(codes)) != len(codes):
            raise refusal(
                name,
                syn,
                f"its bins sum fine bins of {column!r}, and a sum of cells "
                "perturbed by the Cell Key Method is not a perturbed cell: "
                f"draw the declared fine bins (binwidth={dim.resolution:g}, "
                "the default), or declare a coarser resolution in dims=.",
            )


def _row_cells(
    stat, fam, panel, gdims, idx, table, released, door
) -> np.ndarray:
    """Which cell each of the layer's rows shows: the stat's shaping run
    once on the cell numbers 1, 2, ... as counts (0 where the released
    count is 0, so that the cells a layer drops with ``drop=True`` are
    dropped again)."""
    k = len(released.values)
    probe_values = np.where(
        released.values > 0, np.arange(1, k + 1, dtype=float), 0.0
    )
    probe = Released(
        probe_values, probe_values, released.keep, released.release
    )
    cells = stat.cell_frame(fam, panel, gdims, idx, table, probe, door)
    shaped = stat.shape_output(cells, probe)
    return (
        np.rint(shaped[stat.COUNT_COLUMN].to_numpy(dtype=float)).astype(
            np.int64
        )
        - 1
    )


def simulated_errors(
    syn: Synopsis, sims: int = SIMS
) -> dict[tuple[str, ...], np.ndarray]:
    """``sims`` draws of each held table's error (released minus true),
    simulated through the consistency estimator (see the module
    docstring): a function of public parameters only (the marginals,
    their shapes, the noise scale), computed once for them."""
    shape = tuple((m, syn.tables[m].shape) for m in syn.marginals)
    return dict(zip(syn.marginals, _simulated(shape, _scale_key(syn), sims)))


def _scale_key(syn: Synopsis) -> float | tuple[float, ...]:
    """Each table's own scale (unequal shares of eps), else the one
    scale: the public noise :func:`_simulated` draws."""
    scales = tuple(float(syn.scales.get(m, syn.scale)) for m in syn.marginals)
    return scales[0] if len(set(scales)) == 1 else scales


@functools.lru_cache(maxsize=8)
def _simulated(
    shape: tuple[tuple[tuple[str, ...], tuple[int, ...]], ...],
    scale: float | tuple[float, ...],
    sims: int,
) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(SIM_SEED)
    marginals = [m for m, _ in shape]
    shapes = [s for _, s in shape]
    scales = [scale] * len(shapes) if isinstance(scale, float) else scale
    # uniform over the declared cells: every table has the same total,
    # and its smallest cell is _LARGE noise scales (plus one)
    total = (_LARGE * max(scales) + 1.0) * max(math.prod(s) for s in shapes)
    truth = [np.full(s, total / math.prod(s)) for s in shapes]
    # discrete Laplace of each table's scale: the difference of two
    # geometric counts of failures
    ps = [-math.expm1(-1.0 / b) for b in scales]
    # the consistency's weights: each table's variance (None: equal, as
    # the release made it)
    variances = (
        None
        if isinstance(scale, float)
        else [dlap_variance(b) for b in scales]
    )
    out = [np.empty((sims, *s)) for s in shapes]
    for i in range(sims):
        noisy = [
            t + (rng.geometric(p, t.shape) - rng.geometric(p, t.shape))
            for t, p in zip(truth, ps)
        ]
        made, _ = make_consistent(noisy, marginals, variances)
        for k, (t, c) in enumerate(zip(truth, made)):
            out[k][i] = c - t
    for a in out:
        a.flags.writeable = False  # shared by every figure of that shape
    return tuple(out)


def _cell_errors(syn, want, code, bad, ncells) -> np.ndarray:
    """``(SIMS, ncells)``: each drawn cell's simulated error, the sum of
    the errors of the marginal's cells in it."""
    held = syn._holder(want)
    err = simulated_errors(syn)[held]
    drop = tuple(1 + k for k, d in enumerate(held) if d not in want)
    err = err.sum(axis=drop) if drop else err
    kept = [d for d in held if d in want]
    err = np.transpose(err, [0, *(1 + kept.index(d) for d in want)])
    flat = err.reshape(err.shape[0], -1)[:, ~bad]
    code = code[~bad]
    cells = np.zeros((flat.shape[0], ncells))
    if len(code):
        # the held cells sorted by the drawn cell they add to, summed in
        # runs (a column sum per drawn cell, not one add per element)
        order = np.argsort(code, kind="stable")
        sorted_code = code[order]
        starts = np.flatnonzero(
            np.r_[True, sorted_code[1:] != sorted_code[:-1]]
        )
        cells[:, sorted_code[starts]] = np.add.reduceat(
            flat[:, order], starts, axis=1
        )
    return cells
