"""Private violins for ``geom_violin``: ``stat_violin_dp``,
``stat_violin_ckm``.

A violin is a density of y per discrete x: the kernel smooth of the
density family (:mod:`.density`) on the fine histogram of y, released
per level of x (a group dimension, as a box plot's) and fill or colour
group. The release is the fine histogram (query family ``"fine"``), so a
violin and a box plot of the same data, limits, bins and seed are one
release, charged once; everything drawn is computed from it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.scales.scale_discrete import scale_discrete

from ..declarations import Declaration
from ..validation import fail as _fail
from ..validation import is_real
from .base import CKM_PARAMS, DP_PARAMS, CKMMixin, DPMixin
from .density import _DensityFamily
from .fine import GROUP_SHARE_DOC, family_doc
from .fine_histogram import FineHistogram

__all__ = ["stat_violin_ckm", "stat_violin_dp"]

#: how the violins' widths are scaled, as in ``stat_ydensity``
SCALES = ("area", "count", "width")
#: a violin's width on a discrete x when not given: plotnine's
#: ``geom_violin`` (0.9 of the resolution of x, 1 on a discrete axis)
DEFAULT_WIDTH = 0.9


class _ViolinFamily(_DensityFamily):
    """Densities of y from its released fine histogram, per discrete x
    (a group dimension) and fill/colour group, shaped as violins."""

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        # the curve runs over the public limits of y
        limits = self.params["limits"]
        return {} if limits is None else {"y": tuple(limits)}

    AXIS = "y"
    DECLARATION = Declaration(
        family="violin",
        title="violin",
        counterpart="ydensity",
        geoms="`geom_violin`",
        counterpart_params=("adjust", "kernel", "n", "trim", "scale"),
        noisy=frozenset(
            {
                "count_label",
                "density",
                "scaled",
                "ndensity",
                "count",
                "n",
                "violinwidth",
            }
        ),
        intervals=("density", "count"),
        plan="curve",
        plan_bounds="the whole density of a violin of `n` records",
        plan_inputs=("limits",),
        judged_by=("density",),
        caption="density band",
        engine=True,
        example={
            "aes": {"x": "cat", "y": "num"},
            "params": {"limits": (10, 45), "bins": 16},
        },
    )
    REQUIRED_AES = {"y"}
    DEFAULT_AES = {"weight": None}
    BASE_PARAMS = {
        **_DensityFamily.BASE_PARAMS,
        "geom": "violin",
        "position": "dodge",
        "scale": "area",
        "width": None,
    }
    CREATES = _DensityFamily.CREATES | {"violinwidth", "width"}

    def validate_params(self) -> None:
        super().validate_params()
        p = self.params
        if p["scale"] not in SCALES:
            raise _fail(
                self.name,
                f"scale must be 'area' (every violin the same area), "
                f"'count' (areas in proportion to the released number of "
                f"records) or 'width' (every violin the same largest "
                f"width), as in stat_ydensity, got {p['scale']!r}.",
            )
        width = p["width"]
        if width is not None and (
            not is_real(width) or not np.isfinite(width) or width <= 0
        ):
            raise _fail(
                self.name,
                f"width must be None (0.9, as geom_violin's on a discrete "
                f"x) or a number > 0 (the violins' largest width in units "
                f"of x), got {width!r}.",
            )

    def check_input(self, data: pd.DataFrame) -> None:
        super().check_input(data)
        if "x" in data.columns and not isinstance(
            self.build.door.scales.x, scale_discrete
        ):
            raise _fail(
                self.name,
                "x must be discrete: one violin per declared level of x. "
                "Map a pandas Categorical with explicit categories=[...] "
                "(public levels), or leave x out for a single violin.",
            )

    def leading_groups(self, data: pd.DataFrame) -> list[str]:
        # x is a group dimension here: one violin per level
        return ["x"] if "x" in data.columns else []

    def curve(self, hist: FineHistogram) -> pd.DataFrame:
        # the density's curve over the axis (y), at each group's x
        n_points = self.params["n"]
        out = super().curve(hist)
        out["y"] = out["x"]
        # the level as the group's info holds it (a Categorical keeps its
        # declared order of levels on the axis)
        out["x"] = (
            self.expand(hist.info, n_points)["x"]
            if "x" in hist.info.columns
            else 0.0
        )
        out["violinwidth"] = self.violin_widths(out)
        width = self.params["width"]
        out["width"] = DEFAULT_WIDTH if width is None else float(width)
        return out

    def violin_widths(self, out: pd.DataFrame) -> np.ndarray:
        """``violinwidth`` as ``stat_ydensity`` computes it per panel,
        from released values: the density over the panel's largest
        (``"area"``), that times the group's ``n`` over the panel's
        largest (``"count"``), or the group's own ``scaled``
        (``"width"``)."""
        if not len(out):
            return np.zeros(0)
        if self.params["scale"] == "width":
            return out["scaled"].to_numpy(dtype=float)
        panel = out["PANEL"] if "PANEL" in out.columns else np.zeros(len(out))
        dens = out["density"].to_numpy(dtype=float)
        top = pd.Series(dens).groupby(np.asarray(panel)).transform("max")
        top = top.to_numpy()
        width = np.where(top > 0, dens / np.where(top > 0, top, 1), 0.0)
        if self.params["scale"] == "count":
            n = out["n"].to_numpy(dtype=float)
            most = pd.Series(n).groupby(np.asarray(panel)).transform("max")
            most = most.to_numpy()
            width = width * np.where(
                most > 0, n / np.where(most > 0, most, 1), 0
            )
        return width


_DOC_COMMON = """\
    limits : tuple
        Public (low, high) range of y (or, without it, the plot's
        `ylim` / `scale_y_continuous(limits=...)`; one of them is
        required): the fine histogram is counted over it, and the
        density is evaluated over it. In data units (transformed like
        the scale, e.g. by `scale_y_log10`).
    bins : int, default=256
        Number of equal fine bins between the limits. More bins resolve
        narrower kernels, but every bin carries its own noise: keep the
        bandwidth at least a few fine bins wide.
    outside : {"clamp", "drop"}, default=None
        `None`: `"clamp"` with `limits=`, `"drop"` with the scale's
        limits (plotnine leaves records outside them out).
        Records with y beyond the limits are counted in the first or last
        fine bin (`"clamp"`), or left out (`"drop"`).
    kernel : str, default="gaussian"
        As in `stat_ydensity`: "gaussian", "epanechnikov", "biweight",
        "cosine", "cosine2", "triangular", "triweight", "uniform" (or
        the abbreviations "gau", "epa", ...).
    bw : float | str, default="limits"
        Bandwidth, in units of y. A number, or a rule on public inputs:
        `"limits"` is `(hi - lo) / 32`, `"bins"` four fine bins. plotnine's
        rules `"nrd0"`, `"scott"` and `"silverman"` are computed from the
        released fine histogram (no eps), one bandwidth for the layer (all
        violins' counts pooled), where plotnine computes one per violin.
    adjust : float, default=1
        Multiplies the bandwidth.
    n : int, default=512
        Number of equally spaced points between the limits at which each
        violin's density is evaluated (`stat_ydensity`: 1024).
    trim : bool, default=False
        `True`: each violin over its released range, from the first to
        the last fine bin to which the released CDF gives mass
        (`stat_ydensity`'s default trims at each group's min and max,
        which would disclose its extremes; under strong noise nearly
        every bin gets mass and little is trimmed). `False`: over the
        limits.
    bounds : tuple, default=(-inf, inf)
        As in `stat_density`: the domain boundaries of y; the density is
        evaluated within them and corrected by reflection.
    scale : {"area", "count", "width"}, default="area"
        As in `stat_ydensity`: every violin of a panel has the same area
        (`"area"`), areas in proportion to the released number of
        records (`"count"`), or the same largest width (`"width"`).
    width : float, default=None
        The violins' largest width in units of x (`None`: 0.9, as
        `geom_violin`'s on a discrete x).
"""

_DOC_NOTES = """
    Notes
    -----
    Each violin's density is the kernel smooth of the released fine
    counts of y of its group (clipped at 0), as in `stat_density_dp`,
    evaluated at `n` points. Computed variables, as `stat_ydensity`'s,
    all from released values: `y` (the evaluation points), `x` (the
    group's level), `density`, `count` (density times `n`), `scaled`
    and `ndensity` (density over its maximum), `n` (the released number
    of records of the violin: the sum of its released fine counts before
    clipping, at least 0), `violinwidth` (by `scale`, over the panel's
    largest density or `n`), `width`; and the intervals `density_low`,
    `density_high`, `count_low`, `count_high` at `level`. x is a group:
    one violin per declared level; an undeclared x is released in two
    steps under DP (which violins are shown, from each one's noisy
    total, with `group_share` of eps; then every fine bin of the shown
    ones). Without x there is a single violin at x = 0. `geom_violin`'s
    `draw_quantiles` are drawn from the released curve.
"""


@document
class stat_violin_dp(DPMixin, _ViolinFamily):
    """
    Differentially private violin densities

    {usage}

    Drop-in for `stat_ydensity`: `geom_violin(stat="violin_dp",
    limits=(0, 50), eps=1, seed=7)` with a declared categorical x. The
    counts of y in fine bins between the public limits are released per
    violin with exact discrete Laplace noise (eps-DP: one histogram, the
    violins hold disjoint records), and each violin is a kernel smooth of
    its counts (post-processing).

    Parameters
    ----------
    {common_parameters}
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    """

    __doc__ = family_doc(__doc__, _DOC_COMMON, GROUP_SHARE_DOC, _DOC_NOTES)
    DEFAULT_PARAMS = {**_ViolinFamily.BASE_PARAMS, **DP_PARAMS}


@document
class stat_violin_ckm(CKMMixin, _ViolinFamily):
    """
    Violin densities protected by the Cell Key Method

    {usage}

    Drop-in for `stat_ydensity` with `aes(rkey=...)` and `ptable=`: the
    fine counts of y of each violin are perturbed by the p-table at their
    cell keys (the same records give the same noise), then smoothed.

    Parameters
    ----------
    {common_parameters}
    ptable, threshold :
        As in `stat_count_ckm`.
    """

    __doc__ = family_doc(__doc__, _DOC_COMMON, GROUP_SHARE_DOC, _DOC_NOTES)
    DEFAULT_PARAMS = {**_ViolinFamily.BASE_PARAMS, **CKM_PARAMS}
