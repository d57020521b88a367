"""Records per privacy unit: a private histogram, and what a bound keeps.

A bound of ``k`` records per unit (:mod:`.bounding`) is chosen blind
unless something says how many records units have. This module releases
that, privately, and reads from it what a bound removes.

**The release.** Each unit falls in one of the public, log-spaced bins of
its number of records: ``1``, ``2``, ``3-4``, ``5-8``, ..., ``cap/2+1 -
cap`` and ``> cap`` (:func:`bin_edges`; ``cap`` a public power of two).
Adding or removing one unit changes one bin by 1 (sensitivity 1; 2 under
replace, where a unit may move from one bin to another), so the histogram
is released with discrete Laplace noise of scale ``sensitivity / eps`` on
every bin, through the release engine (:func:`~.engine.release_cells`):
it has an identity, a cost, a ledger charge and a report row like any
count.

**What is read from it** (post-processing of the released counts only,
:class:`Contributions`):

* *the cut*: the last bin whose noisy count reaches the detection
  threshold (:func:`detection_threshold`: an empty bin passes it with
  chance below 5% over all bins); bins above it are taken as empty. This
  is the one assumption the estimates make: fewer units than the
  threshold may hide above the cut, and their records are not counted;
* *the kept share at k*: ``sum min(n, k) / sum n`` over units, with each
  bin's units at a representative size (1, 2, then the geometric mean of
  the bin's edges; ``2 cap`` for ``> cap``), and an interval that holds
  jointly, at ``level``, over the noise of every bin up to the cut (a
  box of counts, Bonferroni) and over every size within the bins' edges
  (:meth:`Contributions.kept`);
* *the error of a cell at k* (:meth:`Contributions.error`): bounding only
  removes records, and each record is in one cell of a figure, so over
  the ``cells`` cells of a figure the bias adds up to the records removed
  (``removed(k)``); a cell's noise at ``plot_eps`` has mean absolute value
  ``E|Z|`` of discrete Laplace of scale ``Δ k / plot_eps``. The expected
  error of a cell is at most ``removed(k) / cells + E|Z|`` (the removed
  records spread evenly over the cells); the recommended ``k`` is the
  candidate (a power of two up to ``cap``) that makes it smallest.

numpy only (no plotnine, no pandas).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..naming.cellnames import cell_words
from ..samplers import laplace as lap
from .cell_table import CellTable
from .count_mechanisms import LaplaceCounts
from .engine import release_cells
from .query import Query
from .records import Release

__all__ = [
    "DEFAULT_CAP",
    "Contributions",
    "KeptShare",
    "bin_edges",
    "bin_labels",
    "bin_of",
    "check_cap",
    "contributions_query",
    "detection_threshold",
    "histogram",
    "mean_abs_noise",
    "noise_quantile",
    "release_contributions",
]

#: the default public cap: units with more records share the last bin
DEFAULT_CAP = 2**14
#: the chance that some empty bin reaches the detection threshold
DETECTION = 0.05
#: what the query family of the histogram is called
FAMILY = "contributions"


def check_cap(cap: Any) -> int:
    """``cap`` if it is a power of two in ``[2, 2**30]``."""
    if (
        isinstance(cap, bool)
        or not isinstance(cap, (int, np.integer))
        or not 2 <= cap <= 2**30
        or int(cap) & (int(cap) - 1)
    ):
        raise ParameterError(
            f"cap must be a power of two between 2 and 2**30 (the most "
            f"records per unit the bins tell apart), got {cap!r}; e.g. "
            f"cap={DEFAULT_CAP}."
        )
    return int(cap)


def bin_edges(cap: int) -> list[tuple[int, int | None]]:
    """The public bins of records per unit: ``(lo, hi)``, ``hi`` None for
    the last (``> cap``).

    >>> bin_edges(8)
    [(1, 1), (2, 2), (3, 4), (5, 8), (9, None)]
    """
    edges: list[tuple[int, int | None]] = [(1, 1)]
    hi = 2
    while hi <= cap:
        edges.append((hi // 2 + 1, hi))
        hi *= 2
    edges.append((cap + 1, None))
    return edges


def bin_labels(cap: int) -> list[str]:
    """Words for the bins: ``["1", "2", "3-4", "5-8", "> 8"]`` for 8."""
    out = []
    for lo, hi in bin_edges(cap):
        if hi is None:
            out.append(f"> {cap}")
        else:
            out.append(str(lo) if lo == hi else f"{lo}-{hi}")
    return out


def bin_of(n: Any, cap: int) -> np.ndarray:
    """The bin of each unit's number of records ``n >= 1``: the number
    of powers ``2**j <= cap`` that ``n`` exceeds (an engine computes the
    same sum of comparisons).

    >>> bin_of(np.array([1, 2, 3, 4, 5, 9, 100]), 8).tolist()
    [0, 1, 2, 2, 3, 4, 4]
    """
    n = np.asarray(n, dtype=np.int64)
    out = np.zeros(n.shape, dtype=np.int64)
    for j in range(cap.bit_length()):
        out += n > (1 << j)
    return out


def histogram(per_unit: Any, cap: int) -> np.ndarray:
    """Units per bin, from each unit's number of records (zeros, which
    are no unit, left out)."""
    n = np.asarray(per_unit, dtype=np.int64)
    n = n[n > 0]
    return np.bincount(bin_of(n, cap), minlength=len(bin_edges(cap)))


# -- the noise's tails ---------------------------------------------------
def _p(scale: float) -> float:
    return math.exp(-1.0 / scale)


def noise_quantile(scale: float, level: float) -> int:
    """Smallest ``q`` with ``P(|Z| <= q) >= level``, ``Z ~ DLap(scale)``.

    >>> noise_quantile(2.0, 0.95)
    6
    """
    p = _p(scale)
    q = 0
    # P(|Z| > q) = 2 p^(q+1) / (1 + p)
    if p > 0:
        q = max(
            0, math.ceil(math.log((1 - level) * (1 + p) / 2) / math.log(p))
        )
        while q > 0 and 2 * p**q / (1 + p) <= 1 - level:
            q -= 1
        while 2 * p ** (q + 1) / (1 + p) > 1 - level:
            q += 1
    return q


def detection_threshold(scale: float, bins: int) -> int:
    """Smallest ``t >= 1`` with ``bins * P(Z >= t) <= DETECTION``: an
    empty bin's noisy count reaches it with chance below 5% over all
    bins.

    >>> detection_threshold(2.0, 16)
    11
    """
    p = _p(scale)
    t = 1
    while bins * p**t / (1 + p) > DETECTION:
        t += 1
    return t


def mean_abs_noise(scale: float) -> float:
    """``E|Z|`` for ``Z ~ DLap(scale)``: ``2p / (1 - p^2)``.

    >>> round(mean_abs_noise(1.0), 4)
    0.8509
    """
    p = _p(scale)
    return 2 * p / (1 - p * p)


# -- the release ---------------------------------------------------------
def contributions_query(
    unit: str,
    record_id: str | None,
    cap: int,
    seed: int | str | None,
    mechanism: LaplaceCounts,
    source: str = "data",
) -> Query:
    """The public query of a histogram of records per unit: the unit and
    record columns (records without either are left out), the cap, the
    mechanism's parameters. Not the bound ``k``: one histogram serves
    every ``k``."""
    return Query.make(
        FAMILY,
        source,
        seed,
        privacy_unit=unit,
        record_id=record_id,
        cap=cap,
        **mechanism.parameters(),
    )


def release_contributions(
    query: Query,
    counts: np.ndarray,
    mechanism: LaplaceCounts,
    *,
    data_object: Any = None,
) -> Contributions:
    """Release a histogram of units per bin (:func:`histogram`) through
    the release engine: every bin gets noise (a public domain)."""
    cap = int(query.part("cap"))
    labels = bin_labels(cap)
    counts = np.asarray(counts, dtype=np.int64)
    if len(counts) != len(labels):  # pragma: no cover - callers bin
        raise ParameterError("one count per bin is needed")
    table = CellTable(cell_words(labels), counts, public=True)
    released = release_cells(
        query,
        table,
        mechanism,
        domain="public: records per unit (log bins)",
        data_object=data_object,
        details={
            "what": "histogram of records per unit",
            "unit": query.part("privacy_unit"),
        },
    )
    return Contributions(
        cap=cap,
        noisy=np.rint(released.noisy).astype(np.int64),
        scale=float(mechanism.scale),
        eps=float(mechanism.eps),
        adjacency=mechanism.adjacency,
        release=released.release,
    )


# -- what is read from it ------------------------------------------------
@dataclass(frozen=True)
class KeptShare:
    """The estimated share of records a bound ``k`` keeps, with an
    interval (``low``, ``high``) at ``level``, from a released histogram
    (:meth:`Contributions.kept`). ``seen`` is the largest number of
    records per unit the histogram shows above the noise (the cut)."""

    k: int
    share: float
    low: float
    high: float
    level: float
    seen: int | None

    def share_words(self) -> str:
        """``"44% of records (38-52%, 95%)"``."""
        return (
            f"{_pct(self.share)} of records ({_pct(self.low, '')}-"
            f"{_pct(self.high)}, {_pct(self.level)})"
        )

    def words(self) -> str:
        """``"kept 44% of records (38-52%, 95%) at max_records=50"``."""
        if not math.isfinite(self.share):
            return (
                f"share of records kept at max_records={self.k} unknown "
                "(no unit shows above the noise)"
            )
        return f"kept {self.share_words()} at max_records={self.k}"


def _pct(v: float, sign: str = "%") -> str:
    return f"{100 * v:.0f}{sign}"


@dataclass(frozen=True)
class Contributions:
    """A released histogram of records per unit and what it says
    (see the module docstring)."""

    cap: int
    noisy: np.ndarray
    scale: float
    eps: float
    adjacency: str
    release: Release = field(repr=False)

    @property
    def edges(self) -> list[tuple[int, int | None]]:
        return bin_edges(self.cap)

    @property
    def labels(self) -> list[str]:
        return bin_labels(self.cap)

    @property
    def threshold(self) -> int:
        """The detection threshold of :func:`detection_threshold`."""
        return detection_threshold(self.scale, len(self.noisy))

    @property
    def cut(self) -> int:
        """The last bin of the run of bins, from the first, whose noisy
        counts reach the threshold (-1 if none): bins above it are taken
        to hold the tail of :meth:`counts`."""
        below = np.flatnonzero(self.noisy < self.threshold)
        # the run of bins seen from the first: a bin seen past a gap is
        # taken as noise (its units, if any, are fewer than the noise)
        return int(below[0]) - 1 if len(below) else len(self.noisy) - 1

    @property
    def seen(self) -> int | None:
        """The upper edge of the cut's bin (None: ``> cap``, or none)."""
        if self.cut < 0:
            return None
        return self.edges[self.cut][1]

    def _q(self, level: float) -> int:
        """The half-width of every bin's count interval up to the cut
        (joint at ``level``: Bonferroni over those bins; one bin's
        where no bin is seen, ``cut`` -1)."""
        bins = max(self.cut + 1, 1)
        return noise_quantile(self.scale, 1 - (1 - level) / bins)

    @property
    def reliable(self) -> int:
        """The last bin (from ``3-4`` on) whose noisy count is at least
        twice the half-width of its interval (-1 if none)."""
        q = self._q(0.95)
        ok = np.flatnonzero(self.noisy[: self.cut + 1] >= max(2 * q, 1))
        ok = ok[ok >= 2]
        return int(ok[-1]) if len(ok) else -1

    def decay(self, end: str = "point", level: float = 0.95) -> float:
        """The ratio of units in one bin to the bin before it, over the
        last three reliable bins (:attr:`reliable`), in ``[0, 1]``
        (``end``: ``"point"``, or ``"low"``/``"high"`` with the counts at
        the ends of their intervals at ``level``); 1/2 (``"high"``: 1)
        without three. The tail above the cut is taken to keep falling
        at this rate."""
        r = self.reliable
        if r < 4:
            return {"point": 0.5, "low": 0.0, "high": 1.0}[end]
        last = float(self.noisy[r] + self.noisy[r - 1])
        before = float(self.noisy[r - 1] + self.noisy[r - 2])
        if end != "point":
            q = self._q(level)
            sign = 1.0 if end == "high" else -1.0
            last, before = last + sign * q, before - sign * q
        if before <= 0:
            return 1.0 if end == "high" else 0.0
        return float(min(max(last / before, 0.0), 1.0))

    def tail_fits(self) -> list[tuple[float, float]]:
        """``(rho, loss)`` for every ``rho`` weighed by
        :meth:`tail_decay` (empty where fewer than three bins from the
        cut's up to ``cap`` can be fitted)."""
        cut = self.cut
        y = np.asarray(self.noisy[cut : len(self.noisy) - 1], dtype=float)
        if cut < 0 or len(y) < 3:
            return []
        j = np.arange(len(y), dtype=float)
        out = []
        for rho in _RHOS:
            w = rho**j
            # the L1-best amplitude: a weighted median of y / w
            ratio = y / w
            order = np.argsort(ratio)
            cum = np.cumsum(w[order])
            amp = float(ratio[order][np.searchsorted(cum, cum[-1] / 2)])
            out.append((float(rho), float(np.abs(y - max(amp, 0) * w).sum())))
        return out

    def tail_decay(self) -> float:
        """The ratio of units in one bin to the bin before it above the
        cut, fitted to the noisy counts of the cut's bin and of every
        bin above it (up to ``cap``): the ``rho`` in ``[0.02, 0.7]`` and
        amplitude ``A`` that minimise ``sum |noisy_b - A rho^(b-cut)|``
        (least absolute deviations: the likelihood under Laplace-type
        noise). The bins above the cut are each below the detection
        threshold, but together they say how fast the tail falls; the
        body's decay (:meth:`decay`) falls slower than a heavy tail's and
        overstated the records of the heaviest units several times.
        :meth:`decay` where fewer than three bins can be fitted."""
        fits = self.tail_fits()
        if not fits:
            return self.decay()
        return min(fits, key=lambda f: f[1])[0]

    def plausible_decays(self) -> list[float]:
        """The fitted ``rho`` and every other one whose fit is about as
        good (its loss within ``2 * scale`` of the best: a likelihood
        ratio of ``e^2`` under Laplace noise of that scale)."""
        fits = self.tail_fits()
        if not fits:
            return [self.decay()]
        best = min(loss for _, loss in fits)
        return [rho for rho, loss in fits if loss <= best + 2 * self.scale]

    def counts(
        self,
        level: float | None = None,
        end: str = "point",
        rho: float | None = None,
    ):
        """Units per bin: the noisy counts up to the cut, clipped at 0;
        above it, the count at the cut falling at :meth:`decay` per bin,
        while at least half a unit is expected, up to ``cap`` (none
        above ``cap`` unless the last bin is seen). With a ``level``, the
        ``"low"`` or ``"high"`` end of each count's interval (the low
        end of the tail is no unit)."""
        cut = self.cut
        out = np.zeros(len(self.noisy))
        if cut < 0:
            return out
        shift = 0.0 if level is None else float(self._q(level))
        sign = {"point": 0.0, "low": -1.0, "high": 1.0}[end]
        out[: cut + 1] = np.clip(self.noisy[: cut + 1] + sign * shift, 0, None)
        if end == "low" or cut >= len(out) - 2:
            return out
        # the point: the tail fitted above the cut; the interval's high
        # end: the slower of that and the body's decay (conservative)
        rho = self.tail_decay() if rho is None else rho
        if end == "high":
            rho = max(rho, self.decay())
        tail = out[cut] * rho ** np.arange(1, len(out) - cut - 1)
        # the tail ends where less than half a unit is expected in a bin
        ends = np.flatnonzero(tail < 0.5)
        if len(ends):
            tail[ends[0] :] = 0.0
        out[cut + 1 : len(out) - 1] = tail
        return out

    def sizes(self) -> np.ndarray:
        """A representative number of records of a unit of each bin: its
        size for ``1`` and ``2``, the geometric mean of the edges for the
        others, ``2 cap`` for ``> cap``."""
        return np.array(
            [
                float(lo)
                if hi == lo
                else (2.0 * self.cap if hi is None else math.sqrt(lo * hi))
                for lo, hi in self.edges
            ]
        )

    def records(self) -> float:
        """The estimated number of records (of units up to the cut)."""
        return float(self.counts() @ self.sizes())

    def removed(self, k: int) -> float:
        """The estimated number of records a bound ``k`` removes."""
        sizes = self.sizes()
        return float(self.counts() @ np.maximum(sizes - k, 0.0))

    def kept(self, k: int, level: float = 0.95) -> KeptShare:
        """The share of records a bound ``k`` keeps: an estimate and an
        interval that holds at ``level`` jointly over the noise of the
        bins up to the cut and over every size within the bins' edges,
        given that no unit lies above the cut."""
        counts, sizes = self.counts(), self.sizes()
        total = float(counts @ sizes)
        if self.cut < 0 or total <= 0:
            nan = float("nan")
            return KeptShare(k, nan, nan, nan, level, self.seen)
        share = float(counts @ np.minimum(sizes, k)) / total
        low_c = self.counts(level, "low")
        high_c = self.counts(level, "high")
        # the tail's units are at their bin's representative size (the
        # tail is a model already; its edges would only widen it)
        edges = [
            (lo, hi) if b <= self.cut else (round(n), round(n))
            for b, ((lo, hi), n) in enumerate(zip(self.edges, sizes))
        ]
        low = _extreme(edges, low_c, high_c, k, share, lowest=True)
        high = _extreme(edges, low_c, high_c, k, share, lowest=False)
        return KeptShare(
            k, share, min(low, share), max(high, share), level, self.seen
        )

    def noise(self, k: int, plot_eps: float, adjacency: str) -> float:
        """``E|Z|`` of one count of a figure at ``plot_eps`` whose units
        keep ``k`` records."""
        sens = lap.ADJACENCY_SENSITIVITY[adjacency] * k
        return mean_abs_noise(sens / plot_eps)

    def error(
        self, k: int, plot_eps: float, cells: int, adjacency: str
    ) -> float:
        """The expected error of one of ``cells`` cells (bias + noise):
        ``removed(k) / cells + E|Z|``."""
        return self.removed(k) / cells + self.noise(k, plot_eps, adjacency)

    def candidates(self) -> list[int]:
        """The bounds weighed: powers of two up to ``cap`` and the
        numbers half-way between them (1, 2, 3, 4, 6, 8, 12, 16, ...)."""
        out = {1}
        j = 1
        while j <= self.cap:
            out |= {j, j + j // 2}
            j *= 2
        return sorted(k for k in out if k <= self.cap)

    def choose(self, plot_eps: float, cells: int, adjacency: str) -> int:
        """The candidate ``k`` whose :meth:`error` is nearest the best
        ``k``'s under every plausible tail (:meth:`plausible_decays`):
        the smallest worst ratio of its error to the smallest error, over
        those tails (minimax regret; the smaller ``k`` on a tie). With one
        plausible tail, the ``k`` with the smallest :meth:`error`."""
        ks = np.array(self.candidates(), dtype=float)
        sizes = self.sizes()
        noise = np.array([self.noise(int(k), plot_eps, adjacency) for k in ks])
        worst = np.zeros(len(ks))
        for rho in self.plausible_decays():
            counts = self.counts(rho=rho)
            removed = counts @ np.maximum(sizes[:, None] - ks[None, :], 0.0)
            error = removed / cells + noise
            worst = np.maximum(worst, error / error.min())
        return int(ks[int(np.argmin(worst))])


#: the tail decays weighed by :meth:`Contributions.tail_fits`
_RHOS = np.round(np.arange(0.02, 0.705, 0.01), 2)


def _extreme(
    edges: Sequence[tuple[int, int | None]],
    low_c: np.ndarray,
    high_c: np.ndarray,
    k: int,
    start: float,
    lowest: bool,
) -> float:
    """The smallest (``lowest``) or largest share ``sum c a / sum c d``
    over counts ``c`` in ``[low_c, high_c]`` and each bin's units at one
    size within its edges (``a = min(n, k)`` records kept of ``d = n``):
    a linear-fractional program over a box, solved by Dinkelbach's
    iteration (each step picks, per bin, the size and the count end that
    move the share the wanted way)."""
    options = []
    for lo, hi in edges:
        if hi is None:
            if lowest:
                # units of unbounded size: the share can be as low as 0
                options.append([(min(lo, k), lo), (k, math.inf)])
            else:
                options.append([(min(lo, k), lo)])
            continue
        sizes = {lo, hi, min(max(k, lo), hi)}
        options.append([(min(n, k), n) for n in sorted(sizes)])
    r = start
    for _ in range(100):
        num = den = 0.0
        for opts, lc, hc in zip(options, low_c, high_c):
            gains = [
                -math.inf if math.isinf(d) else a - r * d for a, d in opts
            ]
            j = int(np.argmin(gains) if lowest else np.argmax(gains))
            g = gains[j]
            take = hc if (g < 0 if lowest else g > 0) else lc
            a, d = opts[j]
            if take <= 0:
                continue
            if math.isinf(d):
                return 0.0
            num += take * a
            den += take * d
        if den <= 0:
            return r
        new = num / den
        if abs(new - r) <= 1e-12:
            return new
        r = new
    return r  # pragma: no cover - converges in a few steps
