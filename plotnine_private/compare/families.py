"""Which stat each private stat becomes in each panel of a comparison.

``FAMILIES`` maps a family to its three stats: the unperturbed (plotnine's
own, or :class:`stat_pca_score_plain` for the private PCA), the DP and the
CKM one (``None`` where the family has no CKM version). :func:`plain_params`
and :func:`twin_params` give the parameters that make a swapped stat draw
on the same public grid as the private layer (bins, fine-histogram limits,
bandwidth, summary function).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from plotnine.stats import (
    stat_bin,
    stat_bin_2d,
    stat_boxplot,
    stat_count,
    stat_density,
    stat_ecdf,
    stat_sum,
    stat_summary,
)

from .._compat import unregister
from ..stats.base import count_labels
from ..stats.bin import stat_bin_ckm, stat_bin_dp
from ..stats.bin2d import stat_bin2d_ckm, stat_bin2d_dp
from ..stats.bin_hex import stat_bin_hex
from ..stats.binhex import stat_binhex_ckm, stat_binhex_dp
from ..stats.boxplot import stat_boxplot_ckm, stat_boxplot_dp
from ..stats.count import stat_count_ckm, stat_count_dp
from ..stats.density import stat_density_ckm, stat_density_dp
from ..stats.dp_pca_score import stat_dp_pca_score
from ..stats.ecdf import stat_ecdf_ckm, stat_ecdf_dp
from ..stats.sum import stat_sum_ckm, stat_sum_dp
from ..stats.summary import stat_summary_ckm, stat_summary_dp
from .plain_pca import stat_pca_score_plain

__all__ = [
    "CKM_KEYS",
    "DP_KEYS",
    "FAMILIES",
    "MECHANISM_KEYS",
    "PRIVATE_ONLY",
    "family_of",
    "plain_params",
    "twin_params",
]

DP_KEYS = ("eps", "delta", "seed", "adjacency", "noise", "range_share")
CKM_KEYS = ("ptable", "threshold")
#: the parameters of the mechanisms, left out when a stat is swapped
MECHANISM_KEYS = set(DP_KEYS) | set(CKM_KEYS)
#: parameters of the private stats that their plotnine counterparts do
#: not take (public grids, interval variables, the public total)
PRIVATE_ONLY = {
    "limits",
    "levels",
    "resolution",
    "bins",
    "outside",
    "band",
    "level",
    "total",
    "bounds",
    "fun",
    "errorbar",
    "drop",
    "whiskers",
    "sum_share",
    "magnifier",
    "num_ptable",
    "p",
    "same_key",
}


def _labelled(base):
    """A plotnine stat that also gives ``count_label`` (as the private
    stats do), so a label mapping works on the unperturbed panel. It is
    taken out of plotnine's registry of stat names again."""

    def compute_panel(self, data, scales):
        out = base.compute_panel(self, data, scales)
        if "count" in out.columns:
            out["count_label"] = count_labels(out["count"])
        return out

    name = f"_{base.__name__}_labelled"
    cls = type(
        name,
        (base,),
        {"compute_panel": compute_panel, "__doc__": base.__doc__},
    )
    unregister(name)
    return cls


# family -> (plain, dp, ckm)
FAMILIES: dict[str, tuple[type, type, type | None]] = {
    "count": (_labelled(stat_count), stat_count_dp, stat_count_ckm),
    "bin": (_labelled(stat_bin), stat_bin_dp, stat_bin_ckm),
    "bin2d": (_labelled(stat_bin_2d), stat_bin2d_dp, stat_bin2d_ckm),
    "binhex": (_labelled(stat_bin_hex), stat_binhex_dp, stat_binhex_ckm),
    "sum": (_labelled(stat_sum), stat_sum_dp, stat_sum_ckm),
    "density": (stat_density, stat_density_dp, stat_density_ckm),
    "ecdf": (stat_ecdf, stat_ecdf_dp, stat_ecdf_ckm),
    "boxplot": (stat_boxplot, stat_boxplot_dp, stat_boxplot_ckm),
    "summary": (stat_summary, stat_summary_dp, stat_summary_ckm),
    "pca": (stat_pca_score_plain, stat_dp_pca_score, None),
}


def family_of(stat) -> tuple[str, str] | None:
    """(family, "dp" / "ckm") of a private stat, or None."""
    for fam, (_, dp, ckm) in FAMILIES.items():
        if isinstance(stat, dp):
            return fam, "dp"
        if ckm is not None and isinstance(stat, ckm):
            return fam, "ckm"
    return None


def _bin_edges(stat, family: str, kept: Any = None) -> dict:
    """The bins a built count-like layer used (public or released), from
    what its build kept (``kept``: :func:`~plotnine_private.door.
    layer_build`)."""
    cache = getattr(kept, "axis_cache", None) or {}
    if family == "bin" and "x" in cache:
        b = np.asarray(cache["x"].breaks, dtype=float)
        if stat.params.get("pad"):
            b = np.r_[b[0] - (b[1] - b[0]), b, b[-1] + (b[-1] - b[-2])]
        return {"plain": {"breaks": b, "pad": False}, "twin": {"breaks": b}}
    if family == "bin2d" and "x" in cache and "y" in cache:
        bx = np.asarray(cache["x"].breaks, dtype=float)
        by = np.asarray(cache["y"].breaks, dtype=float)
        return {"plain": {"breaks": (bx, by)}, "twin": {"breaks": (bx, by)}}
    if family == "binhex" and "hex" in cache:
        lat = cache["hex"]
        return {
            "plain": {"binwidth": tuple(lat["binwidth"])},
            "twin": {
                "limits": (lat["xlim"], lat["ylim"]),
                "binwidth": tuple(lat["binwidth"]),
            },
        }
    return {"plain": {}, "twin": {}}


def _summary_fun(stat) -> dict[str, Any]:
    """plotnine's ``stat_summary`` of the private summary's function:
    the exact mean or total, drawn without a range (the private panels
    draw the noise's)."""
    fun = np.sum if stat.params.get("fun") == "sum" else np.mean
    return {"fun_y": fun, "fun_ymin": fun, "fun_ymax": fun}


def plain_params(
    stat,
    family: str,
    ranged: bool,
    frame=None,
    used: tuple = (),
    kept: Any = None,
) -> dict:
    """Parameters of the unperturbed stat of a built private layer.

    ``ranged``: the layer estimated its bins privately (a noisy guess:
    the unperturbed panel then bins as plotnine would). ``frame``: the
    layer's raw rows and ``used`` the columns its mapping and facets use
    (for the plain PCA, which reads unmapped feature columns).
    """
    if family in ("count", "bin", "bin2d", "binhex", "sum"):
        return {} if ranged else _bin_edges(stat, family, kept)["plain"]
    p = stat.params
    if family == "density":
        # the private bandwidth (a public rule) as a number, so the two
        # curves smooth alike
        edges = kept.fine.edges
        return {
            "bw": stat.bandwidth(edges) / float(p["adjust"]),
            "adjust": p["adjust"],
            "kernel": p["kernel"],
            "n": p["n"],
        }
    if family == "ecdf":
        return {"pad": p["pad"]}
    if family == "boxplot":
        return {"coef": p["coef"], "width": p["width"]}
    if family == "summary":
        return _summary_fun(stat)
    # pca: the private layer's default features, read the same way
    columns = p["columns"] or [
        c
        for c in frame.columns
        if c not in used
        and pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
    ]
    return {
        "frame": frame,
        "columns": list(columns),
        "axes": p["axes"],
        "bins": p["bins"],
        "scale": p["scale"],
        "output": p["output"],
    }


def twin_params(stat, family: str, ranged: bool, kept: Any = None) -> dict:
    """Parameters the DP or CKM twin takes over from a built layer
    beyond its own: the released edges of a privately estimated range
    (public once released; CKM needs public bins)."""
    if ranged:
        return _bin_edges(stat, family, kept)["twin"]
    return {}
