"""Every case whose private figure must differ from plotnine's, with the
reason: the one list of the suite. ``docs/parity.md`` shows each reason
word for word (``test_docs_list_every_difference`` holds them together).
"""

from __future__ import annotations

#: why a private twin differs (shown to users in docs/parity.md)
REASONS: dict[str, str] = {
    "no-outliers": (
        "Private box plots never draw outliers: a point beyond the "
        "whiskers would be a record. The panel range then ends at the "
        "whiskers, where plotnine's ends at the most extreme outlier."
    ),
    "group-nrd0": (
        "No bandwidth per group: bw is one public number for the layer. "
        "plotnine's default (nrd0 of each group's records) reads the "
        "data; the twin takes the layer's nrd0 as its declared bw, so "
        "groups with other spreads get another curve."
    ),
    "fine-curve": (
        "A curve from the released fine histogram agrees with "
        "plotnine's within a few percent; the axis breaks mizani chooses "
        "from the curve's height can then differ (0.03, 0.06, 0.09 "
        "against 0.025, 0.05 ...), so the tick labels differ."
    ),
    "ecdf-grid": (
        "With pad=False the private ECDF still runs over the whole public "
        "grid (from 0 at the lower limit to 1 at the upper one): where "
        "plotnine's curve starts and ends would be the smallest and "
        "largest record."
    ),
    "summary-interval": (
        "The bars of a private summary are the noise interval of the "
        "released mean (errorbar='noise'; at eps=1e9 only the grid's "
        "rounding, resolution/2, is left), never a "
        "bootstrap interval of the records (plotnine's mean_cl_boot "
        "default)."
    ),
    "summary-grid": (
        "A private mean's ymin/ymax hold its interval, which covers the "
        "mean of the records: it is the grid's rounding (resolution/2) "
        "wide even at eps=1e9, and the y scale trains on it although "
        "geom_point and geom_line do not draw it, so the y range is "
        "wider by that much; errorbar=None gives plotnine's range."
    ),
    "summary-funs": (
        "stat_summary_dp/_ckm release fun_y=np.mean, np.sum, np.median and "
        "quantiles, and fun_data mean_se, mean_cl_normal, mean_sdl and "
        "median_hilow; fun_ymin/fun_ymax np.min, np.max or np.median go "
        "with a median or quantile y (all read off one released fine "
        "histogram). With a mean they are refused: the mean comes from "
        "another release (totals and counts); the error names "
        "fun_y=np.median (the same bars around the median) and "
        "fun_data='mean_cl_normal' (bars around the mean). Any other "
        "function of the records is refused."
    ),
    "summary-quantiles": (
        "A private median or quantile (fun_y=np.median, np.quantile, "
        "fun_data='median_hilow') inverts the CDF of the released fine "
        "histogram within a fine bin, as the box plots' quartiles do; "
        "plotnine's interpolates between two records (type 7): the two "
        "differ by up to a fine bin or the gap between the records."
    ),
    "whisker-quantiles": (
        "Whiskers reach the furthest fine bin within 1.5 IQR of the "
        "private quartiles; where those differ from R's type-7 quartiles "
        "by a unit, a record plotnine calls an outlier can fall inside "
        "the private whisker."
    ),
    "kernel-shape": (
        "Non-Gaussian kernels are applied to the fine histogram with bw "
        "as the kernel's scale; statsmodels, which plotnine calls, "
        "evaluates them on the records: the curves differ by a few "
        "percent of their peak."
    ),
    "dp-weights": (
        "The weight aesthetic is refused by DP stats: one record of "
        "unbounded weight has unbounded sensitivity. The CKM twins "
        "perturb weighted counts."
    ),
    "edge-roundoff": (
        "plotnine 0.16.0a15 computes a bin edge of bins=20 over carat "
        "0.21 to 3.01 as 1.8199999999999998 (0.15 as 1.82), so a diamond "
        "of exactly 1.82 carat moves to the next bin. The private twin "
        "keeps the rule, not the round-off: bins are closed on the right, "
        "and 1.82 is in (1.68, 1.82]."
    ),
    "sum-discrete": (
        "geom_count with one discrete and one continuous position is "
        "refused: stat_sum_dp and stat_sum_ckm count points on a public "
        "grid of two continuous positions (limits= and resolution=) or "
        "of two declared categories. Declare y's values as a Categorical "
        "(categories=[1, 2, ..., 10]) for the same points on a discrete "
        "y axis."
    ),
}

#: (case id, aspect) -> key of REASONS; aspect "*" is every aspect
DIFFERENCES: dict[tuple[str, str], str] = {
    ("boxplot-class-hwy", "stat"): "whisker-quantiles",
    ("boxplot-class-hwy-ckm", "stat"): "whisker-quantiles",
    ("boxplot-class-fill", "stat"): "whisker-quantiles",
    ("boxplot-class-fill-ckm", "stat"): "whisker-quantiles",
    ("summary-pointrange", "stat"): "summary-interval",
    ("summary-pointrange", "panels"): "summary-interval",
    ("summary-pointrange", "image"): "summary-interval",
    ("summary-pointrange", "labels"): "summary-interval",
    ("summary-mean", "panels"): "summary-grid",
    ("summary-line-group", "panels"): "summary-grid",
    ("summary-line-nogroup", "panels"): "summary-grid",
    ("summary-class-hwy", "panels"): "summary-grid",
    ("summary-class-hwy-wrap", "panels"): "summary-grid",
    ("summary-colour-dodge", "panels"): "summary-grid",
    ("summary-line-group-var", "panels"): "summary-grid",
    ("summary-median", "stat"): "summary-quantiles",
    ("summary-median", "panels"): "summary-quantiles",
    ("summary-median", "image"): "summary-quantiles",
    ("summary-median-hilow", "stat"): "summary-quantiles",
    ("summary-median-hilow", "panels"): "summary-quantiles",
    ("summary-median-hilow", "image"): "summary-quantiles",
    ("summary-median-min-max", "stat"): "summary-quantiles",
    ("summary-median-min-max", "panels"): "summary-quantiles",
    ("summary-median-min-max", "image"): "summary-quantiles",
    ("summary-median-levels", "stat"): "summary-quantiles",
    ("summary-median-levels", "panels"): "summary-quantiles",
    ("summary-median-levels", "image"): "summary-quantiles",
    ("summary-fun-min-max", "*"): "summary-funs",
    ("ecdf-no-pad", "panels"): "ecdf-grid",
    ("ecdf-no-pad", "image"): "ecdf-grid",
    ("ecdf-no-pad", "labels"): "ecdf-grid",
    ("ecdf-no-pad-ckm", "panels"): "ecdf-grid",
    ("boxplot-class-hwy", "panels"): "no-outliers",
    ("boxplot-class-hwy-ckm", "panels"): "no-outliers",
    ("boxplot-class-hwy", "image"): "no-outliers",
    ("boxplot-class-fill", "panels"): "no-outliers",
    ("boxplot-class-fill-ckm", "panels"): "no-outliers",
    ("boxplot-class-fill", "image"): "no-outliers",
    ("boxplot-drv-hwy", "panels"): "no-outliers",
    ("boxplot-drv-hwy-ckm", "panels"): "no-outliers",
    ("boxplot-drv-hwy", "image"): "no-outliers",
    ("boxplot-drv-hwy", "labels"): "no-outliers",
    ("boxplot-drv-flip", "panels"): "no-outliers",
    ("boxplot-drv-flip-ckm", "panels"): "no-outliers",
    ("boxplot-drv-flip", "image"): "no-outliers",
    ("boxplot-drv-flip", "labels"): "no-outliers",
    ("boxplot-drv-wrap", "panels"): "no-outliers",
    ("boxplot-drv-wrap-ckm", "panels"): "no-outliers",
    ("boxplot-drv-wrap", "image"): "no-outliers",
    ("boxplot-drv-wrap", "labels"): "no-outliers",
    ("boxplot-drv-fill-year", "panels"): "no-outliers",
    ("boxplot-drv-fill-year-ckm", "panels"): "no-outliers",
    ("boxplot-drv-fill-year", "image"): "no-outliers",
    ("boxplot-drv-fill-year", "labels"): "no-outliers",
    ("density-hwy-nrd0-groups", "stat"): "group-nrd0",
    ("density-hwy-nrd0-groups", "panels"): "group-nrd0",
    ("density-hwy-nrd0-groups", "image"): "group-nrd0",
    ("density-hwy-nrd0-groups", "labels"): "group-nrd0",
    ("density-hwy-nrd0-groups-ckm", "stat"): "group-nrd0",
    ("density-hwy-nrd0-groups-ckm", "panels"): "group-nrd0",
    ("density-ladder-gaussian", "stat"): "group-nrd0",
    ("density-ladder-gaussian", "panels"): "group-nrd0",
    ("density-ladder-gaussian", "image"): "group-nrd0",
    ("density-ladder-gaussian", "labels"): "group-nrd0",
    ("density-ladder-gaussian-ckm", "stat"): "group-nrd0",
    ("density-ladder-gaussian-ckm", "panels"): "group-nrd0",
    ("density-hwy-fill", "labels"): "fine-curve",
    ("density-hwy-wrap", "labels"): "fine-curve",
    ("density-hwy-bounds-open", "labels"): "fine-curve",
    ("density-hwy-trim", "labels"): "fine-curve",
    ("boxplot-drv-ylim-only", "image"): "no-outliers",
    ("boxplot-class-fill-drv", "panels"): "no-outliers",
    ("boxplot-class-fill-drv", "image"): "no-outliers",
    ("boxplot-class-fill-drv-ckm", "panels"): "no-outliers",
    ("density-hwy-epa", "stat"): "kernel-shape",
    ("density-hwy-epa", "image"): "kernel-shape",
    ("density-hwy-epa-ckm", "stat"): "kernel-shape",
    ("histogram-weights", "*"): "dp-weights",
    ("count-discrete-x", "*"): "sum-discrete",
    ("count-discrete-x-ckm", "*"): "sum-discrete",
}


#: differences of one plotnine release only (release -> list as above):
#: where that release changed something the private stat must not follow
VERSION_DIFFERENCES: dict[str, dict[tuple[str, str], str]] = {
    "0.16.0a15": {
        ("bin2d-diamonds", "stat"): "edge-roundoff",
        ("bin2d-diamonds", "image"): "edge-roundoff",
        ("bin2d-diamonds-ckm", "stat"): "edge-roundoff",
    },
}


def expected_failure(
    case_id: str, aspect: str, version: str | None = None
) -> str | None:
    """The documented reason ``case_id`` differs in ``aspect``, if any
    (with ``version``: the differences of that plotnine release only)."""
    table = DIFFERENCES if version is None else VERSION_DIFFERENCES[version]
    key = table.get((case_id, aspect)) or table.get((case_id, "*"))
    return REASONS[key] if key else None
