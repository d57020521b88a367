"""Private kernel densities for ``geom_density``: ``stat_density_dp``,
``stat_density_ckm``."""

from __future__ import annotations

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat

from ..declarations import Declaration, NoiseGeom
from ..smoothing import (
    kernel_name,
    kernel_weights,
    monotone_cdf,
    smooth_with,
)
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
from .signal import warn_density_zero

__all__ = ["stat_density_ckm", "stat_density_dp"]

#: bandwidth rules on public inputs: (hi - lo) / 32, or four fine bins
BW_RULES = ("limits", "bins")
#: plotnine's rules on the spread, read off the released fine histogram
SPREAD_RULES = {"nrd0": 0.9, "silverman": 0.9, "scott": 1.059}


def spread_bandwidth(rule: str, edges: np.ndarray, noisy: np.ndarray) -> float:
    """plotnine's (statsmodels') bandwidth rule ``rule`` of the records,
    ``factor * min(sd, IQR / 1.349) * n ** -0.2`` (R's nrd0 divides by
    1.34), from the *released* fine histogram of the layer (every
    group's counts pooled, clipped at 0): post-processing, no eps. The sd
    and IQR are those of the fine bins' midpoints and of the released CDF
    (interpolated within a bin); with fewer than 2 released records, or
    no spread, a quarter of the limits' range."""
    counts = np.clip(np.atleast_2d(noisy), 0, None).sum(axis=0)
    n = float(counts.sum())
    lo, hi = float(edges[0]), float(edges[-1])
    if n < 2:
        return (hi - lo) / 4
    mids = (edges[:-1] + edges[1:]) / 2
    mean = float((counts * mids).sum() / n)
    sd = float(np.sqrt((counts * (mids - mean) ** 2).sum() / (n - 1)))
    cdf = np.concatenate([[0.0], np.cumsum(counts) / n])
    q1, q3 = np.interp([0.25, 0.75], cdf, edges)
    iqr = (q3 - q1) / (1.34 if rule == "nrd0" else 1.349)
    spread = min(sd, iqr) if iqr > 0 else sd
    if spread <= 0:
        return (hi - lo) / 4
    return SPREAD_RULES[rule] * spread * n**-0.2


class _DensityFamily(FineFamily):
    """A kernel smooth of the released fine histogram of x."""

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        # a smooth of counts clipped at 0 (and its band)
        return {"y": (0.0, float("inf"))}

    AXIS = "x"
    DECLARATION = Declaration(
        family="density",
        plan_inputs=("limits",),
        example={
            "aes": {"x": "num"},
            "params": {"limits": (10, 45), "bins": 16},
        },
        title="density",
        counterpart="density",
        geoms="`geom_density`, `geom_line`, `geom_area`",
        plan_bounds="the whole curve of a group of `n` records",
        counterpart_params=("adjust", "kernel", "n"),
        noisy=frozenset(
            {
                "count",
                "noisy_count",
                "count_label",
                "density",
                "scaled",
                "ndensity",
                "n",
            }
        ),
        intervals=("density", "count"),
        plan="curve",
        judged_by=("density",),
        caption="density band",
        noise_geom=NoiseGeom(
            "ribbon",
            "density",
            {"alpha": 0.3, "outline_type": "full", "size": 0},
        ),
        engine=True,
    )
    REQUIRED_AES = {"x"}
    DEFAULT_AES = {"y": after_stat("density"), "weight": None}
    BASE_PARAMS = {
        "geom": "density",
        "position": "stack",
        "na_rm": False,
        **FineFamily.FINE_PARAMS,
        "bins": 256,
        "kernel": "gaussian",
        "bw": "limits",
        "adjust": 1,
        "n": 512,
        "trim": False,
        "bounds": (-np.inf, np.inf),
        "band": "pointwise",
    }
    #: its marks are curves judged by their band (stats/marks.py)
    DENSITY_CURVES = True
    CREATES = {
        "density",
        "count",
        "scaled",
        "ndensity",
        "n",
        "density_low",
        "density_high",
        "count_low",
        "count_high",
        "signal",
    }
    INTERVALS = ("density", "count")

    def validate_params(self) -> None:
        super().validate_params()
        p = self.params
        short = kernel_name(p["kernel"])
        if short is None:
            raise _fail(
                self.name,
                f"kernel must be one of 'gaussian', 'epanechnikov', "
                f"'biweight', 'cosine', 'cosine2', 'triangular', "
                f"'triweight', 'uniform' (or plotnine's abbreviations "
                f"'gau', 'epa', ...), got {p['kernel']!r}.",
            )
        bw = p["bw"]
        if isinstance(bw, str):
            if bw not in BW_RULES and bw not in SPREAD_RULES:
                raise _fail(
                    self.name,
                    f"bw must be a number > 0, one of the rules on public "
                    f"inputs 'limits' ((hi - lo) / 32) or 'bins' (four fine "
                    f"bins), or plotnine's 'nrd0', 'scott' or 'silverman' "
                    f"(from the released fine histogram), got {bw!r}.",
                )
        elif not is_real(bw) or not np.isfinite(bw) or bw <= 0:
            raise _fail(
                self.name, f"bw must be a finite number > 0, got {bw!r}."
            )
        adjust = p["adjust"]
        if not is_real(adjust) or not np.isfinite(adjust) or adjust <= 0:
            raise _fail(
                self.name,
                f"adjust must be a finite number > 0, got {adjust!r}.",
            )
        n = p["n"]
        if not is_real(n) or int(n) != n or n < 2:
            raise _fail(
                self.name,
                f"n must be a whole number >= 2 of points at which the "
                f"density is evaluated, got {n!r}.",
            )
        p["n"] = int(n)
        if not isinstance(p["trim"], (bool, np.bool_)):
            raise _fail(
                self.name, f"trim must be True or False, got {p['trim']!r}."
            )
        p["bounds"] = self.checked_bounds(p["bounds"])

    def checked_bounds(self, bounds) -> tuple[float, float]:
        """``bounds=(a, b)``: numbers, ``a < b``, either may be infinite."""
        try:
            a, b = (float(v) for v in bounds)
        except (TypeError, ValueError):
            raise _fail(
                self.name,
                f"bounds must be a pair (low, high) of numbers (-inf or inf "
                f"for an open side), e.g. bounds=(0, np.inf), got "
                f"{bounds!r}.",
            ) from None
        if np.isnan(a) or np.isnan(b) or not a < b:
            raise _fail(
                self.name,
                f"bounds must have low < high, got {bounds!r}: the domain "
                "boundaries of x (e.g. (0, np.inf) for a positive "
                "quantity).",
            )
        return a, b

    def grids(self, hist: FineHistogram) -> np.ndarray:
        """``(groups, n)`` points at which each group's density is
        evaluated: the limits (within ``bounds``, as plotnine's
        ``fit_density_to_bounds``), or with ``trim`` each group's
        released range: from the low edge of its first fine bin to the
        high edge of its last one to which the released CDF gives mass
        (plotnine's trim reads the group's min and max, which would
        disclose its extremes)."""
        edges = hist.edges
        a, b = self.params["bounds"]
        lo, hi = max(float(edges[0]), a), min(float(edges[-1]), b)
        groups, n = len(hist.info), self.params["n"]
        los, his = np.full(groups, lo), np.full(groups, hi)
        if self.params["trim"] and groups:
            cdf, _ = monotone_cdf(hist.noisy)
            mass = np.diff(cdf, axis=1) > 0
            for g in range(groups):
                idx = np.flatnonzero(mass[g])
                if len(idx):
                    los[g] = max(lo, float(edges[idx[0]]))
                    his[g] = min(hi, float(edges[idx[-1] + 1]))
        steps = np.linspace(0.0, 1.0, n)
        return los[:, None] + (his - los)[:, None] * steps

    def reflected(self, values, grid: np.ndarray, edges) -> np.ndarray:
        """The kernel smooth of ``values`` (``(rows, k)`` fine counts) at
        ``grid``, with plotnine's boundary correction by reflection: the
        density at ``x`` plus that at ``2a - x`` and ``2b - x`` for each
        finite bound (mass the kernel spreads beyond a bound is folded
        back)."""
        parts = self.kernel_parts(grid, edges)
        out = smooth_with(parts[0], values)
        for k in parts[1:]:
            out = out + smooth_with(k, values)
        return out

    def kernel_parts(self, grid: np.ndarray, edges) -> list[np.ndarray]:
        """The kernel weights (:func:`~plotnine_private.smoothing.
        kernel_weights`) of :meth:`reflected` at ``grid`` and at its
        reflection in each finite bound. The last ones made are kept on
        this build's copy of the stat: the curve and its intervals' design
        read one (the same grid, edges and bandwidth)."""
        bw = self.bandwidth(edges)
        kept = getattr(self, "_kernel_parts", None)
        if (
            kept is not None
            and kept[0] == bw
            and np.array_equal(kept[1], grid)
            and np.array_equal(kept[2], edges)
        ):
            return kept[3]
        kernel = kernel_name(self.params["kernel"])
        assert kernel is not None  # checked by validate_params
        centres = (edges[:-1] + edges[1:]) / 2
        parts = [kernel_weights(centres, grid, bw, kernel)]
        for bound in self.params["bounds"]:
            if np.isfinite(bound):
                parts.append(
                    kernel_weights(centres, 2 * bound - grid, bw, kernel)
                )
        self._kernel_parts = (bw, np.array(grid), np.array(edges), parts)
        return parts

    def bandwidth(self, edges: np.ndarray) -> float:
        """The bandwidth in the units of the (transformed) x axis."""
        p = self.params
        bw = p["bw"]
        lo, hi = float(edges[0]), float(edges[-1])
        if bw == "limits":
            bw = (hi - lo) / 32
        elif bw == "bins":
            bw = 4 * (hi - lo) / (len(edges) - 1)
        elif bw in SPREAD_RULES:
            bw = spread_bandwidth(bw, edges, self.build.fine.noisy)
        return float(bw) * float(p["adjust"])

    def counterpart_arguments(self, kept) -> dict:
        """What the unperturbed counterpart (``pp.compare``) takes beyond
        the declared ``counterpart_params``: the bandwidth rule on public
        inputs as the number it was on this build (``kept``: the layer's
        build, with its fine histogram), so the two curves smooth
        alike."""
        edges = kept.fine.edges
        bw = self.params["bw"]
        if bw in SPREAD_RULES:
            return {"bw": spread_bandwidth(bw, edges, kept.fine.noisy)}
        return {"bw": self.bandwidth(edges) / float(self.params["adjust"])}

    def linear_designs(self, hist: FineHistogram) -> dict:
        # the kernel weights of each fine count at each grid point: the
        # noise-free density is weights @ counts / total (with trim the
        # grid follows the noise: simulated through the curve instead)
        if self.params["trim"]:
            return {}
        edges = hist.edges
        grid = self.grids(hist)[0] if len(hist.info) else edges[:1]
        weights = self.reflected_weights(grid, edges)
        return {"density": (weights, True), "count": (weights, False)}

    def reflected_weights(self, grid: np.ndarray, edges) -> np.ndarray:
        """``(points, k)``: :meth:`reflected` as weights of the fine
        counts, the smooth of counts ``w`` being ``weights @ w / sum(w)``
        (what :meth:`reflected` of the identity gives, without its
        product with the identity), laid out as its transpose."""
        parts = self.kernel_parts(grid, edges)
        out = parts[0]
        for k in parts[1:]:
            out = out + k
        # column-major, as the transpose of reflected(np.eye(k)) was: the
        # products with it run as they did
        return np.asfortranarray(out)

    def add_intervals(self, out: pd.DataFrame, released) -> None:
        super().add_intervals(out, released)
        if len(out):
            warn_density_zero(self, out, self.params["level"])

    def curve(self, hist: FineHistogram) -> pd.DataFrame:
        p = self.params
        edges = hist.edges
        grids = self.grids(hist)
        if p["trim"]:
            rows = [
                self.reflected(hist.values[g : g + 1], grids[g], edges)
                for g in range(len(grids))
            ]
            dens = np.vstack(rows) if rows else np.zeros((0, p["n"]))
        else:
            grid = grids[0] if len(grids) else np.zeros(p["n"])
            dens = self.reflected(hist.values, grid, edges)
        n = released_total(hist)
        peak = dens.max(axis=1, keepdims=True) if dens.size else dens
        scaled = np.where(peak > 0, dens / np.where(peak > 0, peak, 1), 0.0)
        out = self.expand(hist.info, p["n"])
        out["x"] = grids.ravel()
        out["density"] = dens.ravel()
        out["count"] = (dens * n[:, None]).ravel()
        out["scaled"] = scaled.ravel()
        out["ndensity"] = scaled.ravel()
        out["n"] = np.repeat(n, p["n"]).astype(np.int64)
        return out


_DOC_COMMON = """\
    limits : tuple
        Public (low, high) range of x (or, without it, the plot's
        `xlim` / `scale_x_continuous(limits=...)`, as the bin stats
        take it; one of them is required): the fine histogram is
        counted over it, and the density is evaluated over it. In data
        units (transformed like the scale, e.g. by `scale_x_log10`).
    bins : int, default=256
        Number of equal fine bins between the limits. More bins resolve
        narrower kernels, but every bin carries its own noise: keep the
        bandwidth at least a few fine bins wide.
    outside : {"clamp", "drop"}, default=None
        `None`: `"clamp"` with `limits=`, `"drop"` with the scale's
        limits (plotnine leaves records outside them out).
        Records with x beyond the limits are counted in the first or last
        fine bin (`"clamp"`, so every record counts), or left out
        (`"drop"`, as plotnine drops data outside scale limits).
    kernel : str, default="gaussian"
        As in `stat_density`: "gaussian", "epanechnikov", "biweight",
        "cosine", "cosine2", "triangular", "triweight", "uniform" (or
        the abbreviations "gau", "epa", ...), scaled as there (the
        bandwidth is the Gaussian's standard deviation and the half-width
        of the others).
    bw : float | str, default="limits"
        Bandwidth, in units of x. A number, or a rule on public inputs:
        `"limits"` is `(hi - lo) / 32`, `"bins"` four fine bins. plotnine's
        rules `"nrd0"`, `"scott"` and `"silverman"` (`factor * min(sd, IQR
        / 1.349) * n ** -0.2`) are computed from the released fine
        histogram (post-processing: no eps), one bandwidth for the layer
        (every group's counts pooled), where plotnine computes one per
        group from its records; at a small eps the noise widens it.
    adjust : float, default=1
        Multiplies the bandwidth.
    n : int, default=512
        Number of equally spaced points between the limits at which the
        density is evaluated.
    trim : bool, default=False
        As in `stat_density`, each group's density over its own range
        instead of the limits: here the released range, from the first
        to the last fine bin to which the released CDF gives mass (the
        group's min and max would disclose its extremes).
    bounds : tuple, default=(-inf, inf)
        As in `stat_density`: the domain boundaries of x (in the units
        the stat sees, i.e. after the scale's transform, as there). The
        density is evaluated within them and corrected by reflection:
        `f(x) + f(2a - x) + f(2b - x)` for the finite bounds `a`, `b`.
"""

_DOC_NOTES = """
    Notes
    -----
    The density is a kernel smooth of the released fine histogram (counts
    clipped at 0): `density(x) = sum_j c_j K((x - m_j) / bw) / bw /
    sum_j c_j` over fine-bin midpoints `m_j`, evaluated directly on the
    grid; as in plotnine, mass that the kernel spreads beyond the limits
    is not folded back. Computed variables: `density`, `count` (density
    times `n`), `scaled` and `ndensity` (density / its maximum), `n` (the
    released number of records of the group: the sum of the released
    fine counts before clipping, at least 0). With the same bandwidth and
    kernel it converges to `stat_density` as the noise vanishes and the
    fine bins narrow.
"""


@document
class stat_density_dp(DPMixin, _DensityFamily):
    """
    Differentially private kernel density estimate

    {usage}

    Drop-in for `stat_density`: `geom_density(stat="density_dp",
    limits=(0, 50), eps=1, seed=7)`. The counts of x in fine bins (between
    the public limits) are released with exact discrete Laplace noise
    (every bin, empty ones included, per group and panel: one histogram,
    eps-DP), and the curve is a kernel smooth of them (post-processing).

    Parameters
    ----------
    {common_parameters}
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    """

    __doc__ = family_doc(__doc__, _DOC_COMMON, GROUP_SHARE_DOC, _DOC_NOTES)
    DEFAULT_PARAMS = {**_DensityFamily.BASE_PARAMS, **DP_PARAMS}


@document
class stat_density_ckm(CKMMixin, _DensityFamily):
    """
    Kernel density estimate protected by the Cell Key Method

    {usage}

    Drop-in for `stat_density` with `aes(rkey=...)` and `ptable=`: the fine
    counts are perturbed by the p-table at their cell keys (the same
    records give the same noise), then smoothed.

    Parameters
    ----------
    {common_parameters}
    ptable, threshold :
        As in `stat_count_ckm`.
    """

    __doc__ = family_doc(__doc__, _DOC_COMMON, GROUP_SHARE_DOC, _DOC_NOTES)
    DEFAULT_PARAMS = {**_DensityFamily.BASE_PARAMS, **CKM_PARAMS}
