"""The result of ``dp_pca`` / ``dp_score``: :class:`DPPCAResult`."""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..door import level_label
from ..mechanisms.errors import ParameterError
from ..mechanisms.pca.histogram import ScoreGrid, grid_counts
from ..mechanisms.pca.quantile import PrivateFrame
from ..mechanisms.pca.synthetic import NO_MASS_MESSAGE, adjust_of_scale
from ..mechanisms.release.engine import Release
from ..mechanisms.streams.randomness import derive_key
from ..validation import fail, renamed, validate_seed
from .display import sample_rows, sample_sizes
from .plots import PLOTS

__all__ = ["DPPCAResult", "NOT_PRIVATE", "ordinary_pca"]

NOT_PRIVATE = "not private"


@dataclass
class DPPCAResult:
    """A private PCA score release and its plots.

    Attributes
    ----------
    directions
        ``p x p`` DataFrame of private directions (rows: columns of the
        data; columns ``PC1..``).
    eigenvalues
        Private eigenvalues (Series ``PC1..PCk``) or ``None`` (dp_score).
    pve
        Private proportions of variance explained (over the ``k`` values).
    frame
        The private square frame, in score (not display) coordinates.
    histogram
        DataFrame ``xmin, xmax, ymin, ymax, x, y, count, prob`` (+
        ``group``), in *display* coordinates (shifted by the private
        centre when ``center=True``); ``count`` is the released count
        (clipped at 0), ``prob`` the count over its group's total.
    privacy
        Budget table: rows loading, scree, frame, histogram, total;
        columns eps, delta, mechanism.
    releases
        One engine :class:`~plotnine_private.mechanisms.release.engine.Release`
        per mechanism (directions, eigenvalues, frame, histogram).
    groups
        Group levels shown: the declared ones in their order, or (groups
        not declared, "sparse" only) those with a released cell.
    group_totals
        Released estimate of each group's size (sum of its released
        counts): what synthetic point counts are made from.
    reference
        Only with ``reference=True``: ordinary (non-private) PCA for
        comparison. **Not private.**
    """

    directions: pd.DataFrame
    eigenvalues: pd.Series | None
    pve: pd.Series | None
    frame: PrivateFrame
    histogram: pd.DataFrame
    privacy: pd.DataFrame
    releases: list[Release]
    axes: tuple[int, int]
    method: str
    bins: tuple[int, int]
    center: bool
    n: int
    columns: list[str]
    groups: list[Any] = field(default_factory=list)
    group_totals: dict[Any, float] = field(default_factory=dict)
    reference: dict[str, Any] | None = None
    # no seed here: without a key file it is the secret of the noise, and
    # a result is pickled, printed and passed around
    offset: tuple[float, float] = (0.0, 0.0)
    identity: str = ""
    sample_key: bytes = field(default=b"", repr=False)

    # -- conveniences -----------------------------------------------------
    @property
    def labels(self) -> tuple[str, str]:
        """Component names, e.g. ``("PC1", "PC2")`` (column names of
        :meth:`sample`)."""
        return f"PC{self.axes[0]}", f"PC{self.axes[1]}"

    @property
    def axis_titles(self) -> tuple[str, str]:
        """Axis titles: the component and, when eigenvalues were
        released, its private share of variance."""
        names = self.labels
        if self.pve is None:
            return names
        return tuple(  # type: ignore[return-value]
            f"{name} ({100 * float(self.pve.get(name, np.nan)):.1f}% of "
            "variance, private)"
            if name in self.pve.index
            else name
            for name in names
        )

    @property
    def limits(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """Frame limits in display coordinates."""
        ox, oy = self.offset
        return (
            (self.frame.xlim[0] - ox, self.frame.xlim[1] - ox),
            (self.frame.ylim[0] - oy, self.frame.ylim[1] - oy),
        )

    @property
    def empty(self) -> bool:
        """True when no cell was released with a positive count."""
        return not bool((self.histogram["prob"] > 0).any())

    def __repr__(self) -> str:
        total = self.privacy.loc["total"]
        ev = (
            ""
            if self.eigenvalues is None
            else ", eigenvalues="
            + np.array2string(self.eigenvalues.to_numpy()[:6], precision=3)
        )
        return (
            f"<DPPCAResult n={self.n} p={len(self.columns)} axes={self.axes}"
            f" method={self.method!r} eps={total['eps']:.4g} "
            f"delta={total['delta']:.3g}{ev}"
            f"{' +reference (not private)' if self.reference else ''}>"
        )

    # -- sampling ---------------------------------------------------------
    def sample(
        self,
        n: int | None = None,
        method: str = "uniform",
        adjust: float = 1.0,
        seed: int | str | None = None,
        bandwidth_scale: float | None = None,
    ) -> pd.DataFrame:
        """Synthetic score points from the private histogram (free).

        Parameters
        ----------
        n
            Number of points (public); default the number of rows (public
            under replace-one adjacency). Split over groups in proportion
            to their *released* totals (largest remainder), never their
            true sizes.
        method
            ``"uniform"`` (uniform in the cell) or ``"center"``.
        adjust
            Multiplier of the Gaussian jitter's default bandwidth (0.25
            cell widths for ``"uniform"``, 0.5 for ``"center"``); 0: none.
        seed
            Another sampling stream (a label); default the release's own.
        bandwidth_scale
            Deprecated: the jitter in cell widths (``adjust`` times the
            default); use ``adjust``.

        Returns
        -------
        DataFrame with the two PC columns (display coordinates) and
        ``group`` when group-wise.
        """
        if n is not None and (
            not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0
        ):
            raise fail("sample", f"n must be an int >= 0, got {n!r}.")
        if bandwidth_scale is not None:
            scale = adjust_of_scale(method, bandwidth_scale)
            adjust = renamed(
                "sample", "bandwidth_scale", "adjust", scale, adjust, 1.0
            )
        key = self.sample_key
        if seed is not None:
            key = derive_key(key, "seed", validate_seed("sample", seed))
        lx, ly = self.labels
        levels = self.groups or [None]
        totals = [self.group_totals.get(g, 0.0) for g in levels]
        size = self.n if n is None else int(n)
        sizes = sample_sizes(np.array(totals, dtype=float), size)
        if self.empty and size > 0:
            warnings.warn(NO_MASS_MESSAGE, UserWarning, stacklevel=2)
        h = self.histogram
        frames = []
        try:
            for g, size in zip(levels, sizes.tolist()):
                cells = h if g is None else h[h["group"] == g]
                x, y = sample_rows(
                    cells,
                    size,
                    method,
                    adjust,
                    derive_key(key, "group", level_label(g)),
                )
                part = pd.DataFrame({lx: x, ly: y})
                if g is not None:
                    part["group"] = g
                frames.append(part)
        except ParameterError as err:
            raise fail("sample", str(err)) from None
        out = pd.concat(frames, ignore_index=True)
        if self.groups:
            out["group"] = pd.Categorical(out["group"], self.groups)
        return out

    # -- plots --------------------------------------------------------------
    def plot(self, kind: str = "score", **kwargs: Any):
        """A plotnine figure of the release.

        Parameters
        ----------
        kind
            ``"score"`` (private histogram tiles), ``"synthetic"``
            (points sampled from it), ``"biplot"`` (synthetic points and
            loading arrows) or ``"scree"`` (private PVE). With a
            reference, the ordinary PCA is drawn in a facet labelled
            "not private" beside the private one.
        **kwargs
            Passed to :meth:`sample` for ``"synthetic"`` / ``"biplot"``.
        """
        if kind not in PLOTS:
            raise fail(
                "plot", f"kind must be one of {sorted(PLOTS)}, got {kind!r}."
            )
        return PLOTS[kind](self, **kwargs)


def ordinary_pca(
    x: np.ndarray,
    v_dp: np.ndarray,
    axes: tuple[int, int],
    k: int,
    grid: ScoreGrid,
    scores: np.ndarray,
    offset: tuple[float, float],
) -> dict[str, Any]:
    """Ordinary PCA for comparison. NOT PRIVATE."""
    xc = x - x.mean(axis=0)
    cov = np.cov(xc, rowvar=False)
    values, vectors = np.linalg.eigh(cov)
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    signs = np.sign(np.sum(vectors * v_dp, axis=0))
    signs[signs == 0] = 1
    vectors = vectors * signs
    ev = np.maximum(values[:k], 0)
    a, b = axes[0] - 1, axes[1] - 1
    counts = grid_counts(scores[:, 0], scores[:, 1], grid)
    return {
        "label": NOT_PRIVATE,
        "directions": vectors,
        "eigenvalues": ev,
        "pve": ev / ev.sum() if ev.sum() > 0 else ev,
        "scores": xc @ vectors[:, [a, b]],
        "mean_projection": x.mean(axis=0) @ vectors[:, [a, b]],
        "histogram_prob": counts / counts.sum(),
        "variable_sd": xc.std(axis=0, ddof=1),
        "offset": offset,
    }
