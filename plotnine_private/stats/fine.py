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

import dataclasses

import numpy as np
import pandas as pd

from ..cells import cell_table
from ..families import Bins
from ..mechanisms.release.engine import release_cells
from ..validation import fail as _fail
from ..validation import is_real
from .base import FamilyCells, PrivateCountStat, validate_range
from .dates import is_date_axis, is_timelike
from .domains import axis_breaks, user_limits
from .fine_histogram import FineHistogram
from .intervals import (
    BANDS,
    SIMS,
    NoiseModel,
    curve_bounds,
    replicate_curves,
)
from .noise_bands import band_quantiles, cdf_bands, linear_bounds

__all__ = [
    "GROUP_SHARE_DOC",
    "Band",
    "FineFamily",
    "family_doc",
]

#: the parameters shared by the fine families' docstrings
GROUP_SHARE_DOC = """\
    group_share : float, default=0.25
        DP only, with an undeclared group (a string fill or colour, an
        undeclared x of a box plot): the share of eps that releases each
        group's total, a group being shown iff its noisy total reaches a
        threshold (from that share of eps and delta); the fine counts of
        the shown groups get the rest. Unused when every group is
        declared.
"""


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


#: a CDF band ``(low, high)``, ``(groups, k + 1)`` each
Band = tuple[np.ndarray, np.ndarray]


class FineFamily(PrivateCountStat):
    """Counts of one continuous axis in public fine bins (see module
    docstring). Subclasses set ``AXIS`` and implement :meth:`curve`."""

    FAMILY = "fine"
    #: the binned axis ("x" for density and ECDF, "y" for boxplots)
    AXIS = "x"
    OUTSIDE = ("clamp", "drop")

    FINE_PARAMS = {
        "limits": None,
        "bins": 128,
        "outside": None,
        "group_share": 0.25,
    }

    # -- parameters ------------------------------------------------------
    def validate_params(self) -> None:
        p = self.params
        if isinstance(p["limits"], (tuple, list)) and any(
            is_timelike(v) for v in p["limits"]
        ):
            raise self.no_dates()
        if p["limits"] is not None:
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
        share = p["group_share"]
        if not is_real(share) or not 0 < share < 1:
            raise _fail(
                self.name,
                f"group_share must be a number in (0, 1), got {share!r}: "
                "the share of eps that decides which groups of an "
                "undeclared aesthetic are shown (the fine counts get the "
                "rest). Declare the levels to spend all of eps on the "
                "counts.",
            )
        p["group_share"] = float(share)
        if p["outside"] is not None and p["outside"] not in self.OUTSIDE:
            raise _fail(
                self.name,
                f"outside must be 'clamp' (records beyond the limits are "
                f"counted in the edge bins), 'drop' (left out) or None "
                f"(clamp with limits=, drop with scale limits, as plotnine "
                f"drops records outside them), got {p['outside']!r}.",
            )

    def no_dates(self):
        """The error for a date axis, with the fixes."""
        ax = self.AXIS
        return _fail(
            self.name,
            f"{ax} on a date axis is not supported: the fine histogram "
            "takes numbers. Map the dates as numbers, e.g. days since a "
            "public origin (df['days'] = (df['t'] - pd.Timestamp("
            "'2020-01-01')) / pd.Timedelta(days=1)) with numeric limits=, "
            "or count dates in calendar bins with stat='bin_dp' and "
            "binwidth='1 month'.",
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
    def domain(self, scales, rows: pd.DataFrame | None = None) -> FamilyCells:
        # public limits only: rows are never read
        ax = self.AXIS
        self.require_continuous(scales, ax)
        if is_date_axis(getattr(scales, ax)):
            raise self.no_dates()
        p = self.params
        scale = getattr(scales, ax)
        if p["limits"] is None and user_limits(scale) is None:
            lim = "xlim(lo, hi)" if ax == "x" else "ylim(lo, hi)"
            raise _fail(
                self.name,
                f"limits=(lo, hi) is required, or {lim} (scale_{ax}_"
                f"continuous(limits=...)) on the plot: the public range of "
                f"{ax} over which the fine histogram is counted (e.g. from "
                "a codebook or the instrument's range). The data's own "
                "range would disclose its extremes.",
            )
        limits, bins = self.fine_bins()
        ab = axis_breaks(
            self,
            ax,
            None,
            scale,
            limits=limits,
            bins=bins,
        )
        edges = ab.breaks
        outside = p["outside"]
        if outside is None:
            # plotnine censors records outside scale limits before any
            # stat; limits= of the stat keep them (in the edge bins)
            outside = "clamp" if p["limits"] is not None else "drop"
        family = Bins(edges, "right", outside == "clamp", axis=ax)
        lo, hi = edges[:-1], edges[1:]
        frame = pd.DataFrame({"_bin": np.arange(len(lo))})
        self.edges = edges
        return FamilyCells(
            frame,
            [lo, hi],
            None,
            public=True,
            source=ab.source,
            describe=(ax, tuple(edges.tolist()), outside),
            family=family,
        )

    def fine_bins(self) -> tuple:
        """The limits (None: the scale's) and the number of fine bins."""
        return self.params["limits"], self.params["bins"]

    # -- undeclared groups -------------------------------------------------
    def release_table(
        self, door, fam, panel, gdims, table, idx, mechanism
    ) -> pd.DataFrame:
        """Release the fine histogram; with an undeclared group (a string
        fill, an undeclared x of a box plot) in two steps.

        Thresholding every (group, fine bin) cell alone would hide nearly
        every fine bin (each holds a few records), so that nothing is
        drawn even at a huge eps. Instead the question "is the group
        there?" is asked once per group: (1) each observed group's total
        (the sum of its fine counts) is released with ``group_share`` of
        eps and the group is shown iff its noisy total reaches the
        threshold of ``(eps * group_share, delta)`` (a stability-based
        histogram of the groups); (2) within the shown groups the fine
        bins are a public domain (the groups are a released value), so
        every fine bin of a shown group gets noise from the rest of eps,
        empty ones included. Sequential composition: ``(eps, delta)`` in
        all, as one thresholded release would cost. CKM releases the
        group totals through the p-table (the groups with records) and
        then every fine bin of those groups (empty bins stay 0).
        """
        if table.public:
            return super().release_table(
                door, fam, panel, gdims, table, idx, mechanism
            )
        dims = [panel, *gdims]
        sizes = tuple(d.size for d in dims)
        bins = len(fam.frame)
        gcode = (
            np.ravel_multi_index(tuple(idx[:, :-1].T), sizes)
            if len(idx)
            else np.zeros(0, dtype=np.int64)
        )
        groups, inv = np.unique(gcode, return_inverse=True)
        n, weighted, key_sum = _summed(table, inv.ravel(), len(groups))
        gtable, _ = cell_table(
            dims, groups, n, weighted, key_sum, False, table.multiplicity
        )
        group_mech, mechanism = mechanism.split(self.params["group_share"])
        query = self.query(door, fam, gdims, group_mech)
        shown = release_cells(
            dataclasses.replace(query, family=f"{self.FAMILY}:groups"),
            gtable,
            group_mech,
            domain="observed groups (thresholded)",
            panels=door.panels,
            data_object=door.data_object,
            details={"what": "record totals of the groups (is it there?)"},
        )
        self.build.releases.append(shown.release)
        self.warn_undeclared(fam, gdims, shown.release, unit="groups")
        # every fine bin of each shown group, in the combined-code order
        kept = groups[shown.keep]
        full = (kept[:, None] * bins + np.arange(bins)).ravel()
        code = gcode * bins + idx[:, -1]
        pos = np.searchsorted(full, code)
        hit = pos < len(full)
        hit[hit] = full[pos[hit]] == code[hit]
        n, weighted, key_sum = _spread(table, pos[hit], hit, len(full))
        fine, fidx = cell_table(
            [*dims, fam.dimension()],
            full,
            n,
            weighted,
            key_sum,
            True,
            table.multiplicity,
        )
        released = release_cells(
            self.query(door, fam, gdims, mechanism),
            fine,
            mechanism,
            domain="public bins of the released groups",
            panels=door.panels,
            data_object=door.data_object,
        )
        self.build.releases.append(released.release)
        # group ids and levels run over the released groups only
        frame_table = dataclasses.replace(fine, public=False)
        cells = self.cell_frame(
            fam, panel, gdims, fidx, frame_table, released, door
        )
        return self.finish_output(cells, released)

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
        :func:`~plotnine_private.stats.noise_bands.linear_bounds`; empty to
        simulate through :meth:`curve` instead."""
        return {}

    def pad_bounds(self, low: np.ndarray, high: np.ndarray):
        """Bounds of rows the curve adds beyond the design (ECDF pads)."""
        return low, high

    def interval_range(self) -> tuple[float, float]:
        """What the interval variables can be (densities >= 0)."""
        return 0.0, np.inf

    def quantile_columns(self) -> dict[str, float]:
        """``{column: p}`` for columns that are the ``p``-quantile of the
        fine histogram (box plots), bounded by
        :func:`~plotnine_private.stats.noise_bands.band_quantiles` (from
        the CDF band at ``level``)."""
        return {}

    def quantile_bounds(
        self,
        edges: np.ndarray,
        f_low: np.ndarray,
        f_high: np.ndarray,
        probs: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Intervals ``(groups, len(probs))`` of the quantile columns from
        the CDF band (:func:`~plotnine_private.stats.noise_bands.
        band_quantiles`)."""
        return band_quantiles(edges, f_low, f_high, probs)

    def own_bounds(
        self,
        hist: FineHistogram,
        model: NoiseModel,
        level: float,
        bands: dict[float, Band],
    ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{column: (low, high)}`` the family bounds itself (box plots'
        Tukey whiskers); those columns are not simulated. Asked only when
        some interval column is neither linear nor a quantile. ``bands``:
        the CDF band at each of :meth:`own_band_levels`."""
        return {}

    def own_band_levels(
        self, model: NoiseModel, level: float
    ) -> tuple[float, ...]:
        """The levels of the CDF band that :meth:`own_bounds` reads,
        simulated with the quantile columns' band (one set of draws)."""
        return ()

    def add_intervals(self, out: pd.DataFrame, released) -> None:
        """Interval variables of the curve at ``level`` from the public
        noise (:mod:`plotnine_private.stats.intervals`), pointwise or
        simultaneous over each group's curve (``band``)."""
        hist = self.build.fine
        if not len(out) or not len(hist.info):
            for col in self.INTERVALS:
                out[f"{col}_low"] = out[f"{col}_high"] = out[col]
            return
        model = NoiseModel.of_release(
            released.release, self.params.get("ptable")
        )
        self.curve_intervals(out, hist, model)

    def curve_intervals(
        self, out: pd.DataFrame, hist: FineHistogram, model: NoiseModel
    ) -> None:
        """The interval columns of ``out`` (the curve of ``hist``) under
        the noise ``model``, in place. Linear curves (density, ECDF) and
        quantiles (box plots) are simulated through their linear form;
        :meth:`own_bounds` columns (Tukey whiskers) are bounded by the
        family; anything else is simulated through :meth:`curve`."""
        groups = len(hist.info)
        band = self.params.get("band", "pointwise")
        level = self.params.get("level", 0.95)
        linear = self.linear_designs(hist)
        quants = self.quantile_columns()
        # a family's own bounds only for what is neither linear nor a
        # quantile (a summary's quantiles are never Tukey whiskers)
        left = [c for c in self.INTERVALS if c not in linear | quants]
        # every CDF band read (the quantiles' and the family's own) from
        # one simulation of the deviations
        wanted = [level] if quants else []
        if left:
            wanted += self.own_band_levels(model, level)
        levels = tuple(dict.fromkeys(wanted))
        bands = (
            dict(zip(levels, cdf_bands(hist.noisy, model, levels)))
            if levels
            else {}
        )
        own = self.own_bounds(hist, model, level, bands) if left else {}
        rest = [c for c in left if c not in own]
        reps = replicate_curves(self, hist, model) if rest else None
        if quants:
            f_low, f_high = bands[level]
            q_low, q_high = self.quantile_bounds(
                hist.edges, f_low, f_high, np.array(list(quants.values()))
            )
        for col in self.INTERVALS:
            if col in linear:
                design, ratio = linear[col]
                low, high = linear_bounds(
                    design, hist.noisy, model, level, band, ratio
                )
                low, high = self.pad_bounds(low, high)
            elif col in quants:
                i = list(quants).index(col)
                low, high = q_low[:, i], q_high[:, i]
            elif col in own:
                low, high = own[col]
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


#: counts, weighted counts and record-key sums of some cells
Aggregates = tuple[np.ndarray, "np.ndarray | None", "np.ndarray | None"]


def _summed(table, inv: np.ndarray, size: int) -> Aggregates:
    """Counts, weighted counts and record-key sums of ``table``'s cells
    added up per ``inv`` (exact integers: a group's cell key is the sum
    of its records' keys, as if it had been counted directly)."""
    n = np.zeros(size, dtype=np.int64)
    np.add.at(n, inv, np.asarray(table.n, dtype=np.int64))
    weighted = None
    if table.weighted is not None:
        weighted = np.bincount(inv, weights=table.weighted, minlength=size)
    key_sum = None
    if table.key_sum is not None:
        key_sum = np.zeros(size, dtype=np.int64)
        np.add.at(key_sum, inv, np.asarray(table.key_sum, dtype=np.int64))
    return n, weighted, key_sum


def _spread(table, pos: np.ndarray, hit: np.ndarray, size: int) -> Aggregates:
    """``table``'s cells placed at ``pos`` among ``size`` cells (the
    others empty): counts, weighted counts and record-key sums."""
    n = np.zeros(size, dtype=np.int64)
    n[pos] = np.asarray(table.n, dtype=np.int64)[hit]
    weighted = None
    if table.weighted is not None:
        weighted = np.zeros(size)
        weighted[pos] = np.asarray(table.weighted)[hit]
    key_sum = None
    if table.key_sum is not None:
        key_sum = np.zeros(size, dtype=np.int64)
        key_sum[pos] = np.asarray(table.key_sum, dtype=np.int64)[hit]
    return n, weighted, key_sum


def released_total(hist: FineHistogram) -> np.ndarray:
    """Released record count of each group: the sum of its unclipped
    released counts (unbiased), at least 0, rounded."""
    return np.rint(np.maximum(hist.noisy.sum(axis=1), 0.0))
