"""Private scree values of projected PCA data (dppca's clipped eigenvalues).

The second half of g-DPPCA (docs/mechanisms.md): given data projected on
already-released private directions, release the variance of each column
from keyed random pairs of rows, clipped and with Gaussian noise. Split
out of :mod:`.pca`, which re-exports every name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .count_mechanisms import check_bound
from .errors import ParameterError
from .gaussian import gaussian_sigma, round_to_resolution
from .quantile import upper_quantile
from .randomness import derive_key, keyed_normal, keyed_permutation

__all__ = [
    "PrivateEigenvalues",
    "private_eigenvalues",
    "random_matching",
]


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

    A privacy unit of up to ``records`` rows (``r``) is in up to ``r``
    pairs (each row is in one): L2 sensitivity ``r sqrt(k) C / m``, and
    the clip quantile runs with ``records=r`` (``eps / r`` per row).

    ``key`` is the stream key of the release (see
    :func:`private_directions`); the matching, the clip quantile and the
    noise use sub-streams of it.
    """
    arr = np.asarray(y, dtype=float)
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 1:
        raise ParameterError(
            f"y must be an (n, k) array with n >= 2, got shape {arr.shape}."
        )
    if not np.all(np.isfinite(arr)):
        raise ParameterError("y must be finite (no NaN/inf).")
    n, k = arr.shape
    check_bound(records, None)
    pairs = random_matching(n, derive_key(key, "scree_matching"))
    m = len(pairs)
    # in place, the same operations as ((y_b - y_a) ** 2) / 2: one
    # (m, k) array instead of four
    w = arr[pairs[:, 1]]
    w -= arr[pairs[:, 0]]
    np.square(w, out=w)
    w /= 2.0
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
    values = np.minimum(w, c, out=w).mean(axis=0) + sigma * noise
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
    )
