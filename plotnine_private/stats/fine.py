"""The fine-histogram family: one private histogram on public limits, turned
into a curve by post-processing.

``density_*``, ``ecdf_*`` and ``boxplot_*`` all release the same thing: the
counts of a continuous position in ``bins`` equal fine bins between public
``limits=(lo, hi)``, per group and panel, through the release engine as
ordinary count cells (every cell of a public domain gets noise, empty ones
included). What they draw — a kernel smooth, a cumulative curve, quartiles
and whiskers — is computed from the released counts only, so it costs no
budget beyond the histogram's, and the report, ``save_release`` and the
neighbour harness treat the layer like any count layer.

Because the histogram is the release, a density and an ECDF of the same
data, limits, bins, eps and seed are *one* release (same identity, same
noise, charged once).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..families import Bins
from ..validation import is_real
from .base import FamilyCells, PrivateCountStat, _fail, validate_range
from .domains import axis_breaks
from .intervals import (
    BANDS,
    SIMS,
    NoiseModel,
    curve_bounds,
    linear_bounds,
    replicate_curves,
)

__all__ = ["FineFamily", "FineHistogram", "family_doc"]


def family_doc(doc: str | None, *sections: str) -> str:
    """A DP or CKM stat's docstring with its family's ``sections``
    (parameters, notes) inserted after the mechanism's parameter line
    ("As in `stat_count_dp`." or "... `stat_count_ckm`.")."""
    doc = doc or ""
    for twin in ("stat_count_dp", "stat_count_ckm"):
        line = f"        As in `{twin}`.\n"
        if line in doc:
            return doc.replace(line, line + "".join(sections))
    return doc + "".join(sections)


class FineHistogram:
    """The released fine histograms of a layer, one row per group.

    Attributes
    ----------
    edges
        ``(bins + 1,)`` fine-bin edges (in the scale's transformed units).
    values
        ``(groups, bins)`` released counts (clipped at 0; 0 where not
        shown).
    noisy
        ``(groups, bins)`` released counts before clipping (DP; equal to
        ``values`` for CKM; 0 where not shown).
    info
        One row per group: ``PANEL``, ``group`` and the group columns
        (fill, colour, x for boxplots ...).
    """

    def __init__(self, edges, values, noisy, info):
        self.edges = edges
        self.values = values
        self.noisy = noisy
        self.info = info

    @property
    def centres(self) -> np.ndarray:
        return (self.edges[:-1] + self.edges[1:]) / 2


class FineFamily(PrivateCountStat):
    """Counts of one continuous axis in public fine bins (see module
    docstring). Subclasses set ``AXIS`` and implement :meth:`curve`."""

    FAMILY = "fine"
    #: the binned axis ("x" for density and ECDF, "y" for boxplots)
    AXIS = "x"
    OUTSIDE = ("clamp", "drop")

    FINE_PARAMS = {"limits": None, "bins": 128, "outside": "clamp"}

    # -- parameters ------------------------------------------------------
    def validate_params(self) -> None:
        p = self.params
        if p["limits"] is None:
            raise _fail(
                self.name,
                f"limits=(lo, hi) is required: the public range of "
                f"{self.AXIS} over which the fine histogram is counted "
                "(e.g. from a codebook or the instrument's range). The "
                "data's own range would disclose its extremes.",
            )
        p["limits"] = validate_range(self.name, "limits", p["limits"])
        bins = p["bins"]
        if not is_real(bins) or int(bins) != bins or not 2 <= bins <= 100_000:
            raise _fail(
                self.name,
                f"bins must be a whole number of fine bins in [2, 100000], "
                f"got {bins!r}.",
            )
        p["bins"] = int(bins)
        if p.get("band", "pointwise") not in BANDS:
            raise _fail(
                self.name,
                f"band must be 'pointwise' (each point's interval alone) or "
                f"'simultaneous' (the whole curve at once), got "
                f"{p['band']!r}.",
            )
        if p["outside"] not in self.OUTSIDE:
            raise _fail(
                self.name,
                f"outside must be 'clamp' (records beyond the limits are "
                f"counted in the edge bins) or 'drop' (left out), got "
                f"{p['outside']!r}.",
            )

    # -- groups ------------------------------------------------------------
    def leading_groups(self, data: pd.DataFrame) -> list[str]:
        """Position columns that are group dimensions (boxplots: x)."""
        return []

    def group_columns(self, data: pd.DataFrame) -> list[str]:
        """The leading position groups (boxplots: x), then the discrete
        aesthetics, one dimension per mapped expression."""
        lead = self.leading_groups(data)
        rest = super().group_columns(data)
        copies = dict(self.group_copies)
        cols = self.distinct_groups(lead + rest)
        self.group_copies.update(copies)
        return cols

    # -- the family ------------------------------------------------------
    def family_cells(self, data: pd.DataFrame, scales) -> FamilyCells:
        ax = self.AXIS
        self.require_continuous(scales, ax)
        p = self.params
        ab = axis_breaks(
            self,
            ax,
            data[ax].to_numpy(dtype=float),
            getattr(scales, ax),
            limits=p["limits"],
            bins=p["bins"],
        )
        edges = ab.breaks
        family = Bins(edges, "right", p["outside"] == "clamp", axis=ax)
        code = family.codes({ax: data[ax].to_numpy(dtype=float)})
        lo, hi = edges[:-1], edges[1:]
        frame = pd.DataFrame({"_bin": np.arange(len(lo))})
        self.edges = edges
        return FamilyCells(
            frame,
            [lo, hi],
            code,
            public=True,
            source=ab.source,
            describe=(ax, tuple(edges.tolist()), p["outside"]),
            family=family,
        )

    def fine_histogram(self, cells, released) -> FineHistogram:
        """Released cells as one dense row of fine bins per shown group."""
        frame = cells.frame
        keep = released.keep
        k = len(self.edges) - 1
        key = ["PANEL", "group"]
        shown = frame.loc[keep, key].drop_duplicates()
        order = shown.sort_values(key).index
        info = frame.loc[order].drop(columns=["_bin"]).reset_index(drop=True)
        info = info.drop(columns=[self.AXIS], errors="ignore")
        for copy, of in getattr(self, "group_copies", {}).items():
            info[copy] = info[of]
        row_of = {
            (p, g): i
            for i, (p, g) in enumerate(
                zip(info["PANEL"].to_numpy(), info["group"].to_numpy())
            )
        }
        rows = np.array(
            [
                row_of.get((p, g), -1)
                for p, g in zip(
                    frame["PANEL"].to_numpy(), frame["group"].to_numpy()
                )
            ],
            dtype=np.int64,
        )
        sel = keep & (rows >= 0)
        cols = frame["_bin"].to_numpy(np.int64)
        values = np.zeros((len(info), k))
        noisy = np.zeros((len(info), k))
        values[rows[sel], cols[sel]] = released.values[sel]
        noisy[rows[sel], cols[sel]] = np.nan_to_num(released.noisy[sel])
        return FineHistogram(self.edges, values, noisy, info)

    def shape_output(self, cells, released):
        hist = self.fine_histogram(cells, released)
        # the released fine histogram, kept with the build (for inspection;
        # never drawn raw)
        self.build.fine = hist
        return self.curve(hist)

    def curve(self, hist: FineHistogram) -> pd.DataFrame:
        raise NotImplementedError  # pragma: no cover - abstract

    #: released columns that get ``<col>_low``/``<col>_high``
    INTERVALS: tuple[str, ...] = ()

    def linear_designs(self, hist: FineHistogram) -> dict:
        """``{column: (design, ratio)}`` when the noise-free curve is a
        linear map of the fine counts (``ratio``: over the total), for
        :func:`~plotnine_private.stats.intervals.linear_bounds`; empty to
        simulate through :meth:`curve` instead."""
        return {}

    def pad_bounds(self, low: np.ndarray, high: np.ndarray):
        """Bounds of rows the curve adds beyond the design (ECDF pads)."""
        return low, high

    def interval_range(self) -> tuple[float, float]:
        """What the interval variables can be (densities >= 0)."""
        return 0.0, np.inf

    def add_intervals(self, out: pd.DataFrame, released) -> None:
        """Interval variables of the curve at ``level``: the public noise
        simulated through :meth:`curve` around the released histogram
        (:mod:`plotnine_private.stats.intervals`), pointwise or
        simultaneous over each group's curve (``band``)."""
        hist = self.build.fine
        if not len(out) or not len(hist.info):
            for col in self.INTERVALS:
                out[f"{col}_low"] = out[f"{col}_high"] = out[col]
            return
        model = NoiseModel.of_release(
            released.release, self.params.get("ptable")
        )
        groups = len(hist.info)
        band = self.params.get("band", "pointwise")
        level = self.params.get("level", 0.95)
        linear = self.linear_designs(hist)
        reps = None if linear else replicate_curves(self, hist, model)
        for col in self.INTERVALS:
            if linear:
                design, ratio = linear[col]
                low, high = linear_bounds(
                    design, hist.noisy, model, level, band, ratio
                )
                low, high = self.pad_bounds(low, high)
            else:
                assert reps is not None
                cur = out[col].to_numpy(dtype=float).reshape(groups, -1)
                flat = reps[col].to_numpy(dtype=float)
                rep = flat.reshape(groups, SIMS, -1)
                low, high = curve_bounds(cur, rep, level, band)
            # an interval never leaves what the variable can be
            low, high = (
                np.clip(v, *self.interval_range()) for v in (low, high)
            )
            out[f"{col}_low"] = low.ravel()
            out[f"{col}_high"] = high.ravel()

    @staticmethod
    def expand(info: pd.DataFrame, per_group: int) -> pd.DataFrame:
        """Repeat each group's row ``per_group`` times (categoricals and
        PANEL keep their categories)."""
        idx = np.repeat(np.arange(len(info)), per_group)
        return info.iloc[idx].reset_index(drop=True)


def released_total(hist: FineHistogram) -> np.ndarray:
    """Released record count of each group: the sum of its unclipped
    released counts (unbiased), at least 0, rounded."""
    return np.rint(np.maximum(hist.noisy.sum(axis=1), 0.0))
