"""Durfee's unbounded private quantiles and the private PCA score frame.

Implements dppca's frame (Durfee 2023; ``docs/mechanisms.md``): a one-sided
search on the geometric grid ``t_i = beta**i + lower - 1`` (i >= 1), its
two-sided (signed) version, and a square frame from two signed medians and
the radial 0.99 quantile.

Privacy guarantee (all functions here)
--------------------------------------
Adjacency: replace one row (``n`` fixed and public). Pure ``eps``-DP, no
delta. Public: ``q``, ``lower``, ``beta``, ``max_steps``, ``n``.

Proof sketch for the one-sided search with one-sided exponential noise of
rate ``eps/2`` on the threshold ``T = q n + E_0`` and on every query
``c_i + E_i`` (``c_i = #{x_j < t_i}``), stopping at the first ``i`` with
``c_i + E_i >= T``: replacing ``z`` by ``z'`` changes every ``c_i`` by the
same sign (all ``+1`` on the ``t_i`` between ``z`` and ``z'``, else 0),
so the queries are *monotone* in the sense of Lyu, Su & Li (2017). If the
neighbour ``D'`` has the larger counts, map the noise of ``D`` to that of
``D'`` by ``E_0 -> E_0 + 1`` and ``E_k -> E_k + 1`` for the stopping index
``k``: the run on ``D'`` stops at the same ``k``. Shifting an exponential
upward stays inside its support and costs a density ratio ``e^{eps/2}``
each, so ``P_D(k) <= e^{eps} P_D'(k)``. The other direction only needs
``E_k -> E_k + 1`` (cost ``eps/2``). The capped outcome (no stop) is
covered by the same map. Hence ``eps``-DP. This is Lyu, Su & Li's
(2017, PVLDB 10(6)) result for monotonic queries (query noise
``Delta/eps_2`` instead of ``2 Delta/eps_2``; their Theorem 2 in our
reading), redone for one-sided exponential noise. The generic
``eps_1 + 2 eps_2`` (1.5x) bound is for queries whose changes can have
both signs, which one replace never gives.

Add/remove one row (``n`` not public) costs the same ``eps``: the
threshold moves by ``q`` and the counts by a 0-then-1 step in ``i``; the
coupling of ``ranges.py`` (Durfee 2023, written out there) shifts ``E_0`` and
``E_k`` upward by at most 1 each. Written out in ``ranges.py``.

The signed search runs two such searches with ``eps/2`` each
(``eps`` by sequential composition). The frame composes three releases
with ``eps/3`` each; the radial distances are computed from the already
released centre, and replacing one row changes one distance.

Privacy units (``records = k``): when one unit (a person) keeps up to
``k`` rows, two neighbouring data sets differ in up to ``k`` rows, a path
of at most ``k`` one-row steps (replacements, or additions and removals
where the unit's row counts differ). Every function here takes
``records=k`` and runs with ``eps / k``: each step costs ``eps / k``
under either adjacency (above, and ``ranges.py``), so the path costs
``eps`` (group privacy, Dwork & Roth 2014, Thm 2.2). The counts ``c_i``
then move by up to ``k`` with mixed signs, so the one-step coupling
above does not apply to the whole unit directly.

Floating point: the noise is continuous (inverse CDF of keyed uniforms),
but it is only compared with integer counts and the output is a grid
point, so the released value does not carry the noise's low bits.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..domains.grid_index import settle
from ..errors import ParameterError
from ..release.count_mechanisms import check_bound
from ..streams.randomness import derive_key, keyed_uniform

__all__ = [
    "FRAME_TAIL",
    "FRAME_VERSIONS",
    "PrivateFrame",
    "private_frame",
    "signed_quantile",
    "tail_level",
    "upper_quantile",
]

#: versions of the PCA frame release and the name each gives its query
#: (v1, the first, names none: its releases keep the identities they had)
FRAME_VERSIONS = {"v1": None, "v2": "pnp-frame-v2"}
#: v2's bound on the chance that the radius search's noisy target passes
#: every distance (the start of the radius's heavy tail, :func:`tail_level`)
FRAME_TAIL = 0.01

_DBL_MAX = float(np.finfo(np.float64).max)
_CAP_MESSAGE = (
    "Durfee quantile search reached `max_steps`; consider a smaller `beta` "
    "only with a larger step limit, or increase the step limit."
)
_SIGNED_CAP_MESSAGE = (
    "Durfee signed quantile search reached `max_steps`; the capped side was "
    "not selected. Increase `max_steps` or rescale the data."
)


def _check_common(
    x: Any, q: float, eps: float, beta: float, max_steps: int
) -> np.ndarray:
    # no values is a data set like any other: the searches are defined for
    # n = 0 (every count is 0) and must release noise, not an error that
    # would tell an empty data set apart
    arr = np.asarray(x, dtype=float).ravel()
    if not np.all(np.isfinite(arr)):
        raise ParameterError(
            "x must be finite: remove NaN/inf values before the quantile."
        )
    if not (0 < q < 1):
        raise ParameterError(f"q must lie strictly in (0, 1), got {q!r}.")
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(f"eps must be a finite number > 0, got {eps!r}.")
    if not (math.isfinite(beta) and beta > 1):
        raise ParameterError(
            f"beta must be a finite number > 1, got {beta!r}."
        )
    if (
        isinstance(max_steps, bool)
        or not isinstance(max_steps, (int, np.integer))
        or max_steps < 1
    ):
        raise ParameterError(
            f"max_steps must be a positive integer, got {max_steps!r}."
        )
    return arr


def _per_record(eps: float, records: Any) -> float:
    """The budget of one row when a unit keeps up to ``records`` rows
    (group privacy over at most ``records`` one-row steps)."""
    check_bound(records, None)
    return eps / int(records)


def _exponential(key: bytes, n: int, offset: int, rate: float) -> np.ndarray:
    """Exp(rate) draws from a keyed stream: ``-log(U)/rate``."""
    return -np.log(keyed_uniform(key, n, offset)) / rate


def _grid(i: np.ndarray, lower: float, beta: float) -> np.ndarray:
    """``t_i = beta**i + lower - 1`` with non-finite values -> DBL_MAX."""
    with np.errstate(over="ignore"):
        t = np.power(beta, i.astype(float)) + lower - 1
    t[~np.isfinite(t)] = _DBL_MAX
    return t


class _SortedCounts:
    """``c_i = #{x < t_i}`` by binary search in the sorted values."""

    def __init__(self, values: np.ndarray, lower: float, beta: float):
        self.xs = np.sort(values)
        self.lower, self.beta = lower, beta

    def __call__(self, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = _grid(i, self.lower, self.beta)
        return t, np.searchsorted(self.xs, t, side="left")


class _GridCounts:
    """``c_i = #{x < t_i}`` for every grid point at once, without a sort.

    Each value's first grid point above it, ``j(x) = min{i : t_i > x}``,
    is guessed from ``log(x - lower + 1) / log(beta)`` and then moved
    until ``t_{j-1} <= x < t_j`` holds exactly on the same floats ``t_i``;
    then ``c_i = #{x : j(x) <= i}``, a running sum of a bincount. The
    counts are the sorted search's, so the search is the same function
    of the data and its stream (``O(n)`` instead of ``O(n log n)``).
    :meth:`make` returns None where the guess does not settle in a few
    moves (a grid whose points tie, e.g. a huge ``lower``): sort then.
    """

    def __init__(self, t: np.ndarray, counts: np.ndarray):
        self.t, self.counts = t, counts

    @classmethod
    def make(
        cls, values: np.ndarray, lower: float, beta: float, steps: int
    ) -> _GridCounts | None:
        t = _grid(np.arange(steps + 2), lower, beta)
        if np.any(t[1:] < t[:-1]):  # pragma: no cover - pow is monotone
            return None
        # the guess only starts the exact moves below, so its rounding
        # (a product by 1/log(beta), in place) cannot change the counts
        guess = np.subtract(values, lower)
        with np.errstate(over="ignore", invalid="ignore"):
            np.log1p(guess, out=guess)
        guess *= 1.0 / math.log(beta)
        np.ceil(guess, out=guess)
        np.fmax(guess, 1.0, out=guess)  # NaN (none expected) -> 1
        np.fmin(guess, steps + 1.0, out=guess)
        j = guess.astype(np.intp)
        del guess
        # t_up[j] = t_j except t_up[steps + 1] = inf (no move past the
        # last point); t_down[j] = t_(j-1) except t_down[1] = -inf
        t_up = t.copy()
        t_up[steps + 1] = np.inf
        t_down = np.concatenate(([-np.inf, -np.inf], t[1:-1]))
        if not settle(j, values, t_up, t_down, strict=False):
            return None
        return cls(t, np.cumsum(np.bincount(j, minlength=steps + 2)))

    def __call__(self, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.t[i], self.counts[i]


def _counter(
    values: np.ndarray, lower: float, beta: float, steps: int
) -> _SortedCounts | _GridCounts:
    return _GridCounts.make(values, lower, beta, steps) or _SortedCounts(
        values, lower, beta
    )


def tail_level(
    q: float, eps: float, n: int, records: int = 1, tail: float = 0.01
) -> float:
    """The level at which an ``eps`` search over ``n`` values reaches
    past every value with chance at most ``tail``: ``q``, or lower.

    :func:`upper_quantile`'s target is ``q n + E_0``, ``E_0`` exponential
    of rate ``r = eps / (2 records)``. Once it is above ``n`` no count
    can reach it, and the search climbs the grid until one query's noise
    covers the gap: the steps past the largest value have a tail like
    ``1/s`` and the result grows as ``beta**s`` (10-100x the largest
    value in about 0.1% of runs at ``r (1 - q) n`` near 2).
    ``P(q n + E_0 > n) = exp(-r (1 - q) n)``, so the level
    ``1 - ln(1/tail) / (r n)`` bounds it by ``tail``; a level below 0.5
    is raised to 0.5 (too few values for the budget). Every input is
    public, so using the level costs nothing.

    >>> tail_level(0.99, 0.1, 10**6)
    0.99
    >>> round(tail_level(0.99, 5 / 12, 250), 3)
    0.912
    """
    rate = eps / (2.0 * int(records))
    guarded = 1.0 - math.log(1.0 / tail) / (rate * n)
    return max(0.5, min(q, guarded))


_FIRST_BLOCK = 1024  # queries of a search's first block of draws


def _search(
    counter: Any,
    n: int,
    q: float,
    rate: float,
    lower: float,
    beta: float,
    max_steps: int,
    key: bytes,
) -> tuple[float, int, bool]:
    """One-sided Durfee search over ``n`` values, whose counts below
    grid points ``counter`` gives (:class:`_GridCounts`, or
    :class:`_SortedCounts` on sorted values).

    Returns ``(t_i, i, capped)``. Noise for query ``i`` is the keyed
    uniform at offset ``i`` (offset 0 is the threshold), so the draws do
    not depend on the block size used here.
    """
    target = q * n + _exponential(key, 1, 0, rate)[0]
    # a keyed draw of 1024 words costs about what one of 64 does (numpy's
    # per-call overhead): most searches end within the first block
    start, block = 1, _FIRST_BLOCK
    while start <= max_steps:
        stop = min(start + block, max_steps + 1)
        i = np.arange(start, stop)
        t, counts = counter(i)
        noisy = counts + _exponential(key, i.size, start, rate)
        hit = np.flatnonzero(noisy >= target)
        if hit.size:
            j = int(hit[0])
            return float(t[j]), int(i[j]), False
        start, block = stop, block * 2
    t_last = _grid(np.array([max_steps]), lower, beta)[0]
    return float(t_last), max_steps, True


def upper_quantile(
    x: Any,
    q: float,
    eps: float,
    lower: float = 0.0,
    beta: float = 1.01,
    max_steps: int = 5000,
    *,
    key: bytes,
    records: int = 1,
) -> float:
    """One-sided unbounded private quantile (Durfee 2023; dppca NEWEST).

    Noisy target ``T = q n + E_0``; for ``i = 1, 2, ...`` the query is
    ``c_i = #{x < t_i}`` with ``t_i = beta**i + lower - 1``; the search
    returns the first ``t_i`` with ``c_i + E_i >= T``. Every ``E`` is an
    independent one-sided exponential with rate ``eps/2`` (mean
    ``2/eps``, count units). After ``max_steps`` queries it warns and
    returns ``t_max_steps``.

    Privacy: pure ``eps``-DP under replace-one adjacency with ``n``,
    ``q``, ``lower``, ``beta`` and ``max_steps`` public (module docstring
    for the proof). ``lower`` must be a public lower bound of the data.

    Cost: one pass that places every value between two grid points, and
    a running sum (``O(n + steps)``; a sort where the grid's points tie),
    no pass over the data per step.

    Parameters
    ----------
    x
        Values, all ``>= lower`` and finite.
    q
        Quantile level in (0, 1).
    eps
        Privacy parameter (> 0).
    lower
        Public lower bound of ``x``.
    beta
        Grid base (> 1).
    max_steps
        Maximum number of grid queries.
    key
        Stream key of this release (16 bytes or more), derived by the
        release engine from the secret, the release's identity and a digest
        of the data: different releases never share noise.
    records
        Rows one privacy unit keeps at most (``k``): the search runs
        with ``eps / k``, so it is ``eps``-DP for the unit (module
        docstring).

    Returns
    -------
    float
        A grid point ``t_i >= lower + beta - 1``.

    Examples
    --------
    >>> x = [abs(i - 250) / 50 for i in range(501)]
    >>> upper_quantile(x, 0.99, eps=1e9, key=bytes(16))
    4.995801975356177
    """
    arr = _check_common(x, q, eps, beta, max_steps)
    if not math.isfinite(lower):
        raise ParameterError(f"lower must be finite, got {lower!r}.")
    if arr.size and arr.min() < lower:
        raise ParameterError(
            f"upper_quantile requires a valid public lower bound: found a "
            f"value {arr.min()!r} below lower={lower!r}; pass a smaller "
            "`lower`."
        )
    eps = _per_record(eps, records)
    key = derive_key(key, "durfee_upper_quantile")
    counter = _counter(arr, lower, beta, max_steps)
    value, _, capped = _search(
        counter, arr.size, q, eps / 2, lower, beta, max_steps, key
    )
    if capped:
        warnings.warn(_CAP_MESSAGE, UserWarning, stacklevel=2)
    return value


def _folded(arr: np.ndarray, slope: float) -> np.ndarray:
    """``min(max(slope * x + |slope| - 1, 0), DBL_MAX)``, evaluated in
    that order (the same floats) in one array."""
    y = np.multiply(arr, slope)
    y += abs(slope)
    y -= 1
    np.maximum(y, 0.0, out=y)
    return np.minimum(y, _DBL_MAX, out=y)


def signed_quantile(
    x: Any,
    q: float,
    eps: float,
    beta: float = 1.01,
    max_steps: int = 5000,
    *,
    key: bytes,
    records: int = 1,
) -> float:
    """Two-sided (fully unbounded) private quantile (Durfee Alg. 4).

    Runs the one-sided search with ``eps/2`` each on
    ``y+ = max(beta x + beta - 1, 0)`` at level ``q`` and on
    ``y- = max(-beta x + beta - 1, 0)`` at level ``1 - q`` (both always
    run, ``lower = 0``). With stopping indices ``i+``, ``i-`` and
    ``k = i - 1``, it returns ``beta**k+ - 1`` if the positive side was not
    capped and ``k+ > 0``; else ``-(beta**k- - 1)`` if the negative side
    was not capped and ``k- > 0``; else exactly 0. A capped side warns once.

    Privacy: pure ``eps``-DP under replace-one adjacency (two ``eps/2``
    searches composed; ``n``, ``q``, ``beta``, ``max_steps`` public);
    for a unit of up to ``records`` rows with ``records=k`` (``eps / k``
    per row, module docstring).

    Returns
    -------
    float
        A point of the signed grid ``{0, +-(beta**k - 1)}``.

    Examples
    --------
    >>> x = [(i - 250) / 50 for i in range(501)]
    >>> signed_quantile(x, 0.5, eps=1e9, key=bytes(16))
    0.010000000000000009
    """
    arr = _check_common(x, q, eps, beta, max_steps)
    eps = _per_record(eps, records)
    with np.errstate(over="ignore"):
        y_pos = _folded(arr, beta)
        y_neg = _folded(arr, -beta)
    rate = eps / 4
    key_pos = derive_key(key, "durfee_signed_quantile", "+")
    key_neg = derive_key(key, "durfee_signed_quantile", "-")
    n = arr.size
    _, i_pos, cap_pos = _search(
        _counter(y_pos, 0.0, beta, max_steps),
        n,
        q,
        rate,
        0.0,
        beta,
        max_steps,
        key_pos,
    )
    _, i_neg, cap_neg = _search(
        _counter(y_neg, 0.0, beta, max_steps),
        n,
        1 - q,
        rate,
        0.0,
        beta,
        max_steps,
        key_neg,
    )
    if cap_pos or cap_neg:
        warnings.warn(_SIGNED_CAP_MESSAGE, UserWarning, stacklevel=2)
    k_pos, k_neg = i_pos - 1, i_neg - 1
    if not cap_pos and k_pos > 0:
        return float(beta**k_pos - 1)
    if not cap_neg and k_neg > 0:
        return float(-(beta**k_neg - 1))
    return 0.0


@dataclass(frozen=True)
class PrivateFrame:
    """A square private frame ``center +- (1 + inflate) radius``.

    Attributes
    ----------
    xlim, ylim
        Frame limits (private).
    center
        The two private signed medians.
    radius
        Private radial 0.99 quantile ``R`` (before inflation).
    half_width
        ``(1 + inflate) * R``.
    eps
        Budget spent (``eps/3`` per mechanism).
    """

    xlim: tuple[float, float]
    ylim: tuple[float, float]
    center: tuple[float, float]
    radius: float
    half_width: float
    eps: float
    #: level of the radial quantile searched (``q``, or lower with a tail)
    level: float = 0.99


def private_frame(
    scores: Any,
    eps: float,
    inflate: float = 0.2,
    *,
    key: bytes,
    q: float = 0.99,
    beta: float = 1.01,
    max_steps: int = 5000,
    records: int = 1,
    tail: float | None = None,
    size: int | None = None,
) -> PrivateFrame:
    """Square private frame for 2-D scores (dppca NEWEST ``dp_frame``).

    ``c_x``, ``c_y`` are signed medians with ``eps/3`` each; ``R`` is the
    one-sided ``q = 0.99`` quantile (``lower = 0``, ``eps/3``) of the
    distances ``||s_i - c||``; the frame is
    ``c +- (1 + inflate) R`` on both axes. With ``tail`` (the frame's
    version 2, ``FRAME_TAIL``) the radius is searched at
    ``tail_level(q, eps/3, n, records, tail)`` instead of ``q``, which
    bounds by ``tail`` the chance that its noisy target passes every
    distance (then the radius may be 10-100x the largest one).

    Privacy: pure ``eps``-DP under replace-one adjacency (three releases
    composed sequentially), ``n`` public. No delta. With ``records=k``
    the same for a unit of up to ``k`` rows (each search with ``eps / k``:
    a unit moves up to ``k`` scores, and up to ``k`` radial distances
    from the released centre).

    Parameters
    ----------
    scores
        ``(n, 2)`` array of finite values.
    eps
        Frame budget (> 0).
    inflate
        Relative enlargement of the radius (``>= 0``).
    key
        Stream key (see :func:`upper_quantile`).
    tail
        ``None`` (version 1): the radius at level ``q``; a number in
        (0, 1): the level lowered by :func:`tail_level` (public: it
        depends on ``q``, ``eps``, ``n`` and ``records`` only).
    size
        The public ``n`` the tail's level is computed from (``None``: the
        number of scores, public under replace-one adjacency). Under a
        privacy unit the scores kept are private, so a PCA passes its
        public size; the searches themselves read the true counts, which
        their proofs allow under either adjacency.

    Examples
    --------
    >>> import numpy as np
    >>> s = np.column_stack([np.arange(-50, 51)] * 2) / 10
    >>> private_frame(s, eps=1e9, key=bytes(16)).xlim[0] < -5
    True
    """
    s = np.asarray(scores, dtype=float)
    # under a public size no score is a data set like any other
    least = 1 if size is None else 0
    if s.ndim != 2 or s.shape[1] != 2 or s.shape[0] < least:
        raise ParameterError(
            f"scores must be an (n, 2) array with n >= 1, got shape {s.shape}."
        )
    if not np.all(np.isfinite(s)):
        raise ParameterError("scores must be finite (no NaN/inf).")
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(f"eps must be a finite number > 0, got {eps!r}.")
    if not (math.isfinite(inflate) and inflate >= 0):
        raise ParameterError(f"inflate must be >= 0, got {inflate!r}.")
    if tail is not None and not (
        isinstance(tail, (float, int))
        and not isinstance(tail, bool)
        and 0.0 < tail < 1.0
    ):
        raise ParameterError(
            f"tail must be None or a float in (0, 1), got {tail!r}."
        )
    part = eps / 3
    cx = signed_quantile(
        s[:, 0],
        0.5,
        part,
        beta,
        max_steps,
        key=derive_key(key, "cx"),
        records=records,
    )
    cy = signed_quantile(
        s[:, 1],
        0.5,
        part,
        beta,
        max_steps,
        key=derive_key(key, "cy"),
        records=records,
    )
    r = np.hypot(s[:, 0] - cx, s[:, 1] - cy)
    public_n = len(r) if size is None else int(size)
    level = q if tail is None else tail_level(q, part, public_n, records, tail)
    radius = upper_quantile(
        r,
        level,
        part,
        0.0,
        beta,
        max_steps,
        key=derive_key(key, "r"),
        records=records,
    )
    if not (math.isfinite(radius) and radius > 0):  # pragma: no cover
        raise ParameterError(
            "The private frame radius is not positive. Try a larger "
            "privacy budget."
        )
    half = (1 + inflate) * radius
    return PrivateFrame(
        xlim=(cx - half, cx + half),
        ylim=(cy - half, cy + half),
        center=(cx, cy),
        radius=radius,
        half_width=half,
        eps=eps,
        level=level,
    )
