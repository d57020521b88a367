"""Consistent, non-negative marginals from independently noised ones.

Post-processing only: it reads released noisy tables (1-way and 2-way
marginals, every cell of one table with the same noise variance, which
may differ between tables) and returns tables
that agree on every shared sub-marginal and hold no negative count.
What is done, in order (a hand-written estimator: exact closed forms
for 1- and 2-way tables, no solver dependency):

1. The grand total: the inverse-variance weighted mean of every table's
   total (a table of ``c`` cells of variance ``v`` has total variance
   ``c * v``), then clipped at 0.
2. Each attribute's 1-way marginal: the inverse-variance weighted mean
   of its estimates from every table holding it (a 2-way table's sums
   over the other attribute of ``b`` levels have variance ``b * v``),
   then the least-squares projection onto ``{y >= 0, sum(y) = total}``
   (:func:`simplex_projection`).
3. Each table is moved onto those targets: a 1-way table becomes its
   attribute's target; a 2-way table gets the least-squares additive
   adjustment ``x + (r - x.)/J + (c - .x)/I - (N - x..)/(I J)``, whose
   row and column sums are the targets exactly.
4. Non-negativity of a 2-way table: if the adjustment left a negative
   cell, negative cells are set to 0 and the table is raked (iterative
   proportional fitting) to the targets; a row or column with no
   positive cell left is refilled evenly first. Raking keeps zeros and
   converges to the targets; the largest disagreement left is returned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["linear_consistent", "make_consistent", "simplex_projection"]

#: raking stops when every margin is within this of its target
TOLERANCE = 1e-12
MAX_SWEEPS = 5000


def simplex_projection(y: np.ndarray, total: float) -> np.ndarray:
    """The closest ``z >= 0`` with ``sum(z) == total`` to ``y`` (least
    squares; Held, Wolfe & Crowder 1974).

    >>> simplex_projection(np.array([3.0, -1.0, 2.0]), 4.0).tolist()
    [2.5, 0.0, 1.5]
    """
    y = np.asarray(y, dtype=float)
    if total <= 0 or not len(y):
        return np.zeros_like(y)
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, len(y) + 1)
    rho = np.nonzero(u - css / k > 0)[0][-1]
    theta = css[rho] / (rho + 1)
    return np.maximum(y - theta, 0.0)


def _rake(
    x: np.ndarray, rows: np.ndarray, cols: np.ndarray
) -> tuple[np.ndarray, float]:
    # a floor on the clipped cells keeps every cell positive: raking a
    # positive table to margins of one total always converges
    floor = 1e-6 * max(1.0, float(rows.sum())) / x.size
    x = np.where(x > 0, x, floor)
    gap = np.inf
    for _ in range(MAX_SWEEPS):
        r = x.sum(axis=1)
        x *= np.divide(rows, r, out=np.zeros_like(r), where=r > 0)[:, None]
        c = x.sum(axis=0)
        x *= np.divide(cols, c, out=np.zeros_like(c), where=c > 0)[None, :]
        gap = float(np.abs(x.sum(axis=1) - rows).max(initial=0.0))
        if gap <= TOLERANCE * max(1.0, float(rows.sum())):
            break
    return x, gap


def make_consistent(
    tables: Sequence[np.ndarray],
    attrs: Sequence[tuple[str, ...]],
    variances: Sequence[float] | None = None,
) -> tuple[list[np.ndarray], float]:
    """Consistent non-negative versions of noisy ``tables`` (each an
    array with one axis per attribute in ``attrs``; ``variances``: each
    table's noise variance per cell, default equal), and the largest
    disagreement left between a table's 1-way margin and its shared
    target (0 unless raking stopped early).

    >>> t, gap = make_consistent(
    ...     [np.array([10.0, 4.0]), np.array([[6.0, 3.0], [3.0, 2.0]])],
    ...     [("a",), ("a", "b")])
    >>> np.round(t[0], 4).tolist(), np.round(t[1].sum(axis=1), 4).tolist()
    ([9.6667, 4.3333], [9.6667, 4.3333])
    """
    tables = [np.asarray(t, dtype=float) for t in tables]
    var = _checked(variances, len(tables))
    total, means = _shared_margins(tables, attrs, var)
    # 1. the grand total, at least 0
    total = max(total, 0.0)
    # 2. each attribute's 1-way marginal, projected
    target = {a: simplex_projection(m, total) for a, m in means.items()}
    # 3. and 4. every table onto its targets
    out, gap = [], 0.0
    for t, at in zip(tables, attrs):
        if len(at) == 1:
            out.append(target[at[0]].copy())
            continue
        x = _adjusted(t, target[at[0]], target[at[1]], total)
        if (x < 0).any():
            x, g = _rake(x, target[at[0]], target[at[1]])
            gap = max(gap, g)
        out.append(x)
    return out, gap


def linear_consistent(
    tables: Sequence[np.ndarray],
    attrs: Sequence[tuple[str, ...]],
    variances: Sequence[float] | None = None,
) -> list[np.ndarray]:
    """The linear part ``L`` of :func:`make_consistent`: the same
    averages and additive adjustments with no clipping (the total not
    clipped at 0, each 1-way target moved to the shared total by a shift
    instead of the non-negative projection, no raking), so that cells
    may be negative.

    ``L`` is affine and leaves consistent tables as they are, so for
    true tables ``T`` and noise ``Z``: ``L(T + Z) = T + L(Z)``. The
    error of ``L`` of the released noisy tables does not depend on the
    data; its distribution is simulated from the public scales alone
    (:func:`~.draw.simulated_errors`, where nothing is clipped, is
    ``L(Z)``). Post-processing of released tables.

    >>> t = linear_consistent(
    ...     [np.array([1.0, -3.0]), np.array([[1.0, -1.0], [-2.0, 0.0]])],
    ...     [("a",), ("a", "b")])
    >>> np.round(t[0], 4).tolist(), np.round(t[1].sum(axis=1), 4).tolist()
    ([0.6667, -2.6667], [0.6667, -2.6667])
    """
    tables = [np.asarray(t, dtype=float) for t in tables]
    var = _checked(variances, len(tables))
    total, means = _shared_margins(tables, attrs, var)
    target = {a: m - (m.sum() - total) / len(m) for a, m in means.items()}
    return [
        target[at[0]].copy()
        if len(at) == 1
        else _adjusted(t, target[at[0]], target[at[1]], total)
        for t, at in zip(tables, attrs)
    ]


def _checked(variances: Sequence[float] | None, n: int) -> list[float]:
    var = [1.0] * n if variances is None else list(variances)
    if len(var) != n or not all(math.isfinite(v) and v > 0 for v in var):
        raise ValueError(
            f"variances must be one number > 0 per table, got {variances!r}"
        )
    return var


def _shared_margins(
    tables: list[np.ndarray],
    attrs: Sequence[tuple[str, ...]],
    var: list[float],
) -> tuple[float, dict[str, np.ndarray]]:
    """The inverse-variance weighted mean of the tables' totals (a table
    of ``c`` cells of variance ``v`` has total variance ``c * v``) and of
    each attribute's 1-way sums (a 2-way table's sums over the other
    attribute of ``b`` levels have variance ``b * v``)."""
    w = np.array([1.0 / (t.size * v) for t, v in zip(tables, var)])
    totals = np.array([t.sum() for t in tables])
    total = float((w * totals).sum() / w.sum())
    names = sorted({a for at in attrs for a in at})
    means: dict[str, np.ndarray] = {}
    for a in names:
        num, den = 0.0, 0.0
        for t, at, v in zip(tables, attrs, var):
            if a not in at:
                continue
            axis = at.index(a)
            est = t.sum(axis=tuple(k for k in range(t.ndim) if k != axis))
            weight = 1.0 / (t.size / t.shape[axis] * v)
            num = num + weight * est
            den += weight
        means[a] = np.asarray(num) / den
    return total, means


def _adjusted(
    t: np.ndarray, r: np.ndarray, c: np.ndarray, total: float
) -> np.ndarray:
    """The least-squares additive adjustment of a 2-way table to row sums
    ``r`` and column sums ``c`` of one ``total``."""
    n_i, n_j = t.shape
    return (
        t
        + ((r - t.sum(axis=1)) / n_j)[:, None]
        + ((c - t.sum(axis=0)) / n_i)[None, :]
        - (total - t.sum()) / (n_i * n_j)
    )
