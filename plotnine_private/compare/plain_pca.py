"""The unperturbed counterpart of ``stat_dp_pca_score`` in a comparison:
ordinary PCA of the raw rows, its scores binned like the private layer
(not for release: it reads the data's means, covariance and range)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from plotnine.mapping.evaluation import after_stat
from plotnine.stats.stat import stat

from .._compat import unregister

__all__ = ["pca_scores", "stat_pca_score_plain"]


def pca_scores(
    x: np.ndarray, axes: tuple[int, int], scale=None, rows=None
) -> np.ndarray:
    """Scores on principal components ``axes`` (1-based) of the
    covariance of ``x``, centred by its column means: of every row of
    ``x``, or of the row indices ``rows`` only.

    >>> x = np.array([[0.0, 0], [2, 0], [0, 1], [2, 1]])
    >>> np.abs(pca_scores(x, (1, 2))).tolist()
    [[1.0, 0.5], [1.0, 0.5], [1.0, 0.5], [1.0, 0.5]]
    """
    x = np.asarray(x, dtype=float)
    if scale is not None:
        x = x / np.asarray(scale, dtype=float)
    x = x - x.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov(x, rowvar=False))
    order = np.argsort(values)[::-1]
    picked = vectors[:, order[[axes[0] - 1, axes[1] - 1]]]
    return (x if rows is None else x[rows]) @ picked


class stat_pca_score_plain(stat):
    """Ordinary PCA scores of a layer's rows as tiles (or points).

    Parameters ``frame`` (the layer's raw rows), ``columns`` (the
    features), ``axes``, ``bins``, ``scale``, ``output`` as in
    ``stat_dp_pca_score``; groups and panels come from the layer's
    mapping, each histogram over the range of all the scores.
    """

    REQUIRED_AES: set[str] = set()
    DEFAULT_PARAMS = {
        "geom": "rect",
        "position": "identity",
        "na_rm": False,
        "frame": None,
        "columns": None,
        "axes": (1, 2),
        "bins": (20, 20),
        "scale": None,
        "output": "histogram",
    }
    CREATES = {"count", "prob", "xmin", "xmax", "ymin", "ymax"}

    def __init__(self, mapping=None, data=None, **kwargs: Any):
        if kwargs.get("output") == "synthetic" and "geom" not in kwargs:
            kwargs["geom"] = "point"
        super().__init__(mapping, data, **kwargs)
        a, b = self.params["axes"]
        self.DEFAULT_AES = {
            "x": after_stat(f"PC{a}"),
            "y": after_stat(f"PC{b}"),
        }
        if self.params["output"] == "histogram":
            self.DEFAULT_AES["alpha"] = after_stat("prob")

    def compute_panel(self, data, scales):
        # one PCA of every row of the layer, shared by its panels (as the
        # private layer shares one private frame and its directions)
        p = self.params
        frame = p["frame"]
        x = frame[list(p["columns"])].to_numpy(dtype=float)
        every = pca_scores(x, tuple(p["axes"]), p["scale"])
        scores = every[frame.index.get_indexer(data.index)]
        a, b = p["axes"]
        if p["output"] != "histogram":
            out = data[["PANEL", "group"]].reset_index(drop=True)
            out["x"], out["y"] = scores[:, 0], scores[:, 1]
            out[f"PC{a}"], out[f"PC{b}"] = out["x"], out["y"]
            return out
        bins = p["bins"]
        bx, by = (bins, bins) if np.ndim(bins) == 0 else tuple(bins)
        ex = np.linspace(every[:, 0].min(), every[:, 0].max(), int(bx) + 1)
        ey = np.linspace(every[:, 1].min(), every[:, 1].max(), int(by) + 1)
        parts = []
        groups = data["group"].to_numpy()
        for group in np.unique(groups):
            s = scores[groups == group]
            count, _, _ = np.histogram2d(s[:, 0], s[:, 1], [ex, ey])
            i, j = np.nonzero(count)
            part = pd.DataFrame(
                {
                    "xmin": ex[i],
                    "xmax": ex[i + 1],
                    "ymin": ey[j],
                    "ymax": ey[j + 1],
                    "count": count[i, j],
                }
            )
            part["x"] = (part["xmin"] + part["xmax"]) / 2
            part["y"] = (part["ymin"] + part["ymax"]) / 2
            part["prob"] = part["count"] / part["count"].sum()
            part[f"PC{a}"], part[f"PC{b}"] = part["x"], part["y"]
            part["group"] = group
            parts.append(part)
        out = pd.concat(parts, ignore_index=True)
        out["PANEL"] = data["PANEL"].iloc[0]
        return out


unregister("stat_pca_score_plain")
unregister("pca_score_plain")
