"""The family of the private summaries, shared by the DP and CKM twins.

:class:`_SummaryFamily`: its parameters (``fun``, ``bounds``, the grid),
the input checks, the release at the door of totals and counts per cell,
and the shaping of released estimates like plotnine's ``stat_summary``.
"""

from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
import pandas as pd
from plotnine.scales.scale_discrete import scale_discrete
from plotnine.stats import stat_summary as _pn_stat_summary

from ..._compat import scale_transform
from ...cells import CHUNK, assemble, categorical_dimension
from ...declarations import Declaration, NoiseGeom
from ...mechanisms.release.magnitudes import SumTable
from ...units import with_unit
from ...validation import (
    fail,
    is_real,
    validate_choice,
    validate_eps,
    validate_range,
)
from ..boxplot import COVERS, validate_covers
from ..count import _CountFamily
from ..dates import to_axis_units
from ..marks import mark_layer
from ..signal import SignalWarning, drawn_as, planned_name, warn_once
from .data import check_fun_data, square_table
from .quantiles import QUANTILE_FUNS, quantile_probs, quantile_twin
from .totals import default_resolution, exact_totals, total_range

#: the largest grid value of one record (a public limit on bounds /
#: resolution): totals of up to _MAX_RECORDS records stay exact in int64
_MAX_BOUND = 2**31
#: the most records one layer may hold (an implementation limit, checked
#: on the layer's rows before anything is dropped)
_MAX_RECORDS = 2**31

_pn_summary_module = sys.modules[_pn_stat_summary.__module__]

#: plotnine's y functions (callables) that have a private release
_FUNCTIONS = {
    np.mean: "mean",
    np.nanmean: "mean",
    np.sum: "sum",
    np.nansum: "sum",
    "mean": "mean",
    "sum": "sum",
}


#: fun_ymin/fun_ymax read off the released CDF: their probability
_END_PROBS = {
    np.min: 0.0,
    np.amin: 0.0,
    np.nanmin: 0.0,
    "min": 0.0,
    np.max: 1.0,
    np.amax: 1.0,
    np.nanmax: 1.0,
    "max": 1.0,
    np.median: 0.5,
    np.nanmedian: 0.5,
    "median": 0.5,
}


def _end_prob(fun) -> float | None:
    try:
        return _END_PROBS.get(fun)
    except TypeError:  # unhashable
        return None


def _quantile_kind(fun) -> str | None:
    """ "median", "quantile", "percentile" (plotnine's fun_y), or
    "median_hilow" (its fun_data), else None."""
    if fun is None:
        return None
    if fun == "median_hilow" or fun is getattr(
        _pn_summary_module, "median_hilow", None
    ):
        return "median_hilow"
    try:
        return QUANTILE_FUNS.get(fun)
    except TypeError:  # unhashable
        return None


class _SummaryFamily(_CountFamily):
    """Mean or total of a clamped y per x level (and group, panel).

    The x domain follows `stat_count_dp` (``levels=``, a declared
    Categorical, user scale limits); group aesthetics and panels
    multiply it.
    """

    FAMILY = "summary"
    DECLARATION = Declaration(
        family="summary",
        plan_inputs=("bounds",),
        example={
            "aes": {"x": "cat", "y": "num"},
            "params": {"bounds": (10, 45)},
        },
        title="summary",
        counterpart="summary",
        geoms=(
            "`geom_pointrange`, `geom_col`, `geom_errorbar`, `geom_point` "
            '(`fun="mean"` or `"sum"` of y clamped to public '
            "`bounds=(lo, hi)`; noise error bars)"
        ),
        plan_bounds=(
            "a cell's total (exact) or its mean over `n` records (simulated)"
        ),
        noisy=frozenset({"y", "ymin", "ymax", "n", "sum"}),
        intervals=("y",),
        plan="summary",
        judged_by=("y",),
        caption="y",
        noise_geom=NoiseGeom("errorbar", "y", {"width": 0.2}, fixed=True),
    )
    REQUIRED_AES = {"x", "y"}
    DEFAULT_AES: dict = {}
    UNIT_COUNTS = False
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
        # medians and quantiles: fine bins of the box plots' histogram
        "bins": 128,
        # what the intervals cover; whole-number y (quantiles)
        "covers": "data",
        "discrete": None,
        # plotnine's name: fun_y is fun
        "fun_y": None,
        # plotnine's names: fun_data with fun_args are released (see
        # data.py); fun_ymin/fun_ymax are refused (check_fun)
        "fun_data": None,
        "fun_ymin": None,
        "fun_ymax": None,
        "fun_args": None,
    }
    CREATES = {
        *("y", "ymin", "ymax", "y_low", "y_high", "n", "sum", "width"),
        "signal",
    }
    QUERY_PARAMS: tuple[str, ...] = ("fun", "bounds")

    def counterpart_arguments(self, kept) -> dict:
        """What plotnine's ``stat_summary`` (``pp.compare``'s unperturbed
        panel) takes: the exact mean or total as the point and both ends
        (the private panels draw the noise's range)."""
        fun = np.sum if self.params.get("fun") == "sum" else np.mean
        return {"fun_y": fun, "fun_ymin": fun, "fun_ymax": fun}

    # -- parameters ----------------------------------------------------
    def check_ends(self, kind: str | None) -> dict[str, float]:
        """``fun_ymin``/``fun_ymax`` built from the released pieces: a
        minimum, maximum or median of the records is the quantile 0, 1
        or 0.5 of the released fine histogram (as the y of a median or
        quantile summary is), so the three come from one release. Any
        other function, or with a mean or total as y, is refused with
        the fix."""
        p = self.params
        ends: dict[str, float] = {}
        for param, col in (("fun_ymin", "ymin"), ("fun_ymax", "ymax")):
            fun = p.get(param)
            if fun is None:
                continue
            q = _end_prob(fun)
            if q is None:
                raise fail(
                    self.name,
                    f"{param}={fun!r} is not released privately: a bar's "
                    "end is read off the released fine histogram as a "
                    "quantile, which np.min (0), np.max (1) and np.median "
                    f"(0.5) are; other functions of the records are not. "
                    f"Give one of those, or drop {param} and use "
                    "fun_data='median_hilow' (quantile bars) or "
                    "'mean_cl_normal' ('mean_se', 'mean_sdl').",
                )
            ends[col] = q
        if ends and kind is None:
            raise fail(
                self.name,
                f"fun_ymin/fun_ymax with fun={p['fun']!r}: a mean or total "
                "is released from totals and counts, the bar's ends from "
                "the fine histogram, two releases of one layer. Give "
                "fun_y=np.median (the ends and y from one release), or "
                "fun_data='mean_cl_normal' (or 'mean_se', 'mean_sdl') "
                "for bars around a mean.",
            )
        if ends and p.get("fun_data") is not None:
            raise fail(
                self.name,
                "fun_ymin/fun_ymax and fun_data both given (plotnine "
                "would ignore fun_ymin/fun_ymax): drop one.",
            )
        return ends

    def check_fun(self) -> None:
        """``fun`` (or plotnine's ``fun_y``) as "mean" or "sum";
        ``fun_data`` (with ``fun_args``) as one of the released
        functions; ``fun_ymin``/``fun_ymax`` are refused with the private
        alternative. Idempotent (the DP twin checks it first)."""
        p = self.params
        name = self.name
        if p.get("probs") is not None:
            return  # a quantile summary, resolved already
        if p.get("fun_y") is not None:
            if p.get("fun_data") is not None:
                # plotnine ignores fun_data then; say so instead
                raise fail(
                    name,
                    f"fun_y={p['fun_y']!r} and fun_data={p['fun_data']!r} "
                    "both given (plotnine would ignore fun_data): drop one.",
                )
            # plotnine 0.15 calls the y function fun_y (a callable)
            p["fun"] = p.pop("fun_y")
        p["fun"] = _FUNCTIONS.get(p["fun"], p["fun"])
        kind = _quantile_kind(p["fun"])
        ends = self.check_ends(kind)
        if ends and kind is not None:  # (check_ends refused it without)
            # y and the bar's ends from one fine histogram (quantiles.py)
            probs = quantile_probs(name, kind, p["fun_args"], False)
            p["probs"] = {**probs, **ends}
            p["fun"], p["fun_args"] = "quantile", None
            p["fun_ymin"] = p["fun_ymax"] = None
            return
        if _quantile_kind(p.get("fun_data")) == "median_hilow":
            kind, p["fun_data"] = "median", None
            p["probs"] = quantile_probs(name, kind, p["fun_args"], True)
        elif kind is not None:
            p["probs"] = quantile_probs(name, kind, p["fun_args"], False)
        if kind is not None:
            # the box plots' fine histogram releases it (quantiles.py)
            p["fun"], p["fun_args"] = "quantile", None
            return
        validate_choice(name, "fun", p["fun"], ("mean", "sum"))
        if p.get("fun_data") is None:
            if p.get("fun_args") is not None:
                raise fail(
                    name,
                    f"fun_args={p['fun_args']!r} needs fun_data (the "
                    "released functions take mult or confidence_interval"
                    "): give fun_data='mean_se', 'mean_cl_normal' or "
                    "'mean_sdl', or drop fun_args.",
                )
            return
        if p["fun"] != "mean":
            raise fail(
                name,
                f"fun_data={p['fun_data']!r} releases a mean and its "
                f"interval; fun={p['fun']!r} cannot go with it. Drop "
                "fun (or fun_y).",
            )
        p["fun_data"], p["fun_args"] = check_fun_data(
            name, p["fun_data"], p["fun_args"]
        )

    def validate_params(self) -> None:
        self.check_fun()
        p = self.params
        name = self.name
        #: a resolution of the user's (else the default of the bounds)
        self.resolution_given = p["resolution"] is not None
        if p["bounds"] is None and not self.drawn_from_synopsis():
            self.require_bounds()
        if p["bounds"] is not None:
            self.check_bounds()
        validate_choice(name, "errorbar", p["errorbar"], ("noise", None))
        validate_choice(name, "covers", p["covers"], COVERS)
        if p["discrete"] is not None and p["fun"] != "quantile":
            raise fail(
                name,
                f"discrete={p['discrete']!r} is for medians and quantiles "
                f"(fun='median', fun_y=np.quantile...): a mean or a total is "
                f"summed on the public grid resolution={p['resolution']!r}; "
                "drop discrete, or give resolution=1 for whole numbers.",
            )
        if p["fun"] == "quantile" and p["bounds"] is not None:
            validate_covers(name, {**p, "limits": p["bounds"]})
        lev = p["level"]
        if not is_real(lev) or not 0 < lev < 1:
            raise fail(
                name,
                f"level must be a number in (0, 1), got {lev!r} (e.g. 0.95 "
                "for 95% error bars).",
            )
        super().validate_params()

    def drawn_from_synopsis(self) -> bool:
        """Made without ``eps`` and ``bounds``: a figure drawn from a
        synopsis, whose declared limits are the bounds (on data, the
        build asks for both: :meth:`require_budget`)."""
        p = self.params
        return bool(getattr(self, "DP", False)) and p.get("eps") is None

    def require_bounds(self) -> None:
        """Refuse a layer without ``bounds``."""
        raise fail(
            self.name,
            "bounds is required: the public range (lo, hi) of y, known "
            "without looking at the data (e.g. bounds=(0, 50) for "
            "highway mpg). Values outside it are clamped to it; the "
            "noise is calibrated to it.",
        )

    def require_budget(self) -> None:
        """On data: ``eps`` and ``bounds``, which a figure drawn from a
        synopsis leaves out, are required."""
        p = self.params
        if getattr(self, "DP", False) and p.get("eps") is None:
            validate_eps(self.name, None)  # "eps is required"
        if p["bounds"] is None:
            self.require_bounds()

    def check_bounds(self) -> None:
        """``bounds`` and the grid of ``resolution`` on them."""
        p = self.params
        name = self.name
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

    def center(self) -> float:
        """Public centre of the grid (0 unless a DP mean is released)."""
        return 0.0

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        """A mean or quantile and its interval: within ``bounds``; a total
        and its interval: :func:`~.totals.total_range` of them."""
        bounds = self.params["bounds"]
        if self.params.get("fun") == "sum":
            return {"y": total_range(bounds)}
        return {"y": tuple(bounds)}

    def grid_error(self) -> float:
        """How far a mean of the gridded values may be from the mean of
        the clamped values: half the resolution with ``covers="data"``
        (each value moves by at most that), else 0 (the interval covers
        the mean of the gridded values)."""
        if self.params.get("covers", "data") != "data":
            return 0.0
        return self.params["resolution"] / 2

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
        out = np.empty(len(y), dtype=np.int64)
        # a chunk at a time: the float temporaries of one chunk, not of
        # every record (10**7 rows: 240 MB of them), the same values
        for start in range(0, len(y), CHUNK):
            part = slice(start, start + CHUNK)
            k = np.floor((np.clip(y[part], lo, hi) - c) / r + 0.5)
            out[part] = np.clip(k, k_lo, k_hi)
        return out

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
        scale = getattr(self.build.door.scales, "y", None)
        if isinstance(scale, scale_discrete):
            raise fail(self.name, "y is on a discrete scale; map a number.")

    def on_scale_units(self) -> None:
        """Under a transformed y scale (``scale_y_log10``, ``sqrt``...)
        plotnine summarises the transformed values (the mean of log10
        y): ``bounds`` (data units) become the scale's units on the
        build's copy, and a default ``resolution`` is the default over
        them."""
        scale = getattr(self.build.door.scales, "y", None)
        trans = scale_transform(scale)
        if trans is None:
            return
        with np.errstate(all="ignore"):
            t = to_axis_units(
                self.name, "bounds", self.params["bounds"], scale, "y"
            )
        t_lo, t_hi = sorted(float(v) for v in t)
        if not (np.isfinite([t_lo, t_hi]).all() and t_lo < t_hi):
            raise fail(
                self.name,
                f"bounds={self.params['bounds']!r} are not valid on the y "
                f"scale ({trans[0]}): give bounds inside its domain (e.g. "
                "bounds > 0 on a log scale).",
            )
        res = self.params["resolution"]
        if not self.resolution_given:
            res = default_resolution(t_lo, t_hi)
        self.params = {
            **self.params,
            "bounds": (t_lo, t_hi),
            "resolution": res,
        }

    def release_rows(self, data: pd.DataFrame) -> pd.DataFrame:
        """Release totals and counts of the layer's cells (see the module
        docstring), then shape them like plotnine's ``stat_summary``."""
        self.require_budget()
        if self.params["fun"] == "quantile":
            # the box plots' limits are in data units already
            return quantile_twin(self).release_at_door(data, self.build)
        self.on_scale_units()
        door = self.build.door
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
        self.build.records = data
        fam = self.family_cells(data, door.scales)
        gdims = [
            categorical_dimension(c, data[c], self.declared_of(c))
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
        squares = None
        if self.params["fun_data"] is not None:
            squares = square_table(
                self, sums, dims, idx, data["y"].to_numpy(dtype=float)
            )
        est = self.release(door, fam, gdims, table, sums, bound, squares)
        if not table.public:
            self.warn_undeclared(fam, gdims, self.build.releases[-1])
        cells = self.cell_frame(
            fam, panel, gdims, idx, table, est["keep_release"], door
        )
        out = mark_layer(self, self.shape(cells, est))
        self.warn_noise(out)
        return out

    def warn_noise(self, out: pd.DataFrame) -> None:
        """A :class:`SignalWarning` when some cells are noise marks
        (:func:`~plotnine_private.stats.marks.signal_marks`), with the
        fix; once per figure."""
        noise = int((~out["signal"]).sum()) if len(out) else 0
        if not noise:
            return
        p = self.params
        if p["fun"] == "sum":
            why = f"whose {p['level']:.0%} interval holds 0"
        else:
            lo, hi = p["bounds"]
            why = (
                f"whose {p['level']:.0%} interval spans more than a "
                f"quarter of the bounds ({lo:g}, {hi:g}), as it does "
                "where the released record count is within its noise of 0"
            )
        what = "total" if p["fun"] == "sum" else "mean"
        warn_once(
            (self.name, "summary noise"),
            f"{self.name}: {noise} of {len(out)} cell(s) have a {what} "
            f"{why}: there the {what} is noise, so they are "
            f"{drawn_as(self)}. Use more eps (plan it with "
            f"pp.eps_for({planned_name(self)!r}, error=..., n=..., "
            "bounds=...)), a smaller sum_share or fewer levels or groups.",
            SignalWarning,
        )

    def check_domain(self, fam, gdims) -> None:
        """DP needs a public domain (see `stat_summary_dp`)."""

    def add_ckm_columns(self, sums, dims, idx, k, data) -> None:
        """CKM: the largest contribution and the magnitude key sums."""

    def release(
        self, door, fam, gdims, table, sums, bound, squares=None
    ) -> dict:
        """Release the cells; ``squares`` (with ``fun_data``): the table
        of squares, the largest square and its grid unit."""
        raise NotImplementedError  # pragma: no cover

    def sub_query(self, family, door, fam, gdims, mechanism):
        q = with_unit(self.query(door, fam, gdims, mechanism), door.unit)
        return dataclasses.replace(q, family=f"summary:{family}")

    def shape(self, cells, est: dict) -> pd.DataFrame:
        lo, hi = self.params["bounds"]
        frame = cells.frame.copy()
        frame["y"] = est["y"]
        # the interval variables, whatever errorbar draws
        frame["y_low"], frame["y_high"] = est["ymin"], est["ymax"]
        if self.params["errorbar"] is None:
            frame["ymin"], frame["ymax"] = est["y"], est["y"]
        elif self.params["fun_data"] is not None:
            frame["ymin"], frame["ymax"] = est["data_min"], est["data_max"]
        else:
            frame["ymin"], frame["ymax"] = est["ymin"], est["ymax"]
        frame["n"] = est["n"]
        frame["sum"] = est["sum"]
        # a cell released with n = 0 has no mean to draw (plotnine has no
        # row for a combination without records): post-processing
        keep = est["keep"]
        empty = np.asarray(est["n"], dtype=float) <= 0
        if (
            self.params.get("fun") == "sum"
            and np.isnan(np.asarray(est["n"], dtype=float)).all()
        ):
            # a total without counts (sum_share=1): a cell whose released
            # total is 0 is the empty one (post-processing)
            empty = np.asarray(est["y"], dtype=float) == 0
        if self.params["drop"]:
            keep = keep & ~empty
        elif self.params.get("fun") != "sum":
            # drop=False keeps the row of a cell released with n <= 0, but
            # a mean or quantile of no records is not a mark, not even a
            # faded one: nothing to draw there (its y_low/y_high stay)
            frame.loc[empty, ["y", "ymin", "ymax"]] = np.nan
        frame = frame[keep].reset_index(drop=True)
        if not self.build.discrete_x:
            frame["x"] = frame["x"].astype(float)
        else:
            order = list(self.build.x_order)
            shown = set(frame["x"].tolist())
            frame["x"] = pd.Categorical(
                frame["x"],
                categories=order
                if cells.public
                else [v for v in order if v in shown],
            )
        return frame
