"""Private PCA score histogram as a plotnine stat: ``stat_dp_pca_score``.

The stat releases *at the door* (:mod:`plotnine_private.door`): right
after plotnine evaluates the layer's mapping, :meth:`release_at_door`
reads the feature columns from the layer's full rows (``door.rows``),
releases the PCA through :func:`~plotnine_private.pca.fit.fit_pca` and
hands plotnine the released cells (or synthetic points) only. Panels
come from declared facet levels; groups from the discrete aesthetics.
"""

from __future__ import annotations

import copy
import itertools
import numbers
from typing import Any

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat
from plotnine.stats.stat import stat

from .._compat import keep_checked_params
from ..cells import Dimension, categorical_dimension
from ..declarations import Declaration, Declared
from ..door import Door, LayerBuild, level_label
from ..mechanisms.pca.synthetic import adjust_of_scale
from ..pca.api import check_frame_version, make_settings, score_shares
from ..pca.display import released_cells, sample_rows, shown_groups
from ..pca.display import sample_sizes as _sample_sizes
from ..pca.fit import Partition, PCAFit, fit_pca, pca_query
from ..pca.validation import (
    METHODS,
    check_bins,
    check_budget,
    feature_columns,
    numeric_matrix,
)
from ..units import with_unit
from ..validation import (
    fail,
    is_integer,
    is_real,
    renamed,
    validate_choice,
    validate_label,
    validate_layer_data,
    validate_seed,
)
from .base import PrivateCountStat, refuse_unknown_arguments
from .intervals import add_count_bounds, pca_noise_bounds, validate_level
from .marks import draw_noise_marks, mark_layer, validate_noise_marks
from .signal import SignalWarning, warn_once

__all__ = ["stat_dp_pca_score"]

_NAME = "stat_dp_pca_score"
_NOT_GROUPS = {"PANEL", "group", "x", "y"}
_CELL_COLUMNS = ["xmin", "xmax", "ymin", "ymax", "x", "y", "count", "prob"]


@document
class stat_dp_pca_score(Declared, stat):
    """
    Differentially private PCA score histogram (or synthetic points)

    {usage}

    `ggplot(df) + stat_dp_pca_score(columns=[...], eps=2, delta=1e-5,
    seed=1)` draws the private 2-D histogram of the scores on two private
    principal components as tiles shaded by probability. With
    `output="synthetic"` it draws points sampled from that histogram
    (free post-processing). Mapping `fill` (or `colour`/`group`) to a
    discrete column gives one histogram per group (on one shared private
    frame); facets give one per declared panel.

    Pipeline (dppca, see `plotnine_private.dp_score`): private directions
    from the noisy spherical Kendall matrix (Gaussian mechanism) and a
    square private frame from Durfee quantiles, both from all the layer's
    rows and shared by its panels and groups, then one "add" (discrete
    Gaussian) or "sparse" (Karwa-Vadhan) histogram over every panel, group
    and cell. No sample means or SDs are used: `center=True` shifts the
    display by the private frame centre.

    Parameters
    ----------
    {common_parameters}
    columns : list of str, default=None
        Numeric feature columns of the layer data. Default: every numeric
        column not used by an aesthetic or a facet.
    eps : float
        Total budget of the layer (> 0). Required.
    delta : float
        Total delta of the layer, in (0, 1). Required.
    shares : dict, default=None
        Shares of eps and delta for `loading` and `score` (default
        halves). With `directions`, must be None.
    directions : array, default=None
        A p x p orthonormal matrix of directions released before (for
        instance `dp_pca(...).directions`): then no loading budget is
        spent and eps/delta all go to the score.
    bins : int or tuple, default=(20, 20)
        Number of cells along each axis.
    method : {"sparse", "add"}, default="sparse"
        Karwa-Vadhan thresholded histogram, or discrete Gaussian noise on
        every cell (needs declared group levels).
    axes : tuple, default=(1, 2)
        Components on the x and y axes.
    center : bool, default=True
        Display centring by the private frame centre.
    seed : int or str, default=None
        Seed of the release (a label under a key file).
    output : {"histogram", "synthetic"}, default="histogram"
        Tiles (geom rect) or sampled points (geom point).
    n_sample : int, default=None
        Number of synthetic points of the layer (public; default the
        number of rows, public under replace-one adjacency, or under a
        privacy unit the public size `n` below), split over
        panels and groups in proportion to their *released* totals,
        never their true sizes.
    sample_method : {"uniform", "center"}, default="uniform"
        How synthetic points are placed in their cell.
    adjust : float, default=1
        Multiplier of the default Gaussian jitter of synthetic points
        (0.25 cell widths for "uniform", 0.5 for "center"); 0: none.
    scale : array, default=None
        Public column scales to divide by (never sample SDs).
    calibration : {"analytic", "classic"}, default="analytic"
        Gaussian calibration (classic = dppca's formula).
    drop_zero : bool, default=True
        Omit cells whose released probability is 0 (else they would be
        drawn with the smallest alpha of the scale).
    frame_version : {"v2", "v1"}, default="v2"
        Version of the private frame (as in `dp_pca`): "v1" keeps the
        method of the frames of releases made before v2.
    n : int, default=None
        Only with a privacy unit (`pp.source(..., unit=...)`): the
        declared public number of rows the directions are calibrated on
        (as in `dp_pca`); default a private count of the rows kept (5%
        of eps).
    split : dict, default=None
        Deprecated: the old name of `shares`.
    bandwidth_scale : float, default=None
        Deprecated: the jitter in cell widths (`adjust` times the
        default); use `adjust`.

    Notes
    -----
    Computed variables: `count` (released count, clipped at 0), `prob`
    (count over its histogram's released total), `xmin`, `xmax`, `ymin`,
    `ymax`, `x`, `y` (cell centre), and `PC1`, `PC2` (the same centre,
    named by the components: they title the axes); for synthetic output
    `x`, `y` and the `PC` columns.

    Adjacency: replace one row; n and p are public, group and panel sizes
    are not. Under a privacy unit the number of rows kept is not public
    either: the directions use a public size (`n`, or a private count).
    Declared facet panels and groups partition the rows, so the
    histograms of all of them are one release (parallel composition).
    Each build records one engine `Release` per mechanism (directions,
    frame, histogram), kept on the layer
    (`plotnine_private.door.layer_releases`).
    """

    DP = True
    REQUIRED_AES: set[str] = set()
    DEFAULT_AES = {"alpha": after_stat("prob")}
    #: the build the stat's copy works for (see ``release_at_door``)
    build: LayerBuild
    DECLARATION = Declaration(
        family="pca",
        scale_released=True,
        plan_inputs=("delta",),
        example={
            "aes": {},
            "params": {
                "columns": ["num", "num2", "num3"],
                "delta": 1e-5,
                "bins": (4, 4),
                "drop_zero": False,
            },
        },
        title="DP PCA score",
        counterpart="pca_score_plain",
        geoms=(
            "tiles or synthetic points; add `stat_dp_pca_score(...)` as a "
            "layer"
        ),
        replaces="(PCA score plot)",
        plan_bounds=(
            "one tile's probability over `n` records (the axes and frame "
            "are not covered)"
        ),
        # the axes and the frame are released too: every position
        noisy=frozenset(
            {"count", "prob", "x", "y", "xmin", "xmax", "ymin", "ymax"}
            | {"PC1", "PC2"}
        ),
        intervals=("count", "prob"),
        plan="pca",
    )
    DEFAULT_PARAMS = {
        "geom": "rect",
        "position": "identity",
        "na_rm": False,
        "columns": None,
        "eps": None,
        "delta": None,
        "shares": None,
        "directions": None,
        "bins": (20, 20),
        "method": "sparse",
        "axes": (1, 2),
        "center": True,
        "seed": None,
        "output": "histogram",
        "n_sample": None,
        "sample_method": "uniform",
        "adjust": 1.0,
        "scale": None,
        "calibration": "analytic",
        "drop_zero": True,
        "frame_version": "v2",
        "n": None,
        # deprecated names (kept so that plotnine hands them over)
        "split": None,
        "bandwidth_scale": None,
        "level": 0.95,
        "label": None,
        "noise_marks": "fade",
    }
    CREATES = {
        "count",
        "prob",
        "xmin",
        "xmax",
        "ymin",
        "ymax",
        "count_low",
        "count_high",
        "prob_low",
        "prob_high",
        "signal",
    }

    def __init__(self, mapping=None, data=None, **kwargs: Any):
        validate_layer_data(_NAME, mapping, data)
        output = kwargs.get("output", "histogram")
        validate_choice(_NAME, "output", output, ("histogram", "synthetic"))
        if output == "synthetic" and "geom" not in kwargs:
            kwargs["geom"] = "point"
        super().__init__(mapping, data, **kwargs)
        refuse_unknown_arguments(self)
        self._check_params()
        # names the release for readers: never part of its identity
        self.params["label"] = validate_label(_NAME, self.params["label"])
        self.params["noise_marks"] = validate_noise_marks(
            _NAME, self.params["noise_marks"]
        )
        keep_checked_params(self)
        a, b = self.params["axes"]
        # the component names title the axes (plotnine labels an axis by
        # the computed variable its default aesthetic maps)
        self.DEFAULT_AES = {
            "x": after_stat(f"PC{a}"),
            "y": after_stat(f"PC{b}"),
        }
        if output == "histogram":
            self.DEFAULT_AES["alpha"] = after_stat("prob")

    def _check_params(self) -> None:
        """Every check that needs no data, before anything is drawn."""
        p = self.params
        p["eps"], p["delta"] = check_budget(_NAME, p["eps"], p["delta"])
        p["shares"] = renamed(
            _NAME, "split", "shares", p["split"], p["shares"]
        )
        p["split"] = None
        self.shares = score_shares(_NAME, p["shares"], p["directions"])
        check_bins(_NAME, p["bins"])
        validate_choice(_NAME, "method", p["method"], METHODS)
        validate_choice(
            _NAME, "sample_method", p["sample_method"], ("uniform", "center")
        )
        if p["bandwidth_scale"] is not None:
            scale = adjust_of_scale(p["sample_method"], p["bandwidth_scale"])
            p["adjust"] = renamed(
                _NAME, "bandwidth_scale", "adjust", scale, p["adjust"], 1.0
            )
            p["bandwidth_scale"] = None
        adjust = p["adjust"]
        if not is_real(adjust) or not np.isfinite(adjust) or adjust < 0:
            raise fail(
                _NAME, f"adjust must be a finite number >= 0, got {adjust!r}."
            )
        p["seed"] = validate_seed(_NAME, p["seed"])
        p["frame_version"] = check_frame_version(_NAME, p["frame_version"])
        p["level"] = validate_level(_NAME, p["level"])
        n = p["n_sample"]
        if n is not None and (
            not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0
        ):
            raise fail(
                _NAME, f"n_sample must be None or an int >= 0, got {n!r}."
            )
        axes = p["axes"]
        ok = (
            isinstance(axes, (tuple, list))
            and len(axes) == 2
            and all(is_integer(v) and v >= 1 for v in axes)
            and axes[0] != axes[1]
        )
        if not ok:
            raise fail(
                _NAME,
                f"axes must be two different component numbers >= 1, got "
                f"{axes!r}.",
            )

    # -- plotnine entry points -------------------------------------------
    def setup_params(self, data):
        pass

    # -- the door ---------------------------------------------------------
    def release_at_door(
        self, data: pd.DataFrame, build: LayerBuild
    ) -> pd.DataFrame:
        """Release the layer's PCA and return its cells (or points); the
        releases go to ``build``, on a copy of the stat (see
        :meth:`PrivateCountStat.for_build
        <plotnine_private.stats.base.PrivateCountStat.for_build>`)."""
        run = copy.copy(self)
        run.build = build
        return run.release_rows(data, build.door)

    def release_rows(self, data: pd.DataFrame, door: Door) -> pd.DataFrame:
        """:meth:`release_at_door` on the copy that carries the build."""
        p = self.params
        mapped = sorted({"x", "y"} & set(door.mapping))
        if mapped:
            raise fail(
                _NAME,
                f"{' and '.join(mapped)} must not be mapped: the stat "
                "computes the positions (the private scores). Name the "
                "features with columns=[...].",
            )
        rows = _aligned_rows(door, data)
        used = (
            {v for v in door.mapping.values() if v in rows.columns}
            | set(door.facet_columns)
            | {"PANEL"}
            # the privacy unit's identifiers are not features
            | {c for c in (door.unit.column, door.unit.record_id) if c}
        )
        cols = feature_columns(
            _NAME,
            rows,
            p["columns"],
            sorted(used, key=str),
            where="the layer data",
        )
        x, cols = numeric_matrix(_NAME, rows, cols)
        settings = make_settings(
            _NAME,
            cols,
            eps=p["eps"],
            delta=p["delta"],
            shares=self.shares,
            bins=p["bins"],
            method=p["method"],
            axes=p["axes"],
            center=p["center"],
            seed=p["seed"],
            k=None,
            scale=p["scale"],
            scree_clip=None,
            calibration=p["calibration"],
            estimator="auto",
            directions=p["directions"],
            frame_version=p["frame_version"],
            unit=door.unit,  # its rows are bounded at the door
            n=p["n"],
        )
        if settings.scale is not None:
            x = x / settings.scale
        groups = _GroupDims.of(data, rows, door)
        panel = PrivateCountStat.panel_dimension(data, door)
        partition = Partition(
            panel.codes,
            groups.codes,
            panel_labels=list(door.panel_labels),
            group_levels=groups.levels,
            groups_declared=groups.declared,
            panels=door.panels,
        )
        query = with_unit(
            pca_query(
                settings,
                cols,
                door.source,
                group=groups.query_part(door),
                facets=door.facet_columns,
                panel_labels=door.panel_labels,
            ),
            door.unit,
        )
        fit = fit_pca(settings, x, partition, query, door.data_object)
        self.build.releases = list(fit.releases)
        cells = _cell_rows(fit, partition, groups, door)
        self.add_intervals(cells)
        # rows are public only when each is its own unit (replace-one):
        # how many rows a bounded unit kept is not
        self.warn_thin(cells, None if door.unit.bounded else len(data))
        a, b = settings.axes
        if p["output"] == "synthetic":
            # the public size: the rows (replace-one), or under a unit
            # the declared or privately counted one
            n = fit.n if p["n_sample"] is None else p["n_sample"]
            out = _synthetic_rows(fit, cells, partition, p, n)
        else:
            out = cells
            if p["drop_zero"]:
                out = out[out["prob"] > 0].reset_index(drop=True)
        out = out.drop(columns=["_panel", "_g"])
        out[f"PC{a}"] = out["x"]
        out[f"PC{b}"] = out["y"]
        return mark_layer(self, out)

    def finish_layer(self, data: pd.DataFrame) -> pd.DataFrame:
        """Draw the tiles that are only noise as ``noise_marks`` says
        (:func:`~plotnine_private.stats.marks.draw_noise_marks`)."""
        draw_noise_marks(data, self.params["noise_marks"])
        return data

    def warn_thin(self, cells: pd.DataFrame, n_rows: int | None) -> None:
        """Say so when the released tiles hold less than half the layer's
        rows (``n_rows``, public under replace-one adjacency) or, where
        rows are bounded per unit (``n_rows`` None: how many a unit kept
        is private), when less than a quarter of the frame's tiles are
        shown: the frame asks more tiles than the records can fill above
        the noise. Either way the test reads released values only."""
        shown = float(cells["count"].sum()) if len(cells) else 0.0
        p = self.params
        bx, by = p["bins"] if np.ndim(p["bins"]) else (p["bins"],) * 2
        if n_rows is None:
            lit = int((cells["count"] > 0).sum()) if len(cells) else 0
            if lit >= 0.25 * bx * by:
                return
            held = f"are {lit} of the {bx}x{by} frame's {bx * by}"
        elif shown >= 0.5 * n_rows:
            return
        else:
            held = (
                f"hold {shown:.0f} of the layer's {n_rows} rows over a "
                f"{bx}x{by} frame"
            )
        hist = [
            r for r in self.build.releases if r.family.endswith("histogram")
        ]
        tau = hist[-1].details.get("threshold") if hist else None
        why = (
            f"tiles below a noisy count of {tau:.3g} are hidden"
            if tau is not None
            else "the tiles' noise is as large as their counts"
        )
        warn_once(
            (_NAME, "thin tiles"),
            f"{_NAME}: the released tiles {held} ({why}): the score plot "
            "shows too little to read. Use coarser bins (e.g. bins=(8, "
            "8)), more eps (plan it with pp.accuracy('dp_pca_score', "
            "...)) or more records.",
            SignalWarning,
            stacklevel=3,
        )

    def add_intervals(self, cells: pd.DataFrame) -> None:
        """``count_low``/``count_high``, ``prob_low``/``prob_high`` of the
        tiles from the histogram's public noise (the axes and the frame,
        private estimates too, are not covered)."""
        hist = [
            r for r in self.build.releases if r.family.endswith("histogram")
        ]
        p = self.params
        if not hist or not len(cells):
            for col in ("count", "prob"):
                cells[f"{col}_low"] = cells[f"{col}_high"] = cells[col]
            return
        low, high, _, _ = pca_noise_bounds(hist[-1], p["level"])
        cells["_hist"] = (
            cells["_panel"] * (cells["_g"].max() + 1) + cells["_g"]
        )
        add_count_bounds(cells, (low, high), group="_hist")
        del cells["_hist"]


def _aligned_rows(door: Door, data: pd.DataFrame) -> pd.DataFrame:
    """The layer's full rows in the order of the evaluated ``data``
    (plotnine keeps the index and sorts the rows stably by panel)."""
    rows = door.rows
    if rows is None:  # pragma: no cover - the hook always passes them
        raise fail(_NAME, "the layer's rows did not reach the stat.")
    if rows.index.equals(data.index):
        return rows
    if "PANEL" in rows.columns:
        by_panel = rows.sort_values("PANEL", kind="mergesort")
        if by_panel.index.equals(data.index):
            return by_panel
    if not rows.index.is_unique:
        raise fail(
            _NAME,
            "the layer data has a duplicated index, so its feature columns "
            "cannot be matched to the evaluated rows; reset_index() first.",
        )
    return rows.loc[data.index]


class _GroupDims:
    """The layer's groups: the product of its discrete aesthetics.

    Declared levels (pandas Categorical, polars Enum) are public and kept
    in their declared order; otherwise the values seen, sorted, which
    only the thresholded "sparse" histogram may release.
    """

    def __init__(self, dims: list[Dimension], exprs: list[str], n: int):
        self.dims = dims
        self.exprs = exprs
        if not dims:
            self.codes = np.zeros(n, dtype=np.int64)
            self.levels: list = [None]
            self.declared = True
            return
        sizes = [d.size for d in dims]
        codes = np.stack([d.codes for d in dims])
        bad = (codes < 0).any(axis=0)
        flat = np.ravel_multi_index(np.where(codes < 0, 0, codes), sizes)
        self.codes = np.where(bad, -1, flat).astype(np.int64)
        self.levels = list(itertools.product(*(d.values for d in dims)))
        self.declared = all(d.public for d in dims)

    @classmethod
    def of(cls, data: pd.DataFrame, rows: pd.DataFrame, door: Door):
        dims, exprs = [], []
        seen: set[str] = set()
        aes = [c for c in data.columns if c not in _NOT_GROUPS]
        if "group" in door.mapping:
            aes.append("group")
        for ae in aes:
            expr = door.mapping.get(ae, ae)
            if ae == "group" and expr in rows.columns:
                values = rows[expr]
            else:
                values = data[ae]
            if pd.api.types.is_numeric_dtype(values) and not (
                isinstance(values.dtype, pd.CategoricalDtype)
                or pd.api.types.is_bool_dtype(values)
            ):
                raise fail(
                    _NAME,
                    f"aesthetic {ae!r} maps a continuous variable; only "
                    "discrete aesthetics (fill, colour, group) that define "
                    "groups are supported. Map a categorical column, or "
                    "drop the mapping.",
                )
            if expr in seen:  # fill and colour of one column: one group
                continue
            seen.add(expr)
            dims.append(
                categorical_dimension(
                    ae, values.reset_index(drop=True), door.declared.get(ae)
                )
            )
            exprs.append(expr)
        return cls(dims, exprs, len(data))

    def query_part(self, door: Door) -> tuple | None:
        if not self.dims:
            return None
        return tuple(
            (expr, tuple(d.content[0].tolist()) if d.public else "observed")
            for expr, d in zip(self.exprs, self.dims)
        )

    def label(self, j: int) -> str:
        level = self.levels[j]
        if level is None:
            return ""
        return "|".join(level_label(v) for v in level)


def _cell_rows(
    fit: PCAFit, partition: Partition, groups: _GroupDims, door: Door
) -> pd.DataFrame:
    """The released cells with their aesthetics, group ids and panels."""
    shown = shown_groups(fit, partition)
    out = released_cells(fit, shown)
    gi = out["_g"].to_numpy()
    for k, d in enumerate(groups.dims):
        cats = (
            list(d.values)
            if d.public
            else list(
                dict.fromkeys(groups.levels[j][k] for j in shown.tolist())
            )
        )
        out[d.name] = pd.Categorical(
            [groups.levels[j][k] for j in gi.tolist()], categories=cats
        )
    if groups.declared:
        out["group"] = (gi + 1).astype(np.int64)
    else:  # ids among the groups shown only
        out["group"] = (np.searchsorted(shown, gi) + 1).astype(np.int64)
    layout_panels = door.layout["PANEL"]
    out["PANEL"] = pd.Categorical(
        np.asarray(list(layout_panels), dtype=object)[out["_panel"]],
        categories=layout_panels.cat.categories,
    )
    return out


def _synthetic_rows(
    fit: PCAFit,
    cells: pd.DataFrame,
    partition: Partition,
    params: dict,
    n: int,
) -> pd.DataFrame:
    """``n`` synthetic points (public), split over every shown (panel,
    group) in proportion to its released total."""
    keep = [c for c in cells.columns if c not in _CELL_COLUMNS]
    shown = cells[["_panel", "_g"]].drop_duplicates()
    pairs = list(zip(shown["_panel"].tolist(), shown["_g"].tolist()))
    totals = fit.histogram.total(axis=-1)
    sizes = _sample_sizes(
        np.array([totals[i, g] for i, g in pairs], dtype=float), n
    )
    parts = [cells[keep].iloc[:0].assign(x=[], y=[])]
    for (panel, g), size in zip(pairs, sizes.tolist()):
        rows = cells[(cells["_panel"] == panel) & (cells["_g"] == g)]
        x, y = sample_rows(
            rows,
            size,
            params["sample_method"],
            params["adjust"],
            fit.sample_key_for(
                partition.panel_labels[panel],
                level_label(partition.group_levels[g]),
            ),
        )
        part = rows[keep].iloc[np.zeros(len(x), dtype=np.int64)]
        parts.append(part.assign(x=x, y=y))
    return pd.concat(parts, ignore_index=True)
