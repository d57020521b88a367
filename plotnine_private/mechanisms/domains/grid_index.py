"""Exact positions of values among sorted grid points, without a sort.

A caller guesses each value's position ``j`` by arithmetic (a log for a
geometric grid, a division for an equal-width one); :func:`settle` then
moves every guess until two comparisons on the grid's own floats hold,
so the result is what a binary search gives (``np.searchsorted``), however
the guess was rounded. Only values that moved are looked at again, and
a guess that has not settled after a few rounds is reported, so that the
caller can fall back to the search.

numpy only (mechanisms core).
"""

from __future__ import annotations

import numpy as np

__all__ = ["settle"]


def settle(
    j: np.ndarray,
    values: np.ndarray,
    up_edge: np.ndarray,
    down_edge: np.ndarray,
    *,
    strict: bool,
    rounds: int = 8,
) -> bool:
    """Move the guesses ``j`` (in place) until every value is placed.

    A value moves up while ``up_edge[j] <= value`` (``strict=False``) or
    ``up_edge[j] < value`` (``strict=True``), and down while
    ``down_edge[j] > value`` (resp. ``>=``): the caller pads the edges
    with ``inf`` and ``-inf`` where no move may go. Returns False if some
    value still moved in the last of ``rounds`` rounds (``j`` is then
    not settled).

    >>> edges = np.array([0.0, 1.0, 2.0])
    >>> j = np.array([0, 0, 3])
    >>> up = np.array([0.0, 1.0, 2.0, np.inf])
    >>> down = np.array([-np.inf, 0.0, 1.0, 2.0])
    >>> settle(j, np.array([1.0, 1.5, 0.5]), up, down, strict=False)
    True
    >>> j.tolist() == np.searchsorted(edges, [1.0, 1.5, 0.5], "right").tolist()
    True
    """
    below_up = np.less if strict else np.less_equal
    above_down = np.greater_equal if strict else np.greater
    moving: np.ndarray | None = None
    for _ in range(rounds):
        jj = j if moving is None else j[moving]
        vv = values if moving is None else values[moving]
        up = below_up(up_edge[jj], vv)
        jj += up
        down = above_down(down_edge[jj], vv)
        jj -= down
        moved = up | down
        if moving is None:
            moving = np.flatnonzero(moved)
        else:
            j[moving] = jj
            moving = moving[moved]
        if not moving.size:
            return True
    return False
