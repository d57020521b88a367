"""plotnine's summary functions ``mean_se``, ``mean_cl_normal`` and
``mean_sdl`` from a summary layer's released count, total and total of
squares.

A cell's spread comes from the released total of squares of the clamped,
centred y (``sum (y - c)^2``), released like the total: exact integers on
a public grid with discrete Laplace noise (DP) or a magnitude p-table
(CKM). Everything below is post-processing of the three released values
and the mechanisms' public parameters.

**How the intervals hold the noise.** plotnine's intervals describe the
sampling only. Here each one also holds the noise of the released mean
``c + S / N``:

* ``mean_cl_normal`` (DP): the sampling half-width ``t * se`` and the
  noise half-width of the mean at the same level (from the exact
  quantiles of the two noises, through the first-order error of a ratio)
  are added in quadrature, ``sqrt(h_sample^2 + h_noise^2)``;
* ``mean_se`` and ``mean_sdl`` (DP): the standard deviation of the mean's
  noise is added in quadrature to plotnine's ``se`` (or ``sd``) before it
  is multiplied by ``mult``;
* CKM: the noise is bounded (the count moves by at most the count table's
  D, the totals by their magnitude bounds), so the interval is the range
  of the mean over that box widened by plotnine's sampling half-width: it
  holds whenever the sampling interval does.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from typing import Any

import numpy as np
from plotnine.stats import stat_summary as _pn_stat_summary

from ..._compat import mean_se_uses_sample_variance
from ...mechanisms.release.magnitudes import SumTable, laplace_halfwidth
from ...mechanisms.samplers.laplace import dlap_variance
from ...validation import fail
from .totals import exact_totals, ratio_interval, record_rows

__all__ = [
    "FUN_ARGS",
    "SHARE_KEYS",
    "check_fun_data",
    "sampling_halfwidth",
    "square_table",
]

#: the released fun_data and their plotnine arguments (with defaults)
FUN_ARGS: dict[str, dict[str, float]] = {
    "mean_se": {"mult": 1.0},
    "mean_cl_normal": {"confidence_interval": 0.95},
    "mean_sdl": {"mult": 2.0},
}
#: refused fun_data, with the private alternative
_REFUSED = {
    "mean_cl_boot": "fun_data='mean_cl_normal' (a resampled interval "
    "would read the records)",
}
#: the shares of eps with fun_data
SHARE_KEYS = ("sum", "sumsq", "count")
#: the largest grid value of one square (keeps square totals exact)
_SQUARE_BITS = 31


def _fun_name(fun: Any) -> Any:
    """plotnine's function objects by their names."""
    module = sys.modules[_pn_stat_summary.__module__]
    for name in (*FUN_ARGS, *_REFUSED):
        if fun is getattr(module, name, None):
            return name
    return fun


def check_fun_data(
    name: str, fun_data: Any, fun_args: Any
) -> tuple[str, dict[str, float]]:
    """The canonical name of ``fun_data`` and its arguments (plotnine's
    defaults filled in); errors name the parameter and the fix.

    >>> check_fun_data("s", "mean_sdl", {"mult": 1})
    ('mean_sdl', {'mult': 1.0})
    """
    fun = _fun_name(fun_data)
    if isinstance(fun, str) and fun in _REFUSED:
        raise fail(
            name,
            f"fun_data={fun!r} is not released privately; use "
            f"{_REFUSED[fun]}.",
        )
    if not isinstance(fun, str) or fun not in FUN_ARGS:
        raise fail(
            name,
            f"fun_data={fun_data!r} is not released privately: use one of "
            f"{sorted(FUN_ARGS)} (a private mean with an interval that "
            "holds the sampling and the noise), 'median_hilow', or "
            "fun='mean'.",
        )
    args = dict(FUN_ARGS[fun])
    if fun_args is None:
        return fun, args
    if not isinstance(fun_args, Mapping):
        raise fail(
            name,
            f"fun_args must be a dict, got {fun_args!r}; e.g. "
            f"fun_args={FUN_ARGS[fun]!r}.",
        )
    for key, value in fun_args.items():
        if key not in args:
            raise fail(
                name,
                f"fun_args key {key!r} is not an argument of fun_data="
                f"{fun!r}; it takes {sorted(args)}.",
            )
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = ok and math.isfinite(value)
        if key == "confidence_interval":
            ok = ok and 0 < value < 1
        else:
            ok = ok and value >= 0
        if not ok:
            valid = (
                "a number in (0, 1)"
                if key == "confidence_interval"
                else "a number >= 0"
            )
            raise fail(
                name, f"fun_args[{key!r}] must be {valid}, got {value!r}."
            )
        args[key] = float(value)
    return fun, args


def square_divisor(bound: int) -> int:
    """Public divisor ``m`` of the squared grid values: ``round(k^2 / m)``
    stays below ``2**31``, as a record's grid value does (``m = 1``, exact
    squares, for every grid of fewer than 92,000 steps, the default
    grids included).

    >>> square_divisor(5_000), square_divisor(1_000_000)
    (1, 466)
    """
    return max(1, math.ceil(bound * bound / 2**_SQUARE_BITS))


def square_table(
    stat, sums: SumTable, dims: list, idx: np.ndarray, y: np.ndarray
) -> tuple[SumTable, int, float]:
    """The cells' exact totals of squared centred grid values.

    Each record's ``k = round((clamp(y) - c) / r)`` with ``c`` the
    middle of the bounds is squared and divided by the public
    :func:`square_divisor` (rounded), so that totals stay exact int64.
    Returns the table (with each cell's largest square and the count
    table's key sums, for CKM), the largest square of one record (grid
    units) and the value of one grid unit (``m r^2``).
    """
    lo, hi = stat.params["bounds"]
    r = stat.params["resolution"]
    mid = (lo + hi) / 2
    bound = int(math.floor((hi - lo) / (2 * r) + 0.5))
    k = np.floor((np.clip(y, lo, hi) - mid) / r + 0.5)
    k = np.clip(k, -bound, bound).astype(np.int64)
    m = square_divisor(bound)
    q = (k * k + m // 2) // m
    q_max = (bound * bound + m // 2) // m
    table = SumTable(
        words=sums.words,
        n=sums.n,
        public=sums.public,
        multiplicity=sums.multiplicity,
        total=exact_totals(dims, idx, q, 0),
        key_sum=sums.key_sum,
    )
    if sums.top is not None:  # CKM's magnifier: the largest square
        rows = record_rows(dims, idx, sums.public)
        ok = rows >= 0
        top = np.zeros(len(sums.n), dtype=np.int64)
        np.maximum.at(top, rows[ok], q[ok])
        table.top = top
    return table, int(q_max), float(m) * r * r


def noise_variance(scale: float, noise: str) -> float:
    """Variance of the integer noise of ``scale`` (grid units): discrete
    Laplace ``2p/(1-p)^2``; continuous Laplace rounded about ``2 b^2 +
    1/12``."""
    if noise == "discrete_laplace":
        return dlap_variance(scale)
    return 2 * scale * scale + 1 / 12


def _moments(stat, n, s, q):
    """Centred mean ``s / n`` and the variances with ``ddof`` 0 and 1,
    kept within what clamped values allow (``((hi - lo) / 2)^2``); a cell
    of fewer than 2 released records gets that largest variance."""
    lo, hi = stat.params["bounds"]
    most = ((hi - lo) / 2) ** 2
    n_eff = np.maximum(np.asarray(n, dtype=float), 1.0)
    m = s / n_eff
    var0 = np.clip(q / n_eff - m * m, 0.0, most)
    with np.errstate(divide="ignore", invalid="ignore"):
        var1 = np.where(n_eff >= 2, var0 * n_eff / (n_eff - 1), most)
    return n_eff, m, var0, np.minimum(var1, most)


def _se_variance(var0, var1):
    """The variance ``mean_se`` divides by n: the installed plotnine's
    (population in 0.15, sample in 0.16)."""
    return var1 if mean_se_uses_sample_variance() else var0


def sampling_halfwidth(fun: str, args: dict, n_eff, var0, var1):
    """plotnine's half-width of ``fun``: the sampling alone (``var0``,
    ``var1``: the variances with ``ddof`` 0 and 1)."""
    if fun == "mean_se":
        return args["mult"] * np.sqrt(_se_variance(var0, var1) / n_eff)
    if fun == "mean_sdl":
        return args["mult"] * np.sqrt(var1)
    # scipy.stats is imported here: at the top it costs about a second of
    # every `import plotnine_private`
    from scipy import stats as sps

    level = (1 + args["confidence_interval"]) / 2
    t = sps.t.ppf(level, np.maximum(n_eff - 1, 1))
    return t * np.sqrt(var1 / n_eff)


def dp_interval(
    stat, n, s, q, sum_mech, cnt_mech
) -> tuple[np.ndarray, np.ndarray]:
    """``ymin``, ``ymax`` of ``fun_data`` from the DP releases (see the
    module docstring): ``n`` noisy counts, ``s`` and ``q`` noisy centred
    totals and totals of squares (value units)."""
    fun, args = stat.params["fun_data"], stat.params["fun_args"]
    noise = stat.params["noise"]
    n_eff, m, var0, var1 = _moments(stat, n, s, q)
    unit = float(sum_mech.unit)
    if fun == "mean_cl_normal":
        alpha = 1 - args["confidence_interval"]
        h_s = laplace_halfwidth(sum_mech.scale_units, noise, alpha) * unit
        h_n = laplace_halfwidth(cnt_mech.scale, noise, alpha)
        h_noise = np.sqrt(h_s**2 + (m * h_n) ** 2) / n_eff
        h_sample = sampling_halfwidth(fun, args, n_eff, var0, var1)
        half = np.sqrt(h_sample**2 + h_noise**2)
    else:
        var_s = noise_variance(sum_mech.scale_units, noise) * unit**2
        var_n = noise_variance(cnt_mech.scale, noise)
        v_noise = (var_s + m * m * var_n) / n_eff**2
        per_record = (
            _se_variance(var0, var1) / n_eff if fun == "mean_se" else var1
        )
        half = args["mult"] * np.sqrt(per_record + v_noise)
    y = stat.center() + m
    return y - half, y + half


def ckm_interval(
    stat, n, t, q, t_bound, q_bound
) -> tuple[np.ndarray, np.ndarray]:
    """``ymin``, ``ymax`` of ``fun_data`` from the CKM releases: ``n``
    perturbed counts, ``t`` totals of y, ``q`` centred totals of squares,
    with the largest noise of each total (``t_bound``, ``q_bound``). The
    range of the mean over the noise box, widened by the sampling
    half-width at the largest variance the noise box allows (the total
    of squares at its upper end)."""
    fun, args = stat.params["fun_data"], stat.params["fun_args"]
    lo, hi = stat.params["bounds"]
    c = (lo + hi) / 2
    d = float(stat.params["ptable"].max_noise)
    n = np.asarray(n, dtype=float)
    _, _, var0, var1 = _moments(stat, n, t - c * n, q + q_bound)
    r_lo, r_hi = ratio_interval(t - t_bound, t + t_bound, n - d, n + d)
    h = sampling_halfwidth(fun, args, np.maximum(n, 1.0), var0, var1)
    return r_lo - h, r_hi + h
