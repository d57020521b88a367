"""Keyed random streams for privacy noise.

Every random number that perturbs a release comes from a stream keyed by
``(secret, query, cell)``:

* ``secret`` is 32 bytes derived from the user's ``seed`` or, when no seed
  is given, from OS entropy drawn once per process (:func:`master_key`).
  Without a key file, whoever knows the seed can subtract the noise.
* ``query`` names the release (stat kind, mechanism, parameters, panel,
  group); it is hashed once with keyed BLAKE2b (:func:`derive_key`).
* ``cell`` is the content of one output cell (category values, bin edges,
  panel facet values), encoded injectively as typed, length-prefixed
  64-bit words (:func:`cell_words`, :func:`value_bytes`); under stream
  version 3 a cell of a whole public domain is named by its place and
  the domain's digest instead (:mod:`.place_streams`).

This module holds stream version 1; :mod:`.streams` holds the versions.

Per-cell streams (:class:`CellStreams`) are built in two keyed layers:

1. **Cell derivation: SipHash-2-4.** The cell's words are hashed with
   SipHash-2-4 in its standard 128-bit output mode under the 16-byte query
   key. 96 bits of that tag name the cell's stream. SipHash-2-4 is a keyed
   pseudo-random function; without the key the tags are unpredictable.
2. **Expansion: ChaCha with 12 rounds.** The stream of a cell is the
   ChaCha block function in counter mode: key = 256 bits derived from the
   query key with keyed BLAKE2b, nonce = the cell's 96-bit SipHash tag,
   32-bit block counter. This is exactly the RFC 8439 layout (verified
   against the RFC's ChaCha20 block test vectors), run with 12 instead of
   20 rounds (``_STREAM_ROUNDS``). ChaCha12 is what the ``StdRng``
   generator of Rust's ``rand`` crates uses; published cryptanalysis of
   the ChaCha family reaches 7 rounds at impractical cost, and Aumasson's
   "Too Much Crypto" (2019) argues 8 already suffice (8 rounds would be
   about 10% faster here). One key per query with a distinct nonce per
   cell is how a stream cipher is meant to be used; a nonce collision
   between two cells of one release has probability below
   ``n**2 / 2**97``.

One 512-bit block gives sixteen 32-bit words at several times less NumPy
work per random bit than SipHash counter mode, which is what makes the
exact discrete Laplace sampler fast. A cell's words depend only on the
query key and the cell's own words: not on other cells, not on how many
cells are drawn together, and not on the process (no use of Python's
salted ``hash``). Drawing for some cells advances only their own block
counters.

Nothing here uses NumPy's bit generators for privacy noise; NumPy is only
the vector arithmetic.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..naming.cell_values import value_bytes
from ..naming.cellnames import (
    FloatLevels,
    IntLevels,
    StrLabels,
    cell_words,
    float_digest,
    only_str,
)
from ..naming.encoding import tagged_int_runs
from ..naming.row_order import low_rows
from .siphash import rotl, siphash24, siphash24_128

__all__ = [
    "CellStreams",
    "cell_words",
    "chacha_block",
    "derive_key",
    "draw_order",
    "keyed_normal",
    "keyed_permutation",
    "keyed_uniform",
    "keyed_words",
    "master_key",
    "siphash24",
    "siphash24_128",
    "stable_argsort",
    "value_bytes",
]

_U64 = np.uint64
_PROCESS_SECRET = os.urandom(32)


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
    if isinstance(part, (StrLabels, FloatLevels, IntLevels)):
        # labels kept as one buffer name the tuple of their strings
        # (numeric levels as one array: the tuple of their floats)
        return b"t:" + part.prefixed()
    if isinstance(part, (tuple, list)):
        if len(part) > 64 and only_str(part):
            # a declared domain of 10**6 labels: the same bytes as the
            # item-wise recursion, built in one buffer
            return b"t:" + _prefixed_labels(tuple(part))
        if len(part) > 64 and set(map(type, part)) == {float}:
            # 10**6 numeric levels, as floats: the same, their texts
            # made in one pass
            return b"t:" + _prefixed_floats(part)
        if len(part) > 64:
            # 10**6 int levels (a Categorical's): the same, their digits
            # written in bulk (None: some item is no plain int64)
            ints = tagged_int_runs(part)
            if ints is not None:
                return b"t:" + ints
        inner = b"".join(
            len(c).to_bytes(4, "little") + c for c in map(_canonical, part)
        )
        return b"t:" + inner
    return b"s:" + str(part).encode("utf-8")


def _prefixed_floats(values: Sequence[float]) -> bytes:
    """The joined bytes of :func:`_canonical` of each float of
    ``values`` after its length (``b"f:"`` and its ``repr``, a zero
    written ``0.0``), as the item-wise recursion joins them."""
    return FloatLevels(values).prefixed()


def _canonical_chunks(
    part: Any, digests: bool = False, floats: bool = False
) -> list[bytes]:
    """:func:`_canonical` of ``part`` as chunks whose join it is: a
    buffer of labels stays one chunk instead of being copied into the
    bytes of every tuple around it (a hash reads the chunks in turn).

    ``digests`` (stream version 3's identity): more than 64 plain
    strings, as a buffer or a tuple, are encoded as ``b"d:"`` and their
    32-byte :meth:`~.cellnames.StrLabels.digest` instead of their bytes.
    ``floats`` (stream version 4's, with ``digests``): more than 64
    floats, as a :class:`~.cellnames.FloatLevels` or a tuple of Python
    floats, are encoded as ``b"F:"`` and their 32-byte
    :func:`~.cellnames.float_digest` instead of their texts.

    >>> p = ("count", (("eps", 1.0), ("x", "class")))
    >>> b"".join(_canonical_chunks(p)) == _canonical(p)
    True
    """
    if isinstance(part, StrLabels):
        if digests and len(part) > 64:
            return [b"d:", part.digest()]
        return [b"t:", part.prefixed()]
    if isinstance(part, IntLevels):
        return [b"t:", part.prefixed()]
    if isinstance(part, FloatLevels):
        if floats and len(part) > 64:
            return [b"F:", part.digest()]
        return [b"t:", part.prefixed()]
    if isinstance(part, (tuple, list)) and len(part) <= 64:
        out = [b"t:"]
        for item in part:
            sub = _canonical_chunks(item, digests, floats)
            out.append(sum(map(len, sub)).to_bytes(4, "little"))
            out.extend(sub)
        return out
    if digests and isinstance(part, (tuple, list)) and only_str(part):
        return [b"d:", _labels_digest(tuple(part))]
    if (
        floats
        and isinstance(part, (tuple, list))
        and set(map(type, part)) == {float}  # as _canonical's floats
    ):
        return [b"F:", float_digest(part)]
    return [_canonical(part)]


# a release's identity and its cells' name both encode its domain: the
# last few domains' bytes are kept (a tuple is looked up by identity
# first, then by value, so equal domains give equal bytes)
@functools.lru_cache(maxsize=4)
def _prefixed_labels(labels: tuple[str, ...]) -> bytes:
    """``_canonical`` of each label (``b"s:"`` and its UTF-8 bytes),
    each after its length as 4 little-endian bytes, joined."""
    return StrLabels.of(labels).prefixed()


@functools.lru_cache(maxsize=4)
def _labels_digest(labels: tuple[str, ...]) -> bytes:
    """:meth:`~.cellnames.StrLabels.digest` of a tuple of strings."""
    return StrLabels.of(labels).digest()


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


_U32 = np.uint32
_SIGMA = np.frombuffer(b"expand 32-byte k", dtype="<u4").astype(_U32)
_CHUNK = 16384  # blocks per vector pass: keeps the working set in cache


def _quarter(a, b, c, d, tmp) -> None:
    """ChaCha quarter round on four row blocks, in place."""
    a += b
    d ^= a
    rotl(d, 16, tmp)
    c += d
    b ^= c
    rotl(b, 12, tmp)
    a += b
    d ^= a
    rotl(d, 8, tmp)
    c += d
    b ^= c
    rotl(b, 7, tmp)


def _chacha_core(init: np.ndarray, rounds: int) -> np.ndarray:
    """ChaCha block function on a ``(16, n)`` uint32 input state.

    The column round works on the four row blocks a, b, c, d directly. For
    the diagonal round, rows b, c, d are rotated by 1, 2, 3 places, done
    with a few spare rows so that the rotated blocks are plain views.
    """
    n = init.shape[1]
    a = init[0:4].copy()
    b = np.empty((5, n), dtype=_U32)
    c = np.empty((6, n), dtype=_U32)
    d = np.empty((7, n), dtype=_U32)
    b[:4] = init[4:8]
    c[:4] = init[8:12]
    d[:4] = init[12:16]
    tmp = np.empty((4, n), dtype=_U32)
    for _ in range(rounds // 2):
        _quarter(a, b[0:4], c[0:4], d[0:4], tmp)  # columns
        b[4] = b[0]
        c[4:6] = c[0:2]
        d[4:7] = d[0:3]
        _quarter(a, b[1:5], c[2:6], d[3:7], tmp)  # diagonals
        b[0] = b[4]
        c[0:2] = c[4:6]
        d[0:3] = d[4:7]
    out = np.concatenate([a, b[:4], c[:4], d[:4]])
    out += init
    return out


def chacha_block(key, counter, nonce, rounds: int = 20) -> np.ndarray:
    """Vectorised ChaCha block function (RFC 8439 layout).

    Parameters
    ----------
    key
        32-byte key (``bytes``) or its eight little-endian uint32 words.
    counter
        ``(n,)`` 32-bit block counters.
    nonce
        ``(3, n)`` uint32 nonce words (or ``(3,)`` for one shared nonce).
    rounds
        20 for ChaCha20; 8 or 12 for the reduced-round variants.

    Returns
    -------
    ``(16, n)`` uint32: the keystream words of each block, in order.
    """
    if isinstance(key, (bytes, bytearray)):
        key = np.frombuffer(bytes(key), dtype="<u4")
    key = np.asarray(key, dtype=_U32)
    counter = np.asarray(counter)
    if np.any(counter < 0) or np.any(counter >= 2**32):
        raise ValueError("ChaCha block counter out of range")
    counter = counter.astype(_U32)
    n = counter.size
    nonce = np.broadcast_to(
        np.asarray(nonce, dtype=_U32).reshape(3, -1), (3, n)
    )
    out = np.empty((16, n), dtype=_U32)
    for a in range(0, n, _CHUNK):
        b = min(a + _CHUNK, n)
        init = np.empty((16, b - a), dtype=_U32)
        init[0:4] = _SIGMA[:, None]
        init[4:12] = key[:, None]
        init[12] = counter[a:b]
        init[13:16] = nonce[:, a:b]
        out[:, a:b] = _chacha_core(init, rounds)
    return out


_STREAM_ROUNDS = 12
_M32 = _U64(0xFFFFFFFF)


class CellStreams:
    """Independent random streams, one per cell.

    The stream of cell ``c`` is a sequence of 512-bit blocks (sixteen
    32-bit words), ``ChaCha12(K_q, nonce_c, counter)`` for counter = 0, 1,
    ..., with ``K_q`` derived from the query key and ``nonce_c`` = 96 bits
    of ``SipHash-2-4-128(query_key, words_c)`` (see the module docstring).
    Drawing for some cells advances only their own block counters, so the
    numbers a cell receives depend on nothing but the query key and the
    cell's content.
    """

    #: stream version (:mod:`~plotnine_private.mechanisms.streams.versions`)
    version = 1

    def __init__(self, query_key: bytes, words: np.ndarray):
        words = np.asarray(words, dtype=_U64)
        if words.ndim == 1:
            words = words[:, None]
        k0, k1 = _key_words(query_key)
        tag = siphash24_128(k0, k1, words)
        self._nonce = np.stack(
            [
                (tag[:, 0] & _M32).astype(_U32),
                (tag[:, 0] >> _U64(32)).astype(_U32),
                (tag[:, 1] & _M32).astype(_U32),
            ]
        )
        self._key = np.frombuffer(
            hashlib.blake2b(
                b"cell streams",
                key=query_key[:16],
                digest_size=32,
                person=b"pnp-chacha8",
            ).digest(),
            dtype="<u4",
        ).astype(_U32)
        self._counter = np.zeros(len(words), dtype=np.int64)
        self.n = len(words)

    def _index(self, idx) -> np.ndarray:
        if idx is None:
            return np.arange(self.n)
        return np.asarray(idx, dtype=np.intp)

    def block_at(self, idx: np.ndarray, offset=0) -> np.ndarray:
        """Block ``counter + offset`` of each selected cell, as a
        ``(16, len(idx))`` uint32 array; counters are not advanced."""
        idx = self._index(idx)
        return chacha_block(
            self._key,
            self._counter[idx] + offset,
            self._nonce[:, idx],
            _STREAM_ROUNDS,
        )

    def advance(self, idx: np.ndarray, blocks=1) -> None:
        """Move the selected cells' streams on by ``blocks`` blocks."""
        self._counter[self._index(idx)] += blocks

    def blocks(self, idx: np.ndarray | None = None) -> np.ndarray:
        """Next block (sixteen 32-bit words) of each selected cell."""
        idx = self._index(idx)
        out = self.block_at(idx)
        self.advance(idx)
        return out

    def words(self, idx: np.ndarray | None = None) -> np.ndarray:
        """Next 64-bit word of each selected cell's stream (the first two
        32-bit words of its next block; the rest of the block is unused)."""
        b = self.blocks(idx)
        return b[0].astype(_U64) | (b[1].astype(_U64) << _U64(32))

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


def keyed_permutation(query_key: bytes, n: int) -> np.ndarray:
    """The order that sorts ``keyed_uniform(query_key, n)``, ties in index
    order: ``np.argsort(u, kind="stable")``, sooner.

    Every uniform is a multiple of ``2**-54`` in ``(0, 1)``, so
    ``u * 2**54`` is an exact 54-bit integer in the same order. Its top
    ``64 - b`` bits, with the index's ``b`` bits below them, make one
    word per draw, and sorting the words (a plain sort, about 40% faster
    than an argsort at 10**6) orders the draws, equal ones by index. If
    bits were dropped (``b > 10``) and two kept tops are equal (about
    ``n**2 / 2**(65 - b)`` likely: 3% at 10**6), the order of that pair
    is unknown and the stable argsort decides instead.

    >>> k = derive_key(master_key(1), "order")
    >>> want = np.argsort(keyed_uniform(k, 1000), kind="stable")
    >>> bool((keyed_permutation(k, 1000) == want).all())
    True
    """
    return draw_order(keyed_uniform(query_key, n))


def draw_order(u: np.ndarray) -> np.ndarray:
    """``np.argsort(u, kind="stable")`` of multiples of ``2**-54`` in
    ``(0, 1)`` (keyed uniforms), by one sort of words
    (:func:`keyed_permutation`).

    >>> draw_order(np.array([3, 1, 3, 2]) * 2.0**-54).tolist()
    [1, 3, 0, 2]
    """
    n = u.size
    b = max(1, (n - 1).bit_length())
    if b > 32:
        return stable_argsort(u)
    word = (u * 2.0**54).astype(_U64)
    drop = max(0, b - 10)
    word >>= _U64(drop)
    word <<= _U64(b)
    word |= np.arange(n, dtype=_U64)
    word.sort()
    if drop and bool((word[1:] >> _U64(b) == word[:-1] >> _U64(b)).any()):
        return stable_argsort(u)
    return low_rows(word, b)


def stable_argsort(values: np.ndarray) -> np.ndarray:
    """``np.argsort(values, kind="stable")`` of numbers without NaN: the
    unstable sort when no two values are equal (then the orders agree).

    >>> stable_argsort(np.array([2.0, 1.0, 2.0, 0.5])).tolist()
    [3, 1, 0, 2]
    """
    order = np.argsort(values)
    ordered = values[order]
    if ordered.size > 1 and bool((ordered[1:] == ordered[:-1]).any()):
        return np.argsort(values, kind="stable")
    return order


def keyed_normal(query_key: bytes, n: int, offset: int = 0) -> np.ndarray:
    """``n`` standard normal floats by inversion of keyed uniforms.

    Floating-point noise: use for real-valued releases whose privacy
    argument allows continuous noise (PCA quantities), not for integer counts.
    """
    from scipy.special import ndtri

    return ndtri(keyed_uniform(query_key, n, offset))
