"""Private bar counts: ``stat_count_dp`` and ``stat_count_ckm``."""

from __future__ import annotations

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat

from ..cells import object_column
from ..declarations import Declaration, NoiseGeom
from ..families import count_levels
from .base import (
    CKM_PARAMS,
    DP_PARAMS,
    CKMMixin,
    DPMixin,
    FamilyCells,
    PrivateCountStat,
    _fail,
)
from .dates import date_levels_on_axis

__all__ = ["stat_count_ckm", "stat_count_dp"]


def _is_discrete(scale) -> bool:
    from plotnine.scales.scale_discrete import scale_discrete

    return isinstance(scale, scale_discrete)


def _user_discrete_limits(scale) -> list | None:
    limits = getattr(scale, "limits", None)
    if limits is None or callable(limits):
        return None
    return list(limits)


class _CountFamily(PrivateCountStat):
    """Counts per x value (and per fill/colour group, per facet).

    Domain of x, in order of precedence: ``levels=``; the declared levels
    of x (a pandas Categorical or polars Enum column); user scale limits
    (``scale_x_discrete(limits=)``). All of these are public: every level
    gets a count, empty ones included. Otherwise the observed values form
    the domain and the release is thresholded (DP); the x axis then shows
    only released levels, as it is trained on released cells only.
    """

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        # bar heights: released counts, clipped at 0
        return {"y": (0.0, float("inf"))}

    FAMILY = "count"
    DECLARATION = Declaration(
        family="count",
        example={"aes": {"x": "cat"}},
        title="count",
        counterpart="count",
        geoms="`geom_bar`, `geom_text`, `geom_point`",
        plan_bounds="one cell's count",
        noisy=frozenset({"count", "noisy_count", "count_label", "prop"}),
        intervals=("count", "prop"),
        plan="count",
        noise_geom=NoiseGeom("errorbar", "count", {"width": 0.3}),
        counterpart_labels=True,
        engine=True,
    )
    HIDDEN_WORD = "categories"
    REQUIRED_AES = {"x"}
    DEFAULT_AES = {"y": after_stat("count"), "weight": None}
    UNIT_COUNTS = True
    BASE_PARAMS = {
        "geom": "bar",
        "position": "stack",
        "na_rm": False,
        "width": None,
        "levels": None,
        "drop": False,
        "count": "records",
        "missing_level": False,
    }
    CREATES = {"count", "prop", "width", "noisy_count", "signal"}

    def validate_params(self) -> None:
        if not isinstance(
            self.params.get("missing_level", False), (bool, np.bool_)
        ):
            raise _fail(
                self.name,
                f"missing_level must be True or False, got "
                f"{self.params['missing_level']!r}: True releases the "
                "missing value of every declared category as a public "
                "level (drawn as plotnine's NA).",
            )
        levels = self.params.get("levels")
        if levels is not None:
            if isinstance(levels, str) or not hasattr(levels, "__iter__"):
                raise _fail(
                    self.name,
                    f"levels must be a list of the public categories, got "
                    f"{levels!r}.",
                )
            levels = list(levels)
            if len(levels) == 0 or len(set(map(str, levels))) != len(levels):
                raise _fail(
                    self.name,
                    "levels must be a non-empty list without duplicates.",
                )
            self.params["levels"] = levels
        width = self.params.get("width")
        if width is not None and not (np.isfinite(width) and width > 0):
            raise _fail(self.name, f"width must be > 0, got {width!r}.")

    def declared_of(self, column: str) -> list | None:
        """With ``missing_level=True`` a declared category has one more
        public level, the missing value (``None``, last)."""
        levels = super().declared_of(column)
        if levels is None or not self.params.get("missing_level", False):
            return levels
        return [*levels, None]

    def drop_missing(self, data: pd.DataFrame) -> pd.DataFrame:
        # a missing category is a level of its own: only the weights'
        # rule leaves records out
        if not (
            self.params.get("missing_level", False)
            and _is_discrete(self.build.door.scales.x)
            and (
                self.params["levels"] is not None
                or self.declared_of("x") is not None
            )
        ):
            return super().drop_missing(data)
        if "weight" not in data.columns:
            return data
        w = self.checked_weights(data["weight"])
        invalid = ~np.isfinite(w) | (w < 0)
        return data[~invalid] if invalid.any() else data

    def domain(self, scales, rows: pd.DataFrame | None = None):
        discrete = _is_discrete(scales.x)
        self.build.discrete_x = discrete
        levels = self.params["levels"]
        if (
            discrete
            and levels is not None
            and self.params.get("missing_level", False)
        ):
            levels = [*levels, None]
        dated = None
        if not discrete and levels is not None:
            # dates on a date axis: matched by their days, named by their
            # Timestamps (as a table names them)
            dated = date_levels_on_axis(self.name, levels, scales.x, "x")
            if dated is not None:
                levels = dated[1].tolist()
        self.build.dated_x = dated is not None
        family, source = count_levels(
            levels,
            self.declared_of("x"),
            _user_discrete_limits(scales.x) if discrete else None,
            discrete,
        )
        if family.declared is not None:
            values = list(family.declared)
            content = [object_column(values)]
            if dated is not None:
                content = [_stamps_in_order(dated, values)]
            code = None
        elif rows is None:
            # observed: the cells are the values seen, none yet
            values, content, code = [], [object_column([])], None
        else:
            dim = family.dimension(rows["x"])
            values, content = list(dim.values), dim.content
            code = dim.codes.astype(np.int64)
        self.build.x_order = values
        width = self.params["width"]
        if discrete:
            frame = pd.DataFrame(
                {"x": values, "width": width if width is not None else 0.9}
            )
        else:
            domain = np.asarray(values, dtype=float)
            if width is None:
                # plotnine: 0.9 x the resolution of x, which is 1 for
                # whole numbers (here: of the public values)
                whole = bool(np.all(domain == np.round(domain)))
                width = 0.9 * (
                    np.min(np.diff(domain))
                    if len(domain) > 1 and family.public and not whole
                    else 1.0
                )
            frame = pd.DataFrame({"x": domain, "width": width})
        return FamilyCells(
            frame,
            content,
            code,
            public=family.public,
            source=source,
            describe=tuple(content[0]),
            family=family,
        )

    def scale_parts(self, door) -> tuple:
        # cells named by their dates (as a table names them) do not
        # depend on the date axis' transform: the query leaves it out,
        # so the plot and dp_table draw one release
        parts = super().scale_parts(door)
        if self.build.dated_x:
            parts = tuple(p for p in parts if p[0] != "x")
        return parts

    def position_groups(self) -> dict[str, str]:
        # a discrete x is part of plotnine's groups (one per bar)
        if self.build.discrete_x and "x" in self.build.door.mapping:
            return {str(self.build.door.mapping["x"]): "x"}
        return {}

    def shape_output(self, cells, released):
        frame = cells.frame.copy()
        frame["count"] = self.released_counts(released.values)
        if self.DP:
            frame["noisy_count"] = released.noisy
        # a released 0 draws nothing: no zero-height bar (an outline would
        # show), no "0" label, no dodge slot (post-processing)
        keep = released.keep
        if self.params.get("drop", False):
            keep = keep & (frame["count"].to_numpy() > 0)
        frame = frame[keep].reset_index(drop=True)
        # prop within each panel's group, as plotnine's compute_group
        # (a built-in "sum", not a lambda: a Python call per bar took
        # seconds for thousands of bars)
        totals = (
            frame["count"]
            .abs()
            .groupby([frame["PANEL"], frame["group"]], observed=True)
            .transform("sum")
        )
        frame["prop"] = np.where(
            totals > 0, frame["count"] / totals.where(totals > 0, 1), 0.0
        )
        if not self.build.discrete_x:
            frame["x"] = frame["x"].astype(float)
        else:
            # the axis lists the domain's levels (all of a public domain,
            # the released ones of an observed one), in domain order
            # (the missing level, None, is no category: plotnine draws a
            # missing x as NA, after the levels)
            order = [v for v in self.build.x_order if v is not None]
            shown = set(cells.frame.loc[released.keep, "x"].tolist())
            frame["x"] = pd.Categorical(
                frame["x"],
                categories=[v for v in order if v in shown]
                if not cells.public
                else order,
            )
        return frame


@document
class stat_count_dp(DPMixin, _CountFamily):
    """
    Differentially private counts of x values (bar charts)

    {usage}

    Drop-in for `stat_count`: `geom_bar(stat="count_dp", eps=1, seed=42)`.
    Every level of a public domain (see Notes) gets exact discrete Laplace
    noise of scale sensitivity/eps, empty levels included, so the chart
    is eps-DP. Released counts are clipped at 0 and integer.

    Parameters
    ----------
    {common_parameters}
    eps : float
        Privacy budget of this layer (> 0). Required.
    delta : float, default=1e-6
        Used only for an undeclared (observed) domain, which is released
        with a threshold and costs (eps, delta).
    seed : int or str, default=None
        Names the release and makes it reproducible: the same seed, data
        and query give the same numbers in every layer and process. With
        a key file (`create_key`, `use_key`) the seed is a public label;
        without one the seed is the secret, and whoever knows it can
        remove the noise. Without a seed, noise is keyed by OS entropy
        drawn once per session. One seed per figure.
    adjacency : {"replace", "add_remove"}, default="replace"
        Neighbouring data sets differ by one replaced record (sensitivity
        2, as DPpack's tableDP) or by one added/removed record (1).
    noise : {"discrete_laplace", "laplace"}, default="discrete_laplace"
        Exact integer noise, or continuous Laplace rounded (DPpack).
    level : float, default=0.95
        Probability of the interval variables (`count_low`,
        `count_high`, `prop_low` ...: see Notes).
    total : float, default=None
        A public number of records the layer counts at most (a survey's
        size, known without this data). With it, an eps so small that
        one cell's expected noise exceeds it gives a `PrivacyWarning`.
        The rows handed to the layer are never used for this: they may
        be a filtered subset whose size is private.
    levels : list, default=None
        The public set of x values. Otherwise the categories of a
        Categorical x, or user scale limits, or (thresholded) observed.
    width : float, default=None
        Bar width (0.9 of the level spacing; 0.9 for whole numbers).
    drop : bool, default=False
        `True` leaves out cells whose *released* count is 0
        (post-processing): as in plotnine, where an empty level has no
        row, a zero draws no outlined flat bar, no "0" label and takes no
        dodge slot, and a declared level released as 0 leaves the axis.
        The default keeps every cell of the domain, so a declared axis
        stays the same whatever the noise.
    missing_level : bool, default=False
        `True`: the missing value of each declared category (x, fill,
        colour) is one more public level, released with noise like any
        other and drawn as plotnine draws NA (an NA bar after the levels,
        the scale's NA colour). `False`: records with a missing category
        are left out. Counted on rows in memory (not in an engine).

    count : {"records", "units"}, default="records"
        What a cell counts: records, or the distinct privacy units with
        a record in it (`"units"`, on data from `pp.source(data,
        unit=..., max_records=k)`: each unit counted at most once per
        cell, in at most `max_cells` cells, else `k`; the sensitivity is
        that many cells, not `k` records each).
    Notes
    -----
    Computed variables: `count` (released), `prop` (count / total of its
    group in its panel, from released counts; groups as in plotnine: every
    (x, fill, ...) combination, or the mapped `group` aesthetic, so
    `aes(y=after_stat("prop"), group=1)` gives shares per panel),
    `width`, `noisy_count` (before clipping at 0; may be negative),
    `count_label` (the count as text, "" where the released count is 0:
    `aes(label=after_stat("count_label"))` leaves empty cells of stacked
    or dodged bars unlabelled), and the interval variables at `level`:
    `count_low`/`count_high` (the noisy count minus the exact noise
    quantiles, cut at 0) and `prop_low`/`prop_high` (the share of that
    interval with the group's other bars at their released counts: in
    [0, 1], and [1, 1] for a bar alone in its group once its count is
    surely above 0); draw them with `pp.geom_noise`.
    """

    DEFAULT_PARAMS = {**_CountFamily.BASE_PARAMS, **DP_PARAMS}


@document
class stat_count_ckm(CKMMixin, _CountFamily):
    """
    Counts of x values protected by the Cell Key Method

    {usage}

    Drop-in for `stat_count`:
    `ggplot(d, aes("class", rkey="rk")) + geom_bar(stat="count_ckm",
    ptable=ptab)`. Each bar's noise is read from the p-table at its cell
    key (the sum of its records' keys mod 1), so the same records get the
    same noise in every plot and table. Zero cells stay zero.

    Parameters
    ----------
    {common_parameters}
    ptable : PTable
        From `create_cnt_ptable(D, V, js)` or `read_ptable(...)`.
    threshold : float, default=None
        Suppress cells whose perturbed count is below it (ONS practice).
    levels : list, default=None
        The public set of x values (see `stat_count_dp`).
    width, drop, missing_level :
        As in `stat_count_dp`.

    count : {"records", "units"}, default="records"
        What a cell counts: records, or the distinct privacy units with
        a record in it (`"units"`, on data from `pp.source(data,
        unit=..., max_records=k)`: each unit counted at most once per
        cell, in at most `max_cells` cells, else `k`; the sensitivity is
        that many cells, not `k` records each).
    Notes
    -----
    Needs the `rkey` aesthetic (record keys in [0, 1), stored with the
    data). Weighted counts: perturbed count times mean weight.
    """

    DEFAULT_PARAMS = {**_CountFamily.BASE_PARAMS, **CKM_PARAMS}


def _stamps_in_order(dated, days: list) -> np.ndarray:
    """The declared dates (``dated``: Timestamps and their days) in the
    order of the family's levels ``days`` (sorted by day)."""
    stamps, at = dated
    by_day = dict(zip(at.tolist(), stamps))
    return object_column([by_day[d] for d in days])
