"""Intervals of the box plot's Tukey whiskers (``ymin``/``ymax``) from
the released fine counts and their public noise: post-processing.

The whisker ``ymax = max(q3, min(fence, T))`` (``T``: the top edge of the
highest fine bin with mass whose low edge is below the fence ``(1 + coef)
q3 - coef q1``; the stat's own rule on the noise-free histogram) is
bounded from four statements, each of a public probability, adding up to
``1 - level`` (a union bound):

* **the quartiles**, one statement each: the pointwise CDF band holds at
  the true ``q1``, and at the true ``q3`` (fixed points), so each lies
  within its band-inverted bounds (:func:`~.noise_bands.band_quantiles`);
* **the mass between them**: ``F(b) - F(a)`` estimated at the true pair
  ``(q1, q3)`` lies within the central quantiles of its own simulated
  noise around 0.5 (a fixed pair). The fence is then within its range
  over the pairs of the quartiles' bounds that this does not reject
  (:func:`fence_ranges`). The errors of ``q1`` and ``q3`` share the
  noise of the running sums below ``q1`` and of the total, so this cuts
  the corners of the box ``(1 + coef) q3_high - coef q1_low``, which
  adds up both quartiles' widths;
* **the runs of bins**: every run of fine bins at once, the noise of its
  released sum stays below a threshold for its length
  (:func:`sure_mass`: simultaneous over all runs, so it holds whichever
  run the data picks). A run whose released sum exceeds its threshold
  surely holds a record. Under CKM this one is certain (a true 0 is
  always released as 0: a run with a bin released nonzero holds a
  record), and its share goes to the other three.

When the four hold, ``ymax`` is at most the fence's upper bound (or
``q3``'s: a bin holding one record cannot be told from an empty one, so
nothing lower is safe) and at least the top edge of the lowest bin of the
highest run below the fence's lower bound that surely holds a record (or
``q3``'s lower bound). ``ymin`` mirrors it; both hold together under the
same four statements. What rests on simulation is each statement's own
level (public noise, simulated around the released counts where the
statement is a ratio, as for every curve interval); between fine edges
the band and the quantiles of the mass are interpolated linearly, as
the quartiles are.
"""

from __future__ import annotations

import functools

import numpy as np

from .intervals import LINEAR_SIMS, SIM_SEED, NoiseModel, uniforms
from .noise_bands import (
    CHUNK_CELLS,
    band_quantiles,
    cdf_band,
    cdf_deviations,
)
from .simulated_noise import tail_quantiles

__all__ = [
    "FENCE_STEPS",
    "MASS_SHARE",
    "band_level",
    "fence_ranges",
    "run_thresholds",
    "sure_mass",
    "tukey_bounds",
]

#: the share of ``1 - level`` spent on the runs that surely hold mass (the
#: rest goes in three equal parts to ``q1``, ``q3`` and the mass between)
MASS_SHARE = 0.1
#: steps per fine bin at which :func:`fence_ranges` searches the pairs
FENCE_STEPS = 8
#: at most this many points a side in that search, and this many edges a
#: side at which it takes the noise quantiles of the mass (interpolated
#: between): the cost of a box stays bounded when a quartile's bounds span
#: many fine bins
_POINTS = 129
_NODES = 9
#: groups whose runs are held at once
_CHUNK = 256

_PROBS = np.array([0.25, 0.75])

Box = tuple[np.ndarray, np.ndarray]


def band_level(model: NoiseModel, level: float) -> float:
    """The level of the CDF band that :func:`tukey_bounds` at ``level``
    reads (``1 -`` each quartile's share of ``1 - level``).

    >>> round(band_level(NoiseModel("discrete_laplace", 2.0), 0.95), 4)
    0.985
    """
    return 1 - _shares(model, level)[1]


def _shares(model: NoiseModel, level: float) -> tuple[float, float]:
    """The shares of ``1 - level`` of the runs and of each of the three
    other statements."""
    alpha = 1 - level
    # CKM's runs are certain (a true 0 is released as 0): no share
    runs = 0.0 if model.kind == "ckm" else alpha * MASS_SHARE
    return runs, (alpha - runs) / 3


def tukey_bounds(
    edges: np.ndarray,
    noisy: np.ndarray,
    model: NoiseModel,
    level: float,
    coef: float,
    band: tuple[np.ndarray, np.ndarray] | None = None,
    covers: str = "histogram",
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Intervals ``(low, high)`` of the Tukey whiskers ``ymin`` and
    ``ymax`` of each group's fine histogram (``noisy``: the unclipped
    released counts, one row a group): both hold the noise-free whiskers
    with probability at least ``level`` (the module docstring says
    why). ``band``: the CDF band at :func:`band_level` if the caller has
    it (a box plot simulates it with its quartiles' band,
    :func:`~.noise_bands.cdf_bands`); drawn here otherwise.

    ``covers="data"``: both hold Tukey's whiskers of the records
    themselves (the most extreme record within each fence, the fences
    from any quartiles of the records) with the same probability: the
    quartiles' bounds reach out to the fine edges
    (:func:`~.noise_bands.band_quantiles`), the fences take the corners
    of those boxes (the mass statement is about the histogram's
    interpolated quartiles, so it is not used), and a run that surely
    holds a record counts only if it lies wholly within the fence's
    bound, its record anywhere from the low edge of its lowest bin (for
    ``ymax``; ``ymin`` mirrors it)."""
    runs, share = _shares(model, level)
    if band is None:
        band = cdf_band(noisy, model, 1 - share)
    f_low, f_high = band
    (q1l, q3l), (q1h, q3h) = (
        b.T for b in band_quantiles(edges, f_low, f_high, _PROBS, covers)
    )
    data = covers == "data"
    if data:
        top = ((1 + coef) * q3l - coef * q1h, (1 + coef) * q3h - coef * q1l)
        bottom = (
            (1 + coef) * q1l - coef * q3h,
            (1 + coef) * q1h - coef * q3l,
        )
    else:
        top, bottom = fence_ranges(
            edges, noisy, model, 1 - share, coef, (q1l, q1h), (q3l, q3h)
        )
    # a few hundred groups at a time: the runs are (groups, k + 1, k + 1)
    top_reach, bottom_reach = np.empty((2, len(noisy)))
    for at in range(0, len(noisy), _CHUNK):
        part = slice(at, at + _CHUNK)
        top_reach[part], bottom_reach[part] = _reaches(
            edges,
            sure_mass(noisy[part], model, 1 - runs),
            top[0][part],
            bottom[1][part],
            data,
        )
    ymax = (np.maximum(q3l, top_reach), np.maximum(q3h, top[1]))
    ymin = (np.minimum(q1l, bottom[0]), np.minimum(q1h, bottom_reach))
    return {"ymin": ymin, "ymax": ymax}


def _reaches(
    edges: np.ndarray,
    sure: np.ndarray,
    top_low: np.ndarray,
    bottom_high: np.ndarray,
    data: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """How far each whisker surely reaches: ``ymax`` at least to the top
    edge of the lowest bin of the highest run that surely holds a record
    below the upper fence's lower bound ``top_low`` (``-inf`` if none);
    ``ymin`` mirrors it above ``bottom_high``, the lower fence's upper
    bound (``inf`` if none).

    ``data``: the records' whisker instead of the histogram's; the run
    must end at or below ``top_low`` (its record is then within the
    fence) and its record may be just above the low edge of its lowest
    bin, which is how far ``ymax`` surely reaches (``ymin`` mirrors
    it)."""
    k = len(edges) - 1
    idx = np.arange(k + 1)
    # ymax: bins [0, m) have their low edge below the fence's lower bound;
    # the highest a with a run [a, m'), m' <= m, that holds a record
    upper = edges[None, 1:] <= top_low[:, None]
    m = (upper if data else edges[None, :-1] < top_low[:, None]).sum(axis=1)
    starts = (sure & (idx[None, None, :] <= m[:, None, None])).any(axis=2)
    a = np.where(starts.any(axis=1), k - np.argmax(starts[:, ::-1], 1), -1)
    reach = (
        edges[np.clip(a, 0, k)]
        if data
        else np.minimum(edges[np.clip(a + 1, 0, k)], top_low)
    )
    up = np.where(a >= 0, reach, -np.inf)
    # ymin: bins [s, k) have their high edge above the fence's upper bound;
    # the lowest b with a run [s', b), s' >= s, that holds a record
    lower = edges[None, :-1] < bottom_high[:, None]
    s = (lower if data else edges[None, 1:] <= bottom_high[:, None]).sum(
        axis=1
    )
    stops = (sure & (idx[None, :, None] >= s[:, None, None])).any(axis=1)
    b = np.where(stops.any(axis=1), np.argmax(stops, axis=1), k + 1)
    fall = (
        edges[np.clip(b, 0, k)]
        if data
        else np.maximum(edges[np.clip(b - 1, 0, k)], bottom_high)
    )
    down = np.where(b <= k, fall, np.inf)
    return up, down


def sure_mass(
    noisy: np.ndarray, model: NoiseModel, level: float
) -> np.ndarray:
    """``(groups, k + 1, k + 1)``: ``[g, a, m]`` is True where the run of
    fine bins ``[a, m)`` of group ``g`` surely holds a record.

    Under DP its released sum exceeds :func:`run_thresholds` for its
    length: with probability at least ``level`` no empty run of any group
    is marked, whichever runs are read (the thresholds hold every run at
    once). Under CKM a true 0 is always released as 0, so a run holds a
    record for certain where a bin of it is released nonzero (``level``
    is not used).

    >>> model = NoiseModel("discrete_laplace", 2.0)
    >>> sure = sure_mass(np.array([[0.0, 40.0, 0.0]]), model, 0.99)
    >>> sure[0, 1, 2], sure[0, 0, 1], sure[0, 0, 3]
    (np.True_, np.False_, np.True_)
    """
    rows = np.asarray(noisy, dtype=float)
    groups, k = rows.shape
    if model.kind == "ckm":
        rows = (rows != 0).astype(float)
        limit = np.zeros(k + 1)
    else:
        limit = run_thresholds(model, k, level)
    total = np.zeros((groups, k + 1))
    np.cumsum(rows, axis=1, out=total[:, 1:])
    sums = total[:, None, :] - total[:, :, None]  # [g, a, m]: bins [a, m)
    length = np.maximum(
        np.arange(k + 1)[None, :] - np.arange(k + 1)[:, None], 0
    )
    # a run ends after it starts
    return (sums > limit[length]) & (length > 0)


@functools.lru_cache(maxsize=8)
def run_thresholds(
    model: NoiseModel,
    k: int,
    level: float,
    sims: int = LINEAR_SIMS,
    seed: int = SIM_SEED,
) -> np.ndarray:
    """``(k + 1,)`` thresholds ``t[L]`` (``t[0] = 0``) such that the noise
    sums of all runs of ``k`` bins stay at or below ``t`` of their length
    at once in ``level`` of ``sims`` simulated draws (fixed public seed).

    Each length gets the same rank among its own largest run sums (so
    short runs, whose few heavy-tailed draws dominate a single multiple
    of the spread, do not set the threshold of long ones): the rank is
    the ``level`` quantile of each draw's highest rank over the lengths.
    """
    u1, u2 = uniforms((sims, k), seed)
    prefix = np.zeros((sims, k + 1))
    np.cumsum(model.draw(u1, u2), axis=1, out=prefix[:, 1:])
    # the largest run sum of each length in each draw: (sims, k)
    largest = np.stack(
        [
            (prefix[:, n:] - prefix[:, :-n]).max(axis=1)
            for n in range(1, k + 1)
        ],
        axis=1,
    )
    order = np.sort(largest, axis=0)
    ranks = np.argsort(np.argsort(largest, axis=0, kind="stable"), axis=0)
    cut = int(np.ceil(level * sims)) - 1
    rank = int(np.sort(ranks.max(axis=1))[min(max(cut, 0), sims - 1)])
    out = np.zeros(k + 1)
    out[1:] = order[rank]
    return out


def fence_ranges(
    edges: np.ndarray,
    noisy: np.ndarray,
    model: NoiseModel,
    level: float,
    coef: float,
    q1_box: Box,
    q3_box: Box,
) -> tuple[Box, Box]:
    """``(low, high)`` of the upper fence ``(1 + coef) q3 - coef q1`` and
    of the lower fence ``(1 + coef) q1 - coef q3`` of each group, over
    the pairs ``(a, b)`` of candidate quartiles within ``q1_box`` and
    ``q3_box`` that the mass between them does not reject.

    A pair is rejected when the estimated mass ``F(b) - F(a)`` is off 0.5
    by more than the central ``level`` of that estimate's simulated noise
    at ``a`` and ``b`` (at the true quartiles this fails with probability
    ``1 - level``). The noise quantiles are taken at pairs of fine edges
    (at most ``_NODES`` a side, evenly spaced, when a box spans more) and
    interpolated bilinearly between them, as the band is between edges.
    The pairs are searched on ``FENCE_STEPS`` steps per fine bin (fewer
    beyond ``_POINTS`` points a side); a cell of that grid is kept if some
    point of it may pass (the estimate is linear in each of ``a`` and
    ``b`` within a cell and the quantiles bilinear, so each side's
    extremes are at the cell's corners) and gives its most extreme fences
    within the boxes. Should no cell pass (the statements failed
    together), the boxes' corners stand.

    The noise quantiles of every group are simulated together (the
    costly part: a selection over the simulations per pair of nodes);
    the numbers are those of one group at a time.
    """
    rows = np.asarray(noisy, dtype=float)
    lo1, hi1, lo3, hi3 = (
        np.asarray(v, dtype=float) for v in (*q1_box, *q3_box)
    )
    span1, span3 = _edge_spans(edges, lo1, hi1), _edge_spans(edges, lo3, hi3)
    # the noise quantiles at a few nodes among those edges (a pair of
    # nodes costs a selection over the simulations), the search on a grid
    # through every edge (where the estimate bends)
    node1, node3 = [_nodes(s) for s in span1], [_nodes(s) for s in span3]
    quants = _node_quantiles(rows, model, node1, node3, level)
    out = np.empty((4, len(rows)))
    for g, row in enumerate(rows):
        out[:, g] = _read_cells(
            edges,
            row,
            coef,
            (lo1[g], hi1[g], lo3[g], hi3[g]),
            (edges[span1[g]], edges[span3[g]]),
            (edges[node1[g]], edges[node3[g]]),
            quants[g],
        )
    return (out[0], out[1]), (out[2], out[3])


def _read_cells(
    edges: np.ndarray,
    row: np.ndarray,
    coef: float,
    boxes: tuple[float, float, float, float],
    spans: tuple[np.ndarray, np.ndarray],
    nodes: tuple[np.ndarray, np.ndarray],
    quants: tuple[np.ndarray, np.ndarray],
) -> tuple[float, float, float, float]:
    """One group's ``(low, high)`` of the upper fence then of the lower
    (:func:`fence_ranges`), from its released ``row``, its quartiles'
    ``boxes`` ``(lo1, hi1, lo3, hi3)``, the fine edges each box spans,
    the nodes among them and the noise quantiles ``(q_lo, q_hi)`` of the
    mass between each pair of nodes."""
    c = coef
    lo1, hi1, lo3, hi3 = boxes
    q_lo, q_hi = quants
    est = np.r_[0.0, np.cumsum(row)] / max(float(row.sum()), 1.0)
    xa, xb = _grid(spans[0]), _grid(spans[1])
    wa, wb = _weights(xa, nodes[0]), _weights(xb, nodes[1])
    mass = np.interp(xb, edges, est)[None, :]
    mass = mass - np.interp(xa, edges, est)[:, None] - 0.5
    kept = (_corners(mass - wa @ q_hi @ wb.T, np.minimum) <= 0) & (
        _corners(mass - wa @ q_lo @ wb.T, np.maximum) >= 0
    )
    # each cell clipped to the boxes (a cell outside them is not kept)
    a0, a1 = (
        np.maximum(xa[:-1], lo1)[:, None],
        np.minimum(xa[1:], hi1)[:, None],
    )
    b0, b1 = (
        np.maximum(xb[:-1], lo3)[None, :],
        np.minimum(xb[1:], hi3)[None, :],
    )
    kept &= (a0 <= a1) & (b0 <= b1)
    top = _extremes(
        kept,
        (1 + c) * b0 - c * a1,
        (1 + c) * b1 - c * a0,
        ((1 + c) * lo3 - c * hi1, (1 + c) * hi3 - c * lo1),
    )
    bottom = _extremes(
        kept,
        (1 + c) * a0 - c * b1,
        (1 + c) * a1 - c * b0,
        ((1 + c) * lo1 - c * hi3, (1 + c) * hi1 - c * lo3),
    )
    return (*top, *bottom)


def _node_quantiles(
    rows: np.ndarray,
    model: NoiseModel,
    node1: list[np.ndarray],
    node3: list[np.ndarray],
    level: float,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per group, the central ``level`` quantiles ``(q_lo, q_hi)``
    (``(len(node1[g]), len(node3[g]))``) of the simulated noise of the
    estimated mass between each pair of nodes: :func:`~.intervals.
    cdf_deviations` at the later node less at the earlier, the groups
    with as many nodes a side selected together."""
    cuts = [(1 - level) / 2, (1 + level) / 2]
    out: list = [None] * len(rows)
    shapes: dict[tuple[int, int], list[int]] = {}
    for g in range(len(rows)):
        shapes.setdefault((len(node1[g]), len(node3[g])), []).append(g)
    for (n1, n3), members in shapes.items():
        per = max(1, CHUNK_CELLS // (n1 * n3 * LINEAR_SIMS))
        for at in range(0, len(members), per):
            part = members[at : at + per]
            nodes = np.stack([np.r_[node1[g], node3[g]] for g in part])
            dev = cdf_deviations(rows[part], model, nodes)
            dev1, dev3 = dev[:, :n1], dev[:, n1:]
            diff = dev3[:, None, :, :] - dev1[:, :, None, :]
            q_lo, q_hi = tail_quantiles(diff, cuts)
            for n, g in enumerate(part):
                out[g] = (q_lo[n], q_hi[n])
    return out


def _edge_spans(
    edges: np.ndarray, low: np.ndarray, high: np.ndarray
) -> list[np.ndarray]:
    """Per group, :func:`_edge_span` of its ``low`` and ``high``."""
    return [_edge_span(edges, a, b) for a, b in zip(low, high)]


def _edge_span(edges: np.ndarray, low: float, high: float) -> np.ndarray:
    """Indices of the fine edges from the last at or below ``low`` to the
    first at or above ``high`` (two at least: one cell)."""
    k = len(edges) - 1
    first = int(np.clip(np.searchsorted(edges, low, "right") - 1, 0, k - 1))
    last = int(np.clip(np.searchsorted(edges, high, "left"), first + 1, k))
    return np.arange(first, last + 1)


def _nodes(span: np.ndarray) -> np.ndarray:
    """At most ``_NODES`` of the edge indices ``span``, evenly spaced,
    the first and the last among them."""
    step = -(-(len(span) - 1) // (_NODES - 1))
    return np.unique(np.r_[span[::step], span[-1]])


def _grid(at: np.ndarray) -> np.ndarray:
    """The edges ``at`` with equal steps between them: ``FENCE_STEPS`` a
    cell, fewer where the edges are many (at most ``_POINTS`` points)."""
    steps = max(1, min(FENCE_STEPS, (_POINTS - 1) // (len(at) - 1)))
    t = np.arange(steps) / steps
    inner = at[:-1, None] + t[None, :] * np.diff(at)[:, None]
    return np.r_[inner.ravel(), at[-1]]


def _weights(x: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """``(len(x), len(nodes))``: linear interpolation from the nodes."""
    return np.stack(
        [np.interp(x, nodes, unit) for unit in np.eye(len(nodes))], axis=1
    )


def _corners(values: np.ndarray, pick) -> np.ndarray:
    """``pick`` (``np.minimum``/``np.maximum``) of each grid cell's four
    corner values."""
    return pick(
        pick(values[:-1, :-1], values[1:, :-1]),
        pick(values[:-1, 1:], values[1:, 1:]),
    )


def _extremes(kept, lows, highs, corners) -> tuple[float, float]:
    """The smallest of ``lows`` and largest of ``highs`` over the kept
    cells, or ``corners`` if none is kept."""
    if not kept.any():
        return corners
    return float(lows[kept].min()), float(highs[kept].max())
