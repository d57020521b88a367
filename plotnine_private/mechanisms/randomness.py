"""Keyed random streams for privacy noise.

Every random number that perturbs a release comes from a stream keyed by
``(secret, query, cell)``:

* ``secret`` is 32 bytes derived from the user's ``seed`` or, when no seed
  is given, from OS entropy drawn once per process (:func:`master_key`).
  A seed is a secret: whoever knows it can subtract the noise.
* ``query`` names the release (stat kind, mechanism, parameters, panel,
  group); it is hashed once with keyed BLAKE2b (:func:`derive_key`).
* ``cell`` is the content of one output cell (a category label, bin edges),
  encoded as 64-bit words (:func:`cell_words`).

The stream of one cell is SipHash-2-4 in counter mode under a per-cell key,
so a cell's noise depends only on its own content: it does not change when
other cells, layers or groups come and go, and it is the same in every
process (no use of Python's salted ``hash``). SipHash is a keyed
pseudo-random function; without the key its outputs are unpredictable.

Nothing here uses NumPy's bit generators for privacy noise; NumPy is only
the vector arithmetic.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "CellStreams",
    "cell_words",
    "derive_key",
    "keyed_normal",
    "keyed_uniform",
    "keyed_words",
    "master_key",
    "siphash24",
]

_U64 = np.uint64
_PROCESS_SECRET = os.urandom(32)

_C0 = _U64(0x736F6D6570736575)
_C1 = _U64(0x646F72616E646F6D)
_C2 = _U64(0x6C7967656E657261)
_C3 = _U64(0x7465646279746573)


def master_key(seed: int | None) -> bytes:
    """32-byte secret for a seed, or the per-process OS-entropy secret.

    >>> master_key(1) == master_key(1)
    True
    >>> len(master_key(None))
    32
    """
    if seed is None:
        return _PROCESS_SECRET
    return hashlib.blake2b(
        b"plotnine_private/seed/" + str(int(seed)).encode(), digest_size=32
    ).digest()


def _canonical(part: Any) -> bytes:
    """Type-tagged, process-independent bytes for one key part."""
    if isinstance(part, bytes):
        return b"b:" + part
    if isinstance(part, (bool, np.bool_)):
        return b"?:" + (b"1" if part else b"0")
    if isinstance(part, (int, np.integer)):
        return b"i:" + str(int(part)).encode()
    if isinstance(part, (float, np.floating)):
        value = float(part)
        return b"f:" + (repr(0.0) if value == 0 else repr(value)).encode()
    if part is None:
        return b"n:"
    if isinstance(part, (tuple, list)):
        inner = b"".join(
            len(c).to_bytes(4, "little") + c for c in map(_canonical, part)
        )
        return b"t:" + inner
    return b"s:" + str(part).encode("utf-8")


def derive_key(secret: bytes, *parts: Any) -> bytes:
    """16-byte key for a query, from the secret and the query's parts.

    >>> derive_key(master_key(1), "count", 1) != derive_key(
    ...     master_key(1), "count", 2)
    True
    """
    h = hashlib.blake2b(key=secret, digest_size=16, person=b"pnp-query")
    h.update(_canonical(tuple(parts)))
    return h.digest()


def _key_words(key: bytes) -> tuple[np.uint64, np.uint64]:
    k = np.frombuffer(key[:16], dtype="<u8")
    return _U64(k[0]), _U64(k[1])


def _rotl(x: np.ndarray, b: int, tmp: np.ndarray) -> None:
    """In-place 64-bit left rotation of x by b bits (tmp is scratch)."""
    np.right_shift(x, _U64(64 - b), out=tmp)
    np.left_shift(x, _U64(b), out=x)
    np.bitwise_or(x, tmp, out=x)


def _sipround(v0, v1, v2, v3, tmp) -> None:
    """One SipRound, in place (all arrays uint64, same shape)."""
    v0 += v1
    _rotl(v1, 13, tmp)
    v1 ^= v0
    _rotl(v0, 32, tmp)
    v2 += v3
    _rotl(v3, 16, tmp)
    v3 ^= v2
    v0 += v3
    _rotl(v3, 21, tmp)
    v3 ^= v0
    v2 += v1
    _rotl(v1, 17, tmp)
    v1 ^= v2
    _rotl(v2, 32, tmp)


def siphash24(k0, k1, message: np.ndarray) -> np.ndarray:
    """Vectorised SipHash-2-4 of messages made of whole 64-bit words.

    Parameters
    ----------
    k0, k1
        The two little-endian halves of the 128-bit key (scalars, or arrays
        of one key per message).
    message
        ``(n, m)`` array of uint64 words: ``n`` messages of ``8*m`` bytes.

    Returns
    -------
    ``(n,)`` uint64 array; equals the reference SipHash-2-4 of each
    message's little-endian bytes.
    """
    message = np.asarray(message, dtype=_U64)
    if message.ndim == 1:
        message = message[:, None]
    n, m = message.shape
    k0 = np.broadcast_to(np.asarray(k0, dtype=_U64), (n,))
    k1 = np.broadcast_to(np.asarray(k1, dtype=_U64), (n,))
    v0, v1, v2, v3 = k0 ^ _C0, k1 ^ _C1, k0 ^ _C2, k1 ^ _C3
    tmp = np.empty(n, dtype=_U64)
    for j in range(m):
        w = message[:, j]
        v3 ^= w
        _sipround(v0, v1, v2, v3, tmp)
        _sipround(v0, v1, v2, v3, tmp)
        v0 ^= w
    last = _U64(((8 * m) & 0xFF) << 56)
    v3 ^= last
    _sipround(v0, v1, v2, v3, tmp)
    _sipround(v0, v1, v2, v3, tmp)
    v0 ^= last
    v2 ^= _U64(0xFF)
    for _ in range(4):
        _sipround(v0, v1, v2, v3, tmp)
    v0 ^= v1
    v0 ^= v2
    v0 ^= v3
    return v0


def _label_word(value: Any) -> int:
    digest = hashlib.blake2b(_canonical(value), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def cell_words(*columns: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Encode cell contents as an ``(n, k)`` uint64 array, one row a cell.

    Float columns are encoded by their IEEE bits (``-0.0`` as ``0.0``),
    integer columns by value, anything else (labels) by a BLAKE2b digest of
    its canonical text. The encoding does not depend on the process.

    >>> cell_words([1.5, 2.5], ["a", "b"]).shape
    (2, 2)
    """
    out = []
    for col in columns:
        arr = np.asarray(col)
        if arr.dtype.kind == "f":
            f = arr.astype(np.float64) + 0.0  # -0.0 -> 0.0
            out.append(f.view(_U64))
        elif arr.dtype.kind in "iub":
            out.append(arr.astype(np.int64).view(_U64))
        else:
            out.append(
                np.fromiter(
                    (_label_word(v) for v in arr.tolist()),
                    dtype=_U64,
                    count=len(arr),
                )
            )
    if not out:
        raise ValueError("cell_words needs at least one column")
    return np.column_stack(out).astype(_U64)


class CellStreams:
    """Independent random word streams, one per cell.

    The stream of cell ``c`` is ``SipHash(key_c, 0), SipHash(key_c, 1), ...``
    with ``key_c = SipHash(query_key, words_c)``. Drawing for some cells
    advances only their own counters, so the numbers a cell receives depend
    on nothing but the query key and the cell's content.
    """

    def __init__(self, query_key: bytes, words: np.ndarray):
        words = np.asarray(words, dtype=_U64)
        if words.ndim == 1:
            words = words[:, None]
        k0, k1 = _key_words(query_key)
        n = len(words)
        tag0 = np.zeros((n, 1), dtype=_U64)
        tag1 = np.ones((n, 1), dtype=_U64)
        self._k0 = siphash24(k0, k1, np.hstack([words, tag0]))
        self._k1 = siphash24(k0, k1, np.hstack([words, tag1]))
        self._counter = np.zeros(n, dtype=_U64)
        self.n = n

    def words(self, idx: np.ndarray | None = None) -> np.ndarray:
        """Next 64-bit word of each selected cell's stream."""
        if idx is None:
            idx = np.arange(self.n)
        out = siphash24(self._k0[idx], self._k1[idx], self._counter[idx])
        self._counter[idx] += _U64(1)
        return out

    def uniform_below(self, bound, idx: np.ndarray | None = None):
        """Exactly uniform integers in ``[0, bound)`` (rejection sampling).

        ``bound`` is a positive int or an int64 array aligned with ``idx``;
        bounds must be below 2**62.
        """
        if idx is None:
            idx = np.arange(self.n)
        idx = np.asarray(idx)
        bound = np.broadcast_to(np.asarray(bound, dtype=np.int64), idx.shape)
        if np.any(bound <= 0) or np.any(bound >= 2**62):
            raise ValueError("bound must lie in [1, 2**62)")
        # bits needed to cover bound - 1 (at least 1)
        bits = np.maximum(
            np.ceil(np.log2(bound.astype(np.float64))).astype(np.int64), 1
        )
        # float log2 can be off by one near powers of two: fix exactly
        too_small = (np.int64(1) << bits) < bound
        bits = bits + too_small
        shift = (64 - bits).astype(_U64)
        out = np.empty(idx.shape, dtype=np.int64)
        todo = np.arange(idx.size)
        while todo.size:
            r = (self.words(idx[todo]) >> shift[todo]).astype(np.int64)
            ok = r < bound[todo]
            out[todo[ok]] = r[ok]
            todo = todo[~ok]
        return out

    def uniform(self, idx: np.ndarray | None = None) -> np.ndarray:
        """Floats uniform on the 2**-53 grid of (0, 1)."""
        w = self.words(idx)
        return ((w >> _U64(11)).astype(np.float64) + 0.5) * 2.0**-53


def keyed_words(query_key: bytes, n: int, offset: int = 0) -> np.ndarray:
    """``n`` words of one keyed stream (counter mode), starting at offset."""
    k0, k1 = _key_words(query_key)
    counters = np.arange(offset, offset + n, dtype=np.int64).view(_U64)
    return siphash24(k0, k1, counters)


def keyed_uniform(query_key: bytes, n: int, offset: int = 0) -> np.ndarray:
    """``n`` floats uniform on the 2**-53 grid of (0, 1), never 0 or 1."""
    w = keyed_words(query_key, n, offset)
    return ((w >> _U64(11)).astype(np.float64) + 0.5) * 2.0**-53


def keyed_normal(query_key: bytes, n: int, offset: int = 0) -> np.ndarray:
    """``n`` standard normal floats by inversion of keyed uniforms.

    Floating-point noise: use for real-valued releases that the spec
    allows to be continuous (PCA quantities), not for integer counts.
    """
    from scipy.special import ndtri

    return ndtri(keyed_uniform(query_key, n, offset))


def iter_parts(parts: Iterable[Any]) -> tuple:
    """Normalise key parts to a tuple (helper for callers)."""
    return tuple(parts)
