"""Laplace-type noise for counts: exact discrete Laplace and continuous.

Guarantee (discrete Laplace). Adding ``DLap(b)`` noise, ``P(k) ∝
exp(-|k|/b)``, independently to every cell of a count vector whose L1
sensitivity is ``Δ`` gives ``ε``-DP when ``b >= Δ/ε``. With a *public* cell
domain (every cell released, empty ones included) this is pure ε-DP; the
domain itself (levels, bin edges) must not depend on the data. Sensitivity:
``Δ = 1`` when neighbouring data sets differ by adding or removing one
record (``adjacency="add_remove"``), ``Δ = 2`` when one record is replaced
(``adjacency="replace"``, DPpack's ``tableDP`` default).

The sampler is Canonne, Kamath & Steinke (2020), Algorithms 1-2, run on
integers only: ``ε`` is turned into an exact rational, every Bernoulli trial
compares an exactly uniform integer (rejection sampling on 31-bit parts of
the cell's keyed stream words) with an integer numerator, and the output is
an integer. When it needs fewer random words (``b = t/s`` with ``s/t`` not
small, e.g. ``b = 2``) the magnitude is drawn as the number of
Bernoulli(exp(-s/t)) successes (CKS Alg. 1 trials) before the first
failure: the same geometric law ``P(y) = (1-p) p^y``, ``p = exp(-s/t)``.
No floating-point value touches the noise, so the attacks on float Laplace
samplers (Mironov 2012) do not apply. The draws of all cells are evaluated
together by a vectorised automaton in which every cell reads word ``j`` of
its own stream at step ``j``; a plain-integer version of the same procedure
(:func:`_dlap_scalar`, used for very long chains and huge scales) defines
each cell's output, and the tests check that both agree. Running time
depends on the output (a timing side channel, irrelevant offline).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..streams.randomness import CellStreams
from .dlap_inversion import discrete_laplace_inversion, inversion_table

__all__ = [
    "ADJACENCY_SENSITIVITY",
    "DEFAULT_DELTA",
    "dlap_pmf",
    "dlap_variance",
    "discrete_laplace",
    "exact_epsilon",
    "laplace",
    "rational_scale",
    "threshold_for",
]

#: delta where a release may threshold an observed domain (every stat,
#: table and mechanism takes this one default; the PCA, which always spends
#: delta, asks for it, and a budget cap's delta defaults to 0)
DEFAULT_DELTA = 1e-6

#: L1 sensitivity of a histogram (one record is in one cell) per adjacency.
ADJACENCY_SENSITIVITY = {"replace": 2, "add_remove": 1}
#: the Laplace-family noises a DP count or sum may use
NOISES = ("discrete_laplace", "laplace")


def check_laplace_options(adjacency: str, noise: str) -> None:
    """Refuse an unknown ``adjacency`` or ``noise`` (shared by the count
    and the sum mechanisms)."""
    if adjacency not in ADJACENCY_SENSITIVITY:
        raise ParameterError(
            f"adjacency must be 'replace' or 'add_remove', got {adjacency!r}."
        )
    if noise not in NOISES:
        raise ParameterError(
            f"noise must be 'discrete_laplace' or 'laplace', got {noise!r}."
        )


_EPS_DENOMINATOR = 2**20


def exact_epsilon(eps: float) -> Fraction:
    """The rational ε actually used: never larger than ``eps``.

    A short decimal (``0.1``, ``1.25``) is taken exactly as written;
    anything else is rounded *down* to a multiple of 2**-20, which can only
    add noise.

    >>> exact_epsilon(0.1)
    Fraction(1, 10)
    >>> exact_epsilon(1 / 3) <= 1 / 3
    True
    """
    eps = float(eps)
    if not math.isfinite(eps) or eps <= 0:
        raise ParameterError(
            f"eps must be a finite number > 0, got {eps!r}; "
            "typical values are 0.1 to 5"
        )
    decimal = Fraction(repr(eps))
    if decimal.denominator <= 10**6 and decimal.numerator <= 10**12:
        return decimal
    rounded = Fraction(math.floor(eps * _EPS_DENOMINATOR), _EPS_DENOMINATOR)
    if rounded <= 0:
        raise ParameterError(
            f"eps={eps!r} is below 2**-20; such a budget drowns every count "
            "in noise: use a larger eps"
        )
    return rounded


def rational_scale(sensitivity: int, eps: float) -> tuple[int, int]:
    """Laplace scale ``Δ/ε`` as a reduced fraction ``(t, s)``, ``b = t/s``.

    >>> rational_scale(2, 1.0)
    (2, 1)
    >>> rational_scale(1, 0.5)
    (2, 1)
    """
    b = Fraction(int(sensitivity)) / exact_epsilon(eps)
    return b.numerator, b.denominator


# --- the exact sampler -------------------------------------------------
#
# Every random draw is a Bernoulli(N/D) trial or a uniform integer below D,
# made from one 32-bit stream word w by exact rejection: with r the low 31
# bits of w, M = 2**31 // D and R = D*M, a word with r >= R is rejected
# (the draw is repeated on the next word); otherwise r // M is exactly
# uniform on {0, ..., D-1}, so "r < N*M" is exactly Bernoulli(N/D). The top
# bits of all words are fair coins independent of every low part: the sign
# is the top bit of the last word of an attempt (which word that is depends
# on low parts only, so the sign is a fair coin independent of the
# magnitude). Every draw with D < 2**31 consumes exactly one word, so the
# sampler is a small automaton that reads word j of every cell's stream at
# step j: a cell's output is a function of its own stream only.

_WORDS_PER_BLOCK = 16
_TWO31 = 1 << 31
_M31 = np.uint32(0x7FFFFFFF)
#: chain positions k held in the vector tables; a cell whose chain runs
#: longer (probability below 1/32!) is finished by the scalar sampler.
_K = 32
_CHUNK = 32768


class _Plan:
    """How DLap(t/s) is sampled; two exact methods, the cheaper is used.

    * ``cks`` (CKS20 Alg. 2): U uniform on {0..t-1} accepted with
      probability exp(-U/t) (state A, chain B), V = number of
      Bernoulli(exp(-1)) successes before the first failure (chains V);
      magnitude ``(U + t V) // s``.
    * ``direct`` (s <= t): magnitude = number of Bernoulli(exp(-s/t))
      successes before the first failure (chains V with gamma = s/t);
      cheaper when s/t is not small (e.g. b = 2).

    A Bernoulli(exp(-gamma)) trial (CKS20 Alg. 1) draws Bernoulli(gamma/k)
    for k = 1, 2, ... until the first failure and succeeds iff that k is
    odd; for gamma = 1 the k = 1 trial is certain and is skipped.
    """

    def __init__(self, t: int, s: int):
        self.t, self.s = t, s
        cks, direct = _expected_words(t, s)
        self.direct = direct < cks
        if self.direct:
            self.nv, self.dv, self.tm, self.sd = s, t, 1, 1
            self.has_a = False
        else:
            self.nv, self.dv, self.tm, self.sd = 1, 1, t, s
            self.has_a = t > 1
        self.kv0 = 1 if self.nv < self.dv else 2
        self.vector = (not self.has_a or t * _K < _TWO31) and self.dv * (
            self.kv0 + _K
        ) < _TWO31


def _expected_words(t: int, s: int) -> tuple[float, float]:
    """Expected stream words per sample of the two methods (for the
    choice of method only; never used in sampling)."""
    e = math.e
    restart = 1 - (1 - math.exp(-s / t)) / 2  # P(an attempt is kept)
    if t == 1:
        a_cost = 0.0
    else:
        # per draw of U: 1 word, plus e^(U/t) chain words when U >= 1
        chain = ((e - 1) / math.expm1(1 / t) - 1) / t
        accept = (1 - 1 / e) / (-math.expm1(-1 / t)) / t
        a_cost = (1 + chain) / accept
    cks = (a_cost + e) / restart
    direct = math.inf
    if s <= t:
        g = s / t
        chain = math.exp(g) - (1 if s == t else 0)
        direct = chain / (-math.expm1(-g)) / restart
    return cks, direct


def _draw_below(read, d: int) -> tuple[int, int]:
    """Exactly uniform integer below d from 31-bit word parts (scalar);
    also the top bit of the first word of the accepted draw."""
    nw = 1
    while (1 << (31 * nw)) < d:
        nw += 1
    m = (1 << (31 * nw)) // d
    while True:
        r = 0
        top = 0
        for i in range(nw):
            w = read()
            if i == 0:
                top = w >> 31
            r |= (w & 0x7FFFFFFF) << (31 * i)
        if r < d * m:
            return r // m, top


def _dlap_scalar(read, plan: _Plan) -> int:
    """One DLap(t/s) draw with Python integers: the reference semantics
    of the vector automaton (and its fallback for any size of t, s)."""
    t = plan.t
    while True:
        u = 0
        if plan.has_a:
            while True:
                u = _draw_below(read, t)[0]
                if u == 0:
                    break
                k = 1
                while _draw_below(read, t * k)[0] < u:
                    k += 1
                if k % 2:
                    break
        v, k = 0, plan.kv0
        while True:
            x, sign = _draw_below(read, plan.dv * k)
            if x < plan.nv:
                k += 1
            elif k % 2:
                v, k = v + 1, plan.kv0
            else:
                break  # sign: top bit of this last word of the attempt
        y = (u + plan.tm * v) // plan.sd
        if not (sign and y == 0):
            return -y if sign else y


class _Reader:
    """Sequential 32-bit words of one cell's stream (scalar path)."""

    def __init__(self, streams: CellStreams, cell: int):
        self.streams, self.cell = streams, np.array([cell])
        self.blocks = 0
        self.buf: list[int] = []
        self.pos = 0

    def __call__(self) -> int:
        if self.pos == len(self.buf):
            blk = self.streams.block_at(self.cell, self.blocks)
            self.buf = blk[:, 0].tolist()
            self.blocks += 1
            self.pos = 0
        self.pos += 1
        return self.buf[self.pos - 1]


class _Tables:
    """Transition tables of the vector automaton for one plan.

    States: 0 = start of an attempt (state A, or the first V trial when
    there is no A); 1..K = chain B at k; K+1..2K = chain V at k = kv0 + i;
    then FIN (magnitude ready), DONE and OVER (chain too long). For each
    state: success iff r < MU*U + MC, failure iff r < R, else reject
    (outcome 0, 1, 2). The automaton holds ``3*state``; ``NXV[3*state +
    outcome]`` packs ``3*next_state`` (low 32 bits) and the increment of
    ``v`` (high bits). Every R is at least ``r_low``, so a word below it
    is never rejected and R is looked up only for the rare others.
    """

    def __init__(self, plan: _Plan):
        k_ = _K
        self.fin, self.done, self.over = 2 * k_ + 1, 2 * k_ + 2, 2 * k_ + 3
        n = 2 * k_ + 4
        mu = np.zeros(n, dtype=np.int64)
        mc = np.zeros(n, dtype=np.int64)
        rr = np.zeros(n, dtype=np.int64)
        nx = np.repeat(np.arange(n), 3).reshape(n, 3)
        vi = np.zeros((n, 3), dtype=np.int64)
        su = np.zeros((n, 3), dtype=bool)
        t, kv0 = plan.t, plan.kv0

        def vstate(k):
            return k_ + 1 + (k - kv0) if k - kv0 < k_ else self.over

        for k in range(kv0, kv0 + k_):
            st = vstate(k)
            d = plan.dv * k
            m = _TWO31 // d
            mc[st], rr[st] = plan.nv * m, d * m
            nx[st, 0] = vstate(k + 1)
            nx[st, 1] = vstate(kv0) if k % 2 else self.fin
            vi[st, 1] = k % 2
        if plan.has_a:
            for k in range(1, k_ + 1):
                d = t * k
                m = _TWO31 // d
                mu[k], rr[k] = m, d * m
                nx[k, 0] = k + 1 if k < k_ else self.over
                nx[k, 1] = vstate(kv0) if k % 2 else 0
            m = _TWO31 // t
            mc[0], rr[0] = m, t * m
            nx[0] = (vstate(kv0), 1, 0)
            su[0, :2] = True
        else:
            st = vstate(kv0)
            mc[0], rr[0] = mc[st], rr[st]
            nx[0] = (nx[st, 0], nx[st, 1], 0)
            vi[0] = vi[st]
        active = slice(0, self.fin)
        self.r_low = np.uint32(rr[active][rr[active] > 0].min())
        self.mu = np.repeat(mu, 3).astype(np.uint32)
        self.mc = np.repeat(mc, 3).astype(np.uint32)
        self.rr = np.repeat(rr, 3).astype(np.uint32)
        self.nxv = ((3 * nx) | (vi << 32)).ravel().astype(np.int64)
        self.su = su.ravel()
        self.m_t = np.uint32(_TWO31 // t)


def _dlap_chunk(streams, cells, plan, tab, out, nblk, over) -> None:
    """Vector automaton over one chunk of cells (see module notes)."""
    n = cells.size
    live = np.arange(n)
    st = np.zeros(n, dtype=np.int64)
    u = np.zeros(n, dtype=np.uint32)
    v = np.zeros(n, dtype=np.int64)
    buf = {
        name: np.empty(n, dtype=dt)
        for name, dt in [
            ("r", np.uint32),
            ("mu", np.uint32),
            ("thr", np.uint32),
            ("b1", bool),
            ("b2", bool),
            ("su", bool),
            ("f", np.int64),
            ("pk", np.int64),
        ]
    }
    fin_state, done_state = 3 * tab.fin, 3 * tab.done
    over_state = 3 * tab.over
    low32 = np.int64(0xFFFFFFFF)
    ndone = 0
    j = 0
    w_block: Any = None
    while True:
        jj = j % _WORDS_PER_BLOCK
        if jj == 0 or 2 * ndone > live.size:
            keep = st < fin_state
            if not keep.all():
                lost = np.flatnonzero(st == over_state)
                over.extend(live[lost].tolist())
                live, st, u, v = live[keep], st[keep], u[keep], v[keep]
                if jj and live.size:
                    w_block = w_block[:, keep]
            ndone = 0
            if not live.size:
                return
            if jj == 0:
                w_block = streams.block_at(cells[live], j // _WORDS_PER_BLOCK)
        m = live.size
        r, thr, b1, b2, f, pk = (
            buf[x][:m] for x in ("r", "thr", "b1", "b2", "f", "pk")
        )
        w = w_block[jj]
        np.bitwise_and(w, _M31, out=r)
        # outcome: 0 success (r < thr), 1 failure, 2 reject (r >= R)
        np.take(tab.mc, st, out=thr)
        if plan.has_a:
            mu = buf["mu"][:m]
            np.take(tab.mu, st, out=mu)
            np.multiply(mu, u, out=mu)
            thr += mu
        np.greater_equal(r, thr, out=b1)
        np.add(st, b1, out=f)
        np.greater_equal(r, tab.r_low, out=b2)
        if b2.any():
            maybe = np.flatnonzero(b2)
            rej = maybe[r[maybe] >= tab.rr[st[maybe]]]
            f[rej] += 1  # r >= R >= thr: outcome 1 becomes 2
        if plan.has_a:
            su = buf["su"][:m]
            np.take(tab.su, f, out=su)
            np.floor_divide(r, tab.m_t, out=u, where=su)
        np.take(tab.nxv, f, out=pk)
        np.bitwise_and(pk, low32, out=st)
        np.right_shift(pk, 32, out=pk)
        v += pk
        # cells whose magnitude is ready: keep, or restart a "-0"
        np.equal(st, fin_state, out=b1)
        fin = np.flatnonzero(b1)
        if fin.size:
            y = v[fin]
            if plan.tm != 1:
                y = y * plan.tm + u[fin]
            if plan.sd != 1:
                y = y // plan.sd
            neg = (w[fin] >> 31) == 1
            again = neg & (y == 0)
            kept = ~again
            ok = fin[kept]
            yk = y[kept]
            at = live[ok]
            out[at] = np.where(neg[kept], -yk, yk)
            nblk[at] = j // _WORDS_PER_BLOCK + 1
            st[ok] = done_state
            ndone += ok.size
            redo = fin[again]
            st[redo] = 0
            v[redo] = 0
            u[redo] = 0
        j += 1


def discrete_laplace(
    streams: CellStreams,
    scale: tuple[int, int],
    cells: np.ndarray | None = None,
) -> np.ndarray:
    """Exact DLap(t/s) integers, one per selected cell (CKS20 Alg. 2).

    Parameters
    ----------
    streams
        Per-cell keyed random streams.
    scale
        ``(t, s)`` with the Laplace scale ``b = t/s`` (see
        :func:`rational_scale`).
    cells
        Indices of the cells to draw for (default: all).

    Returns
    -------
    int64 array with ``P(k) = (1-p)/(1+p) p^|k|``, ``p = exp(-s/t)``.
    """
    t, s = int(scale[0]), int(scale[1])
    if t <= 0 or s <= 0:
        raise ParameterError(f"scale must be a positive fraction, got {t}/{s}")
    g = math.gcd(t, s)
    plan = _Plan(t // g, s // g)
    every = cells is None
    if cells is None:
        cells = np.arange(streams.n)
    cells = np.asarray(cells, dtype=np.int64)
    out = np.empty(cells.shape, dtype=np.int64)
    nblk = np.zeros(cells.shape, dtype=np.int64)
    flat_cells = cells.ravel()
    if streams.version >= 2:
        # version-2 and 3 streams: inversion of one word per cell when the
        # scale's table is small enough, else CKS on the cells' bodies
        table = inversion_table(plan.t, plan.s)
        if table is not None:
            return discrete_laplace_inversion(
                streams, table, None if every else flat_cells
            ).reshape(cells.shape)
    flat_out, flat_nblk = out.reshape(-1), nblk.reshape(-1)
    scalar: list[int] = []
    if plan.vector:
        tab = _Tables(plan)
        for a in range(0, flat_cells.size, _CHUNK):
            over: list[int] = []
            part = flat_cells[a : a + _CHUNK]
            o = np.empty(part.size, dtype=np.int64)
            nb = np.zeros(part.size, dtype=np.int64)
            _dlap_chunk(streams, part, plan, tab, o, nb, over)
            flat_out[a : a + part.size] = o
            flat_nblk[a : a + part.size] = nb
            scalar.extend(a + i for i in over)
    else:
        scalar = list(range(flat_cells.size))
    for i in scalar:
        read = _Reader(streams, int(flat_cells[i]))
        flat_out[i] = _dlap_scalar(read, plan)
        flat_nblk[i] = read.blocks
    streams.advance(flat_cells, flat_nblk)
    return out


def laplace(
    streams: CellStreams, scale: float, cells: np.ndarray | None = None
) -> np.ndarray:
    """Continuous Laplace(0, scale) floats by inversion (DPpack-style).

    Offered only to replicate tools that use it (DPpack's
    ``LaplaceMechanism``); floating-point Laplace is open to precision
    attacks, so the default for counts is :func:`discrete_laplace`.
    """
    u = streams.uniform(cells) - 0.5
    return -float(scale) * np.sign(u) * np.log1p(-2.0 * np.abs(u))


def dlap_pmf(k: np.ndarray, scale: float) -> np.ndarray:
    """Probability mass of DLap(scale) at integers ``k``.

    >>> float(dlap_pmf(np.array([0]), 1.0)[0])  # (1-p)/(1+p), p=e^-1
    0.46211715726000974
    """
    p = math.exp(-1.0 / scale)
    return (1 - p) / (1 + p) * p ** np.abs(np.asarray(k))


def dlap_variance(scale: float) -> float:
    """Variance ``2p/(1-p)^2`` of DLap(scale), ``p = exp(-1/scale)``."""
    p = math.exp(-1.0 / scale)
    return 2 * p / (1 - p) ** 2


def threshold_for(
    eps: float,
    delta: float,
    adjacency: str,
    noise: str = "discrete_laplace",
    records: int = 1,
    cells: int | None = None,
) -> float:
    """Smallest display threshold that makes an unknown-domain release
    (ε, δ)-DP.

    A cell that exists in one neighbouring data set only is absent (never
    released) in the other. With one record per privacy unit its true
    count is 1; when a unit keeps up to ``records`` records (``k``) in up
    to ``cells`` cells (``c``, at most ``k``; ``k`` when not given), such
    a cell holds at most ``k`` records and one unit can create up to
    ``c`` of them (``2c`` under replace: ``c`` vanish, ``c`` appear).
    Keeping a cell iff its noisy count is ``>= τ`` bounds the chance that
    any of them appears by ``δ`` (a union bound over the ``c'`` cells;
    Karwa & Vadhan 2018, "Finite sample differentially private confidence
    intervals", stability-based histograms, in their add/remove form), the
    noise having scale ``Δ/ε`` with ``Δ = k`` (add/remove) or ``2k``
    (replace).

    Discrete Laplace, ``p = exp(-ε/Δ)``: ``P(N >= m) = p^m / (1+p)``, so
    ``τ = k + ceil(Δ ln(c' / ((1+p) δ)) / ε)``. Continuous Laplace:
    ``P(N > m) = exp(-m ε/Δ) / 2``, so ``τ = k + Δ ln(c' / (2δ)) / ε``.

    >>> threshold_for(1.0, 1e-6, "add_remove")
    15.0
    >>> threshold_for(1.0, 1e-6, "add_remove", records=5) > 5 * 14
    True
    """
    k = int(records)
    c = k if cells is None else min(int(cells), k)
    sens = ADJACENCY_SENSITIVITY[adjacency] * k
    reach = 2 * c if adjacency == "replace" else c
    eps_q = float(exact_epsilon(eps))
    if noise == "discrete_laplace":
        p = math.exp(-eps_q / sens)
        return float(k) + math.ceil(
            sens * math.log(reach / ((1 + p) * delta)) / eps_q
        )
    return k + sens * math.log(reach / (2 * delta)) / eps_q
