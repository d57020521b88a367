"""Private empirical cumulative distributions for ``geom_step``:
``stat_ecdf_dp``, ``stat_ecdf_ckm``."""

from __future__ import annotations

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat

from ..declarations import Declaration, NoiseGeom
from ..smoothing import monotone_cdf
from ..validation import fail as _fail
from ..validation import is_real
from .base import CKM_PARAMS, DP_PARAMS, CKMMixin, DPMixin
from .fine import (
    GROUP_SHARE_DOC,
    FineFamily,
    family_doc,
    released_total,
)
from .fine_histogram import FineHistogram

__all__ = ["stat_ecdf_ckm", "stat_ecdf_dp"]


class _EcdfFamily(FineFamily):
    """A monotone CDF from the released fine histogram of x."""

    AXIS = "x"
    REQUIRED_AES = {"x"}
    DEFAULT_AES = {"y": after_stat("ecdf"), "weight": None}
    BASE_PARAMS = {
        "geom": "step",
        "position": "identity",
        "na_rm": False,
        **FineFamily.FINE_PARAMS,
        "n": None,
        "pad": True,
        "band": "pointwise",
    }
    CREATES = {"ecdf", "n", "ecdf_low", "ecdf_high", "signal"}
    DECLARATION = Declaration(
        family="ecdf",
        plan_inputs=("limits",),
        example={
            "aes": {"x": "num"},
            "params": {"limits": (10, 45), "bins": 16},
        },
        title="ECDF",
        counterpart="ecdf",
        geoms="`geom_step`, `geom_line`",
        plan_bounds="the whole curve of a group of `n` records",
        noisy=frozenset({"ecdf", "n"}),
        intervals=("ecdf",),
        plan="curve",
        judged_by=("ecdf",),
        caption="ECDF band",
        noise_geom=NoiseGeom("ribbon", "ecdf", {"alpha": 0.3, "size": 0}),
        counterpart_params=("pad",),
        engine=True,
    )
    INTERVALS = DECLARATION.intervals

    def interval_range(self) -> tuple[float, float]:
        return 0.0, 1.0

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        return {"y": (0.0, 1.0)}

    def validate_params(self) -> None:
        super().validate_params()
        p = self.params
        n = p["n"]
        if n is not None and (not is_real(n) or int(n) != n or n < 2):
            raise _fail(
                self.name,
                f"n must be None (the fine-bin edges) or a whole number >= 2 "
                f"of points between the limits, got {n!r}.",
            )
        if not isinstance(p["pad"], (bool, np.bool_)):
            raise _fail(
                self.name, f"pad must be True or False, got {p['pad']!r}."
            )

    def linear_designs(self, hist: FineHistogram) -> dict:
        # running sums at the fine edges (interpolated to the grid of n
        # points): the noise-free ECDF is sums @ counts / total
        edges = hist.edges
        k = len(edges) - 1
        sums = np.tril(np.ones((k + 1, k)), -1)
        if self.params["n"] is not None:
            x = np.linspace(edges[0], edges[-1], int(self.params["n"]))
            sums = np.column_stack(
                [np.interp(x, edges, sums[:, j]) for j in range(k)]
            )
        return {"ecdf": (sums, True)}

    def pad_bounds(self, low: np.ndarray, high: np.ndarray):
        if not self.params["pad"]:
            return low, high
        zeros, ones = np.zeros((len(low), 1)), np.ones((len(low), 1))
        return np.hstack([zeros, low, ones]), np.hstack([zeros, high, ones])

    def curve(self, hist: FineHistogram) -> pd.DataFrame:
        p = self.params
        edges = hist.edges
        cdf, _ = monotone_cdf(hist.noisy)
        if p["n"] is None:
            x, ecdf = edges, cdf
        else:
            x = np.linspace(edges[0], edges[-1], int(p["n"]))
            ecdf = np.vstack([np.interp(x, edges, row) for row in cdf])
            ecdf = ecdf.reshape(len(cdf), len(x))
        if p["pad"]:
            x = np.r_[-np.inf, x, np.inf]
            groups = len(ecdf)
            ecdf = np.hstack(
                [np.zeros((groups, 1)), ecdf, np.ones((groups, 1))]
            )
        out = self.expand(hist.info, len(x))
        out["x"] = np.tile(x, len(hist.info))
        out["ecdf"] = ecdf.ravel()
        out["n"] = np.repeat(released_total(hist), len(x)).astype(np.int64)
        return out


_DOC_COMMON = """\
    limits : tuple
        Public (low, high) range of x (or, without it, the plot's
        `xlim` / `scale_x_continuous(limits=...)`, as the bin stats
        take it; one of them is required): the fine histogram is
        counted over it. In data units (transformed like the scale).
    bins : int, default=128
        Number of equal fine bins between the limits: the steps of the
        curve. Every bin carries its own noise, and the noise of a
        cumulative sum grows with the number of bins summed: prefer the
        coarsest bins that answer the question.
    outside : {"clamp", "drop"}, default=None
        `None`: `"clamp"` with `limits=`, `"drop"` with the scale's
        limits (plotnine leaves records outside them out).
        Records with x beyond the limits are counted in the first or last
        fine bin (`"clamp"`: the curve is right at every fine-bin edge
        inside the limits), or left out (`"drop"`: the curve is the
        distribution of the records inside the limits).
    n : int, default=None
        As in `stat_ecdf`: `None` evaluates the curve at the fine-bin
        edges; a number evaluates it at that many equally spaced points
        between the limits, interpolating linearly within a fine bin.
    pad : bool, default=True
        As in `stat_ecdf`: add the points `-inf` (ecdf 0) and `inf`
        (ecdf 1).
"""

_DOC_NOTES = """
    Notes
    -----
    The curve is post-processing of the released fine counts: their
    running sums (before clipping at 0, so the noise does not add phantom
    records) are made non-decreasing by least squares (isotonic
    regression), divided by the released total, clipped to [0, 1], and
    pinned to 0 at the low limit and 1 at the high limit. At a fine-bin
    edge e it estimates the share of records <= e. Computed variables:
    `ecdf`, `n` (the released number of records of the group).
"""


@document
class stat_ecdf_dp(DPMixin, _EcdfFamily):
    """
    Differentially private empirical cumulative distribution

    {usage}

    Drop-in for `stat_ecdf`: `stat_ecdf_dp(limits=(0, 50), eps=1,
    seed=7)` or `geom_step(stat="ecdf_dp", ...)`. The counts of x in fine
    bins (between the public limits) are released with exact discrete
    Laplace noise (every bin, per group and panel: eps-DP); the curve is
    computed from them.

    Parameters
    ----------
    {common_parameters}
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    """

    __doc__ = family_doc(__doc__, _DOC_COMMON, GROUP_SHARE_DOC, _DOC_NOTES)
    DEFAULT_PARAMS = {**_EcdfFamily.BASE_PARAMS, **DP_PARAMS}


@document
class stat_ecdf_ckm(CKMMixin, _EcdfFamily):
    """
    Empirical cumulative distribution protected by the Cell Key Method

    {usage}

    Drop-in for `stat_ecdf` with `aes(rkey=...)` and `ptable=`.

    Parameters
    ----------
    {common_parameters}
    ptable, threshold :
        As in `stat_count_ckm`.
    """

    __doc__ = family_doc(__doc__, _DOC_COMMON, GROUP_SHARE_DOC, _DOC_NOTES)
    DEFAULT_PARAMS = {**_EcdfFamily.BASE_PARAMS, **CKM_PARAMS}
