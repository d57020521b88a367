"""Private group means and totals: ``stat_summary_dp`` and
``stat_summary_ckm``.

A summary layer releases, per cell (declared x level x fill/colour group x
panel), the total of a y clamped to public ``bounds`` and the number of
records, through the release engine: :class:`~plotnine_private.mechanisms.
magnitudes.LaplaceSums` and :class:`~plotnine_private.mechanisms.release.
LaplaceCounts` (DP) or :class:`~plotnine_private.mechanisms.magnitudes.
CKMMagnitudes` and :class:`~plotnine_private.mechanisms.release.CKMCounts`
(CKM). The mean is the released total over the released count
(post-processing); error bars that contain the noise are computed from
the released values and the mechanisms' public parameters only.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.scales.scale_discrete import scale_discrete

from ..cells import (
    CHUNK,
    assemble,
    categorical_dimension,
    combined_codes,
    exact_sums,
)
from ..mechanisms.ckm import record_key_integers
from ..mechanisms.magnitudes import (
    CKMMagnitudes,
    LaplaceSums,
    SumTable,
    laplace_halfwidth,
)
from ..mechanisms.release import LaplaceCounts, release_cells
from ..validation import (
    as_ptable,
    is_real,
    validate_choice,
    validate_eps,
    validate_range,
    validate_seed,
)
from .base import CKM_PARAMS, CKMMixin
from .base import _fail as fail
from .count import _CountFamily
from .signal import (
    SignalWarning,
    expected_abs_noise,
    validate_total,
    warn_eps_scale,
)

__all__ = ["ratio_interval", "stat_summary_ckm", "stat_summary_dp"]

#: the largest grid value of one record (a public limit on bounds /
#: resolution): totals of up to _MAX_RECORDS records stay exact in int64
_MAX_BOUND = 2**31
#: the most records one layer may hold (an implementation limit, checked
#: on the layer's rows before anything is dropped)
_MAX_RECORDS = 2**31
#: grid values are summed in two parts of at most this many bits, each
#: exact in float64 partial sums
_LOW_BITS = 20


def default_resolution(lo: float, hi: float) -> float:
    """The largest power of ten at most ``(hi - lo) / 1000``.

    >>> default_resolution(10, 45), default_resolution(0, 1)
    (0.01, 0.001)
    """
    return 10.0 ** math.floor(math.log10((hi - lo) / 1000) + 1e-12)


def ratio_interval(t_lo, t_hi, n_lo, n_hi):
    """Range of ``t / n`` over ``t`` in ``[t_lo, t_hi]`` and ``n`` in
    ``[n_lo, n_hi]`` (arrays), with ``n >= 1``; ``(-inf, inf)`` where
    ``n_hi < 1`` (no record count is excluded).

    >>> [v.tolist() for v in ratio_interval(
    ...     np.array([-2.0]), np.array([6.0]),
    ...     np.array([2.0]), np.array([4.0]))]
    [[-1.0], [3.0]]
    """
    t_lo, t_hi = np.asarray(t_lo, float), np.asarray(t_hi, float)
    n_lo = np.maximum(np.asarray(n_lo, float), 1.0)
    n_hi = np.asarray(n_hi, float)
    none = n_hi < 1
    n_hi = np.maximum(n_hi, n_lo)
    lo = np.where(t_lo >= 0, t_lo / n_hi, t_lo / n_lo)
    hi = np.where(t_hi >= 0, t_hi / n_lo, t_hi / n_hi)
    return np.where(none, -np.inf, lo), np.where(none, np.inf, hi)


#: plotnine's y functions (callables) that have a private release
_FUNCTIONS = {
    np.mean: "mean",
    np.nanmean: "mean",
    np.sum: "sum",
    np.nansum: "sum",
    "mean": "mean",
    "sum": "sum",
}


class _SummaryFamily(_CountFamily):
    """Mean or total of a clamped y per x level (and group, panel).

    The x domain follows `stat_count_dp` (``levels=``, a declared
    Categorical, user scale limits); group aesthetics and panels
    multiply it.
    """

    FAMILY = "summary"
    REQUIRED_AES = {"x", "y"}
    DEFAULT_AES: dict = {}
    BASE_PARAMS = {
        "geom": "pointrange",
        "position": "identity",
        "na_rm": False,
        "width": None,
        "levels": None,
        "fun": "mean",
        "bounds": None,
        "resolution": None,
        "errorbar": "noise",
        "level": 0.95,
        "drop": False,
        # plotnine's names: fun_y is fun; the others are refused (below)
        "fun_y": None,
        "fun_data": None,
        "fun_ymin": None,
        "fun_ymax": None,
        "fun_args": None,
    }
    CREATES = {"y", "ymin", "ymax", "y_low", "y_high", "n", "sum", "width"}
    QUERY_PARAMS: tuple[str, ...] = ("fun", "bounds")

    # -- parameters ----------------------------------------------------
    def validate_params(self) -> None:
        p = self.params
        name = self.name
        if p.get("fun_y") is not None:
            # plotnine 0.15 calls the y function fun_y (a callable)
            p["fun"] = p.pop("fun_y")
        p["fun"] = _FUNCTIONS.get(p["fun"], p["fun"])
        for param in ("fun_data", "fun_ymin", "fun_ymax", "fun_args"):
            if p.get(param) is not None:
                raise fail(
                    name,
                    f"{param}={p[param]!r} is not released privately: y is "
                    "a private mean or total (fun_y='mean' or 'sum') and "
                    "its bars are the noise interval of that release "
                    "(errorbar='noise', level=0.95), or none "
                    "(errorbar='none'). Drop " + param + ".",
                )
        validate_choice(name, "fun", p["fun"], ("mean", "sum"))
        if p["bounds"] is None:
            raise fail(
                name,
                "bounds is required: the public range (lo, hi) of y, known "
                "without looking at the data (e.g. bounds=(0, 50) for "
                "highway mpg). Values outside it are clamped to it; the "
                "noise is calibrated to it.",
            )
        lo, hi = validate_range(name, "bounds", p["bounds"])
        p["bounds"] = (lo, hi)
        r = p["resolution"]
        if r is None:
            r = default_resolution(lo, hi)
        elif not is_real(r) or not (math.isfinite(r) and r > 0):
            raise fail(
                name,
                f"resolution must be a number > 0 (the public grid y is "
                f"rounded to), got {r!r}.",
            )
        p["resolution"] = float(r)
        k_lo, k_hi = self.grid_limits()
        if k_hi - k_lo < 1:
            raise fail(
                name,
                f"resolution={r!r} is coarser than bounds={p['bounds']!r}: "
                "use a resolution well below hi - lo (default: (hi - lo) / "
                "1000 rounded down to a power of ten).",
            )
        if max(abs(k_lo), abs(k_hi)) > _MAX_BOUND:
            raise fail(
                name,
                f"resolution={r!r} is too fine for bounds={p['bounds']!r}: "
                "(hi - lo) / resolution must stay below 2**31; use a "
                "coarser resolution.",
            )
        validate_choice(name, "errorbar", p["errorbar"], ("noise", None))
        lev = p["level"]
        if not is_real(lev) or not 0 < lev < 1:
            raise fail(
                name,
                f"level must be a number in (0, 1), got {lev!r} (e.g. 0.95 "
                "for 95% error bars).",
            )
        super().validate_params()

    def center(self) -> float:
        """Public centre of the grid (0 unless a DP mean is released)."""
        return 0.0

    def grid_limits(self) -> tuple[int, int]:
        lo, hi = self.params["bounds"]
        c, r = self.center(), self.params["resolution"]
        return (
            int(math.floor((lo - c) / r + 0.5)),
            int(math.floor((hi - c) / r + 0.5)),
        )

    def grid_values(self, y: np.ndarray) -> np.ndarray:
        """Grid value of each record: y clamped to the bounds, centred
        and rounded to the resolution (exact integers)."""
        lo, hi = self.params["bounds"]
        c, r = self.center(), self.params["resolution"]
        k_lo, k_hi = self.grid_limits()
        k = np.floor((np.clip(y, lo, hi) - c) / r + 0.5)
        return np.clip(k, k_lo, k_hi).astype(np.int64)

    # -- the door ------------------------------------------------------
    def check_input(self, data: pd.DataFrame) -> None:
        super().check_input(data)
        if "weight" in data.columns:
            raise fail(
                self.name,
                "the weight aesthetic is not supported: totals and means "
                "are of unweighted records. Remove aes(weight=...).",
            )
        y = data["y"]
        if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(
            y
        ):
            raise fail(
                self.name,
                f"y must be numeric (it is summarised with fun="
                f"{self.params['fun']!r}); got dtype {y.dtype}.",
            )
        scale = getattr(self.door.scales, "y", None)
        if isinstance(scale, scale_discrete):
            raise fail(self.name, "y is on a discrete scale; map a number.")
        trans = getattr(scale, "trans", None)
        if isinstance(trans, str):  # plotnine keeps e.g. "identity" as text
            tname = trans
        else:
            tname = type(trans).__name__ if trans is not None else "identity"
        if "identity" not in tname:
            raise fail(
                self.name,
                "a transformed y scale (log10, sqrt ...) is not supported: "
                "bounds are in data units. Use coord_trans(y=...) instead.",
            )

    def release_at_door(self, data: pd.DataFrame, door) -> pd.DataFrame:
        """Release totals and counts of the layer's cells (see the module
        docstring), then shape them like plotnine's ``stat_summary``."""
        self.releases = []
        self.door = door
        self.check_input(data)
        if len(data) > _MAX_RECORDS:
            # the rows before missing values are dropped: how many are
            # missing never decides
            raise fail(
                self.name,
                f"a layer holds at most {_MAX_RECORDS} records for exact "
                "totals; aggregate or split the data.",
            )
        data = self.drop_missing(data)
        self.layer_records = data
        self.axis_cache: dict = {}
        fam = self.family_cells(data, door.scales)
        gdims = [
            categorical_dimension(c, data[c], door.declared.get(c))
            for c in self.group_columns(data)
        ]
        self.check_domain(fam, gdims)
        panel = self.panel_dimension(data, door)
        fdim = fam.dimension()
        dims = [panel, *gdims, fdim]
        k = self.grid_values(data["y"].to_numpy(dtype=float))
        bound = max(abs(v) for v in self.grid_limits())
        table, idx = assemble(
            dims,
            key_ints=self.record_key_integers(data),
            multiplicity=door.multiplicity,
        )
        totals = exact_totals(dims, idx, k, self.grid_limits()[0])
        sums = SumTable(
            words=table.words,
            n=table.n,
            public=table.public,
            multiplicity=table.multiplicity,
            total=totals,
        )
        self.add_ckm_columns(sums, dims, idx, k, data)
        est = self.release(door, fam, gdims, table, sums, bound)
        if not table.public:
            self.warn_undeclared(fam, gdims, self.releases[-1])
        cells = self.cell_frame(
            fam, panel, gdims, idx, table, est["keep_release"], door
        )
        return self.shape(cells, est)

    def check_domain(self, fam, gdims) -> None:
        """DP needs a public domain (see `stat_summary_dp`)."""

    def add_ckm_columns(self, sums, dims, idx, k, data) -> None:
        """CKM: the largest contribution and the magnitude key sums."""

    def release(self, door, fam, gdims, table, sums, bound) -> dict:
        raise NotImplementedError  # pragma: no cover

    def sub_query(self, family, door, fam, gdims, mechanism):
        q = self.query(door, fam, gdims, mechanism)
        return dataclasses.replace(q, family=f"summary:{family}")

    def shape(self, cells, est: dict) -> pd.DataFrame:
        lo, hi = self.params["bounds"]
        frame = cells.frame.copy()
        frame["y"] = est["y"]
        # the interval variables, whatever errorbar draws
        frame["y_low"], frame["y_high"] = est["ymin"], est["ymax"]
        if self.params["errorbar"] == "noise":
            frame["ymin"], frame["ymax"] = est["ymin"], est["ymax"]
        else:
            frame["ymin"], frame["ymax"] = est["y"], est["y"]
        frame["n"] = est["n"]
        frame["sum"] = est["sum"]
        if "present" in est:  # not drawn: released n is noise
            gone = ~est["present"]
            frame.loc[gone, ["y", "ymin", "ymax"]] = np.nan
        # a cell released with n = 0 has no mean to draw (plotnine has no
        # row for a combination without records): post-processing
        keep = est["keep"]
        if self.params["drop"]:
            keep = keep & ~(np.asarray(est["n"], dtype=float) <= 0)
        frame = frame[keep].reset_index(drop=True)
        if not self.discrete_x:
            frame["x"] = frame["x"].astype(float)
        else:
            order = list(self.x_order)
            shown = set(frame["x"].tolist())
            frame["x"] = pd.Categorical(
                frame["x"],
                categories=order
                if cells.public
                else [v for v in order if v in shown],
            )
        return frame


class _DPSummary(_SummaryFamily):
    DP = True
    QUERY_PARAMS = ("fun", "bounds", "sum_share")

    def validate_params(self) -> None:
        p = self.params
        name = self.name
        if p.get("fun_y") is not None:
            # plotnine 0.15 calls the y function fun_y (a callable)
            p["fun"] = p.pop("fun_y")
        p["fun"] = _FUNCTIONS.get(p["fun"], p["fun"])
        for param in ("fun_data", "fun_ymin", "fun_ymax", "fun_args"):
            if p.get(param) is not None:
                raise fail(
                    name,
                    f"{param}={p[param]!r} is not released privately: y is "
                    "a private mean or total (fun_y='mean' or 'sum') and "
                    "its bars are the noise interval of that release "
                    "(errorbar='noise', level=0.95), or none "
                    "(errorbar='none'). Drop " + param + ".",
                )
        validate_choice(name, "fun", p["fun"], ("mean", "sum"))
        p["eps"] = validate_eps(name, p["eps"])
        p["seed"] = validate_seed(name, p["seed"])
        validate_choice(
            name, "adjacency", p["adjacency"], ("replace", "add_remove")
        )
        validate_choice(
            name, "noise", p["noise"], ("discrete_laplace", "laplace")
        )
        share = p["sum_share"]
        if share is None:
            share = 0.5 if p["fun"] == "mean" else 1.0
        number = isinstance(share, numbers.Real) and not isinstance(
            share, bool
        )
        if not number or not (
            share > 0 and (share <= 1 if p["fun"] == "sum" else share < 1)
        ):
            allowed = "(0, 1]" if p["fun"] == "sum" else "(0, 1)"
            raise fail(
                name,
                f"sum_share must be a number in {allowed} for fun="
                f"{p['fun']!r}, got {share!r}: the share of eps spent on "
                "the totals; the counts get the rest"
                + (" (a mean needs both)." if p["fun"] == "mean" else "."),
            )
        p["sum_share"] = float(share)
        p["total"] = validate_total(name, p.get("total"))
        super().validate_params()

    def center(self) -> float:
        if self.params["fun"] == "mean":
            lo, hi = self.params["bounds"]
            return (lo + hi) / 2
        return 0.0

    def check_domain(self, fam, gdims) -> None:
        undeclared = [
            self.door.mapping.get(g.name, g.name)
            for g in gdims
            if not g.public
        ]
        if not fam.public:
            undeclared.insert(0, self.door.mapping.get("x", "x"))
        if undeclared:
            raise fail(
                self.name,
                f"{', '.join(map(repr, undeclared))} has no public set of "
                "levels: a mean or total of a cell that exists only when "
                "some record has its value would disclose that record. "
                "Declare the levels: levels=[...] for x, or a pandas "
                "Categorical with explicit categories=[...] (a polars "
                "Enum) in the data.",
            )

    def release(self, door, fam, gdims, table, sums, bound) -> dict:
        p = self.params
        eps, share = p["eps"], p["sum_share"]
        lo, hi = p["bounds"]
        c = self.center()
        alpha = 1 - p["level"]
        sum_mech = LaplaceSums(
            eps * share, bound, p["resolution"], p["adjacency"], p["noise"]
        )
        common = {
            "domain": fam.source,
            "panels": door.panels,
            "data_object": door.data_object,
        }
        rel_sum = release_cells(
            self.sub_query("sum", door, fam, gdims, sum_mech),
            sums,
            sum_mech,
            **common,
        )
        self.releases.append(rel_sum.release)
        if p["fun"] == "sum" and p["total"] is not None:
            warn_eps_scale(
                self,
                p["total"] * max(abs(lo), abs(hi)),
                sum_mech,
                error=expected_abs_noise(sum_mech.scale_units, p["noise"])
                * float(sum_mech.unit),
                what="y units",
            )
        s = rel_sum.values  # noisy totals of (y - c), value units
        est: dict = {"keep": rel_sum.keep, "keep_release": rel_sum}
        if share < 1:
            cnt_mech = LaplaceCounts(
                eps - eps * share, adjacency=p["adjacency"], noise=p["noise"]
            )
            rel_cnt = release_cells(
                self.sub_query("count", door, fam, gdims, cnt_mech),
                table,
                cnt_mech,
                **common,
                details={"what": "record counts of the summary cells"},
            )
            self.releases.append(rel_cnt.release)
            warn_eps_scale(self, p["total"], cnt_mech)
            n_noisy = np.nan_to_num(rel_cnt.noisy)
            est["n"] = np.rint(rel_cnt.values).astype(np.int64)
        else:
            est["n"] = np.full(len(s), np.nan)
        if p["fun"] == "sum":
            h = sum_mech.halfwidth(alpha)
            est.update(y=s, ymin=s - h, ymax=s + h, sum=s)
            return est
        # mean = c + S / N; the noise interval by a union bound: each of
        # the two noises stays within its 1 - alpha/2 half-width
        hs = sum_mech.halfwidth(alpha / 2)
        hc = laplace_halfwidth(cnt_mech.scale, p["noise"], alpha / 2)
        est["present"] = self.present(est["keep"], n_noisy, cnt_mech.scale)
        r_lo, r_hi = ratio_interval(s - hs, s + hs, n_noisy - hc, n_noisy + hc)
        est.update(
            y=np.clip(c + s / np.maximum(n_noisy, 1.0), lo, hi),
            ymin=np.clip(c + r_lo, lo, hi),
            ymax=np.clip(c + r_hi, lo, hi),
            sum=s + c * est["n"],
        )
        return est

    def present(self, keep, n_noisy, scale) -> np.ndarray:
        """The documented rule for cells with released n near 0: a mean
        is drawn only where the ``level`` interval of the released count
        excludes 0 (``noisy n - halfwidth > 0``); the others keep their
        row (so which cells exist is not a function of the noise) with
        ``y``, ``ymin`` and ``ymax`` missing, which geoms leave out, and
        a :class:`SignalWarning` says how many and the fix. Their
        ``y_low``/``y_high`` stay."""
        p = self.params
        h = laplace_halfwidth(scale, p["noise"], 1 - p["level"])
        there = n_noisy - h > 0
        gone = keep & ~there
        if gone.any():
            warnings.warn(
                f"{self.name}: {int(gone.sum())} cell(s) have a released "
                f"record count whose {p['level']:.0%} interval (+-{h}) "
                "includes 0: a mean there is noise, so they are not drawn. "
                "Use more eps (plan it with pp.eps_for('summary_dp', "
                "error=..., n=..., bounds=...)), a smaller sum_share or "
                "fewer levels or groups.",
                SignalWarning,
                stacklevel=3,
            )
        return there


class _CKMSummary(CKMMixin, _SummaryFamily):
    def validate_params(self) -> None:
        p = self.params
        name = self.name
        if p["num_ptable"] is None:
            raise fail(
                name,
                "num_ptable is required: a magnitude p-table from "
                "create_num_ptable(D, V, step=..., icat=[1, ..., D]) that "
                "perturbs the totals (ptable perturbs the counts).",
            )
        p["num_ptable"] = as_ptable(name, p["num_ptable"])
        if p["num_ptable"].kind != "magnitudes":
            raise fail(
                name,
                "num_ptable must be a magnitude p-table "
                "(create_num_ptable); got a count p-table.",
            )
        validate_choice(
            name, "magnifier", p["magnifier"], ("top_contr", "sum")
        )
        mult = p["p"]
        if not is_real(mult) or not 0 < mult < 1:
            raise fail(
                name,
                f"p must be a number in (0, 1), got {mult!r}: the noise of "
                "a total is about p * magnifier * v, v from num_ptable.",
            )
        if not isinstance(p["same_key"], (bool, np.bool_)):
            raise fail(
                name, f"same_key must be True or False, got {p['same_key']!r}."
            )
        super().validate_params()
        if p["ptable"].kind != "counts":
            raise fail(
                name,
                "ptable must be a count p-table (create_cnt_ptable) for "
                "the record counts; give the magnitude table as "
                "num_ptable.",
            )

    def add_ckm_columns(self, sums, dims, idx, k, data) -> None:
        ncell = len(sums.n)
        rows = _record_rows(dims, idx, sums.public)
        ok = rows >= 0
        top = np.zeros(ncell, dtype=np.int64)
        np.maximum.at(top, rows[ok], np.abs(k[ok]))
        sums.top = top
        num = self.params["num_ptable"]
        try:
            keys = record_key_integers(data["rkey"].to_numpy())
        except ValueError as err:
            raise fail(
                self.name, f"aesthetic rkey (for num_ptable): {err}"
            ) from None
        sums.key_sum = exact_sums(rows[ok], keys[ok], ncell) % (
            num.key_modulus
        )

    def release(self, door, fam, gdims, table, sums, bound) -> dict:
        p = self.params
        lo, hi = p["bounds"]
        mag = CKMMagnitudes(
            p["num_ptable"],
            p["resolution"],
            p["magnifier"],
            float(p["p"]),
            bool(p["same_key"]),
        )
        cnt = self.make_mechanism()
        common = {"domain": fam.source, "panels": door.panels}
        rel_sum = release_cells(
            self.sub_query("sum", door, fam, gdims, mag),
            sums,
            mag,
            **common,
        )
        rel_cnt = release_cells(
            self.sub_query("count", door, fam, gdims, cnt),
            table,
            cnt,
            **common,
        )
        self.releases += [rel_sum.release, rel_cnt.release]
        t, n = rel_sum.values, rel_cnt.values
        keep = rel_cnt.keep & rel_sum.keep
        bt = mag.bound(t, bound * p["resolution"])
        dc = float(p["ptable"].max_noise)
        est = {
            "keep_release": rel_cnt,
            "n": np.rint(n).astype(np.int64),
            "sum": t,
        }
        if p["fun"] == "sum":
            est.update(keep=keep, y=t, ymin=t - bt, ymax=t + bt)
            return est
        shown = keep & (n > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.where(n > 0, t / np.where(n > 0, n, 1), np.nan)
        r_lo, r_hi = ratio_interval(t - bt, t + bt, n - dc, n + dc)
        est.update(
            keep=shown,
            y=np.clip(y, lo, hi),
            ymin=np.clip(r_lo, lo, hi),
            ymax=np.clip(r_hi, lo, hi),
        )
        return est


def exact_totals(
    dims: list, idx: np.ndarray, k: np.ndarray, k_lo: int
) -> np.ndarray:
    """Exact int64 totals of the grid values ``k`` per cell of ``idx``.

    ``k - k_lo`` (>= 0, below 2**32) is summed in a low and a high part of
    at most 20 bits each, a chunk of records at a time: the float64 sums
    of a chunk are exact and chunks add up in int64, so no count of
    records can make a total inexact.
    """
    sizes = [d.size for d in dims]
    cells = (
        np.ravel_multi_index(idx.T, sizes)
        if len(idx)
        else np.zeros(0, dtype=np.int64)
    )
    size = len(cells)
    n = np.zeros(size, dtype=np.int64)
    lo = np.zeros(size, dtype=np.int64)
    hi = np.zeros(size, dtype=np.int64)
    for start in range(0, len(k), CHUNK):
        part = slice(start, start + CHUNK)
        code, bad = combined_codes(dims, part)
        pos = np.searchsorted(cells, code[~bad])
        shifted = k[part][~bad].astype(np.int64) - k_lo
        low = shifted & ((1 << _LOW_BITS) - 1)
        n += np.bincount(pos, minlength=size)
        lo += np.bincount(pos, weights=low, minlength=size).astype(np.int64)
        hi += np.bincount(
            pos, weights=shifted >> _LOW_BITS, minlength=size
        ).astype(np.int64)
    return (hi << _LOW_BITS) + lo + n * k_lo


def _record_rows(dims, idx: np.ndarray, public: bool) -> np.ndarray:
    """Row of the cell table of each record (-1: outside the domain), by
    the mixed-radix code :func:`~plotnine_private.cells.assemble` uses."""
    sizes = [d.size for d in dims]
    nrec = len(dims[0].codes)
    code = np.zeros(nrec, dtype=np.int64)
    bad = np.zeros(nrec, dtype=bool)
    for d in dims:
        c = np.asarray(d.codes, dtype=np.int64)
        bad |= (c < 0) | (c >= d.size)
        code = code * max(d.size, 1) + np.where(c < 0, 0, c)
    if public:
        rows = code
    else:
        cells = (
            np.ravel_multi_index(idx.T, sizes)
            if len(idx)
            else np.zeros(0, np.int64)
        )
        rows = np.searchsorted(cells, code)
    return np.where(bad, -1, rows)


_DP_SUMMARY_PARAMS = {
    "eps": None,
    "seed": None,
    "adjacency": "replace",
    "noise": "discrete_laplace",
    "sum_share": None,
    "total": None,
}
_CKM_SUMMARY_PARAMS = {
    **CKM_PARAMS,
    "num_ptable": None,
    "magnifier": "top_contr",
    "p": 0.1,
    "same_key": False,
}


@document
class stat_summary_dp(_DPSummary):
    """
    Differentially private means or totals of y per x (stat_summary)

    {usage}

    Drop-in for `stat_summary` with a mean or a total:
    `geom_pointrange(aes("class", "hwy"), stat="summary_dp",
    bounds=(10, 45), eps=1, seed=1)` or `geom_col(..., stat="summary_dp",
    fun="sum", ...)`. y is clamped to the public `bounds` and rounded to a
    public grid; each cell (declared x level, fill/colour group, panel)
    gets exact discrete Laplace noise on its total and, for a mean, on
    its count. The mean is the noisy total over the noisy count.

    Parameters
    ----------
    {common_parameters}
    eps : float
        Privacy budget of this layer (> 0). Required. Split between the
        totals (`sum_share`) and the counts (the rest).
    bounds : tuple
        Public `(lo, hi)` of y, required. Values outside are clamped to
        it (a record above `hi` counts as `hi`), so the mean is that of
        the clamped values; the noise is calibrated to it.
    fun : {"mean", "sum"}, default="mean"
        Released y: the mean or the total of the clamped y per cell.
        plotnine's `fun_y=np.mean` / `np.sum` are the same; `fun_data`,
        `fun_ymin`, `fun_ymax` and `fun_args` are refused (the bars are
        the noise interval, see `errorbar`).
    drop : bool, default=False
        `True` leaves out cells whose released count is 0 (no mean to
        draw; as plotnine, which has no row for a combination without
        records). The default keeps their rows (y missing).
    sum_share : float, default=None
        Share of eps for the totals: 0.5 for a mean (must be < 1: a mean
        needs counts), 1 for a total (no count is released, `n` is
        missing; a value < 1 also releases counts, so `n` is available).
    total : float, default=None
        A public number of records (as in `stat_count_dp`): with it, a
        too small eps gives a `PrivacyWarning`.
    resolution : float, default=None
        Public grid of y: every clamped value is rounded to a multiple of
        `resolution` from the grid centre, so totals are exact integers
        and the noise is exact. Default: the largest power of ten at most
        (hi - lo) / 1000 (0.01 for bounds (10, 45)).
    errorbar : {"noise", None}, default="noise"
        `"noise"`: ymin/ymax hold an interval that contains the noise-free
        mean (total) of the clamped, gridded y of the cell with
        probability at least `level`, computed from the released values
        and the public noise scales. It says nothing about sampling
        variation. `None`: ymin = ymax = y. Either way the interval is
        in the computed variables `y_low` and `y_high`.
    level : float, default=0.95
        Coverage of the noise interval. Also the rule for cells near
        zero: a mean is drawn only where the `level` interval of the
        released count excludes 0 (others are left out, with a
        `SignalWarning`).
    seed, adjacency, noise :
        As in `stat_count_dp`.
    levels : list, default=None
        The public set of x values (see `stat_count_dp`).
    width : float, default=None
        Bar width for `geom_col` (0.9 of the level spacing).

    Notes
    -----
    **Privacy map.** With the grid value `k = round((clamp(y) - c) / r)`
    of each record and `B` the largest `|k|`, the totals have L1
    sensitivity `B` under add/remove and `2B` under replace (a replaced
    record can leave one cell and enter another); the counts 1 and 2.
    For a mean the grid is centred at `c = (lo + hi) / 2`, so the
    sensitivity of the totals is `(hi - lo) / 2` (add/remove) or
    `hi - lo` (replace) in units of y; for a total `c = 0` and it is
    `max(|lo|, |hi|)` or twice that. The layer costs `eps * sum_share`
    (totals) plus `eps * (1 - sum_share)` (counts), sequentially: the
    report lists both releases. Every cell of the declared domain is
    released, empty ones included (pure eps-DP); undeclared x or group
    levels are refused.

    **Why a grid.** Continuous Laplace noise in floating point leaks
    through the gaps between the floats it can output (Mironov 2012),
    and float sums of clamped values have a sensitivity that depends on
    the order of summation; integer totals on a public grid with exact
    discrete Laplace noise (Canonne, Kamath & Steinke 2020) avoid both.
    Rounding moves a mean by at most `resolution / 2`.

    **Estimates.** Mean: `c + S / max(N, 1)`, clipped to the bounds, with
    `S` the noisy centred total and `N` the noisy count; its interval
    takes the `1 - (1 - level)/2` half-widths of both noises (a union
    bound) and the range of `S / N` over them. Total: the noisy total,
    interval plus/minus the `level` half-width of its noise.

    Computed variables: `y`, `ymin`, `ymax`, `n` (released count,
    clipped at 0; missing without a count release), `sum` (released
    total: for a mean `S + c * n`), `width`.
    """

    DEFAULT_PARAMS = {**_SummaryFamily.BASE_PARAMS, **_DP_SUMMARY_PARAMS}


@document
class stat_summary_ckm(_CKMSummary):
    """
    Means or totals of y per x protected by the Cell Key Method

    {usage}

    Drop-in for `stat_summary` with a mean or a total:
    `geom_pointrange(aes("class", "hwy", rkey="rk"),
    stat="summary_ckm", bounds=(10, 45), ptable=cnt, num_ptable=num)`.
    The total of each cell is perturbed with a magnitude p-table and its
    count with a count p-table, both read at the cell key (the sum of its
    records' keys), so the same records get the same noise in every plot
    and table. The mean is the perturbed total over the perturbed count.

    Parameters
    ----------
    {common_parameters}
    bounds : tuple
        Public `(lo, hi)` of y, required; values outside are clamped.
    fun : {"mean", "sum"}, default="mean"
        Released y: the mean or the total of the clamped y per cell.
        plotnine's `fun_y=np.mean` / `np.sum` are the same; `fun_data`,
        `fun_ymin`, `fun_ymax` and `fun_args` are refused (the bars are
        the noise interval, see `errorbar`).
    drop : bool, default=False
        `True` leaves out cells whose released count is 0 (no mean to
        draw; as plotnine, which has no row for a combination without
        records). The default keeps their rows (y missing).
    ptable : PTable
        Count p-table (`create_cnt_ptable`) for the record counts.
    num_ptable : PTable
        Magnitude p-table (`create_num_ptable`) for the totals.
    magnifier : {"top_contr", "sum"}, default="top_contr"
        What the noise of a total scales with, as in cellKey's
        `ck_params_nums(type=...)`: the cell's largest absolute
        contribution, or its absolute total.
    p : float, default=0.1
        cellKey's simple multiplier: the noise of a total is `sign(T) *
        p * magnifier * v`, with `v` read from `num_ptable` at the ratio
        `|T| / (p * magnifier)` (capped at its largest row,
        interpolated between rows).
    same_key : bool, default=False
        Look the total up at the cell key itself, or (cellKey's default)
        at the key with its decimal digits rotated by one, so the count
        and the total of a cell do not read the same key.
    threshold : float, default=None
        Hide cells whose perturbed count is below it.
    resolution : float, default=None
        Public grid y is rounded to before summing (exact, order-free
        totals); as in `stat_summary_dp`.
    errorbar : {"noise", None}, default="noise"
        `"noise"`: ymin/ymax hold the range the bounded CKM noise cannot
        leave, from the released values and public parameters: the count
        moves by at most the count table's D, a total by at most `p * D *
        max(|lo|, |hi|)` (`top_contr`) or `p D |T| / (1 - p D)` (`sum`,
        unbounded if `p D >= 1`). `level` is not used: the cover is
        certain. `None`: ymin = ymax = y.
    level : float, default=0.95
        Unused by CKM (accepted so that the DP and CKM twins share calls).
    levels, width :
        As in `stat_summary_dp`.

    Notes
    -----
    Needs the `rkey` aesthetic (uniform record keys in [0, 1), stored
    with the data). A total is not perturbed when it is 0 or its cell key
    is 0; a negative deviation never pushes it across zero. Where the
    total is smaller than `p * magnifier` (possible only with values of
    both signs) the ratio is 1 and the total is still perturbed (cellKey
    leaves such cells of a simple multiplier unperturbed). Cells whose
    perturbed count is 0 have no mean and are not drawn. No formal
    privacy guarantee: see the README on CKM.

    Computed variables: `y`, `ymin`, `ymax`, `n` (perturbed count),
    `sum` (perturbed total), `width`.
    """

    DEFAULT_PARAMS = {**_SummaryFamily.BASE_PARAMS, **_CKM_SUMMARY_PARAMS}
