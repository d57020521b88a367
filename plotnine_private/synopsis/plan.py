"""Planning a synopsis: how to split eps across a workload's marginals,
and the accuracy of each marginal, from public parameters only.

No data is read and nothing is charged. The objective is the workload's
total expected squared error of the released noisy cells: marginal ``i``
has ``c_i`` cells, share ``w_i`` of ``eps`` and discrete Laplace noise
of scale ``b_i = Δ / (w_i eps)`` on every cell, of variance
``V(b) = 2 p / (1 - p)^2`` with ``p = exp(-1/b)``, so

    E = sum_i c_i V(Δ / (w_i eps)),  minimised over w_i > 0, sum w_i = 1.

For continuous Laplace ``V(b) = 2 b^2`` and ``E = 2 (Δ/eps)^2 sum_i c_i
/ w_i^2``; the Lagrange condition ``2 c_i / w_i^3 = λ`` gives ``w_i``
proportional to ``c_i^(1/3)``. The discrete Laplace's variance is
``2 b^2 - 1/6 + O(1/b^2)`` when ``b`` is large, so the same shares are
near-optimal there; they are computed exactly for the package's
mechanism by solving the Lagrange condition ``-c_i dV/dw_i = λ`` (one
bisection per marginal, inside a bisection on ``λ``; ``E`` is convex in
each ``w_i``). The consistency step (:mod:`.consistency`) only lowers the
error of the tables it averages; the plan bounds the raw noisy cells.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import PlotninePrivateError
from ..mechanisms.release.count_mechanisms import check_bound
from ..mechanisms.samplers.laplace import ADJACENCY_SENSITIVITY, dlap_variance
from ..noise_bounds import dlap_interval
from .release import _dim, _workload
from .result import Dim, Synopsis

__all__ = [
    "SynopsisPlan",
    "optimal_shares",
    "plan_synopsis",
    "synopsis_accuracy",
]

NAME = "plan_synopsis"


def _dvar_dw(c: float, w: float, k: float) -> float:
    """``-c dV(k / w)/dw`` (``k = Δ / eps``): the marginal gain of share."""
    b = k / w
    p = math.exp(-1.0 / b)
    if p == 0.0:
        return 0.0
    # dV/db = 2 (1 + p) p / ((1 - p)^3 b^2); db/dw = -b / w
    return c * 2 * (1 + p) * p / ((1 - p) ** 3 * b * w)


def _share_at(c: float, lam: float, k: float) -> float:
    """The ``w`` at which ``-c dV/dw = lam`` (decreasing in ``w``)."""
    lo, hi = 1e-12, 1.0
    if _dvar_dw(c, hi, k) >= lam:
        return hi
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if _dvar_dw(c, mid, k) > lam:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-13:
            break
    return math.sqrt(lo * hi)


def optimal_shares(
    cells: Sequence[int], eps: float, sensitivity: float = 2.0
) -> list[float]:
    """Shares of ``eps`` minimising ``sum_i cells_i * V(sensitivity /
    (w_i eps))`` (discrete Laplace variance ``V``) under ``sum w_i = 1``.

    Near ``cells_i ** (1/3)`` normalised when the noise is large:

    >>> [round(w, 3) for w in optimal_shares([1, 8, 27], eps=0.1)]
    [0.167, 0.333, 0.5]
    """
    c = [float(x) for x in cells]
    k = sensitivity / eps
    if len(c) == 1:
        return [1.0]
    lo, hi = 1e-300, 1e300
    shares: list[float] = []
    for _ in range(400):
        lam = math.sqrt(lo * hi)
        shares = [_share_at(ci, lam, k) for ci in c]
        total = sum(shares)
        if abs(total - 1.0) < 1e-12:
            break
        if total > 1.0:
            lo = lam
        else:
            hi = lam
    total = sum(shares)
    return [w / total for w in shares]


@dataclass(frozen=True)
class SynopsisPlan:
    """Shares of eps across a workload's marginals, chosen before any
    data is read (:func:`plan_synopsis`); pass ``workload=plan.workload,
    weights=plan.weights`` to :func:`~plotnine_private.synopsis`.

    Attributes
    ----------
    dims, workload, eps, adjacency, max_records
        What was planned for.
    shares, scales
        Each marginal's share of eps and its cells' noise scale.
    """

    dims: dict[str, Dim]
    workload: list[tuple[str, ...]]
    eps: float
    adjacency: str
    max_records: int
    shares: dict[tuple[str, ...], float]
    scales: dict[tuple[str, ...], float]

    @property
    def weights(self) -> dict[tuple[str, ...], float]:
        """The shares, as ``pp.synopsis(weights=...)`` takes them."""
        return dict(self.shares)

    @property
    def expected_squared_error(self) -> float:
        """The workload's total expected squared error over every noisy
        cell (the planned objective)."""
        return float(
            sum(
                _cells(self.dims, mg) * dlap_variance(self.scales[mg])
                for mg in self.workload
            )
        )

    def table(self, level: float = 0.95) -> pd.DataFrame:
        """One row per marginal, as :func:`synopsis_accuracy`."""
        return synopsis_accuracy(self, None, level)


def _cells(dims: dict[str, Dim], mg: tuple[str, ...]) -> int:
    return int(np.prod([dims[d].bins for d in mg]))


def plan_synopsis(
    dims: dict[str, Any],
    workload: Sequence[tuple[str, ...]] | None = None,
    *,
    eps: float | None = None,
    target: float | None = None,
    level: float = 0.95,
    adjacency: str = "replace",
    max_records: int = 1,
) -> SynopsisPlan:
    """Plan a synopsis: the shares of eps that minimise the workload's
    total expected squared error, from the declared domains only.

    Parameters
    ----------
    dims, workload
        As in :func:`~plotnine_private.synopsis` (no data is read).
    eps
        The whole budget to split; or give ``target`` instead.
    target
        The ``+-`` (records, at ``level``) every marginal's cells must
        reach: the plan takes the smallest eps (to 0.1%) whose optimal
        shares reach it in the worst marginal.
    level
        Probability of the ``+-`` of ``target`` and of the report.
    adjacency, max_records
        As in :func:`~plotnine_private.synopsis` (``max_records``: the
        records a privacy unit keeps; every scale is that times larger).

    Returns
    -------
    A :class:`SynopsisPlan`; ``plan.table()`` reports per marginal the
    share, eps, noise scale, and each cell's standard error and ``+-``.
    """
    if not isinstance(dims, dict) or not dims:
        raise PlotninePrivateError(
            f"{NAME}(): dims={dims!r} must be a non-empty dict of column -> "
            "levels or (lo, hi, resolution)."
        )
    declared = {str(k): _dim(str(k), v) for k, v in dims.items()}
    marginals = _workload(workload, declared)
    if adjacency not in ADJACENCY_SENSITIVITY:
        raise PlotninePrivateError(
            f"{NAME}(): adjacency={adjacency!r} must be 'replace' or "
            "'add_remove'."
        )
    try:
        check_bound(max_records, None)
    except Exception as err:
        raise PlotninePrivateError(f"{NAME}(): {err}") from None
    if not isinstance(level, float) or not 0 < level < 1:
        raise PlotninePrivateError(
            f"{NAME}(): level={level!r} must be a probability in (0, 1), "
            "e.g. 0.95."
        )
    if (eps is None) == (target is None):
        raise PlotninePrivateError(
            f"{NAME}(): give exactly one of eps=... (the budget to split) "
            f"or target=... (the +- to reach), got eps={eps!r}, "
            f"target={target!r}."
        )
    for name, v in (("eps", eps), ("target", target)):
        if v is not None and (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not math.isfinite(v)
            or not v > 0
        ):
            raise PlotninePrivateError(
                f"{NAME}(): {name}={v!r} must be a finite number > 0."
            )
    sens = ADJACENCY_SENSITIVITY[adjacency] * int(max_records)
    cells = [_cells(declared, mg) for mg in marginals]

    def make(e: float) -> SynopsisPlan:
        w = optimal_shares(cells, e, sens)
        return SynopsisPlan(
            declared,
            marginals,
            float(e),
            adjacency,
            int(max_records),
            dict(zip(marginals, w)),
            {mg: sens / (wi * e) for mg, wi in zip(marginals, w)},
        )

    if eps is not None:
        return make(float(eps))
    assert target is not None

    def reached(e: float) -> bool:
        p = make(e)
        return all(
            dlap_interval(p.scales[mg], level)[0] <= target for mg in marginals
        )

    lo, hi = 1e-6, 1.0
    while not reached(hi):
        lo, hi = hi, hi * 2
        if hi > 1e6:
            raise PlotninePrivateError(
                f"{NAME}(): target={target!r} is not reached even at eps "
                "1e6; give a larger target."
            )
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if reached(mid) else (mid, hi)
    return make(hi)


def synopsis_accuracy(
    syn: Synopsis | SynopsisPlan,
    marginal: Sequence[str] | str | None = None,
    level: float = 0.95,
) -> pd.DataFrame:
    """Per marginal of a plan or a released synopsis (from its public
    noise scales only): its cells, share and eps, the noise scale, and a
    released noisy cell's standard error ``se`` and ``+-`` at ``level``
    (``halfwidth``, exact for discrete Laplace). ``marginal``: one held
    marginal (a name or tuple), or a sub-marginal of one, whose cells are
    sums of ``b`` noisy cells (``se`` times ``sqrt(b)``, ``+-`` by the
    normal approximation; of the held tables holding it, the one whose
    sums are least noisy); None: every marginal held."""
    where = "accuracy()"
    if not isinstance(level, float) or not 0 < level < 1:
        raise PlotninePrivateError(
            f"{where}: level={level!r} must be a probability in (0, 1)."
        )
    if isinstance(syn, Synopsis):
        if syn.eps is None:
            raise PlotninePrivateError(
                f"{where}: this synopsis was perturbed by the Cell Key "
                "Method: it has no eps and no noise scale. Its cells' noise "
                "is its p-table's (pp.plot_ptable(syn.ptable)); the "
                "count_low/count_high of a figure drawn from it give each "
                "cell's interval."
            )
        held, shares, scales = syn.marginals, syn.shares, syn.scales
        eps = syn.eps
        if not scales:
            raise PlotninePrivateError(
                f"{where}: this synopsis holds no noise scales (saved by an "
                "older version); release it again."
            )
    else:
        held, shares, scales, eps = (
            syn.workload,
            syn.shares,
            syn.scales,
            syn.eps,
        )
    rows = []
    if marginal is None:
        wanted = [(mg, mg) for mg in held]
    else:
        want = (marginal,) if isinstance(marginal, str) else tuple(marginal)
        holders = [
            h
            for h in held
            if set(want) <= set(h) and len(set(want)) == len(want)
        ]
        if not holders:
            raise PlotninePrivateError(
                f"{where}: the marginal {want!r} is neither held nor a "
                f"sub-marginal of one held; held: {held}."
            )
        # the held table whose sums are the least noisy
        holder = min(
            holders,
            key=lambda h: (
                dlap_variance(scales[h])
                * (_cells(syn.dims, h) // _cells(syn.dims, want))
            ),
        )
        wanted = [(want, holder)]
    z = NormalDist().inv_cdf(0.5 + level / 2)
    for want, holder in wanted:
        b = scales[holder]
        summed = _cells(syn.dims, holder) // _cells(syn.dims, want)
        var = dlap_variance(b) * summed
        half = (
            float(dlap_interval(b, level)[0])
            if summed == 1
            else z * math.sqrt(var)
        )
        rows.append(
            {
                "marginal": want,
                "from": holder,
                "cells": _cells(syn.dims, want),
                "share": shares[holder],
                "eps": shares[holder] * eps,
                "scale": b,
                "se": math.sqrt(var),
                "halfwidth": half,
                "level": level,
            }
        )
    return pd.DataFrame(rows)
