"""Private group means and totals: ``stat_summary_dp`` and
``stat_summary_ckm``.

A summary layer releases, per cell (declared x level x fill/colour group x
panel), the total of a y clamped to public ``bounds`` and the number of
records, through the release engine:
:class:`~plotnine_private.mechanisms.release.magnitudes.LaplaceSums` and
:class:`~plotnine_private.mechanisms.release.engine.LaplaceCounts` (DP) or
:class:`~plotnine_private.mechanisms.release.magnitudes.CKMMagnitudes` and
:class:`~plotnine_private.mechanisms.release.engine.CKMCounts`
(CKM). The mean is the released total over the released count
(post-processing); error bars that contain the noise are computed from
the released values and the mechanisms' public parameters only.
"""

from __future__ import annotations

from plotnine.doctools import document

from ..base import CKM_PARAMS
from .family import _SummaryFamily
from .release import _CKMSummary, _DPSummary
from .totals import default_resolution as default_resolution
from .totals import exact_totals as exact_totals
from .totals import ratio_interval

__all__ = ["ratio_interval", "stat_summary_ckm", "stat_summary_dp"]


_DP_SUMMARY_PARAMS = {
    "eps": None,
    "seed": None,
    "adjacency": "replace",
    "noise": "discrete_laplace",
    "sum_share": None,
    "shares": None,
    "total": None,
    "label": None,
    "noise_marks": "fade",
}
_CKM_SUMMARY_PARAMS = {
    **CKM_PARAMS,
    "num_ptable": None,
    "magnifier": "top_contr",
    "p": 0.1,
    "same_key": False,
}


#: the summary functions' parameters, shared by the DP and CKM docstrings
_FUNCTION_DOC = """\
    fun : {"mean", "sum", "median", "quantile"}, default="mean"
        Released y: the mean or the total of the clamped y per cell, or
        its median or a quantile (`fun_args={"q": 0.9}`) from the box
        plots' fine histogram (see `bins`). plotnine's `fun_y=np.mean`,
        `np.sum`, `np.median`, `np.quantile` (`np.percentile` with `q` in
        percent) are the same; `fun_ymin` and `fun_ymax` are refused (a
        minimum or maximum of the records would disclose them).
    fun_data : {"mean_se", "mean_cl_normal", "mean_sdl", "median_hilow"}
        plotnine's summary functions (the names or plotnine's function
        objects): the private mean with ymin/ymax from a private total of
        squares, plotnine's formulas widened by the noise of the released
        mean (see Notes). `errorbar=None` still draws a point; the noise
        interval stays in `y_low`/`y_high`. `"median_hilow"`:
        the median with the `(1 - ci)/2` and `(1 + ci)/2` quantiles (as
        `fun="median"`). `"mean_cl_boot"` is refused with the private
        alternative.
    fun_args : dict, default=None
        plotnine's arguments of `fun_data`: `{"mult": 1}` (`mean_se`),
        `{"confidence_interval": 0.95}` (`mean_cl_normal`,
        `median_hilow`), `{"mult": 2}` (`mean_sdl`), defaults as
        plotnine's; `{"q": ...}` for a quantile.
    bins : int, default=128
        Medians and quantiles only: the fine bins between `bounds` of the
        released histogram of y (as `stat_boxplot_dp`'s `bins`); a
        median and a box plot with the same parameters are one release.
"""


def _with_functions(doc: str | None) -> str:
    """A twin's docstring with the summary functions' parameters."""
    return (doc or "").replace("    FUNCTION_PARAMETERS\n", _FUNCTION_DOC)


@document
class stat_summary_dp(_DPSummary):
    """
    Differentially private means or totals of y per x (stat_summary)

    {usage}

    Drop-in for `stat_summary` with a mean or a total:
    `geom_pointrange(aes("class", "hwy"), stat="summary_dp",
    bounds=(10, 45), eps=1, seed=1)` or `geom_col(..., stat="summary_dp",
    fun="sum", ...)`. y is clamped to the public `bounds` and rounded to a
    public grid; each cell (declared x level, fill/colour group, panel)
    gets exact discrete Laplace noise on its total and, for a mean, on
    its count. The mean is the noisy total over the noisy count.

    Parameters
    ----------
    {common_parameters}
    eps : float
        Privacy budget of this layer (> 0). Required. Split between the
        totals (`sum_share`) and the counts (the rest).
    bounds : tuple
        Public `(lo, hi)` of y, required. Values outside are clamped to
        it (a record above `hi` counts as `hi`), so the mean is that of
        the clamped values; the noise is calibrated to it. In data units:
        under a transformed y scale (`scale_y_log10`, `scale_y_sqrt`) the
        mean is of the transformed values, as plotnine's, between the
        transformed bounds (which must lie in the scale's domain).
    FUNCTION_PARAMETERS
    drop : bool, default=False
        `True` leaves out cells whose released count is 0 (no mean to
        draw; as plotnine, which has no row for a combination without
        records). The default keeps their rows (y missing). A total
        released without counts (`fun="sum"`, `sum_share=1`) leaves out
        cells whose released total is 0.
    sum_share : float, default=None
        Share of eps for the totals: 0.5 for a mean (must be < 1: a mean
        needs counts), 1 for a total (no count is released, `n` is
        missing; a value < 1 also releases counts, so `n` is available).
        Not with `fun_data` (use `shares`).
    shares : dict, default=None
        With `fun_data` only: the shares of eps of the totals, the totals
        of squares and the counts, `{"sum": s, "sumsq": q, "count": c}`
        (numbers > 0 that sum to 1; equal thirds by default).
    total : float, default=None
        A public number of records (as in `stat_count_dp`): with it, a
        too small eps gives a `PrivacyWarning`.
    resolution : float, default=None
        Public grid of y: every clamped value is rounded to a multiple of
        `resolution` from the grid centre, so totals are exact integers
        and the noise is exact. Default: the largest power of ten at most
        (hi - lo) / 1000 (0.01 for bounds (10, 45)). Under a transformed
        y scale, in the scale's units (the default: of the transformed
        bounds).
    errorbar : {"noise", None}, default="noise"
        `"noise"`: ymin/ymax hold an interval that contains the noise-free
        mean (total) of the clamped, gridded y of the cell with
        probability at least `level`, computed from the released values
        and the public noise scales. It says nothing about sampling
        variation. `None`: ymin = ymax = y. Either way the interval is
        in the computed variables `y_low` and `y_high`. A total and its
        interval are clipped to what a total of values within the
        bounds can be: at least 0 when `lo >= 0`, at most 0 when
        `hi <= 0`.
    covers : {"data", "histogram"}, default="data"
        What `y_low`/`y_high` (and the noise error bars) hold: with
        `"data"` a mean's interval is widened by `resolution / 2` (each
        clamped value moves by at most that on the grid), so it holds the
        mean of the clamped y, and a median's or quantile's ends reach
        out to the fine edges beyond them (see `stat_boxplot_dp`), so
        they hold the records' own; `"histogram"`: the mean of the
        gridded y, the quantile of the fine histogram (narrower). A
        total's interval is of the total of the gridded values either
        way (within `n * resolution / 2` of the clamped total).
    discrete : bool, default=None
        Medians and quantiles only, as in `stat_boxplot_dp` (with
        `bounds` as its `limits`): `True` releases them on one fine bin
        per whole number.
    level : float, default=0.95
        Coverage of the noise interval. Also the rule for cells near
        zero: a mean is drawn only where the `level` interval of the
        released count excludes 0 (others are left out, with a
        `SignalWarning`).
    seed, adjacency, noise :
        As in `stat_count_dp`.
    levels : list, default=None
        The public set of x values (see `stat_count_dp`).
    width : float, default=None
        Bar width for `geom_col` (0.9 of the level spacing).

    Notes
    -----
    **Privacy map.** With the grid value `k = round((clamp(y) - c) / r)`
    of each record and `B` the largest `|k|`, the totals have L1
    sensitivity `B` under add/remove and `2B` under replace (a replaced
    record can leave one cell and enter another); the counts 1 and 2.
    For a mean the grid is centred at `c = (lo + hi) / 2`, so the
    sensitivity of the totals is `(hi - lo) / 2` (add/remove) or
    `hi - lo` (replace) in units of y; for a total `c = 0` and it is
    `max(|lo|, |hi|)` or twice that. The layer costs `eps * sum_share`
    (totals) plus `eps * (1 - sum_share)` (counts), sequentially: the
    report lists both releases. Every cell of the declared domain is
    released, empty ones included (pure eps-DP); undeclared x or group
    levels are refused.

    **Why a grid.** Continuous Laplace noise in floating point leaks
    through the gaps between the floats it can output (Mironov 2012),
    and float sums of clamped values have a sensitivity that depends on
    the order of summation; integer totals on a public grid with exact
    discrete Laplace noise (Canonne, Kamath & Steinke 2020) avoid both.
    Rounding moves a mean by at most `resolution / 2`.

    **Estimates.** Mean: `c + S / max(N, 1)`, clipped to the bounds, with
    `S` the noisy centred total and `N` the noisy count; its interval
    takes the `1 - (1 - level)/2` half-widths of both noises (a union
    bound) and the range of `S / N` over them (plus `resolution / 2` each
    side with `covers="data"`). Total: the noisy total, interval
    plus/minus the `level` half-width of its noise, both clipped to what
    a total can be (>= 0 when `lo >= 0`, <= 0 when `hi <= 0`).

    **fun_data.** A third release, the total `Q` of the squared centred
    grid values (sensitivity `((hi - lo) / 2)^2`, twice that under
    replace), gives the variance `Q / N - (S / N)^2` (ddof 0; times `N /
    (N - 1)` for ddof 1), kept in `[0, ((hi - lo) / 2)^2]`. The bars hold
    the sampling *and* the noise: `mean_cl_normal` adds plotnine's `t *
    se` and the noise half-width of the mean at the same level in
    quadrature; `mean_se` and `mean_sdl` add the noise variance of the
    mean to plotnine's `se^2` (`sd^2`) before multiplying by `mult`. The
    layer costs `eps` in all, split by `shares`.

    Computed variables: `y`, `ymin`, `ymax`, `n` (released count,
    clipped at 0; missing without a count release), `sum` (released
    total before clipping, may be negative: for a mean `S + c * n`),
    `width`.
    """

    __doc__ = _with_functions(__doc__)
    DEFAULT_PARAMS = {**_SummaryFamily.BASE_PARAMS, **_DP_SUMMARY_PARAMS}


@document
class stat_summary_ckm(_CKMSummary):
    """
    Means or totals of y per x protected by the Cell Key Method

    {usage}

    Drop-in for `stat_summary` with a mean or a total:
    `geom_pointrange(aes("class", "hwy", rkey="rk"),
    stat="summary_ckm", bounds=(10, 45), ptable=cnt, num_ptable=num)`.
    The total of each cell is perturbed with a magnitude p-table and its
    count with a count p-table, both read at the cell key (the sum of its
    records' keys), so the same records get the same noise in every plot
    and table. The mean is the perturbed total over the perturbed count.

    Parameters
    ----------
    {common_parameters}
    bounds : tuple
        Public `(lo, hi)` of y, required; values outside are clamped. As
        in `stat_summary_dp` (also under a transformed y scale).
    FUNCTION_PARAMETERS
    drop : bool, default=False
        `True` leaves out cells whose released count is 0 (no mean to
        draw; as plotnine, which has no row for a combination without
        records). The default keeps their rows (y missing).
    ptable : PTable
        Count p-table (`create_cnt_ptable`) for the record counts.
    num_ptable : PTable
        Magnitude p-table (`create_num_ptable`) for the totals.
    magnifier : {"top_contr", "sum"}, default="top_contr"
        What the noise of a total scales with, as in cellKey's
        `ck_params_nums(type=...)`: the cell's largest absolute
        contribution, or its absolute total.
    p : float, default=0.1
        cellKey's simple multiplier: the noise of a total is `sign(T) *
        p * magnifier * v`, with `v` read from `num_ptable` at the ratio
        `|T| / (p * magnifier)` (capped at its largest row,
        interpolated between rows).
    same_key : bool, default=False
        Look the total up at the cell key itself, or (cellKey's default)
        at the key with its decimal digits rotated by one, so the count
        and the total of a cell do not read the same key.
    threshold : float, default=None
        Hide cells whose perturbed count is below it.
    resolution : float, default=None
        Public grid y is rounded to before summing (exact, order-free
        totals); as in `stat_summary_dp`.
    errorbar : {"noise", None}, default="noise"
        `"noise"`: ymin/ymax hold the range the bounded CKM noise cannot
        leave, from the released values and public parameters: the count
        moves by at most the count table's D, a total by at most `p * D *
        max(|lo|, |hi|)` (`top_contr`) or `p D |T| / (1 - p D)` (`sum`,
        unbounded if `p D >= 1`). `level` is not used: the cover is
        certain. `None`: ymin = ymax = y. A total and its range are
        clipped as in `stat_summary_dp`.
    covers : {"data", "histogram"}, default="data"
        What `y_low`/`y_high` (and the noise error bars) hold: with
        `"data"` a mean's interval is widened by `resolution / 2` (each
        clamped value moves by at most that on the grid), so it holds the
        mean of the clamped y, and a median's or quantile's ends reach
        out to the fine edges beyond them (see `stat_boxplot_dp`), so
        they hold the records' own; `"histogram"`: the mean of the
        gridded y, the quantile of the fine histogram (narrower). A
        total's interval is of the total of the gridded values either
        way (within `n * resolution / 2` of the clamped total).
    discrete : bool, default=None
        Medians and quantiles only, as in `stat_boxplot_dp` (with
        `bounds` as its `limits`): `True` releases them on one fine bin
        per whole number.
    level : float, default=0.95
        Unused by CKM (accepted so that the DP and CKM twins share calls).
    levels, width :
        As in `stat_summary_dp`.

    Notes
    -----
    With `fun_data`, the total of squared centred y is one more magnitude
    cell, perturbed by `num_ptable` at the same cell key as the total;
    the bars are the range of the mean over the bounded noise, widened by
    plotnine's sampling half-width at the largest variance that noise
    allows.

    Needs the `rkey` aesthetic (uniform record keys in [0, 1), stored
    with the data). A total is not perturbed when it is 0 or its cell key
    is 0; a negative deviation never pushes it across zero. Where the
    total is smaller than `p * magnifier` (possible only with values of
    both signs) the ratio is 1 and the total is still perturbed (cellKey
    leaves such cells of a simple multiplier unperturbed). Cells whose
    perturbed count is 0 have no mean and are not drawn. No formal
    privacy guarantee: see the README on CKM.

    Computed variables: `y`, `ymin`, `ymax`, `n` (perturbed count),
    `sum` (perturbed total, before clipping), `width`.
    """

    __doc__ = _with_functions(__doc__)
    DEFAULT_PARAMS = {**_SummaryFamily.BASE_PARAMS, **_CKM_SUMMARY_PARAMS}
