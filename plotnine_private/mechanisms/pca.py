"""Private PCA directions and eigenvalues (dppca's g-DPPCA, dp-pca spec §2).

Directions: the Gaussian mechanism on the spherical (multivariate)
Kendall matrix

    K = 2/(n(n-1)) * sum_{i<j} u_ij u_ij^T,   u_ij = (x_j - x_i)/||x_j - x_i||

whose eigenvectors estimate the principal directions of elliptical data
(Kim & Jung 2025). No clipping and no data bounds are needed, because
every term has Frobenius norm 1 (or 0 for a duplicate pair). ``K`` is
invariant to translations of the data, so no centring is needed (or
done) for the directions.

Privacy guarantee of :func:`private_directions`
-----------------------------------------------
Adjacency: replace one row; ``n`` and ``p`` public. ``(eps, delta)``-DP.

Sensitivity (Frobenius = L2 of ``vecd``). Replacing row ``r`` changes
only the ``n - 1`` terms of pairs containing ``r``. Each term is
``A = u u^T`` (``||u|| = 1``) or ``0`` (duplicate rows), and for unit
``u, v``: ``||u u^T - v v^T||_F^2 = 2 - 2 (u^T v)^2 <= 2``, while
``||u u^T - 0||_F = 1``. Hence

    ||K - K'||_F <= 2/(n(n-1)) * (n-1) * sqrt(2) = 2 sqrt(2) / n.

dppca uses the looser ``4/n`` (triangle inequality); we use
``2 sqrt(2)/n``. The incomplete estimator over ``k`` data-independent
perfect matchings (each row in at most ``k`` of the ``k floor(n/2)``
pairs) is normalised by ``1/(k floor(n/2))``; a row replacement changes
at most ``k`` terms, so its sensitivity is
``k sqrt(2)/(k floor(n/2)) = sqrt(2)/floor(n/2)`` (``= 2 sqrt(2)/n`` for
even ``n``). The matchings depend only on ``n`` and the key, never on the
data, so the argument above holds for every fixed draw of them.

Noise: the map ``vecd`` (diagonal entries, and ``sqrt(2)`` times the
strict upper triangle) is an isometry from symmetric matrices with the
Frobenius norm to ``R^{p(p+1)/2}``. Adding ``N(0, sigma^2 I)`` to
``vecd(K)`` and mapping back puts ``N(0, sigma^2)`` on the diagonal and
``N(0, sigma^2/2)`` (symmetric) off it; with sigma from the analytic
Gaussian mechanism for ``(eps, delta, Delta)`` this is ``(eps, delta)``-DP
(``calibration="classic"`` uses dppca's formula, only proved for
``eps < 1``). The eigenvectors of the noisy matrix are post-processing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ParameterError
from .gaussian import gaussian_sigma
from .quantile import upper_quantile
from .randomness import derive_key, keyed_normal, keyed_uniform, master_key

__all__ = [
    "KendallMatrix",
    "PrivateDirections",
    "PrivateEigenvalues",
    "kendall_sensitivity",
    "private_directions",
    "private_eigenvalues",
    "random_matching",
    "spherical_kendall",
]

_BLOCK_FLOATS = 2_000_000  # bounded memory: ~16 MB of differences


@dataclass(frozen=True)
class KendallMatrix:
    """A spherical Kendall matrix and how it was computed.

    Attributes
    ----------
    matrix
        ``(p, p)`` symmetric, trace <= 1.
    estimator
        ``"exact"`` (all pairs) or ``"incomplete"`` (``matchings``
        random perfect matchings).
    matchings
        Number of matchings (``None`` for exact).
    n_pairs
        Number of pairs averaged.
    sensitivity
        Frobenius (L2) sensitivity under replace-one adjacency.
    """

    matrix: np.ndarray
    estimator: str
    matchings: int | None
    n_pairs: int
    sensitivity: float


def _check_matrix(x: Any) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 2:
        raise ParameterError(
            "X must be a 2-D array with at least 2 rows and 2 columns, got "
            f"shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ParameterError("X must be finite: remove NaN/inf values.")
    return arr


def kendall_sensitivity(
    n: int, estimator: str = "exact", matchings: int | None = None
) -> float:
    """Frobenius sensitivity of the (incomplete) spherical Kendall matrix.

    ``2 sqrt(2)/n`` for the exact U-statistic; ``sqrt(2)/floor(n/2)`` for
    ``k`` perfect matchings (independent of ``k``). See the module
    docstring for the proof.

    >>> round(kendall_sensitivity(1000), 6)
    0.002828
    """
    if estimator == "exact":
        return 2.0 * math.sqrt(2.0) / n
    return math.sqrt(2.0) / (n // 2)


def _unit_outer_sum(d: np.ndarray) -> np.ndarray:
    """``sum_r u_r u_r^T`` for the rows of ``d`` normalised (0 rows skip)."""
    nrm = np.sqrt(np.einsum("ij,ij->i", d, d))
    keep = nrm > 0
    u = d[keep] / nrm[keep, None]
    return u.T @ u


def _exact_sum(x: np.ndarray) -> np.ndarray:
    n, p = x.shape
    b = max(8, int(math.sqrt(_BLOCK_FLOATS / p)))
    total = np.zeros((p, p))
    for a0 in range(0, n, b):
        a = x[a0 : a0 + b]
        for b0 in range(a0, n, b):
            bb = x[b0 : b0 + b]
            d = bb[None, :, :] - a[:, None, :]
            if b0 == a0:
                iu = np.triu_indices(len(a), k=1, m=len(bb))
                d = d[iu]
            else:
                d = d.reshape(-1, p)
            total += _unit_outer_sum(d)
    return total


def random_matching(n: int, key: bytes) -> np.ndarray:
    """A uniformly random perfect matching of ``range(n)`` (keyed).

    Returns ``(floor(n/2), 2)`` index pairs; with odd ``n`` one row is
    left out. Depends only on ``n`` and the key, not on data.
    """
    perm = np.argsort(keyed_uniform(key, n), kind="stable")
    m = n // 2
    return perm[: 2 * m].reshape(m, 2)


def spherical_kendall(
    x: Any,
    *,
    estimator: str = "auto",
    matchings: int | None = None,
    max_pairs: int = 10_000_000,
    seed: int | None = None,
    key_parts: Sequence[Any] = (),
) -> KendallMatrix:
    """Spherical Kendall matrix, exact or by random perfect matchings.

    Parameters
    ----------
    x
        ``(n, p)`` finite data. Duplicate rows are allowed (their pair
        contributes 0).
    estimator
        ``"exact"``: all ``n(n-1)/2`` pairs, blocked matrix products
        (``O(n^2 p^2)`` flops, ``O(p^2 + block)`` memory).
        ``"incomplete"``: ``k`` random perfect matchings,
        ``k floor(n/2)`` pairs. ``"auto"``: exact when
        ``n(n-1)/2 <= max_pairs``, else incomplete.
    matchings
        ``k`` for the incomplete estimator; default
        ``max(1, min(n - 1, max_pairs // floor(n/2)))``.
    max_pairs
        Work budget of ``"auto"``.
    seed, key_parts
        Key of the (data-independent) matchings.

    Examples
    --------
    >>> k = spherical_kendall([[0, 0], [1, 0], [2, 0]])
    >>> k.matrix.tolist()
    [[1.0, 0.0], [0.0, 0.0]]
    """
    arr = _check_matrix(x)
    n, p = arr.shape
    if estimator not in ("auto", "exact", "incomplete"):
        raise ParameterError(
            "estimator must be 'auto', 'exact' or 'incomplete', got "
            f"{estimator!r}."
        )
    if estimator == "auto":
        exact = n * (n - 1) // 2 <= max_pairs
        estimator = "exact" if exact else "incomplete"
    if estimator == "exact":
        total = _exact_sum(arr)
        pairs = n * (n - 1) // 2
        return KendallMatrix(
            total / pairs, "exact", None, pairs, kendall_sensitivity(n)
        )
    m = n // 2
    if matchings is None:
        matchings = max(1, min(n - 1, max_pairs // m))
    if isinstance(matchings, bool) or int(matchings) != matchings or (
        matchings < 1
    ):
        raise ParameterError(
            f"matchings must be a positive integer, got {matchings!r}."
        )
    matchings = int(matchings)
    secret = master_key(seed)
    total = np.zeros((p, p))
    chunk = max(1, _BLOCK_FLOATS // p)
    for t in range(matchings):
        key = derive_key(secret, "kendall_matching", t, *key_parts)
        pairs = random_matching(n, key)
        for c0 in range(0, m, chunk):
            pr = pairs[c0 : c0 + chunk]
            total += _unit_outer_sum(arr[pr[:, 1]] - arr[pr[:, 0]])
    return KendallMatrix(
        total / (matchings * m),
        "incomplete",
        matchings,
        matchings * m,
        kendall_sensitivity(n, "incomplete", matchings),
    )


def symmetric_gaussian_noise(p: int, sigma: float, key: bytes) -> np.ndarray:
    """Symmetric noise: ``N(0, s^2)`` diagonal, ``N(0, s^2/2)`` off it.

    dppca's layout: ``z[:p]`` on the diagonal, the rest filled into the
    strict lower triangle column by column, divided by ``sqrt(2)``.
    """
    z = sigma * keyed_normal(key, p * (p + 1) // 2)
    e = np.diag(z[:p])
    rows, cols = np.tril_indices(p, k=-1)
    order = np.lexsort((rows, cols))  # column-major
    off = z[p:] / math.sqrt(2.0)
    e[rows[order], cols[order]] = off
    e[cols[order], rows[order]] = off
    return e


def _orient(vectors: np.ndarray) -> np.ndarray:
    """Post-processing sign convention: largest |entry| of a column > 0."""
    idx = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[idx, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1
    return vectors * signs


@dataclass(frozen=True)
class PrivateDirections:
    """Private principal directions.

    Attributes
    ----------
    vectors
        ``(p, p)`` orthonormal; column ``j`` is PC ``j+1`` (decreasing
        noisy Kendall eigenvalue).
    eps, delta
        Budget spent.
    sigma
        Noise SD on ``vecd(K)``.
    sensitivity
        Frobenius sensitivity used.
    kendall
        Estimator details (the non-private matrix itself is dropped).
    """

    vectors: np.ndarray
    eps: float
    delta: float
    sigma: float
    sensitivity: float
    estimator: str
    matchings: int | None
    n_pairs: int
    calibration: str


def private_directions(
    x: Any,
    eps: float,
    delta: float,
    *,
    calibration: str = "analytic",
    estimator: str = "auto",
    matchings: int | None = None,
    max_pairs: int = 10_000_000,
    seed: int | None = None,
    key_parts: Sequence[Any] = (),
) -> PrivateDirections:
    """g-DPPCA: eigenvectors of the noisy spherical Kendall matrix.

    Privacy: ``(eps, delta)``-DP under replace-one adjacency with ``n``,
    ``p`` public; sensitivity ``2 sqrt(2)/n`` (exact) or
    ``sqrt(2)/floor(n/2)`` (matchings), proved in the module docstring.

    Parameters
    ----------
    x
        ``(n, p)`` finite data (no centring needed: ``K`` is translation
        invariant).
    eps, delta
        Privacy parameters.
    calibration
        ``"analytic"`` (Balle-Wang) or ``"classic"`` (dppca).
    estimator, matchings, max_pairs
        See :func:`spherical_kendall`.
    seed, key_parts
        Noise key.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(size=(300, 3)) * [5, 1, 1]
    >>> v = private_directions(x, 5.0, 1e-5, seed=1).vectors
    >>> bool(abs(v[0, 0]) > 0.95)
    True
    """
    arr = _check_matrix(x)
    n, p = arr.shape
    sens_check = gaussian_sigma(eps, delta, 1.0, calibration)
    del sens_check
    kendall = spherical_kendall(
        arr,
        estimator=estimator,
        matchings=matchings,
        max_pairs=max_pairs,
        seed=seed,
        key_parts=("directions", *key_parts),
    )
    sigma = gaussian_sigma(eps, delta, kendall.sensitivity, calibration)
    key = derive_key(master_key(seed), "kendall_noise", *key_parts)
    noisy = kendall.matrix + symmetric_gaussian_noise(p, sigma, key)
    values, vectors = np.linalg.eigh(noisy)
    order = np.argsort(values)[::-1]
    return PrivateDirections(
        vectors=_orient(vectors[:, order]),
        eps=eps,
        delta=delta,
        sigma=sigma,
        sensitivity=kendall.sensitivity,
        estimator=kendall.estimator,
        matchings=kendall.matchings,
        n_pairs=kendall.n_pairs,
        calibration=calibration,
    )


def _nonincreasing(v: np.ndarray) -> np.ndarray:
    """Isotonic (non-increasing) least-squares fit, pool adjacent violators."""
    blocks: list[list[float]] = []  # [sum, count]
    for value in v.tolist():
        blocks.append([value, 1.0])
        while len(blocks) > 1 and (
            blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]
        ):
            s, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
    return np.concatenate([np.full(int(c), s / c) for s, c in blocks])


@dataclass(frozen=True)
class PrivateEigenvalues:
    """Private variances of the projected data (scree values).

    Attributes
    ----------
    values
        ``k`` private eigenvalues (clipped at 0, non-increasing if mono).
    pve
        ``values / values.sum()`` (zeros if the sum is 0).
    clip
        Clipping constant ``C`` (public or privately estimated).
    clip_source
        ``"public"`` or ``"private_quantile"``.
    eps, delta, sigma
        Budget and noise SD of the clipped mean.
    """

    values: np.ndarray
    pve: np.ndarray
    clip: float
    clip_source: str
    eps: float
    delta: float
    sigma: float
    eps_clip: float


def private_eigenvalues(
    y: Any,
    eps: float,
    delta: float,
    *,
    clip: float | None = None,
    clip_quantile: float = 0.99,
    clip_share: float = 0.25,
    mono: bool = True,
    calibration: str = "analytic",
    seed: int | None = None,
    key_parts: Sequence[Any] = (),
) -> PrivateEigenvalues:
    """dppca's "clipped" scree values on projected data ``y = X V[:, :k]``.

    Pairs rows by a keyed random perfect matching (``m = floor(n/2)``
    pairs), forms ``W = ((y_b - y_a)/sqrt(2))**2`` (unbiased for the
    variance of each column, no centring needed), and releases
    ``mean(min(W, C)) + N(0, sigma^2)`` per column, clipped at 0 and made
    non-increasing (``mono``).

    Privacy: replace-one adjacency, ``n``, ``k`` public, ``y`` computed
    with already-released (private) directions. Replacing one row changes
    one pair, whose clipped ``W`` vector lies in ``[0, C]^k``: L2
    sensitivity ``sqrt(k) C / m``, Gaussian mechanism (analytic), so
    ``(eps, delta)``-DP. dppca requires a public ``C``; if ``clip`` is
    ``None`` we spend ``clip_share * eps`` on a Durfee upper quantile
    (level ``clip_quantile``) of the per-pair maxima ``max_j W_j``
    (``eps``-DP, one pair per row) and the rest on the mean.
    """
    arr = np.asarray(y, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ParameterError(
            f"y must be an (n, k) array with n >= 2, got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ParameterError("y must be finite (no NaN/inf).")
    n, k = arr.shape
    secret = master_key(seed)
    pairs = random_matching(
        n, derive_key(secret, "scree_matching", *key_parts)
    )
    m = len(pairs)
    w = (arr[pairs[:, 1]] - arr[pairs[:, 0]]) ** 2 / 2.0
    eps_mean, eps_clip = eps, 0.0
    if clip is None:
        if not 0 < clip_share < 1:
            raise ParameterError(
                f"clip_share must lie in (0, 1), got {clip_share!r}."
            )
        eps_clip = clip_share * eps
        eps_mean = eps - eps_clip
        c = upper_quantile(
            w.max(axis=1),
            clip_quantile,
            eps_clip,
            seed=seed,
            key_parts=("scree_clip", *key_parts),
        )
        source = "private_quantile"
    else:
        if not (math.isfinite(clip) and clip > 0):
            raise ParameterError(f"clip must be > 0, got {clip!r}.")
        c = float(clip)
        source = "public"
    sens = math.sqrt(k) * c / m
    sigma = gaussian_sigma(eps_mean, delta, sens, calibration)
    key = derive_key(secret, "scree_noise", *key_parts)
    values = np.minimum(w, c).mean(axis=0) + sigma * keyed_normal(key, k)
    values = np.maximum(values, 0.0)
    if mono:
        values = _nonincreasing(values)
    total = values.sum()
    pve = values / total if total > 0 else np.zeros_like(values)
    return PrivateEigenvalues(
        values=values,
        pve=pve,
        clip=c,
        clip_source=source,
        eps=eps,
        delta=delta,
        sigma=sigma,
        eps_clip=eps_clip,
    )
