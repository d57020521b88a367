"""Private scree values of projected PCA data (dppca's clipped eigenvalues).

The second half of g-DPPCA (docs/mechanisms.md): given data projected on
already-released private directions, release the variance of each column
from keyed random pairs of rows, clipped and with Gaussian noise. Split
out of :mod:`.pca`, which re-exports every name.

Two versions (``docs/mechanisms.md``, "Versions of the eigenvalue
release"): :func:`private_eigenvalues` (v1) pairs projected data by its
own keyed matching; :func:`private_scree` (v2) pairs consecutive rows of
a given data-free order in blocks. Same privacy map and clip level.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..finite import all_finite
from ..release.count_mechanisms import check_bound
from ..samplers.gaussian import gaussian_sigma, round_to_resolution
from ..streams.randomness import derive_key, keyed_normal, keyed_permutation
from .quantile import upper_quantile

__all__ = [
    "SCREE_VERSIONS",
    "PrivateEigenvalues",
    "pair_maxima",
    "pair_variances",
    "private_eigenvalues",
    "private_scree",
    "random_matching",
]

#: versions of the scree release and the name each gives its query (v1,
#: the first, names none: its releases keep the identities they had)
SCREE_VERSIONS = {"v1": None, "v2": "pnp-scree-v2"}


def random_matching(n: int, key: bytes) -> np.ndarray:
    """A uniformly random perfect matching of ``range(n)`` (keyed).

    Returns ``(floor(n/2), 2)`` index pairs; with odd ``n`` one row is
    left out. Depends only on ``n`` and the key, not on data.
    """
    perm = keyed_permutation(key, n)
    m = n // 2
    return perm[: 2 * m].reshape(m, 2)


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
    #: level of the clip quantile searched (None: a public clip)
    clip_quantile: float | None = None


def pair_variances(
    rows: np.ndarray, v: np.ndarray, start: int = 0, stop: int | None = None
) -> np.ndarray:
    """``W`` of pairs ``start..stop``: ``((rows[2i+1] - rows[2i]) @ v)**2
    / 2``, ``(stop - start, k)``; ``stop`` defaults to ``floor(n/2)``.

    With ``rows`` in a keyed random order (data-free), consecutive rows
    are a uniformly random perfect matching, as :func:`random_matching`
    gives (the scree's v2 reads the Kendall design's order).

    >>> rows = np.array([[0.0, 0.0], [1.0, 2.0], [5.0, 5.0]])
    >>> pair_variances(rows, np.eye(2)).tolist()
    [[0.5, 2.0]]
    """
    w = _pair_projections(rows, v, start, stop)
    np.square(w, out=w)
    w /= 2.0
    return w


def _pair_projections(
    rows: np.ndarray, v: np.ndarray, start: int, stop: int | None
) -> np.ndarray:
    """``(rows[2i+1] - rows[2i]) @ v`` of pairs ``start..stop`` (``stop``
    defaults to ``floor(n/2)``)."""
    stop = rows.shape[0] // 2 if stop is None else stop
    d = rows[2 * start + 1 : 2 * stop : 2] - rows[2 * start : 2 * stop : 2]
    return d @ v


def pair_maxima(
    rows: np.ndarray, v: np.ndarray, start: int = 0, stop: int | None = None
) -> np.ndarray:
    """``pair_variances(rows, v, start, stop).max(axis=1)``, the same
    floats, sooner.

    ``w -> w**2 / 2`` (each step rounded) never decreases in ``|w|``, so
    the largest ``W`` of a pair is that of its largest ``|w|``; the
    maxima are taken down the columns of ``w``'s transpose (long rows,
    numpy's fast reduction) instead of along its ``k``-wide rows, and
    only they are squared.

    >>> rows = np.array([[0.0, 0.0], [1.0, -2.0], [5.0, 5.0], [4.0, 5.0]])
    >>> pair_maxima(rows, np.eye(2)).tolist()
    [2.0, 0.5]
    """
    wt = np.ascontiguousarray(_pair_projections(rows, v, start, stop).T)
    np.abs(wt, out=wt)
    top = wt.max(axis=0)
    np.square(top, out=top)
    top /= 2.0
    return top


#: pairs per block of v2's passes: the block's W stays in cache, and no
#: (m, k) array is made
_PAIR_BLOCK = 8192


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
    key: bytes,
    records: int = 1,
) -> PrivateEigenvalues:
    """dppca's "clipped" scree values on projected data ``y = X V[:, :k]``
    (version 1 of the scree release).

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

    A privacy unit of up to ``records`` rows (``r``) is in up to ``r``
    pairs (each row is in one): L2 sensitivity ``r sqrt(k) C / m``, and
    the clip quantile runs with ``records=r`` (``eps / r`` per row).

    ``key`` is the stream key of the release (see
    :func:`private_directions`); the matching, the clip quantile and the
    noise use sub-streams of it. :func:`private_scree` is version 2.
    """
    arr = _check_y(y)
    n, k = arr.shape
    check_bound(records, None)
    pairs = random_matching(n, derive_key(key, "scree_matching"))
    # in place, the same operations as ((y_b - y_a) ** 2) / 2: one
    # (m, k) array instead of four
    w = arr[pairs[:, 1]]
    w -= arr[pairs[:, 0]]
    np.square(w, out=w)
    w /= 2.0
    return _clipped_scree(
        lambda: w.max(axis=1),
        lambda c: np.minimum(w, c, out=w).mean(axis=0),
        w.shape,
        eps,
        delta,
        clip=clip,
        clip_quantile=clip_quantile,
        clip_share=clip_share,
        mono=mono,
        calibration=calibration,
        key=key,
        records=records,
    )


def private_scree(
    rows: Any,
    v: Any,
    eps: float,
    delta: float,
    *,
    clip: float | None = None,
    clip_quantile: float = 0.99,
    clip_share: float = 0.25,
    mono: bool = True,
    calibration: str = "analytic",
    key: bytes,
    records: int = 1,
) -> PrivateEigenvalues:
    """Version 2 of the scree release: the mechanism of
    :func:`private_eigenvalues` on the pairs of consecutive ``rows``.

    ``rows`` is ``(n, p)``, in a data-free random order (the Kendall
    design's, or a keyed permutation), so that its consecutive pairs are
    a random perfect matching; ``v`` is ``(p, k)``, the released
    directions. ``W`` is formed a block of pairs at a time, in two
    passes (per-pair maxima for the clip, then the clipped means). Same
    privacy map and clip level as version 1 (``sqrt(k) C r / m``,
    Gaussian).
    """
    arr = _check_y(rows, "rows")
    vk = np.asarray(v, dtype=float)
    if vk.ndim != 2 or vk.shape[0] != arr.shape[1]:
        raise ParameterError(
            f"v must be a ({arr.shape[1]}, k) array of directions, got "
            f"shape {vk.shape}."
        )
    check_bound(records, None)
    m = arr.shape[0] // 2
    blocks = [(a, min(m, a + _PAIR_BLOCK)) for a in range(0, m, _PAIR_BLOCK)]

    def maxima() -> np.ndarray:
        return np.concatenate([pair_maxima(arr, vk, a, b) for a, b in blocks])

    def clipped_mean(c: float) -> np.ndarray:
        total = np.zeros(vk.shape[1])
        for a, b in blocks:
            w = pair_variances(arr, vk, a, b)
            total += np.minimum(w, c, out=w).sum(axis=0)
        return total / m

    return _clipped_scree(
        maxima,
        clipped_mean,
        (m, vk.shape[1]),
        eps,
        delta,
        clip=clip,
        clip_quantile=clip_quantile,
        clip_share=clip_share,
        mono=mono,
        calibration=calibration,
        key=key,
        records=records,
    )


def _check_y(y: Any, name: str = "y", least: int = 2) -> np.ndarray:
    arr = np.asarray(y, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < least or arr.shape[1] < 1:
        raise ParameterError(
            f"{name} must be an (n, k) array with n >= {least}, got shape "
            f"{arr.shape}."
        )
    if not all_finite(arr):
        raise ParameterError(f"{name} must be finite (no NaN/inf).")
    return arr


def _clipped_scree(
    maxima: Callable[[], np.ndarray],
    clipped_mean: Callable[[float], np.ndarray],
    shape: tuple[int, int],
    eps: float,
    delta: float,
    *,
    clip: float | None,
    clip_quantile: float,
    clip_share: float,
    mono: bool,
    calibration: str,
    key: bytes,
    records: int,
) -> PrivateEigenvalues:
    """Clip, mean and noise of the ``(m, k)`` pair variances ``W``, read
    through ``maxima()`` (per pair) and ``clipped_mean(C)`` (per
    column)."""
    m, k = shape
    eps_mean, eps_clip = eps, 0.0
    if clip is None:
        if not 0 < clip_share < 1:
            raise ParameterError(
                f"clip_share must lie in (0, 1), got {clip_share!r}."
            )
        eps_clip = clip_share * eps
        eps_mean = eps - eps_clip
        # the same level in both versions: the public lower level that
        # ends the search's heavy tail (the frame's v2) biases the top
        # eigenvalue by -19% at n = 500 (docs/mechanisms.md)
        c = upper_quantile(
            maxima(),
            clip_quantile,
            eps_clip,
            key=derive_key(key, "scree_clip"),
            records=records,
        )
        source = "private_quantile"
    else:
        if not (math.isfinite(clip) and clip > 0):
            raise ParameterError(f"clip must be > 0, got {clip!r}.")
        c = float(clip)
        source = "public"
    sens = int(records) * math.sqrt(k) * c / m
    sigma = gaussian_sigma(eps_mean, delta, sens, calibration)
    noise = keyed_normal(derive_key(key, "scree_noise"), k)
    values = clipped_mean(c) + sigma * noise
    values = np.maximum(round_to_resolution(values, sigma), 0.0)
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
        clip_quantile=clip_quantile if clip is None else None,
    )
