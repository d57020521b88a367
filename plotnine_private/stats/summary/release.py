"""The DP and CKM releases of the private summaries.

:class:`_DPSummary`: discrete Laplace noise on the totals and the counts
of a public domain, and the rule for cells near zero;
:class:`_CKMSummary`: magnitude and count p-tables read at the cell keys.
Each turns the released values into the estimates and noise intervals.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from ...cells import exact_sums
from ...mechanisms.ptable.ckm import record_key_integers
from ...mechanisms.release.engine import LaplaceCounts, release_cells
from ...mechanisms.release.magnitudes import (
    CKMMagnitudes,
    LaplaceSums,
    laplace_halfwidth,
)
from ...pca.validation import check_shares
from ...validation import (
    as_ptable,
    fail,
    is_real,
    validate_choice,
    validate_eps,
    validate_seed,
)
from ..base import CKMMixin
from ..signal import (
    expected_abs_noise,
    validate_total,
    warn_eps_scale,
)
from .data import SHARE_KEYS, ckm_interval, dp_interval
from .family import _SummaryFamily
from .totals import clip_total, ratio_interval, record_rows


class _DPSummary(_SummaryFamily):
    DP = True
    QUERY_PARAMS = ("fun", "bounds", "sum_share")

    def validate_params(self) -> None:
        self.check_fun()  # sum_share's rule below depends on fun
        p = self.params
        name = self.name
        if p["eps"] is not None:
            # None: drawn from a synopsis (on data the build asks for it)
            p["eps"] = validate_eps(name, p["eps"])
        p["seed"] = validate_seed(name, p["seed"])
        validate_choice(
            name, "adjacency", p["adjacency"], ("replace", "add_remove")
        )
        validate_choice(
            name, "noise", p["noise"], ("discrete_laplace", "laplace")
        )
        share = p["sum_share"]
        if p["fun"] == "quantile":
            for param in ("sum_share", "shares"):
                if p[param] is not None:
                    raise fail(
                        name,
                        f"{param}={p[param]!r} splits eps between totals "
                        "and counts; a median or quantile spends all of "
                        "eps on the fine histogram of y. Drop " + param + ".",
                    )
            p["total"] = validate_total(name, p.get("total"))
            super().validate_params()
            return
        if p["fun_data"] is not None:
            share = self.fun_data_shares()
        elif p["shares"] is not None:
            raise fail(
                name,
                f"shares={p['shares']!r} splits eps between the sum, the "
                "sum of squares and the count of fun_data; without "
                "fun_data give sum_share (the totals' share).",
            )
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

    def fun_data_shares(self) -> float:
        """``shares`` of eps for ``fun_data`` (equal thirds by default),
        checked by the rule of every ``shares=``; returns the totals'
        share (the sum's release is the same as a mean's with that
        ``sum_share``)."""
        p = self.params
        given = p["shares"]
        again = isinstance(given, dict) and p["sum_share"] == given.get("sum")
        if p["sum_share"] is not None and not again:
            raise fail(
                self.name,
                f"sum_share={p['sum_share']!r} with fun_data: give "
                f"shares={{'sum': ..., 'sumsq': ..., 'count': ...}} "
                "instead (the sum of squares needs its own share).",
            )
        p["shares"] = check_shares(self.name, p["shares"], SHARE_KEYS)
        return p["shares"]["sum"]

    def center(self) -> float:
        if self.params["fun"] == "mean":
            lo, hi = self.params["bounds"]
            return (lo + hi) / 2
        return 0.0

    def check_domain(self, fam, gdims) -> None:
        undeclared = [
            self.build.door.mapping.get(g.name, g.name)
            for g in gdims
            if not g.public
        ]
        if not fam.public:
            undeclared.insert(0, self.build.door.mapping.get("x", "x"))
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

    def release(
        self, door, fam, gdims, table, sums, bound, squares=None
    ) -> dict:
        p = self.params
        eps, share = p["eps"], p["sum_share"]
        lo, hi = p["bounds"]
        c = self.center()
        alpha = 1 - p["level"]
        # a privacy unit keeps up to k records, all possibly in one cell:
        # its total there moves by up to k times one record's bound
        k = door.unit.max_records
        sum_mech = LaplaceSums(
            eps * share,
            bound * k,
            p["resolution"],
            p["adjacency"],
            p["noise"],
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
        self.build.releases.append(rel_sum.release)
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
                eps * p["shares"]["count"]
                if p["fun_data"] is not None
                else eps - eps * share,
                adjacency=p["adjacency"],
                noise=p["noise"],
                # a summary's domain is declared (no threshold), and its
                # rows are not limited to max_cells cells: k records only
                records=k,
            )
            rel_cnt = release_cells(
                self.sub_query("count", door, fam, gdims, cnt_mech),
                table,
                cnt_mech,
                **common,
                details={"what": "record counts of the summary cells"},
            )
            self.build.releases.append(rel_cnt.release)
            warn_eps_scale(self, p["total"], cnt_mech)
            n_noisy = np.nan_to_num(rel_cnt.noisy)
            est["n"] = np.rint(rel_cnt.values).astype(np.int64)
        else:
            est["n"] = np.full(len(s), np.nan)
        if p["fun"] == "sum":
            h = sum_mech.halfwidth(alpha)
            # the drawn total and its interval are clipped to what a
            # total can be; ``sum`` keeps the released total, unclipped
            est.update(clip_total((lo, hi), y=s, ymin=s - h, ymax=s + h))
            est["sum"] = s
            return est
        # mean = c + S / N; the noise interval by a union bound: each of
        # the two noises stays within its 1 - alpha/2 half-width
        hs = sum_mech.halfwidth(alpha / 2)
        hc = laplace_halfwidth(cnt_mech.scale, p["noise"], alpha / 2)
        est["present"] = self.present(est["keep"], n_noisy, cnt_mech.scale)
        if squares is not None:
            q = self.release_squares(door, fam, gdims, squares, common)
            est["data_min"], est["data_max"] = dp_interval(
                self, n_noisy, s, q, sum_mech, cnt_mech
            )
        r_lo, r_hi = ratio_interval(s - hs, s + hs, n_noisy - hc, n_noisy + hc)
        grid = self.grid_error()
        est.update(
            y=np.clip(c + s / np.maximum(n_noisy, 1.0), lo, hi),
            ymin=np.clip(c + r_lo - grid, lo, hi),
            ymax=np.clip(c + r_hi + grid, lo, hi),
            sum=s + c * est["n"],
        )
        return est

    def release_squares(self, door, fam, gdims, squares, common):
        """The noisy totals of squares (value units) with ``shares``'s
        part of eps: each record adds at most the largest square, so the
        sensitivity is that (add/remove) or twice it (replace), times
        the records a unit keeps."""
        p = self.params
        table, q_max, unit = squares
        mech = LaplaceSums(
            p["eps"] * p["shares"]["sumsq"],
            q_max * door.unit.max_records,
            unit,
            p["adjacency"],
            p["noise"],
        )
        rel = release_cells(
            self.sub_query("sumsq", door, fam, gdims, mech),
            table,
            mech,
            **common,
            details={"what": "totals of squared centred y"},
        )
        self.build.releases.append(rel.release)
        return rel.values

    def present(self, keep, n_noisy, scale) -> np.ndarray:
        """Where the ``level`` interval of the released count excludes 0
        (``noisy n - halfwidth > 0``). Elsewhere the mean's interval, from
        a count that may be 0, spans the bounds: those cells are noise
        marks (:mod:`~plotnine_private.stats.marks`), drawn as
        ``noise_marks`` says, and :meth:`warn_noise` says so."""
        p = self.params
        h = laplace_halfwidth(scale, p["noise"], 1 - p["level"])
        return n_noisy - h > 0


class _CKMSummary(CKMMixin, _SummaryFamily):
    def validate_params(self) -> None:
        p = self.params
        name = self.name
        self.check_fun()  # a median or quantile needs no num_ptable
        self.require_ptable()  # a summary is not drawn from a synopsis
        if p["fun"] == "quantile":
            # a median or quantile releases counts only (num_ptable unused)
            super().validate_params()
            return
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
        rows = record_rows(dims, idx, sums.public)
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

    def release(
        self, door, fam, gdims, table, sums, bound, squares=None
    ) -> dict:
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
        self.build.releases += [rel_sum.release, rel_cnt.release]
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
            est.update(keep=keep)
            est.update(clip_total((lo, hi), y=t, ymin=t - bt, ymax=t + bt))
            return est
        shown = keep & (n > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            y = np.where(n > 0, t / np.where(n > 0, n, 1), np.nan)
        r_lo, r_hi = ratio_interval(t - bt, t + bt, n - dc, n + dc)
        if squares is not None:
            # the total of squares is one more magnitude cell, perturbed
            # by num_ptable at the same cell key as the total
            sq_table, q_max, unit = squares
            sq_mag = dataclasses.replace(mag, unit=unit)
            rel_sq = release_cells(
                self.sub_query("sumsq", door, fam, gdims, sq_mag),
                sq_table,
                sq_mag,
                **common,
            )
            self.build.releases.append(rel_sq.release)
            q = rel_sq.values
            est["data_min"], est["data_max"] = ckm_interval(
                self, n, t, q, bt, sq_mag.bound(q, q_max * unit)
            )
        grid = self.grid_error()
        est.update(
            keep=shown,
            y=np.clip(y, lo, hi),
            ymin=np.clip(r_lo - grid, lo, hi),
            ymax=np.clip(r_hi + grid, lo, hi),
        )
        return est
