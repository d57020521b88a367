"""Planning before spending: the accuracy a stat reaches at an eps, and
the smallest eps that reaches a target accuracy, from public parameters.

Nothing here reads data or spends budget. What "accuracy" means per
family (the ``+-`` that holds with probability ``level``):

* **counts** (``count_dp``, ``bin_dp``, ``bin2d_dp``, ``bin_hex_dp``,
  ``sum_dp``): the noise of one cell's count, exact from the discrete
  (or rounded) Laplace (:func:`~plotnine_private.noise.dlap_interval`);
* **fine-histogram curves** (``density_dp``, ``ecdf_dp``): the largest
  error over the whole curve; **box plots** (``boxplot_dp``): the largest
  error of the three quartiles (y units). Simulated through the stat's
  own post-processing (:func:`~plotnine_private.stats.intervals.
  replicate_curves`, ``sims`` replicates, fixed ``seed``) on ``n``
  records spread like ``reference`` (default: a normal centred in the
  limits with sd a sixth of their width);
* **summaries** (``summary_dp``): a total exactly; a mean of a cell of
  ``n`` records (true mean ``mean``, default the centre of the bounds) by
  simulating both noises through the released ratio;
* **PCA** (``dp_pca_score``): the probability of one score tile, exact
  from the noise of the histogram's share of eps (Laplace on shown
  tiles for ``method="sparse"``, Gaussian for ``"add"``) over ``n``
  records (the axes and frame, also private, are not covered).
"""

from __future__ import annotations

import math
import warnings
from statistics import NormalDist
from typing import Any

import numpy as np

from .declarations import Registered, registered
from .exceptions import PlotninePrivateError, PrivacyWarning
from .mechanisms.errors import ParameterError
from .mechanisms.release.count_mechanisms import check_bound
from .mechanisms.samplers.laplace import ADJACENCY_SENSITIVITY
from .noise_bounds import (
    _check_level,
    dgauss_interval,
    dlap_interval,
    rounded_laplace_interval,
)
from .stats.intervals import SIM_SEED, NoiseModel, uniforms
from .synopsis import Synopsis, SynopsisPlan, synopsis_accuracy
from .validation import renamed

__all__ = ["PLAN_SIMS", "accuracy", "eps_for", "planned_stats"]

#: simulation size of planning (the simulated families)
PLAN_SIMS = 2000


def planned_stats() -> dict[str, Registered]:
    """The stats :func:`accuracy` plans, by name: every DP stat whose
    declaration has a ``plan`` (aliases too)."""
    return {
        e.name: e
        for e in registered()
        if e.mechanism == "dp" and e.declaration.plan is not None
    }


def _fail(message: str) -> PlotninePrivateError:
    return PlotninePrivateError(f"accuracy(): {message}")


def _planned(stat: Any) -> Registered:
    name = stat if isinstance(stat, str) else getattr(stat, "__name__", "")
    name = name[5:] if name.startswith("stat_") else name
    known = planned_stats()
    if name not in known:
        raise _fail(
            f"stat must be one of {tuple(known)} "
            f"(a name or the stat class), got {stat!r}."
        )
    return known[name]


def _need(name: str, value: Any, what: str) -> Any:
    if value is None:
        raise _fail(f"{name} is required for this stat: {what}.")
    return value


def accuracy(
    stat: Any,
    eps: Any,
    level: float = 0.95,
    *,
    n: int | None = None,
    adjacency: str = "replace",
    noise: str = "discrete_laplace",
    reference: Any = None,
    mean: float | None = None,
    sims: int = PLAN_SIMS,
    seed: int = SIM_SEED,
    max_records: int = 1,
    **params: Any,
) -> float:
    """The ``+-`` a stat's output has with probability ``level`` at
    ``eps`` (see the module docstring for what it bounds per family).

    A synopsis or its plan is planned too: ``accuracy(syn, marginal)``
    (a :class:`~plotnine_private.synopsis.Synopsis` or
    :class:`~plotnine_private.synopsis.SynopsisPlan`, and a held marginal
    or None for all) returns a frame with a row per marginal: its share
    of eps, noise scale, and a noisy cell's ``se`` and ``halfwidth`` at
    ``level`` (:func:`~plotnine_private.synopsis.synopsis_accuracy`).

    Parameters
    ----------
    stat
        A DP stat, by name (``"count_dp"``, ``"boxplot_dp"``...) or class
        (or a synopsis or plan, see above).
    eps
        The layer's eps (a synopsis' marginal, see above).
    level
        Probability of the ``+-``.
    n
        Records (per group or box; per cell of a summary; in total for a
        PCA). Not needed by counts and sums of a summary.
    adjacency, noise
        As in the stat.
    reference
        Values whose shape the fine-histogram stats assume (any sample,
        e.g. public or synthetic data); rescaled to ``n`` records.
    mean
        True mean of a summary cell (default: the centre of ``bounds``).
    sims, seed
        Simulation size and its seed (simulated families only).
    max_records
        Records one privacy unit keeps (``k`` of ``pp.source(data,
        unit=..., max_records=k)``): every sensitivity, and so the noise,
        is ``k`` times that of one row.
    **params
        The stat's own parameters: ``limits``, ``bins``, ``bw``,
        ``kernel`` ...; ``bounds``, ``fun``, ``sum_share`` (summary);
        ``delta``, ``shares``, ``calibration`` (PCA).

    Returns
    -------
    float
        The half-width: records (counts), density or share units (curves),
        y units (box plots, summaries), probability (PCA tiles).

    Examples
    --------
    >>> accuracy("count_dp", eps=1)
    6.0
    >>> accuracy("count_dp", eps=1, adjacency="add_remove")
    3.0
    >>> accuracy("count_dp", eps=1, max_records=5)
    30.0
    """
    if isinstance(stat, (Synopsis, SynopsisPlan)):
        return synopsis_accuracy(stat, eps, level)  # type: ignore[return-value]
    entry = _planned(stat)
    plan = entry.declaration.plan
    level = _check_level(level)
    if not isinstance(eps, (int, float)) or not eps > 0:
        raise _fail(f"eps must be a number > 0, got {eps!r}.")
    if adjacency not in ADJACENCY_SENSITIVITY:
        raise _fail(
            f"adjacency must be 'replace' or 'add_remove', got {adjacency!r}."
        )
    try:
        check_bound(max_records, None)
    except ParameterError as err:
        raise _fail(f"{err} (the k of pp.source(max_records=k))") from None
    k = int(max_records)
    sens = ADJACENCY_SENSITIVITY[adjacency] * k
    if plan == "count":
        fn = dlap_interval if noise != "laplace" else rounded_laplace_interval
        return float(fn(sens / eps, level)[0])
    if plan == "pca":
        return _pca_accuracy(eps, level, n, adjacency, k, **params)
    if plan == "summary":
        return _summary_accuracy(
            eps, level, n, adjacency, noise, mean, sims, seed, k, **params
        )
    return _curve_accuracy(
        entry,
        eps,
        level,
        n,
        adjacency,
        noise,
        reference,
        sims,
        seed,
        params,
        k,
    )


def eps_for(
    stat: Any,
    error: float,
    level: float = 0.95,
    *,
    eps_max: float = 1e4,
    **kwargs: Any,
) -> float:
    """The smallest eps (to 0.1%, by bisection) at which :func:`accuracy`
    is at most ``error``; the same keyword arguments.

    >>> round(eps_for("count_dp", error=6), 3)
    0.914
    """
    if isinstance(stat, (Synopsis, SynopsisPlan)):
        raise PlotninePrivateError(
            "eps_for(): a synopsis is planned with pp.plan_synopsis(dims, "
            "workload, target=...), which returns the smallest eps and its "
            "shares."
        )
    if not isinstance(error, (int, float)) or not error > 0:
        raise _fail(f"error must be a number > 0, got {error!r}.")

    def reached(eps: float) -> bool:
        return accuracy(stat, eps, level, **kwargs) <= error

    if not reached(eps_max):
        raise _fail(
            f"error={error!r} is not reached even at eps={eps_max:g}: "
            "more records (n), coarser bins or a wider target are needed."
        )
    # bracket by doubling from eps = 1, then bisect in log(eps)
    hi = min(1.0, eps_max)
    lo = hi / 2
    if reached(hi):
        while reached(lo) and lo > 1e-9:
            hi, lo = lo, lo / 2
    else:
        while not reached(hi):
            lo, hi = hi, min(2 * hi, eps_max)
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        if reached(mid):
            hi = mid
        else:
            lo = mid
    return float(hi)


# --------------------------------------------------------------------------
# the families
# --------------------------------------------------------------------------
def _pca_accuracy(
    eps,
    level,
    n,
    adjacency,
    records=1,
    delta=None,
    shares=None,
    method="sparse",
    calibration="analytic",
    split=None,
) -> float:
    from .mechanisms.pca.histogram import histogram_sigma
    from .pca.fit import Budget
    from .pca.validation import check_shares

    n = _need("n", n, "the number of records of the PCA (public)")
    delta = _need("delta", delta, "the PCA's delta, as in the stat")
    given = renamed("accuracy", "split", "shares", split, shares)
    checked = check_shares("accuracy", given, ("loading", "score"))
    eps_h, delta_h = Budget.split(eps, delta, checked).histogram
    if method == "sparse":
        # discrete Laplace of scale 2 / eps on each shown tile's count
        k, _ = dlap_interval(2 * records / eps_h, level)
        return float(k / n)
    # a unit's records move up to `records` counts in and out of tiles
    l2 = (math.sqrt(2) if adjacency == "replace" else 1.0) * records
    # the discrete Gaussian the histogram samples (exact interval)
    k, _ = dgauss_interval(
        histogram_sigma(eps_h, delta_h, l2, calibration), level
    )
    return float(k / n)


def _summary_accuracy(
    eps,
    level,
    n,
    adjacency,
    noise,
    mean,
    sims,
    seed,
    records=1,
    bounds=None,
    fun="mean",
    sum_share=None,
    resolution=None,
    levels=("a",),
) -> float:
    from .mechanisms.release.magnitudes import LaplaceSums
    from .stats.summary.stat import stat_summary_dp

    _need("bounds", bounds, "the public (lo, hi) of y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        stat = stat_summary_dp(
            bounds=bounds,
            fun=fun,
            eps=eps,
            sum_share=sum_share,
            resolution=resolution,
            adjacency=adjacency,
            noise=noise,
            levels=list(levels),
        )
    p = stat.params
    share = p["sum_share"]
    bound = max(abs(v) for v in stat.grid_limits())
    sums = LaplaceSums(
        eps * share, bound, p["resolution"], adjacency, noise, records
    )
    if fun == "sum":
        return float(sums.halfwidth(1 - level))
    n = _need("n", n, "the number of records of a summary cell")
    lo, hi = p["bounds"]
    c = stat.center()
    mu = (lo + hi) / 2 if mean is None else float(mean)
    sens = ADJACENCY_SENSITIVITY[adjacency] * records
    count_scale = sens / (eps - eps * share)
    u = uniforms((4, sims), seed)
    s_noise = NoiseModel(noise, sums.scale_units).draw(u[0][0], u[1][0])
    c_noise = NoiseModel(noise, count_scale).draw(u[0][1], u[1][1])
    total = (mu - c) * n + s_noise * float(sums.unit)
    est = np.clip(c + total / np.maximum(n + c_noise, 1.0), lo, hi)
    return float(np.quantile(np.abs(est - mu), level))


def _fine_stat(name: str, eps, adjacency, noise, params):
    cls: Any = planned_stats()[name].cls
    _need("limits", params.get("limits"), "the public (lo, hi) range")
    with warnings.catch_warnings():
        # planning spends nothing: the eps > 10 advice is for layers
        warnings.simplefilter("ignore", PrivacyWarning)
        return cls(eps=eps, adjacency=adjacency, noise=noise, **params)


def true_histogram(stat, n: int, reference: Any = None):
    """The fine histogram of ``n`` records spread like ``reference``
    (default a normal centred in the limits, sd a sixth of their width),
    as a :class:`~plotnine_private.stats.fine_histogram.FineHistogram` of one
    group without noise."""
    import pandas as pd

    from .stats.fine_histogram import FineHistogram

    lo, hi = stat.params["limits"]
    edges = np.linspace(lo, hi, stat.params["bins"] + 1)
    probs = (np.arange(n) + 0.5) / n
    if reference is None:
        dist = NormalDist((lo + hi) / 2, (hi - lo) / 6)
        points = np.array([dist.inv_cdf(q) for q in probs])
    else:
        ref = np.asarray(reference, dtype=float)
        points = np.quantile(ref[np.isfinite(ref)], probs)
    points = np.clip(points, lo, hi)
    counts = np.histogram(points, edges)[0].astype(float)[None, :]
    info = pd.DataFrame({"_group": [0], "_sim": [0]})
    return FineHistogram(edges, counts, counts.copy(), info)


def curve_errors(stat, hist, eps, adjacency, noise, sims, seed, records=1):
    """Per replicate, the largest error of the stat's output (its
    declared ``judged_by`` variables) against the noise-free output of
    ``hist`` (``records``: what one privacy unit keeps)."""
    from .stats.intervals import replicate_curves

    sens = ADJACENCY_SENSITIVITY[adjacency] * records
    model = NoiseModel(noise, sens / eps)
    truth = stat.curve(hist)
    reps = replicate_curves(stat, hist, model, sims, seed)
    worst = np.zeros(sims)
    for col in stat.DECLARATION.judged_by:
        t = truth[col].to_numpy(dtype=float)
        r = reps[col].to_numpy(dtype=float).reshape(sims, -1)
        ok = np.isfinite(t)
        err = np.abs(r[:, ok] - t[ok])
        worst = np.maximum(worst, err.max(axis=1))
    return worst


def _curve_accuracy(
    entry,
    eps,
    level,
    n,
    adjacency,
    noise,
    reference,
    sims,
    seed,
    params,
    records=1,
) -> float:
    n = _need("n", n, "the number of records per group (or box)")
    stat = _fine_stat(entry.name, eps, adjacency, noise, params)
    hist = true_histogram(stat, int(n), reference)
    worst = curve_errors(
        stat, hist, eps, adjacency, noise, sims, seed, records
    )
    return float(np.quantile(worst, level))
