"""Plots of a private PCA release: post-processing only.

Five builders, one per ``DPPCAResult.plot(kind)`` and the reference
layer they share: :func:`score_plot` (private histogram tiles),
:func:`synthetic_plot` (points sampled from it), :func:`biplot`
(synthetic points and loading arrows), :func:`scree_plot` (private
proportions of variance) and :func:`reference_points` (the ordinary,
**not private** PCA, drawn in its own facet labelled so).

A builder reads a result through :class:`PlottedResult`, the parts of a
:class:`~.result.DPPCAResult` it draws: the result's ``plot`` method
calls the builders, and they need no result class.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pandas as pd

from ..validation import fail

__all__ = [
    "PLOTS",
    "PlottedResult",
    "biplot",
    "reference_points",
    "score_plot",
    "scree_plot",
    "synthetic_plot",
]


class PlottedResult(Protocol):
    """What the plots read of a private PCA result (a
    :class:`~.result.DPPCAResult`; see its attributes)."""

    @property
    def directions(self) -> pd.DataFrame: ...
    @property
    def pve(self) -> pd.Series | None: ...
    @property
    def histogram(self) -> pd.DataFrame: ...
    @property
    def privacy(self) -> pd.DataFrame: ...
    @property
    def axes(self) -> tuple[int, int]: ...
    @property
    def method(self) -> str: ...
    @property
    def bins(self) -> tuple[int, int]: ...
    @property
    def center(self) -> bool: ...
    @property
    def columns(self) -> list[str]: ...
    @property
    def groups(self) -> list[Any]: ...
    @property
    def reference(self) -> dict[str, Any] | None: ...
    @property
    def labels(self) -> tuple[str, str]: ...
    @property
    def axis_titles(self) -> tuple[str, str]: ...
    @property
    def limits(
        self,
    ) -> tuple[tuple[float, float], tuple[float, float]]: ...
    @property
    def empty(self) -> bool: ...
    def sample(self, *args: Any, **kwargs: Any) -> pd.DataFrame: ...


PRIVATE_COLOR = "#1F4E79"
REFERENCE_COLOR = "#444444"
DP_PANEL = "DP (private release)"
REF_PANEL = "Ordinary PCA (not private)"


def _panels(result: PlottedResult) -> list[str]:
    return [DP_PANEL, REF_PANEL] if result.reference else [DP_PANEL]


def _with_panel(df: pd.DataFrame, name: str, result: PlottedResult):
    df = df.copy()
    df["panel"] = pd.Categorical([name] * len(df), _panels(result))
    return df


def _reference_scores(result: PlottedResult) -> pd.DataFrame:
    ref = result.reference
    assert ref is not None
    lx, ly = result.labels
    sc = ref["scores"]
    if not result.center:  # raw projections, like the private display
        sc = sc + ref["mean_projection"]
    out = pd.DataFrame({lx: sc[:, 0], ly: sc[:, 1]})
    if result.groups:
        out["group"] = pd.Categorical(ref["groups"], result.groups)
    return out


def _subtitle(result: PlottedResult) -> str:
    total = result.privacy.loc["total"]
    text = (
        f"eps = {total['eps']:.3g}, delta = {total['delta']:.2g} "
        f"({result.method} histogram, {result.bins[0]}x{result.bins[1]} "
        "bins)"
    )
    if result.empty:
        text += "; No bins survived private thresholding"
    return text


def _base(result: PlottedResult, title: str, limits=None):
    import plotnine as p9

    (x0, x1), (y0, y1) = limits or result.limits
    tx, ty = result.axis_titles
    plot = (
        p9.ggplot()
        + p9.coord_fixed(xlim=(x0, x1), ylim=(y0, y1), expand=False)
        + p9.labs(x=tx, y=ty, title=title, subtitle=_subtitle(result))
        + p9.theme_minimal()
        + p9.theme(panel_border=p9.element_rect(color="black", fill=None))
    )
    if result.reference:
        plot += p9.facet_wrap("panel")
    return plot


def score_plot(result: PlottedResult, alpha_range=(0.0, 1.0)):
    """The private score histogram as tiles (``fit.plot("score")``).

    Parameters
    ----------
    result
        A private PCA.
    alpha_range
        Tile transparency from the lowest to the highest released
        probability.

    Returns
    -------
    plotnine.ggplot
        Post-processing of released values only (beside the ordinary PCA
        in a panel labelled "not private" if the fit has a reference).
    """
    import plotnine as p9

    h = _with_panel(result.histogram, DP_PANEL, result)
    top = float(h["prob"].max()) if len(h) else 1.0
    plot = _base(result, "Private PCA score histogram")
    if result.groups:
        plot += p9.geom_rect(
            p9.aes(
                "xmin",
                xmin="xmin",
                xmax="xmax",
                ymin="ymin",
                ymax="ymax",
                fill="group",
                alpha="prob",
            ),
            data=h,
            inherit_aes=False,
        )
    else:
        plot += p9.geom_rect(
            p9.aes(
                xmin="xmin",
                xmax="xmax",
                ymin="ymin",
                ymax="ymax",
                alpha="prob",
            ),
            data=h,
            fill=PRIVATE_COLOR,
        )
    plot += p9.scale_alpha_continuous(
        range=alpha_range, limits=(0, top if top > 0 else 1)
    )
    if result.reference:
        plot += reference_points(result)
    return plot


def reference_points(result: PlottedResult):
    """A layer of the ordinary (not private) PCA scores, for the panel
    labelled "not private" of a fit made with ``reference=True``.

    Parameters
    ----------
    result
        A private PCA with a reference.

    Returns
    -------
    plotnine.geoms.geom_point
        Points of the ordinary scores, coloured by group if any.
    """
    import plotnine as p9

    lx, ly = result.labels
    ref = _with_panel(_reference_scores(result), REF_PANEL, result)
    if result.groups:
        return p9.geom_point(
            p9.aes(lx, ly, color="group"), data=ref, size=0.5, alpha=0.5
        )
    return p9.geom_point(
        p9.aes(lx, ly), data=ref, size=0.5, alpha=0.4, color=REFERENCE_COLOR
    )


def synthetic_plot(result: PlottedResult, **sample_args: Any):
    """Synthetic points drawn from the private histogram
    (``fit.plot("synthetic")``): free post-processing.

    Parameters
    ----------
    result
        A private PCA.
    **sample_args
        Passed to :meth:`DPPCAResult.sample` (n, method, seed...).

    Returns
    -------
    plotnine.ggplot
    """
    import plotnine as p9

    lx, ly = result.labels
    pts = _with_panel(result.sample(**sample_args), DP_PANEL, result)
    plot = _base(result, "Synthetic points from the private histogram")
    if result.groups:
        plot += p9.geom_point(
            p9.aes(lx, ly, color="group"), data=pts, size=0.5, alpha=0.5
        )
    else:
        plot += p9.geom_point(
            p9.aes(lx, ly),
            data=pts,
            size=0.5,
            alpha=0.4,
            color=PRIVATE_COLOR,
        )
    if result.reference:
        plot += reference_points(result)
    return plot


def _arrows(
    v: np.ndarray, columns: list[str], mult: float, origin, top: int
) -> pd.DataFrame:
    norms = np.hypot(v[:, 0], v[:, 1])
    keep = np.argsort(-norms, kind="stable")[:top]
    return pd.DataFrame(
        {
            "x0": origin[0],
            "y0": origin[1],
            "x1": origin[0] + mult * v[keep, 0],
            "y1": origin[1] + mult * v[keep, 1],
            "variable": [columns[i] for i in keep],
        }
    )


def biplot(result: PlottedResult, variables: int = 10, **sample_args: Any):
    """Synthetic points with the private loadings as arrows
    (``fit.plot("biplot")``).

    Parameters
    ----------
    result
        A private PCA.
    variables
        How many variables get an arrow (the longest ones).
    **sample_args
        Passed to :meth:`DPPCAResult.sample`.

    Returns
    -------
    plotnine.ggplot
        The arrows are scaled to the spread of the synthetic points, so
        the whole figure is post-processing of released values.
    """
    import plotnine as p9

    lx, ly = result.labels
    a, b = result.axes[0] - 1, result.axes[1] - 1
    v = result.directions.to_numpy()[:, [a, b]]
    pts = result.sample(**sample_args)
    xy = pts[[lx, ly]].to_numpy()
    (x0, x1), (y0, y1) = result.limits
    origin = (0.0, 0.0) if result.center else ((x0 + x1) / 2, (y0 + y1) / 2)
    spread = (
        float(np.quantile(np.hypot(*(xy - xy.mean(0)).T), 0.9))
        if len(xy)
        else 0.0
    )
    longest = float(np.hypot(v[:, 0], v[:, 1]).max())
    mult = spread / longest if spread > 0 and longest > 0 else 0.0
    arrows = _arrows(v, result.columns, mult, origin, variables)
    # square display frame containing the private frame and arrow tips
    lo_x = min(x0, arrows["x1"].min(), origin[0])
    hi_x = max(x1, arrows["x1"].max(), origin[0])
    lo_y = min(y0, arrows["y1"].min(), origin[1])
    hi_y = max(y1, arrows["y1"].max(), origin[1])
    half = max(hi_x - lo_x, hi_y - lo_y) / 2 * 1.05 or 1.0
    cx, cy = (lo_x + hi_x) / 2, (lo_y + hi_y) / 2
    limits = ((cx - half, cx + half), (cy - half, cy + half))
    plot = _base(result, "Private PCA biplot", limits)
    pts = _with_panel(pts, DP_PANEL, result)
    if result.groups:
        plot += p9.geom_point(
            p9.aes(lx, ly, color="group"), data=pts, size=0.5, alpha=0.4
        )
    else:
        plot += p9.geom_point(
            p9.aes(lx, ly), data=pts, size=0.5, alpha=0.35, color=PRIVATE_COLOR
        )
    frames = [_with_panel(arrows, DP_PANEL, result)]
    if result.reference:
        plot += reference_points(result)
        ref_v = result.reference["directions"][:, [a, b]]
        ref_origin = (0.0, 0.0) if result.center else origin
        frames.append(
            _with_panel(
                _arrows(ref_v, result.columns, mult, ref_origin, variables),
                REF_PANEL,
                result,
            )
        )
    arr = pd.concat(frames, ignore_index=True)
    plot += p9.geom_segment(
        p9.aes(x="x0", y="y0", xend="x1", yend="y1"),
        data=arr,
        arrow=p9.arrow(length=0.08, type="closed"),
        color="#B44A4A",
        size=0.6,
        inherit_aes=False,
    )
    plot += p9.geom_text(
        p9.aes(x="x1", y="y1", label="variable"),
        data=arr,
        size=7,
        va="bottom",
        color="#B44A4A",
        inherit_aes=False,
    )
    return plot


def scree_plot(result: PlottedResult):
    """The private proportions of variance explained
    (``fit.plot("scree")``).

    Parameters
    ----------
    result
        A private PCA fitted by ``dp_pca`` (with eigenvalues).

    Returns
    -------
    plotnine.ggplot

    Raises
    ------
    PlotninePrivateError
        If the fit has no private eigenvalues (``dp_score``).
    """
    import plotnine as p9

    if result.pve is None:
        raise fail(
            "plot",
            "kind='scree' needs private eigenvalues; use dp_pca() (dp_score "
            "releases none).",
        )
    names = list(result.pve.index)
    frames = [
        pd.DataFrame(
            {"component": names, "pve": result.pve.to_numpy(), "source": "DP"}
        )
    ]
    if result.reference:
        frames.append(
            pd.DataFrame(
                {
                    "component": names,
                    "pve": result.reference["pve"],
                    "source": "Ordinary PCA (not private)",
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)
    df["component"] = pd.Categorical(df["component"], names)
    df["source"] = pd.Categorical(
        df["source"], ["DP", "Ordinary PCA (not private)"][: len(frames)]
    )
    total = result.privacy.loc["total"]
    return (
        p9.ggplot(df, p9.aes("component", "pve", fill="source"))
        + p9.geom_col(position="dodge", width=0.8)
        + p9.scale_fill_manual(values=[PRIVATE_COLOR, "#AAAAAA"])
        + p9.labs(
            x="Principal component",
            y="Proportion of variance explained",
            title="Private scree plot (clipped eigenvalues)",
            subtitle=f"eps = {total['eps']:.3g}, delta = {total['delta']:.2g}",
            fill="",
        )
        + p9.theme_minimal()
    )


PLOTS = {
    "score": score_plot,
    "synthetic": synthetic_plot,
    "biplot": biplot,
    "scree": scree_plot,
}
