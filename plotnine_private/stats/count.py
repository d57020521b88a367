"""Private bar counts: ``stat_count_dp`` and ``stat_count_ckm``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat

from .base import (
    CKM_PARAMS,
    DP_PARAMS,
    CKMMixin,
    DPMixin,
    FamilyCells,
    PrivateCountStat,
    _fail,
    level_label,
)

if TYPE_CHECKING:
    from plotnine.typing import pos_scales

__all__ = ["stat_count_ckm", "stat_count_dp"]


def _is_discrete(scale) -> bool:
    from plotnine.scales.scale_discrete import scale_discrete

    return isinstance(scale, scale_discrete)


def _trained_levels(scale) -> list[str]:
    """Levels the x scale was trained on, before any private layer
    restricted it to its released levels (positions refer to these)."""
    if not hasattr(scale, "_pnp_trained_levels"):
        scale._pnp_trained_levels = [
            level_label(v) for v in scale.final_limits
        ]
    return scale._pnp_trained_levels


def _released_ints(values: np.ndarray) -> np.ndarray:
    return np.rint(values).astype(np.int64)


class _CountFamily(PrivateCountStat):
    """Counts per x value (and per fill/colour group, per facet).

    Domain of x, in order of precedence: ``levels=``; the categories of a
    pandas Categorical x; user scale limits (``scale_x_discrete(limits=)``
    / ``xlim``). All of these are public: every level gets a count, empty
    ones included. Otherwise the observed values form the domain and the
    release is thresholded (DP) and the x axis shows only released levels.
    """

    REQUIRED_AES = {"x"}
    DEFAULT_AES = {"y": after_stat("count"), "weight": None}
    BASE_PARAMS = {
        "geom": "bar",
        "position": "stack",
        "na_rm": False,
        "width": None,
        "levels": None,
    }
    CREATES = {"count", "prop", "width", "noisy_count"}

    def validate_params(self) -> None:
        levels = self.params.get("levels")
        if levels is not None:
            if isinstance(levels, str) or not hasattr(levels, "__iter__"):
                raise _fail(
                    self.name,
                    f"levels must be a list of the public categories, got "
                    f"{levels!r}.",
                )
            levels = list(levels)
            if len(levels) == 0 or len(set(map(str, levels))) != len(levels):
                raise _fail(
                    self.name,
                    "levels must be a non-empty list without duplicates.",
                )
            self.params["levels"] = levels
        width = self.params.get("width")
        if width is not None and not (np.isfinite(width) and width > 0):
            raise _fail(self.name, f"width must be > 0, got {width!r}.")

    def family_cells(self, data: pd.DataFrame, scales: pos_scales):
        levels = self.params["levels"]
        x = data["x"]
        width = self.params["width"]
        if _is_discrete(scales.x):
            trained = _trained_levels(scales.x)
            pos = x.to_numpy(dtype=float).astype(np.int64) - 1
            rec = np.asarray(trained, dtype=object)[pos]
            missing = pd.isna(rec) | (rec == "nan")  # left out, silently
            if levels is not None:
                domain = [level_label(v) for v in levels]
                source = "public: levels"
            elif "x" in self.declared_levels:
                domain = [level_label(v) for v in self.declared_levels["x"]]
                source = "public: categorical levels"
            elif getattr(scales.x, "_pnp_released_levels", None) is not None:
                # an earlier private layer restricted the axis to what it
                # released: using that set is post-processing of a release
                domain = list(scales.x._pnp_released_levels)
                source = "public: levels released by an earlier layer"
            elif scales.x.limits is not None:
                domain = [level_label(v) for v in scales.x.final_limits]
                source = "public: scale limits"
            else:
                domain, source = None, "observed"
            order = {lab: i for i, lab in enumerate(trained)}
            if domain is None:
                domain = sorted(set(rec[~missing].tolist()), key=order.get)
            index = {lab: i for i, lab in enumerate(domain)}
            code = np.fromiter(
                (index.get(v, -1) for v in rec.tolist()),
                dtype=np.int64,
                count=len(rec),
            )
            code[missing] = -1
            xpos = np.array(
                [order[lab] + 1 if lab in order else np.nan for lab in domain]
            )
            frame = pd.DataFrame(
                {
                    "x": xpos,
                    "x_label": domain,
                    "width": width if width is not None else 0.9,
                }
            )
            touched = self.axis_cache.setdefault("discrete_x", [])
            if all(sc is not scales.x for sc in touched):
                touched.append(scales.x)
            return FamilyCells(
                frame, [np.asarray(domain, dtype=object)], code,
                public=source != "observed", source=source,
            )
        # continuous x: a public list of values, or observed values
        values = x.to_numpy(dtype=float)
        if levels is not None:
            domain = np.asarray(levels, dtype=float)
            source = "public: levels"
        else:
            domain = np.unique(values)
            source = "observed"
        order = {v: i for i, v in enumerate(domain.tolist())}
        code = np.fromiter(
            (order.get(v, -1) for v in values.tolist()),
            dtype=np.int64,
            count=len(values),
        )
        if width is None:
            width = 0.9 * (
                np.min(np.diff(np.sort(domain)))
                if len(domain) > 1 and source != "observed"
                else 1.0
            )
        frame = pd.DataFrame(
            {
                "x": domain,
                "x_label": [level_label(v) for v in domain],
                "width": width,
            }
        )
        return FamilyCells(
            frame,
            [np.asarray(frame["x_label"], dtype=object)],
            code,
            public=source != "observed",
            source=source,
        )

    def shape_output(self, table, released):
        frame = table.frame.copy()
        frame["count"] = _released_ints(released.values)
        if self.DP:
            frame["noisy_count"] = released.noisy
        frame = frame[released.keep].reset_index(drop=True)
        totals = frame.groupby("group")["count"].transform(
            lambda c: np.abs(c).sum()
        )
        frame["prop"] = np.where(
            totals > 0, frame["count"] / totals.where(totals > 0, 1), 0.0
        )
        frame["x"] = frame["x"].astype(float)
        return frame

    def finish_layer_output(self, result: pd.DataFrame) -> pd.DataFrame:
        """With an observed (thresholded) discrete domain, the x axis must
        list only released levels, not every level seen in the data."""
        observed = any(
            r.domain in ("thresholded", "observed") for r in self.releases
        )
        touched = self.axis_cache.get("discrete_x", [])
        if not touched or not observed:
            return result.drop(columns="x_label", errors="ignore")
        if len(touched) > 1:
            raise _fail(
                self.name,
                "free discrete x scales (facets with scales='free_x') need "
                "a declared set of x levels: each panel's axis would "
                "otherwise list the levels seen in that panel's data. Give "
                "levels=... or a pandas Categorical.",
            )
        (scale,) = touched
        if not len(result):
            # nothing cleared the threshold: the axis must show nothing
            scale.limits = []
            scale._pnp_released_levels = []
            return result.drop(columns="x_label", errors="ignore")
        trained = _trained_levels(scale)
        order = {lab: i for i, lab in enumerate(trained)}
        shown = sorted(set(result["x_label"]), key=order.get)
        previous = getattr(scale, "_pnp_released_levels", None)
        if previous is not None and previous != shown:
            raise _fail(
                self.name,
                "two private layers released different sets of x levels "
                "from an undeclared domain; declare the levels (levels=... "
                "or a pandas Categorical) so every layer uses one public "
                "domain.",
            )
        scale._pnp_released_levels = shown
        scale.limits = shown
        result["x"] = (
            result["x_label"].map({lab: i + 1 for i, lab in enumerate(shown)})
        ).astype(float)
        return result.drop(columns="x_label")


@document
class stat_count_dp(DPMixin, _CountFamily):
    """
    Differentially private counts of x values (bar charts)

    {usage}

    Drop-in for `stat_count`: `geom_bar(stat="count_dp", eps=1, seed=42)`.
    Every level of a public domain (see Notes) gets exact discrete Laplace
    noise of scale sensitivity/eps, empty levels included, so the chart
    is eps-DP. Released counts are clipped at 0 and integer.

    Parameters
    ----------
    {common_parameters}
    eps : float
        Privacy budget of this layer (> 0). Required.
    delta : float, default=1e-6
        Used only for an undeclared (observed) domain, which is released
        with a threshold and costs (eps, delta).
    seed : int, default=None
        Makes the noise reproducible: the same seed gives the same numbers
        in every layer and process. The seed is a secret: whoever knows it
        can remove the noise. Without a seed, noise is keyed by OS entropy
        drawn once per session.
    adjacency : {{"replace", "add_remove"}}, default="replace"
        Neighbouring data sets differ by one replaced record (sensitivity
        2, as DPpack's tableDP) or by one added/removed record (1).
    noise : {{"discrete_laplace", "laplace"}}, default="discrete_laplace"
        Exact integer noise, or continuous Laplace rounded (DPpack).
    levels : list, default=None
        The public set of x values. Otherwise the categories of a
        Categorical x, or user scale limits, or (thresholded) observed.
    width : float, default=None
        Bar width (0.9 of the level spacing).

    Notes
    -----
    Computed variables: `count` (released), `prop` (count / total of its
    fill/colour group, from released counts; a mapped `group` aesthetic
    is ignored, and plotnine, which makes every (x, fill) pair its own
    group, differs: without `fill` and with `group=1` both agree),
    `width`, `noisy_count` (before clipping at 0; may be negative).
    """

    DEFAULT_PARAMS = {**_CountFamily.BASE_PARAMS, **DP_PARAMS}


@document
class stat_count_ckm(CKMMixin, _CountFamily):
    """
    Counts of x values protected by the Cell Key Method

    {usage}

    Drop-in for `stat_count`:
    `ggplot(d, aes("class", rkey="rk")) + geom_bar(stat="count_ckm",
    ptable=ptab)`. Each bar's noise is read from the p-table at its cell
    key (the sum of its records' keys mod 1), so the same records get the
    same noise in every plot and table. Zero cells stay zero.

    Parameters
    ----------
    {common_parameters}
    ptable : PTable
        From `create_cnt_ptable(D, V, js)` or `read_ptable(...)`.
    threshold : float, default=None
        Suppress cells whose perturbed count is below it (ONS practice).
    levels : list, default=None
        The public set of x values (see `stat_count_dp`).
    width : float, default=None
        Bar width.

    Notes
    -----
    Needs the `rkey` aesthetic (record keys in [0, 1), stored with the
    data). Weighted counts: perturbed count times mean weight.
    """

    DEFAULT_PARAMS = {**_CountFamily.BASE_PARAMS, **CKM_PARAMS}
