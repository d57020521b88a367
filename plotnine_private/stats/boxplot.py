"""Private box plots for ``geom_boxplot``: ``stat_boxplot_dp``,
``stat_boxplot_ckm``."""

from __future__ import annotations

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.scales.scale_discrete import scale_discrete

from ..declarations import Declaration, NoiseGeom
from ..smoothing import bin_quantiles, monotone_cdf, quantiles
from ..validation import fail as _fail
from ..validation import is_real
from .base import CKM_PARAMS, DP_PARAMS, CKMMixin, DPMixin
from .fine import (
    GROUP_SHARE_DOC,
    Band,
    FineFamily,
    FineHistogram,
    family_doc,
    released_total,
)
from .intervals import NoiseModel
from .marks import mark_layer
from .noise_bands import band_quantiles
from .signal import warn_box_width
from .whiskers import band_level, tukey_bounds

#: what the interval columns may cover (``covers=``)
COVERS = ("data", "histogram")

__all__ = ["stat_boxplot_ckm", "stat_boxplot_dp"]


def validate_covers(name: str, p: dict) -> None:
    """``covers`` and ``discrete`` of a quantile family (box plots and the
    summaries' quantiles), in place."""
    if p.get("covers", "data") not in COVERS:
        raise _fail(
            name,
            f"covers must be 'data' (the intervals hold the quantiles and "
            f"whiskers of the records, the default) or 'histogram' (the "
            f"noise-free estimate from the fine histogram, narrower), got "
            f"{p.get('covers')!r}.",
        )
    discrete = p.get("discrete")
    if discrete is None or discrete is False:
        return
    if discrete is not True:
        raise _fail(
            name,
            f"discrete must be True (y holds whole numbers: one fine bin "
            f"centred on each), False or None (whole numbers when y's "
            f"column has an integer dtype), got {discrete!r}.",
        )
    limits = p.get("limits")
    if limits is None or any(float(v) != int(v) for v in limits):
        raise _fail(
            name,
            f"discrete=True needs limits=(lo, hi) of whole numbers (the "
            f"smallest and largest value y can take, e.g. limits=(0, 60) "
            f"for a stay of 0 to 60 days), got limits={limits!r}.",
        )
    count = int(limits[1]) - int(limits[0]) + 1
    if count > 100_000:
        raise _fail(
            name,
            f"discrete=True puts one fine bin on each whole number of "
            f"limits={limits!r}: {count} bins, more than 100000. Use "
            f"discrete=False with bins=... (at most 100000).",
        )
    if p["bins"] not in (128, count):
        raise _fail(
            name,
            f"discrete=True puts one fine bin on each whole number of "
            f"limits={limits!r} ({count} bins); bins={p['bins']!r} cannot "
            f"go with it. Drop bins, or use discrete=False.",
        )


class _BoxplotFamily(FineFamily):
    """Quartiles and whiskers from the released fine histogram of y, per
    discrete x (a group dimension) and fill/colour group."""

    AXIS = "y"
    REQUIRED_AES = {"y"}
    DEFAULT_AES = {"weight": None}
    BASE_PARAMS = {
        "geom": "boxplot",
        "position": "dodge2",
        "na_rm": False,
        **FineFamily.FINE_PARAMS,
        "coef": 1.5,
        "whiskers": None,
        "width": None,
        "covers": "data",
        "discrete": None,
        "drop": False,
    }
    CREATES = {
        "lower",
        "upper",
        "middle",
        "ymin",
        "ymax",
        "outliers",
        "notchupper",
        "notchlower",
        "width",
        "relvarwidth",
        "n",
        *(
            f"{v}_{end}"
            for v in ("ymin", "lower", "middle", "upper", "ymax")
            for end in ("low", "high")
        ),
        "signal",
    }
    DECLARATION = Declaration(
        family="boxplot",
        plan_inputs=("limits",),
        example={
            "aes": {"x": "cat", "y": "num"},
            "params": {"limits": (10, 45), "bins": 16},
        },
        title="boxplot",
        counterpart="boxplot",
        geoms="`geom_boxplot` (never any outlier)",
        plan_bounds="the worst of the three quartiles of a box of `n` records",
        # a box's notches and varwidth: functions of its released
        # quartiles and n
        noisy=frozenset(
            {
                "lower",
                "middle",
                "upper",
                "ymin",
                "ymax",
                "ymin_final",
                "ymax_final",
                "notchlower",
                "notchupper",
                "relvarwidth",
                "n",
            }
        ),
        intervals=("ymin", "lower", "middle", "upper", "ymax"),
        plan="curve",
        judged_by=("lower", "middle", "upper"),
        caption="quartiles",
        noise_geom=NoiseGeom(
            "errorbar", "middle", {"width": 0.3, "color": "firebrick"}
        ),
        counterpart_params=("coef", "width"),
        engine=True,
    )
    INTERVALS = DECLARATION.intervals

    def interval_range(self) -> tuple[float, float]:
        edges = self.build.fine.edges  # the public limits, transformed like y
        if self.params.get("discrete"):
            # the whole numbers of the limits, the edges half a unit out
            return float(edges[0]) + 0.5, float(edges[-1]) - 0.5
        return float(edges[0]), float(edges[-1])

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        # quartiles, whiskers and their intervals: within the limits
        limits = self.params["limits"]
        return {} if limits is None else {"y": tuple(limits)}

    def fine_bins(self) -> tuple:
        """Limits and fine bins: with ``discrete=True`` one bin of width
        1 centred on each whole number of the limits."""
        p = self.params
        if p.get("discrete") and p["limits"] is not None:
            lo, hi = (int(v) for v in p["limits"])
            return (lo - 0.5, hi + 0.5), hi - lo + 1
        return super().fine_bins()

    def covers_data(self) -> bool:
        """Whether the intervals cover the statistic of the records
        (``covers="data"``), not the fine histogram's noise-free
        estimate."""
        return self.params.get("covers", "data") == "data"

    def whole_numbers(self) -> bool:
        """Whether y holds whole numbers by declaration: ``discrete=True``,
        or (``discrete=None``) an integer dtype of the mapped column (its
        type, never its values; a rebuilt column of floats says
        nothing)."""
        discrete = self.params.get("discrete")
        if discrete is not None:
            return bool(discrete)
        records = getattr(getattr(self, "build", None), "records", None)
        if records is None or self.AXIS not in getattr(records, "columns", ()):
            return False
        dtype = records[self.AXIS].dtype
        return bool(pd.api.types.is_integer_dtype(dtype))

    def whole_bounds(
        self, low: np.ndarray, high: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of a statistic of whole numbers (a quantile or a Tukey
        whisker of them is one of the records' values) moved in to the
        whole numbers they hold; where none lies between them (the
        statements failed) they stay as they are."""
        if not (self.covers_data() and self.whole_numbers()):
            return low, high
        up = np.ceil(low - 1e-9)
        down = np.floor(high + 1e-9)
        fine = up <= down
        return np.where(fine, up, low), np.where(fine, down, high)

    def quantile_columns(self) -> dict[str, float]:
        # the quartiles (and quantile whiskers) invert the CDF's band
        cols = {"lower": 0.25, "middle": 0.5, "upper": 0.75}
        if self.params["whiskers"] is not None:
            lo, hi = self.params["whiskers"]
            cols.update(ymin=lo, ymax=hi)
        return cols

    def own_band_levels(
        self, model: NoiseModel, level: float
    ) -> tuple[float, ...]:
        return (band_level(model, level),)

    def own_bounds(
        self,
        hist: FineHistogram,
        model: NoiseModel,
        level: float,
        bands: dict[float, Band],
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        # asked only for Tukey whiskers: quantile whiskers (whiskers=(p, q))
        # are quantile columns, inverted from the CDF band
        bounds = tukey_bounds(
            hist.edges,
            hist.noisy,
            model,
            level,
            float(self.params["coef"]),
            bands[band_level(model, level)],
            covers=self.params.get("covers", "data"),
        )
        return {col: self.whole_bounds(*b) for col, b in bounds.items()}

    def quantile_bounds(self, edges, f_low, f_high, probs):
        low, high = band_quantiles(
            edges, f_low, f_high, probs, self.params.get("covers", "data")
        )
        return self.whole_bounds(low, high)

    def add_intervals(self, out: pd.DataFrame, released) -> None:
        super().add_intervals(out, released)
        if len(out):
            warn_box_width(self, out, self.params["level"])

    def finish_output(self, cells, released):
        """``drop=True`` leaves out the boxes released with ``n <= 0``
        (post-processing): plotnine has no box for a combination or panel
        without records."""
        out = super().finish_output(cells, released)
        if self.params["drop"] and len(out):
            kept = out[np.asarray(out["n"]) > 0].reset_index(drop=True)
            out = mark_layer(self, kept)
        return out

    def validate_params(self) -> None:
        super().validate_params()
        p = self.params
        coef = p["coef"]
        if not is_real(coef) or not np.isfinite(coef) or coef < 0:
            raise _fail(
                self.name,
                f"coef must be a finite number >= 0 (whisker length in "
                f"IQRs), got {coef!r}.",
            )
        w = p["whiskers"]
        if w is not None:
            try:
                lo, hi = (float(v) for v in w)
            except (TypeError, ValueError):
                raise _fail(
                    self.name,
                    f"whiskers must be None or a pair of probabilities "
                    f"(low, high), e.g. (0.05, 0.95), got {w!r}.",
                ) from None
            if not (0 <= lo <= 0.25 and 0.75 <= hi <= 1):
                raise _fail(
                    self.name,
                    f"whiskers must be (low, high) with 0 <= low <= 0.25 and "
                    f"0.75 <= high <= 1 (outside the box), got {w!r}.",
                )
            p["whiskers"] = (lo, hi)
        width = p["width"]
        if width is not None and (
            not is_real(width) or not np.isfinite(width) or width <= 0
        ):
            raise _fail(self.name, f"width must be > 0, got {width!r}.")
        validate_covers(self.name, p)
        if not isinstance(p["drop"], (bool, np.bool_)):
            raise _fail(
                self.name,
                f"drop must be True or False, got {p['drop']!r}: True "
                "leaves out the boxes released with no records.",
            )

    def check_input(self, data: pd.DataFrame) -> None:
        super().check_input(data)
        if "x" in data.columns and not isinstance(
            self.build.door.scales.x, scale_discrete
        ):
            raise _fail(
                self.name,
                "x must be discrete: one box per declared level of x. Map a "
                "pandas Categorical with explicit categories=[...] (public "
                "levels), or leave x out for a single box.",
            )

    def leading_groups(self, data: pd.DataFrame) -> list[str]:
        # x is a group dimension here: one box per level
        return ["x"] if "x" in data.columns else []

    def quantiles(self, cdf, edges, probs) -> np.ndarray:
        """The quantiles ``probs`` of each row of ``cdf`` (at the fine
        edges): interpolated within a fine bin, or with ``discrete=True``
        the centre of the bin (a whole number) where the CDF first
        reaches each, as the lowest quantile of whole numbers is."""
        if self.params.get("discrete"):
            return bin_quantiles(cdf, edges, probs)
        return quantiles(cdf, edges, probs)

    def curve(self, hist: FineHistogram) -> pd.DataFrame:
        p = self.params
        cdf, _ = monotone_cdf(hist.noisy)
        edges = hist.edges
        q1, med, q3 = self.quantiles(cdf, edges, np.array([0.25, 0.5, 0.75])).T
        if p["whiskers"] is not None:
            lo, hi = self.quantiles(cdf, edges, np.array(p["whiskers"])).T
        else:
            lo, hi = self.tukey_whiskers(cdf, edges, q1, q3)
        n = released_total(hist)
        iqr = q3 - q1
        root = np.sqrt(np.maximum(n, 1.0))
        out = hist.info.copy()
        if "x" not in out.columns:
            out["x"] = 0.0
        out["ymin"] = lo
        out["lower"] = q1
        out["middle"] = med
        out["upper"] = q3
        out["ymax"] = hi
        out["outliers"] = [[] for _ in range(len(out))]
        # the notches, as every drawn extent, stay within the limits
        span = edges[0], edges[-1]
        if p.get("discrete"):
            span = edges[0] + 0.5, edges[-1] - 0.5
        out["notchlower"] = np.clip(med - 1.58 * iqr / root, *span)
        out["notchupper"] = np.clip(med + 1.58 * iqr / root, *span)
        out["width"] = 0.75 if p["width"] is None else float(p["width"])
        out["relvarwidth"] = np.sqrt(n)
        out["n"] = n.astype(np.int64)
        return out

    def tukey_whiskers(self, cdf, edges, q1, q3):
        """Tukey's fences ``q1 - coef*IQR`` and ``q3 + coef*IQR``, pulled in
        to the released range: the outer edge of the most extreme fine bin
        inside the fence to which the released CDF gives mass (never
        inside the box)."""
        coef = float(self.params["coef"])
        iqr = q3 - q1
        fence_lo, fence_hi = q1 - coef * iqr, q3 + coef * iqr
        lo_edges, hi_edges = edges[:-1], edges[1:]
        if self.params.get("discrete"):
            # whole numbers: the records of a bin are its centre, so the
            # whisker is the centre of the most extreme bin with mass
            # within the fence (a value of the records, as Tukey's)
            lo_edges = hi_edges = (edges[:-1] + edges[1:]) / 2
            fence_hi = np.nextafter(fence_hi, np.inf)
            fence_lo = np.nextafter(fence_lo, -np.inf)
        mass = np.diff(cdf, axis=1) > 0
        # all boxes at once (an interval simulation has thousands); the
        # ties resolve as Python's max(a, b) and min(a, b) do, keeping a
        up = mass & (lo_edges < fence_hi[:, None])
        top = np.where(up, hi_edges, -np.inf).max(axis=1, initial=-np.inf)
        top = np.where(up.any(axis=1), top, q3)
        reach = np.where(top < fence_hi, top, fence_hi)
        ymax = np.where(reach > q3, reach, q3)
        down = mass & (hi_edges > fence_lo[:, None])
        bottom = np.where(down, lo_edges, np.inf).min(axis=1, initial=np.inf)
        bottom = np.where(down.any(axis=1), bottom, q1)
        reach = np.where(bottom > fence_lo, bottom, fence_lo)
        ymin = np.where(reach < q1, reach, q1)
        return ymin, ymax


_DOC_COMMON = """\
    limits : tuple
        Public (low, high) range of y (or, without it, the plot's
        `ylim` / `scale_y_continuous(limits=...)`, as the bin stats
        take it; one of them is required): the fine histogram is
        counted over it. In data units (transformed like the scale).
    bins : int, default=128
        Number of equal fine bins between the limits: the resolution of
        the quartiles (each is interpolated within its fine bin). Every
        bin carries its own noise: prefer the coarsest bins that resolve
        what matters.
    outside : {"clamp", "drop"}, default=None
        `None`: `"clamp"` with `limits=`, `"drop"` with the scale's
        limits (plotnine leaves records outside them out).
        Records with y beyond the limits are counted in the first or last
        fine bin (`"clamp"`: they still count in the ranks, so quartiles
        inside the limits are right), or left out (`"drop"`).
    coef : float, default=1.5
        Whisker length in interquartile ranges (Tukey), as in
        `stat_boxplot`; see Notes.
    whiskers : tuple, default=None
        Instead of `coef`, put the whiskers at these private quantiles,
        e.g. `(0.05, 0.95)`.
    width : float, default=None
        Box width (0.75, as plotnine's for a discrete x).
    covers : {"data", "histogram"}, default="data"
        What the interval variables (`lower_low`, `middle_high`...) hold
        with probability `level`: the quartiles and whiskers of the
        records themselves (each end taken out to the fine edge beyond
        it, at most one fine bin wider), or the noise-free estimate from
        the fine histogram (interpolated within a fine bin; narrower).
    drop : bool, default=False
        `True` leaves out the boxes whose released number of records `n`
        is 0 or less (an empty declared combination or facet panel), as
        plotnine draws no box there. The default draws every declared
        box.
    discrete : bool, default=None
        `True`: y holds whole numbers; one fine bin of width 1 is centred
        on each whole number of `limits` (which must be whole; `bins` is
        then their count), the quartiles and whiskers are whole numbers
        (the centre of the bin where the released CDF reaches them) and
        the median is exact up to noise. `None`: the bins stay as given,
        and if y's column has an integer dtype (its declared type, never
        its values; a data frame in memory, not yet an engine source's
        schema) the intervals end on whole numbers. `False`: neither.
"""

_DOC_NOTES = """
    Notes
    -----
    Everything is post-processing of the released fine counts of y per
    box: their running sums (before clipping at 0) are made monotone by
    isotonic regression and divided by the released total, and the
    quartiles invert that CDF, interpolating linearly within a fine bin.

    **Whiskers.** With `coef` (default), the upper whisker ends at
    Tukey's fence `upper + coef * (upper - lower)` or, if lower, at the
    top edge of the highest fine bin (below the fence) to which the
    released CDF gives mass: the private stand-in for "the largest observation
    within the fence". Under strong noise every bin gets some mass and
    the whisker is the fence itself. The lower whisker mirrors it. With
    `discrete=True` the whisker is the centre of that bin (a whole
    number, at most the fence), as Tukey's is a record. With
    `whiskers=(p, q)` they are the private p and q quantiles. **No
    individual outliers are ever drawn**: `outliers` is always empty
    (single records are what a box plot must not show).

    Computed variables: `ymin`, `lower`, `middle`, `upper`, `ymax`,
    `notchlower`, `notchupper` (`middle -/+ 1.58 IQR / sqrt(n)`, within
    the limits),
    `width`, `relvarwidth` (`sqrt(n)`), `n` (the released number of
    records of the box), `outliers` (empty). x is a group: one box per
    declared level; an undeclared x is released in two steps under DP
    (which boxes are shown, from each box's noisy total against a
    threshold, with `group_share` of eps; then every fine bin of the
    shown boxes), so a box with enough records is drawn whatever its
    spread. Without x there is a single box at x = 0.
"""


@document
class stat_boxplot_dp(DPMixin, _BoxplotFamily):
    """
    Differentially private box plot statistics

    {usage}

    Drop-in for `stat_boxplot`: `geom_boxplot(stat="boxplot_dp",
    limits=(0, 50), eps=1, seed=7)` with a declared categorical x. The
    counts of y in fine bins between the public limits are released per
    box with exact discrete Laplace noise (eps-DP: one histogram, the
    boxes hold disjoint records), and the box is computed from them.

    Parameters
    ----------
    {common_parameters}
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    """

    __doc__ = family_doc(__doc__, _DOC_COMMON, GROUP_SHARE_DOC, _DOC_NOTES)
    DEFAULT_PARAMS = {**_BoxplotFamily.BASE_PARAMS, **DP_PARAMS}


@document
class stat_boxplot_ckm(CKMMixin, _BoxplotFamily):
    """
    Box plot statistics protected by the Cell Key Method

    {usage}

    Drop-in for `stat_boxplot` with `aes(rkey=...)` and `ptable=`.

    Parameters
    ----------
    {common_parameters}
    ptable, threshold :
        As in `stat_count_ckm`.
    """

    __doc__ = family_doc(__doc__, _DOC_COMMON, GROUP_SHARE_DOC, _DOC_NOTES)
    DEFAULT_PARAMS = {**_BoxplotFamily.BASE_PARAMS, **CKM_PARAMS}
