"""A keyed hash of integer identifiers, the same in numpy and in engines.

The function: ``x0 = id mod P``, ``x1 = id div P`` (``P = 2147483579``, a
prime with ``P mod 3 = 2``, so ``a -> a**3 mod P`` is a permutation); two
chains of four rounds ``a -> (a + k_r [+ x1])**3 mod P`` with eight round
keys ``k_r`` taken from a hash of the seed give ``hA`` and ``hB``; the
result is ``(hA * P + hB) mod scale``. Only integer ``+``, ``*``, ``//``
and ``%`` are used, and every product stays below ``2**63``, so numpy
arrays and narwhals expressions (DuckDB, Polars, Spark) compute the very
same integers from the same code (:func:`key_ints` is duck-typed).

Hand-written because no library offers a keyed hash that DuckDB, Polars
and Spark all evaluate identically (their built-in hashes differ). It is a
pseudorandom function for statistical purposes (uniform output, no visible
pattern along the ids), not a cryptographic one.

Used for CKM record keys from a row identifier
(:mod:`plotnine_private.engines.keys`) and for the choice of the records a
privacy unit keeps (:mod:`.bounding`): :func:`pair_keys`, one chain of
five rounds over a (unit, record) pair, orders ``pnp-bounding-v2``; two
nested :func:`key_ints` ordered ``pnp-bounding-v1``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..errors import ParameterError

__all__ = [
    "LOW",
    "PRIME",
    "SPAN",
    "key_ints",
    "key_ints_array",
    "pair_keys",
    "pair_keys_array",
    "round_keys",
    "unit_parts_array",
]

#: the modulus of the rounds: prime, below 2**31, and 2 mod 3
PRIME = 2147483579
#: the range of a full-width hash, ``PRIME**2`` (below 2**62)
SPAN = PRIME * PRIME


def round_keys(seed: Any) -> list[int]:
    """The eight round keys of ``seed`` (an int or a non-empty str)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer, str)):
        raise ParameterError(
            f"seed must be an int or a str to derive keys from a row "
            f"identifier, got {seed!r}; keys from row_id= need a seed."
        )
    h = hashlib.blake2b(
        str(int(seed) if not isinstance(seed, str) else seed).encode(),
        digest_size=64,
        person=b"pnp-row-keys",
    ).digest()
    return [
        int.from_bytes(h[8 * i : 8 * i + 8], "big") % PRIME for i in range(8)
    ]


def _cube(a):
    return (a * a % PRIME) * a % PRIME


def key_ints(ident, seed: Any, scale: int = SPAN, stage=None):
    """The keyed hash of ``ident`` in ``[0, scale)``: ``ident`` is a numpy
    int64 array or a narwhals integer expression; both evaluate the same
    integer operations (floor division: a negative identifier's words
    are in ``[0, P)`` as any other's; identifiers that differ by a
    multiple of ``P**2`` hash alike).

    ``stage`` (optional) takes a dict of named intermediate values and
    returns the values to go on with: an engine turns them into columns
    of a projection (a cube uses its input three times, so without stages
    an expression of several rounds grows exponentially); numpy needs
    none.

    >>> key_ints(np.array([0, 1]), 7).tolist() == key_ints(
    ...     np.array([0, 1]), 7).tolist()
    True
    """
    if stage is None:
        stage = _as_is
    k = round_keys(seed)
    x = stage({"x0": ident % PRIME, "x1": ident // PRIME % PRIME})
    x0, x1 = x["x0"], x["x1"]
    # two chains of four rounds, keyed by k[0:4] and k[4:8]
    a = stage({b: _cube((x0 + k[b]) % PRIME) for b in (0, 4)})
    a = stage({b: _cube((a[b] + x1 + k[b + 1]) % PRIME) for b in (0, 4)})
    for r in (2, 3):
        a = stage({b: _cube((a[b] + k[b + r]) % PRIME) for b in (0, 4)})
    return (a[0] * PRIME + a[4]) % scale


def _as_is(values: dict) -> dict:
    return values


def key_ints_array(ident: Any, seed: Any, scale: int = SPAN) -> np.ndarray:
    """:func:`key_ints` of a numpy array, the same integers in about a
    third of the time: the rounds run in place on unsigned integers, each
    ``mod P`` is a floor division by the scalar ``P`` (much faster than
    ``np.remainder``) and a subtraction, and a sum below ``2P`` is squared
    without reducing it first (``(2P)**2 < 2**64``).

    Long arrays are hashed a chunk at a time, so that the temporaries of
    the rounds stay in the processor's cache (twice as fast at 10**7).

    >>> x = np.arange(5)
    >>> bool((key_ints_array(x, 3) == key_ints(x, 3)).all())
    True
    """
    k = [np.uint64(v) for v in round_keys(seed)]
    ident = np.asarray(ident, dtype=np.int64)
    if len(ident) <= _CHUNK:
        return _key_ints_chunk(ident, k, scale)
    out = np.empty(len(ident), dtype=np.int64)
    for start in range(0, len(ident), _CHUNK):
        part = slice(start, start + _CHUNK)
        out[part] = _key_ints_chunk(ident[part], k, scale)
    return out


#: records per chunk of :func:`key_ints_array` (a few MB of temporaries)
_CHUNK = 1 << 17


def _words(ident: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ident mod P, (ident div P) mod P)`` of int64 identifiers as
    uint64, with floor division (Python's, and the engines'), so a
    negative identifier has words in ``[0, P)`` as any other."""
    if len(ident) and int(ident.min()) < 0:
        high, low = np.divmod(ident, np.int64(PRIME))
        return low.astype(np.uint64), np.mod(high, PRIME).astype(np.uint64)
    u = ident.astype(np.uint64)
    x1 = u // _P
    x0 = u - x1 * _P
    _reduce(x1, np.empty_like(u))
    return x0, x1


def _key_ints_chunk(ident: np.ndarray, k: list, scale: int) -> np.ndarray:
    x0, x1 = _words(ident)
    tmp = np.empty_like(x0)
    chains = []
    for base in (0, 4):
        a = x0 + k[base]  # < 2P
        for r in range(4):
            if r == 1:
                a += x1
                a += k[base + 1]
                _reduce(a, tmp)  # was below 3P
            elif r:
                a += k[base + r]  # < 2P
            cube = a * a  # < 2**64
            _reduce(cube, tmp)
            cube *= a  # < 2 P**2 < 2**63
            _reduce(cube, tmp)
            a = cube
        chains.append(a)
    out, low = chains
    out *= _P
    out += low  # < P**2 + P
    out %= np.uint64(scale)
    return out.astype(np.int64)


#: the low bits of a record identifier that break ties of
#: :func:`pair_keys`
LOW = 1 << 32


def pair_keys(unit, record, seed: Any, stage=None):
    """One keyed hash of the pair (``unit``, ``record``), as an order key
    in ``[0, 2**63)``: ``h * 2**32 + record mod 2**32``.

    ``h`` in ``[0, P)`` is one chain of five rounds ``a -> (a + w +
    k_r)**3 mod P`` that absorbs, in turn, the words ``unit mod P``,
    ``unit div P``, ``record mod P`` and ``record div P`` (then a round
    of the key alone), keyed by :func:`round_keys` of ``seed``. The
    record's low part goes through three rounds (an exponent of 27) and
    the unit's shifts the whole chain, so records of one unit are put in
    an order with no visible pattern along their identifiers, and two
    units order the same identifiers differently. The low bits of the
    record behind ``h`` make the order total for distinct identifiers
    below ``2**32`` (and for 62-bit content hashes but for a chance of
    about ``2**-63`` per pair), with no second chain: five rounds where
    the two nested hashes of ``pnp-bounding-v1`` took sixteen.

    Duck-typed like :func:`key_ints` (numpy int64 arrays or narwhals
    integer expressions, same integers; ``stage`` as there).

    >>> u, r = np.array([5, 5]), np.array([0, 1])
    >>> bool((pair_keys(u, r, 1) == pair_keys_array(
    ...     unit_parts_array(u, 1), r, 1)).all())
    True
    """
    if stage is None:
        stage = _as_is
    k = round_keys(seed)
    x = stage(
        {
            "u0": unit % PRIME,
            "u1": unit // PRIME % PRIME,
            "r0": record % PRIME,
            "r1": record // PRIME % PRIME,
            "lo": record % LOW,
        }
    )
    a = stage({"a": _cube((x["u0"] + k[0]) % PRIME)})["a"]
    for word, r in (("u1", 1), ("r0", 2), ("r1", 3)):
        a = stage({"a": _cube((a + x[word] + k[r]) % PRIME)})["a"]
    a = stage({"a": _cube((a + k[4]) % PRIME)})["a"]
    return a * LOW + x["lo"]


def unit_parts_array(units: Any, seed: Any) -> np.ndarray:
    """The first two rounds of :func:`pair_keys` (the unit's words
    alone): computed once per unit, then :func:`pair_keys_array` per
    record."""
    k = [np.uint64(v) for v in round_keys(seed)]
    u0, u1 = _words(np.asarray(units, dtype=np.int64))
    tmp = np.empty_like(u0)
    a = _cube_in_place(u0 + k[0], tmp)  # < 2P
    a += u1
    a += k[1]
    _reduce(a, tmp)
    return _cube_in_place(a, tmp).astype(np.int64)


def pair_keys_array(
    unit_parts: np.ndarray, records: Any, seed: Any
) -> np.ndarray:
    """:func:`pair_keys` of numpy arrays, from each record's unit part
    (:func:`unit_parts_array`) and its identifier: the same integers,
    the rounds in place on unsigned integers (as
    :func:`key_ints_array`), a chunk at a time."""
    k = [np.uint64(v) for v in round_keys(seed)]
    parts = np.asarray(unit_parts, dtype=np.int64)
    records = np.asarray(records, dtype=np.int64)
    out = np.empty(len(records), dtype=np.int64)
    for start in range(0, len(records), _CHUNK):
        part = slice(start, start + _CHUNK)
        out[part] = _pair_chunk(parts[part], records[part], k)
    return out


def _pair_chunk(c: np.ndarray, records: np.ndarray, k: list) -> np.ndarray:
    r = records.astype(np.uint64)  # two's complement: low bits as mod
    r0, r1 = _words(records)
    tmp = np.empty_like(r)
    a = c.astype(np.uint64)
    a += r0
    a += k[2]
    _reduce(a, tmp)  # was below 3P
    a = _cube_in_place(a, tmp)
    a += r1
    a += k[3]
    _reduce(a, tmp)
    a = _cube_in_place(a, tmp)
    a += k[4]  # < 2P
    a = _cube_in_place(a, tmp)
    a <<= np.uint64(32)
    a |= r & np.uint64(LOW - 1)
    return a.astype(np.int64)


def _cube_in_place(a: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """``a**3 mod P`` for ``a < 2P`` (uint64; ``a`` is overwritten)."""
    cube = a * a  # < 2**64
    _reduce(cube, tmp)
    cube *= a  # < 2 P**2 < 2**63
    _reduce(cube, tmp)
    return cube


#: the modulus as an unsigned scalar
_P = np.uint64(PRIME)


def _reduce(a: np.ndarray, tmp: np.ndarray) -> None:
    """``a mod P`` in place (``a`` uint64)."""
    np.floor_divide(a, _P, out=tmp)
    tmp *= _P
    a -= tmp
