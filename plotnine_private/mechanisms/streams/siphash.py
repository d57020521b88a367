"""SipHash-2-4, vectorised over messages of whole 64-bit words, with
its 64- and 128-bit outputs (Aumasson and Bernstein's reference
algorithm).

Written here rather than taken from a library: the standard library has
no keyed SipHash, and the cells of a release need thousands of tags per
numpy pass (:class:`~.randomness.CellStreams` names each cell's stream
with one). Tested against the reference's published vectors.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rotl", "siphash24", "siphash24_128"]

_U64 = np.uint64
_C0 = _U64(0x736F6D6570736575)
_C1 = _U64(0x646F72616E646F6D)
_C2 = _U64(0x6C7967656E657261)
_C3 = _U64(0x7465646279746573)


#: the (right, left) shift counts of each rotation, as 0-d arrays of the
#: rotated dtype: a ufunc takes them as they are, where a scalar count is
#: converted on every call (a SipHash of 10**6 cells makes ~10**4 shifts)
_SHIFTS: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}


def rotl(x: np.ndarray, b: int, tmp: np.ndarray) -> None:
    """In-place left rotation of x by b bits, for uint64 or uint32 arrays
    (tmp is scratch of the same dtype): SipHash's, and ChaCha's
    (:mod:`.randomness`)."""
    shifts = _SHIFTS.get((x.dtype.char, b))
    if shifts is None:
        shifts = _SHIFTS[(x.dtype.char, b)] = (
            np.array(8 * x.itemsize - b, dtype=x.dtype),
            np.array(b, dtype=x.dtype),
        )
    np.right_shift(x, shifts[0], out=tmp)
    np.left_shift(x, shifts[1], out=x)
    np.bitwise_or(x, tmp, out=x)


def _sipround(v0, v1, v2, v3, tmp) -> None:
    """One SipRound, in place (all arrays uint64, same shape)."""
    v0 += v1
    rotl(v1, 13, tmp)
    v1 ^= v0
    rotl(v0, 32, tmp)
    v2 += v3
    rotl(v3, 16, tmp)
    v3 ^= v2
    v0 += v3
    rotl(v3, 21, tmp)
    v3 ^= v0
    v2 += v1
    rotl(v1, 17, tmp)
    v1 ^= v2
    rotl(v2, 32, tmp)


_CHUNK = 16384  # cells per vector pass: keeps the working set in cache


def _absorb(v0, v1, v2, v3, words: np.ndarray, tmp) -> None:
    """SipHash-2-4 compression of ``(n, j)`` message words, in place."""
    for j in range(words.shape[1]):
        w = words[:, j]
        v3 ^= w
        _sipround(v0, v1, v2, v3, tmp)
        _sipround(v0, v1, v2, v3, tmp)
        v0 ^= w


def _siphash_core(
    v: list, message: np.ndarray, m: int, wide: bool, tmp, out
) -> None:
    """Finish SipHash-2-4 of whole-word messages of ``m`` words total,
    from the state ``v`` (four arrays, overwritten) after the words
    before ``message``, into ``out`` (``(n, 1)``, or ``(n, 2)`` if
    ``wide``)."""
    v0, v1, v2, v3 = v
    _absorb(v0, v1, v2, v3, message, tmp)
    last = _U64(((8 * m) & 0xFF) << 56)
    v3 ^= last
    _sipround(v0, v1, v2, v3, tmp)
    _sipround(v0, v1, v2, v3, tmp)
    v0 ^= last
    v2 ^= _U64(0xEE if wide else 0xFF)
    for i in range(2 if wide else 1):
        if i:
            v1 ^= _U64(0xDD)
        for _ in range(4):
            _sipround(v0, v1, v2, v3, tmp)
        np.bitwise_xor(v0, v1, out=tmp)
        tmp ^= v2
        np.bitwise_xor(tmp, v3, out=out[:, i])


def _set_start(v: list, k0, k1, wide: bool) -> None:
    """The SipHash-2-4 initial state of keys ``k0, k1`` into ``v``."""
    np.bitwise_xor(k0, _C0, out=v[0])
    np.bitwise_xor(k1, _C1, out=v[1])
    np.bitwise_xor(k0, _C2, out=v[2])
    np.bitwise_xor(k1, _C3, out=v[3])
    if wide:
        v[1] ^= _U64(0xEE)


def _siphash_start(k0, k1, prefix: np.ndarray, wide: bool) -> list:
    """SipHash-2-4 state after absorbing ``prefix`` (``(n, j)`` words)."""
    v = list(np.empty((4, len(prefix)), dtype=_U64))
    _set_start(v, k0, k1, wide)
    _absorb(v[0], v[1], v[2], v[3], prefix, np.empty_like(v[0]))
    return v


def _shared_prefix(k0, k1, message: np.ndarray) -> int:
    """How many leading words (with the key) all messages share: their
    rounds are computed once (cell names often start with one type tag)."""
    if k0.ndim or k1.ndim or not len(message):
        return 0
    j = 0
    while j < message.shape[1] and (message[:, j] == message[0, j]).all():
        j += 1
    return j


_MASK = (1 << 64) - 1
#: messages up to this many are hashed with Python integers: a numpy
#: pass over one message costs ~70 array operations of ~1 us each, so a
#: single keyed draw (a quantile search step) paid ~0.3 ms in overhead
_FEW = 8


def _siphash_ints(k0: int, k1: int, words: list, wide: bool) -> list:
    """SipHash-2-4 of one message of whole words, on Python integers (the
    reference algorithm, written out: a numpy path has no cheap scalar
    form, and the standard library has no keyed SipHash)."""
    v0, v1 = k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D
    v2, v3 = k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573
    if wide:
        v1 ^= 0xEE
    mask = _MASK

    def rounds(v0, v1, v2, v3, r):
        for _ in range(r):
            v0 = (v0 + v1) & mask
            v1 = ((v1 << 13) | (v1 >> 51)) & mask ^ v0
            v0 = ((v0 << 32) | (v0 >> 32)) & mask
            v2 = (v2 + v3) & mask
            v3 = ((v3 << 16) | (v3 >> 48)) & mask ^ v2
            v0 = (v0 + v3) & mask
            v3 = ((v3 << 21) | (v3 >> 43)) & mask ^ v0
            v2 = (v2 + v1) & mask
            v1 = ((v1 << 17) | (v1 >> 47)) & mask ^ v2
            v2 = ((v2 << 32) | (v2 >> 32)) & mask
        return v0, v1, v2, v3

    for w in words + [((8 * len(words)) & 0xFF) << 56]:
        v3 ^= w
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= w
    v2 ^= 0xEE if wide else 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    outs = [v0 ^ v1 ^ v2 ^ v3]
    if wide:
        v1 ^= 0xDD
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
        outs.append(v0 ^ v1 ^ v2 ^ v3)
    return outs


def _siphash(k0, k1, message, wide: bool) -> np.ndarray:
    message = np.asarray(message, dtype=_U64)
    if message.ndim == 1:
        message = message[:, None]
    n, m = message.shape
    k0 = np.asarray(k0, dtype=_U64)
    k1 = np.asarray(k1, dtype=_U64)
    if n <= _FEW:
        keys = (
            np.broadcast_to(k0, (n,)).tolist(),
            np.broadcast_to(k1, (n,)).tolist(),
        )
        rows = message.tolist()
        return np.array(
            [
                _siphash_ints(keys[0][i], keys[1][i], rows[i], wide)
                for i in range(n)
            ],
            dtype=_U64,
        ).reshape(n, 2 if wide else 1)
    j = _shared_prefix(k0, k1, message)
    if j:  # one key: the state after the shared words, computed once
        one = np.zeros(1, dtype=_U64)
        shared = _siphash_start(one + k0, one + k1, message[:1, :j], wide)
    k0 = np.broadcast_to(k0, (n,))
    k1 = np.broadcast_to(k1, (n,))
    out = np.empty((n, 2 if wide else 1), dtype=_U64)
    # one set of buffers (state and scratch) for every chunk
    buffers = np.empty((5, min(n, _CHUNK)), dtype=_U64)
    for a in range(0, n, _CHUNK):
        b = min(a + _CHUNK, n)
        v = list(buffers[:4, : b - a])
        if j:
            for x, start in zip(v, shared):
                x[...] = start
        else:
            _set_start(v, k0[a:b], k1[a:b], wide)
        _siphash_core(
            v, message[a:b, j:], m, wide, buffers[4, : b - a], out[a:b]
        )
    return out


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
    return _siphash(k0, k1, message, wide=False)[:, 0]


def siphash24_128(k0, k1, message: np.ndarray) -> np.ndarray:
    """SipHash-2-4 with 128-bit output (the reference ``siphash`` with
    ``outlen=16``), vectorised like :func:`siphash24`.

    Returns an ``(n, 2)`` uint64 array: the two little-endian halves of each
    16-byte tag.
    """
    return _siphash(k0, k1, message, wide=True)
