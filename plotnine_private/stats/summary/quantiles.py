"""Medians and quantiles of the private summaries, from the box plots'
fine histogram.

``stat_summary_dp(fun_y=np.median)``, ``fun_y=np.quantile`` with
``fun_args={"q": ...}`` and ``fun_data="median_hilow"`` release no totals:
the layer releases what ``stat_boxplot_dp`` releases (the counts of y in
``bins`` fine bins between the public ``bounds``, per x level, group and
panel), and the quantiles are read off its monotone CDF with the box
plot's quantile intervals. A summary median and a box plot of the same
data, bounds, bins, eps and seed are one release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from plotnine.scales.scale_discrete import scale_discrete

from ...smoothing import monotone_cdf
from ...validation import fail
from ..boxplot import _BoxplotFamily
from ..fine import FineFamily, released_total
from ..fine_histogram import FineHistogram
from ..mixins import CKM_PARAMS, DP_PARAMS, CKMMixin, DPMixin

__all__ = ["QUANTILE_FUNS", "quantile_probs", "quantile_twin"]

#: plotnine's quantile functions of fun_y (np.percentile takes percents)
QUANTILE_FUNS: dict[Any, str] = {
    np.median: "median",
    np.nanmedian: "median",
    "median": "median",
    np.quantile: "quantile",
    np.nanquantile: "quantile",
    "quantile": "quantile",
    np.percentile: "percentile",
    np.nanpercentile: "percentile",
}


def quantile_probs(
    name: str, fun: str, fun_args: Any, hilow: bool
) -> dict[str, float]:
    """``{column: probability}`` of a quantile summary: ``y`` (and, for
    ``median_hilow``, ``ymin``/``ymax``), from plotnine's ``fun_args``.

    >>> quantile_probs("s", "quantile", {"q": 0.9}, False)
    {'y': 0.9}
    >>> quantile_probs("s", "median", {"confidence_interval": 0.5}, True)
    {'y': 0.5, 'ymin': 0.25, 'ymax': 0.75}
    """
    args = dict(fun_args or {})
    if not isinstance(fun_args, (Mapping, type(None))):
        raise fail(name, f"fun_args must be a dict, got {fun_args!r}.")
    allowed = {
        "median": ("confidence_interval",) if hilow else (),
        "quantile": ("q",),
        "percentile": ("q",),
    }[fun]
    for key in args:
        if key not in allowed:
            raise fail(
                name,
                f"fun_args key {key!r} is not an argument of the {fun} "
                f"summary; it takes {list(allowed) or 'none'}.",
            )
    if fun == "median":
        probs = {"y": 0.5}
        if hilow:
            ci = args.get("confidence_interval", 0.95)
            if not _number(ci) or not 0 < ci < 1:
                raise fail(
                    name,
                    "fun_args['confidence_interval'] must be a number in "
                    f"(0, 1), got {ci!r}.",
                )
            tail = (1 - float(ci)) / 2
            probs.update(ymin=tail, ymax=1 - tail)
        return probs
    if "q" not in args:
        raise fail(
            name,
            f"fun_y=np.{fun} needs fun_args={{'q': ...}}: the quantile to "
            "release (e.g. {'q': 0.9}"
            + (" or 90 for np.percentile" if fun == "percentile" else "")
            + ").",
        )
    q = args["q"]
    scale = 100.0 if fun == "percentile" else 1.0
    if not _number(q) or not 0 <= q <= scale:
        raise fail(
            name,
            f"fun_args['q'] must be one number in [0, {scale:g}], got "
            f"{q!r} (one quantile per layer).",
        )
    return {"y": float(q) / scale}


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class _QuantileSummary(_BoxplotFamily):
    """The quantiles of a box plot's fine histogram as a summary's y,
    ymin and ymax (see the module docstring)."""

    QUANTILE_PARAMS = {
        "probs": None,
        "errorbar": "noise",
        "geom": "pointrange",
        "levels": None,
    }
    CREATES = {"y", "ymin", "ymax", "y_low", "y_high", "n", "width", "signal"}
    #: the summary stat this twin releases for (its messages name it)
    summary_name = "stat_summary_dp"

    @property
    def name(self) -> str:
        return self.summary_name

    def _numeric_x(self) -> bool:
        """``levels=`` on a continuous x: its levels are the boxes."""
        return self.params["levels"] is not None and not isinstance(
            self.build.door.scales.x, scale_discrete
        )

    def check_input(self, data: pd.DataFrame) -> None:
        FineFamily.check_input(self, data)
        if (
            "x" in data.columns
            and self.params["levels"] is None
            and not isinstance(self.build.door.scales.x, scale_discrete)
        ):
            raise fail(
                self.name,
                "a median or quantile needs a discrete x: one fine "
                "histogram per public level. Give levels=[...] (the public "
                "values of x, e.g. levels=[4, 6, 8]), or map a pandas "
                "Categorical with explicit categories=[...].",
            )

    def declared_of(self, column: str) -> list | None:
        if column == "x" and self.params["levels"] is not None:
            return list(self.params["levels"])
        return super().declared_of(column)

    def quantile_columns(self) -> dict[str, float]:
        return dict(self.params["probs"])

    @property
    def INTERVALS(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self.params["probs"])

    def curve(self, hist: FineHistogram) -> pd.DataFrame:
        cdf, _ = monotone_cdf(hist.noisy)
        probs = self.params["probs"]
        vals = self.quantiles(cdf, hist.edges, np.array(list(probs.values())))
        out = hist.info.copy()
        if "x" not in out.columns:
            out["x"] = 0.0
        lowest = first_mass_edge(cdf, hist.edges)
        for i, (col, q) in enumerate(probs.items()):
            # a minimum (q = 0) is where the released CDF leaves 0: the
            # lower edge of the first fine bin with mass, as the box
            # plots' whiskers reach the outer edge of the extreme bin
            out[col] = lowest if q == 0 else vals[:, i]
        out["n"] = released_total(hist).astype(np.int64)
        if self._numeric_x():
            out["x"] = out["x"].astype(float)  # positions on a continuous x
        width = self.params["width"]
        out["width"] = 0.9 if width is None else float(width)
        return out

    def add_intervals(self, out: pd.DataFrame, released) -> None:
        # the box plot's quantile intervals (no box-width advice)
        FineFamily.add_intervals(self, out, released)
        if "ymin" in self.params["probs"]:
            return  # median_hilow: the bars are quantiles
        if self.params["errorbar"] is None:
            out["ymin"] = out["ymax"] = out["y"]
        else:
            out["ymin"], out["ymax"] = out["y_low"], out["y_high"]


class _QuantilesDP(DPMixin, _QuantileSummary):
    DEFAULT_PARAMS = {
        **_BoxplotFamily.BASE_PARAMS,
        **DP_PARAMS,
        **_QuantileSummary.QUANTILE_PARAMS,
    }


class _QuantilesCKM(CKMMixin, _QuantileSummary):
    DEFAULT_PARAMS = {
        **_BoxplotFamily.BASE_PARAMS,
        **CKM_PARAMS,
        **_QuantileSummary.QUANTILE_PARAMS,
    }


def first_mass_edge(cdf: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Per row of ``cdf`` (at the fine ``edges``), the last edge where it
    is still 0; the lower limit where it never is.

    >>> first_mass_edge(np.array([[0, 0, 0.5, 1.0]]), np.array([0, 1, 2, 3]))
    array([1])
    """
    cdf = np.atleast_2d(cdf)
    above = cdf > 0
    j = np.where(above.any(axis=1), np.argmax(above, axis=1) - 1, 0)
    return np.asarray(edges)[np.maximum(j, 0)]


def quantile_twin(stat) -> _QuantileSummary:
    """The box-plot stat that releases ``stat``'s quantiles: the summary's
    bounds as the fine histogram's limits (values outside are clamped,
    as the summary clamps), its bins, level, width and mechanism."""
    p = stat.params
    common = {
        "limits": p["bounds"],
        "bins": p["bins"],
        "outside": "clamp",
        "width": p["width"],
        "level": p["level"],
        "probs": p["probs"],
        "errorbar": p["errorbar"],
        "covers": p["covers"],
        "discrete": p["discrete"],
        "levels": p["levels"],
    }
    twin: _QuantileSummary
    if stat.DP:
        twin = _QuantilesDP(
            eps=p["eps"],
            seed=p["seed"],
            adjacency=p["adjacency"],
            noise=p["noise"],
            total=p["total"],
            **common,
        )
    else:
        twin = _QuantilesCKM(
            ptable=p["ptable"], threshold=p["threshold"], **common
        )
    twin.summary_name = stat.name
    return twin
