"""Private point counts for ``geom_count``: ``stat_sum_dp``,
``stat_sum_ckm``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.mapping.evaluation import after_stat

from ..cells import chunked_codes
from .base import (
    CKM_PARAMS,
    DP_PARAMS,
    CKMMixin,
    DPMixin,
    FamilyCells,
    PrivateCountStat,
    _fail,
    validate_range,
)
from .bin2d import per_axis

if TYPE_CHECKING:
    from plotnine.typing import pos_scales

__all__ = ["stat_sum_ckm", "stat_sum_dp"]


class _SumFamily(PrivateCountStat):
    """Counts of records per (x, y) position.

    With ``limits`` and ``resolution`` the positions form a public grid
    (records are snapped to the nearest grid point; points outside the
    limits are left out) and every grid point gets noise. Otherwise the
    observed positions are released with a threshold (DP).
    """

    FAMILY = "sum"
    REQUIRED_AES = {"x", "y"}
    DEFAULT_AES = {"size": after_stat("n"), "weight": 1}
    BASE_PARAMS = {
        "geom": "point",
        "position": "identity",
        "na_rm": False,
        "limits": None,
        "resolution": None,
    }
    CREATES = {"n", "prop", "noisy_n"}

    def validate_params(self) -> None:
        p = self.params
        if (p["limits"] is None) != (p["resolution"] is None):
            raise _fail(
                self.name,
                "limits and resolution go together: limits=((x0, x1), "
                "(y0, y1)) with resolution=(dx, dy) make a public grid; "
                "give both or neither.",
            )
        if p["limits"] is not None:
            for ax, v in zip(
                "xy", per_axis(p["limits"], self.name, "limits", True)
            ):
                validate_range(self.name, f"limits ({ax})", v)
            for ax, r in zip(
                "xy", per_axis(p["resolution"], self.name, "resolution")
            ):
                if not (np.isfinite(r) and r > 0):
                    raise _fail(
                        self.name,
                        f"resolution ({ax}) must be > 0, got {r!r}.",
                    )

    def family_cells(self, data: pd.DataFrame, scales: pos_scales):
        self.require_continuous(scales, "x", "y")
        p = self.params
        x = data["x"].to_numpy(dtype=float)
        y = data["y"].to_numpy(dtype=float)
        if p["limits"] is not None:
            (x0, x1), (y0, y1) = (
                tuple(map(float, v))
                for v in per_axis(p["limits"], self.name, "limits", True)
            )
            rx, ry = (
                float(v)
                for v in per_axis(p["resolution"], self.name, "resolution")
            )
            nx = int(np.floor((x1 - x0) / rx + 1e-9)) + 1
            ny = int(np.floor((y1 - y0) / ry + 1e-9)) + 1

            def code_of(part: slice) -> np.ndarray:
                with np.errstate(invalid="ignore"):
                    fx = np.rint((x[part] - x0) / rx)
                    fy = np.rint((y[part] - y0) / ry)
                inside = (fx >= 0) & (fx < nx) & (fy >= 0) & (fy < ny)
                ix = np.where(inside, fx, 0).astype(np.int64)
                iy = np.where(inside, fy, 0).astype(np.int64)
                return np.where(inside, iy * nx + ix, -1)

            code = chunked_codes(len(x), nx * ny, code_of)
            gx = np.tile(np.arange(nx), ny)
            gy = np.repeat(np.arange(ny), nx)
            px, py = x0 + gx * rx, y0 + gy * ry
            frame = pd.DataFrame({"x": px, "y": py})
            return FamilyCells(
                frame, [px, py], code, public=True, source="public: grid",
                describe=((x0, x1), (y0, y1), (rx, ry)),
            )
        pos = pd.MultiIndex.from_arrays([x, y])
        uniq = pos.unique().sort_values()
        code = uniq.get_indexer(pos).astype(np.int64)
        px = uniq.get_level_values(0).to_numpy(dtype=float)
        py = uniq.get_level_values(1).to_numpy(dtype=float)
        frame = pd.DataFrame({"x": px, "y": py})
        return FamilyCells(
            frame, [px, py], code, public=False, source="observed"
        )

    def shape_output(self, cells, released):
        frame = cells.frame.copy()
        frame["n"] = np.rint(released.values).astype(np.int64)
        if self.DP:
            frame["noisy_n"] = released.noisy
        frame = frame[released.keep & (frame["n"].to_numpy() > 0)]
        frame = frame.reset_index(drop=True)
        total = frame.groupby("group")["n"].transform("sum")
        frame["prop"] = frame["n"] / total.where(total > 0, 1)
        return frame


@document
class stat_sum_dp(DPMixin, _SumFamily):
    """
    Differentially private counts of overlapping points (`geom_count`)

    {usage}

    Drop-in for `stat_sum`: `geom_count(stat="sum_dp", eps=.5, seed=1000)`.

    Parameters
    ----------
    {common_parameters}
    eps, delta, seed, adjacency, noise :
        As in `stat_count_dp`.
    limits : tuple, default=None
        Public ((x0, x1), (y0, y1)) of a grid of positions.
    resolution : float or tuple, default=None
        Grid spacing (dx, dy). With `limits`, every grid point gets noise
        (pure eps-DP); without, observed positions are thresholded.

    Notes
    -----
    Computed variables: `n` (released, > 0 shown), `prop`, `noisy_n`.
    """

    DEFAULT_PARAMS = {**_SumFamily.BASE_PARAMS, **DP_PARAMS}


@document
class stat_sum_ckm(CKMMixin, _SumFamily):
    """
    Counts of overlapping points protected by the Cell Key Method

    {usage}

    Parameters
    ----------
    {common_parameters}
    ptable, threshold :
        As in `stat_count_ckm`.
    limits, resolution :
        As in `stat_sum_dp`.
    """

    DEFAULT_PARAMS = {**_SumFamily.BASE_PARAMS, **CKM_PARAMS}
