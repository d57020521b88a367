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
privacy unit keeps (:mod:`.bounding`).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from .errors import ParameterError

__all__ = ["PRIME", "SPAN", "key_ints", "key_ints_array", "round_keys"]

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
    int64 array (values in ``[0, 2**62)``) or a narwhals integer
    expression; both evaluate the same integer operations.

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


def _key_ints_chunk(ident: np.ndarray, k: list, scale: int) -> np.ndarray:
    u = ident.astype(np.uint64)
    x1 = u // _P
    x0 = u - x1 * _P
    tmp = np.empty_like(u)
    _reduce(x1, tmp)
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


#: the modulus as an unsigned scalar
_P = np.uint64(PRIME)


def _reduce(a: np.ndarray, tmp: np.ndarray) -> None:
    """``a mod P`` in place (``a`` uint64)."""
    np.floor_divide(a, _P, out=tmp)
    tmp *= _P
    a -= tmp
