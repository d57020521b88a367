"""Stream version 3: the cells of a public domain named by their place.

A public cell table lists every cell of the product of its dimensions,
cell ``p`` being the mixed-radix place of its levels (first dimension
slowest: :func:`~plotnine_private.cells.assemble`). Version 3 names such a
cell by ``p`` instead of by its words, and binds the domain itself into
the stream: :func:`domain_digest` hashes every dimension's content (its
levels in order, with the dimensions' order and sizes), and that digest
enters both the data digest (:func:`place_digest`, hence the stream key)
and the keys of the cells' streams (:class:`PlaceStreams`). Within one
domain distinct cells have distinct places; two different domains have
different digests; so a cell's name, ``(domain, place)``, stays injective
(rule 12) while no cell needs its words.

**The place PRF: SHAKE-128** (FIPS 202), from :mod:`hashlib`, used as a
keyed stream generator (an extendable-output function read as a keyed
pseudo-random function, as in KMAC and the SHAKE-based DRBGs): the head
words of cells ``[s 2**S, (s + 1) 2**S)`` are the output of
``SHAKE-128(label || K_head || s)``, 8 bytes (a little-endian uint64) per
cell, ``K_head`` derived from the release key and the domain digest with
keyed BLAKE2b. A shorter read of an XOF is a prefix of a longer one, so a
place's word is the same whether its whole segment, part of it, or the
whole domain is drawn. One 8 MB read costs a third to a half of a
SipHash-2-4 of 10**6 one-word names in NumPy. A cell reading past its
head (about one in 2**60 for the exact discrete Laplace; the discrete
Gaussian's trials, the CKS sampler at huge scales) reads a version-1 body
stream under a second derived key, named by its place word, as version 2
does.

Tables whose cells are not a whole public domain (thresholded, observed,
a subset of cells, cells over an observed dimension) keep version 2's
naming by words, under the version-3 identity (:func:`table_streams`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..naming.cellnames import (
    StrLabels,
    cell_words_at,
    column_runs,
    every_row,
    float_column,
    float_digest,
)
from ..naming.encoding import narrowest, only_str
from .randomness import CellStreams
from .versions import CellStreamsV2, cell_streams, stream_version

__all__ = [
    "SEGMENT_BITS",
    "PlaceDomain",
    "PlaceStreams",
    "column_digest",
    "content_words",
    "domain_digest",
    "place_digest",
    "place_index",
    "table_streams",
    "whole_domain",
]

#: cells per SHAKE-128 read, as a power of two (512 KB of output)
SEGMENT_BITS = 16
_SHAKE_LABEL = b"plotnine_private stream v3 place\0"


def column_digest(column: Any) -> bytes:
    """32-byte digest of one content column (one value per level), equal
    for every representation of the same values: strings (a
    :class:`~.cellnames.StrLabels` buffer, Python strings, or numpy's
    ``np.str_``, which cell words name by the same text) by their lengths
    and bytes (:meth:`~.cellnames.StrLabels.digest`), anything else by
    the typed words that name each value (:func:`~.cellnames.cell_words`).

    >>> column_digest(StrLabels.of(["a", "b"])) == column_digest(["a", "b"])
    True
    >>> column_digest(np.array([4, 5])) == column_digest([4.0, 5.0])
    True
    >>> column_digest([4.0]) == column_digest(["4.0"])
    False

    Under stream version 4 a column of floats (a float64 array, or only
    Python floats) is named by :func:`~.cellnames.float_digest` of its
    buffer instead: one pass, shared with the release's identity.
    """
    if isinstance(column, StrLabels):
        return column.digest()
    if stream_version() >= 4:
        floats = float_column(column)
        if floats is not None:
            # version 4: floats by their buffer (as the identity names
            # them), not by their words
            return float_digest(floats)
    values: Any = ()
    if not isinstance(column, np.ndarray):
        values = list(column)
    elif column.dtype.kind not in "biufmM":  # maybe strings in an array
        values = column.tolist()
    if len(values) and not only_str(values) and _all_str(values):
        # str subclasses (numpy's np.str_) are named by their text, as
        # cell_words names them: the digest of the same plain strings
        values = list(map(str.__str__, values))
    if len(values) and only_str(values):
        return StrLabels.of(values).digest()
    widths, flat = column_runs(column)
    h = hashlib.blake2b(digest_size=32, person=b"pnp-col-words")
    widths = narrowest(widths)
    h.update(b"%d %s " % (len(widths), widths.dtype.str.encode()))
    h.update(widths.data)
    h.update(np.ascontiguousarray(flat, dtype="<u8").data)
    return h.digest()


def _all_str(values: Sequence[Any]) -> bool:
    """Whether every value is a ``str``, subclasses included."""
    if not len(values) or not isinstance(next(iter(values)), str):
        return not len(values)  # as the scan below answers: at once
    return all(issubclass(t, str) for t in set(map(type, values)))


def domain_digest(
    sizes: Sequence[int], columns: Sequence[Sequence[Any]]
) -> bytes:
    """32-byte digest of a product domain: the number of dimensions, then
    each dimension's size, its number of content columns and each
    column's :func:`column_digest` (fixed widths: the encoding is
    injective). O(levels), never O(cells)."""
    h = hashlib.blake2b(digest_size=32, person=b"pnp-v3-domain")
    h.update(len(sizes).to_bytes(8, "little"))
    for size, cols in zip(sizes, columns, strict=True):
        h.update(int(size).to_bytes(8, "little"))
        h.update(len(cols).to_bytes(8, "little"))
        for col in cols:
            h.update(column_digest(col))
    return h.digest()


class PlaceDomain:
    """The cells of a public domain listed by place: cell ``p`` has level
    ``index[p, j]`` of dimension ``j`` (``index``: the mixed-radix
    digits of ``0 .. total - 1``).

    Its :meth:`digest` is made on first use and kept; the cells' words
    (:meth:`cell_words`, for what still names cells by words) are made
    on each call (the :class:`~.release.CellTable` that asks keeps them).
    """

    def __init__(
        self,
        sizes: Sequence[int],
        columns: Sequence[Sequence[Any]],
        index: np.ndarray,
    ):
        self.sizes = tuple(int(s) for s in sizes)
        self.columns = tuple(tuple(c) for c in columns)
        self.index = index
        self._digest: bytes | None = None

    def __len__(self) -> int:
        return len(self.index)

    def digest(self) -> bytes:
        """:func:`domain_digest` of the dimensions (made once)."""
        if self._digest is None:
            self._digest = domain_digest(self.sizes, self.columns)
        return self._digest

    def cell_words(self) -> np.ndarray:
        """Each cell's words by its content (:func:`content_words`), as
        stream versions 1 and 2 name every cell."""
        return content_words(self.columns, self.index)


def content_words(
    columns: Sequence[Sequence[Any]], index: np.ndarray
) -> np.ndarray:
    """The words of the cells whose level of dimension ``j`` is
    ``index[:, j]`` (``columns[j]``: that dimension's content columns):
    each level is named once, then taken by every cell that has it
    (:func:`~.cellnames.cell_words_at`)."""
    content, rows = [], []
    for j, cols in enumerate(columns):
        for col in cols:
            content.append(col)
            rows.append(index[:, j])
    if not len(index):
        return np.zeros((0, 2 * max(len(content), 1)), dtype=np.uint64)
    return cell_words_at(content, rows)


def whole_domain(cells: np.ndarray, sizes: Sequence[int]) -> bool:
    """Whether ``cells`` are ``0, 1, ..., total - 1`` for the domain of
    ``sizes``: every cell, each at its place.

    >>> whole_domain(np.arange(6), [2, 3]), whole_domain(np.arange(5), [6])
    (True, False)
    """
    return every_row(np.asarray(cells), int(np.prod(sizes, dtype=object)))


def place_index(sizes: Sequence[int]) -> np.ndarray:
    """The levels of every place of the domain of ``sizes``: row ``p`` is
    ``np.unravel_index(p, sizes)`` (first dimension slowest), each
    column written by broadcasting its levels (ten times faster than
    unravelling 10**6 places and stacking the columns).

    >>> place_index([2, 3]).tolist()
    [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    """
    sizes = [int(s) for s in sizes]
    total = int(np.prod(sizes, dtype=np.int64))
    out = np.empty((len(sizes), total), dtype=np.int64)
    for j, size in enumerate(sizes):
        shape = [1] * len(sizes)
        shape[j] = size
        out[j].reshape(sizes)[...] = np.arange(size).reshape(shape)
    return out.T  # a column per dimension, each contiguous


def place_digest(
    domain: bytes, n: np.ndarray, key_sum: np.ndarray | None = None
) -> bytes:
    """16-byte digest of the data of a place-named table: the domain's
    digest, then the counts (and the key sums, if any) in place order,
    each at its narrowest width (recorded in the hash). No sort: the
    places are the canonical order."""
    h = hashlib.blake2b(digest_size=16, person=b"pnp-data-v3")
    h.update(domain)
    for name, values in ((b"n", n), (b"key_sum", key_sum)):
        if values is None:
            continue
        arr = narrowest(np.asarray(values, dtype=np.int64))
        h.update(b"%s %d %s " % (name, arr.size, arr.dtype.str.encode()))
        h.update(np.ascontiguousarray(arr).data)
    return h.digest()


def _keyed(query_key: bytes, domain: bytes, person: bytes, size: int):
    return hashlib.blake2b(
        domain, key=query_key[:16], digest_size=size, person=person
    ).digest()


class PlaceStreams(CellStreamsV2):
    """Version-3 streams of the ``n`` cells of a place-named domain: the
    head of cell ``p`` is word ``p mod 2**S`` of segment ``p >> S``'s
    SHAKE-128 output, its body a version-1 stream named by the word
    ``p`` (see the module docstring). The sampling methods are those of
    :class:`~.streams.CellStreamsV2`."""

    version = 3

    def __init__(self, query_key: bytes, domain: bytes, n: int):
        self._domain = domain
        self._head_prefix = _SHAKE_LABEL + _keyed(
            query_key, domain, b"pnp-v3-head", 32
        )
        self._start(query_key, int(n))

    def _body_names(self) -> tuple[bytes, np.ndarray]:
        key = _keyed(self._query_key, self._domain, b"pnp-v3-body", 16)
        return key, np.arange(self.n, dtype=np.uint64)[:, None]

    def _segment(self, s: int, count: int) -> np.ndarray:
        """The first ``count`` head words of segment ``s``."""
        xof = hashlib.shake_128(self._head_prefix + s.to_bytes(8, "little"))
        return np.frombuffer(xof.digest(8 * count), dtype="<u8")

    def heads(self, idx: np.ndarray | None = None) -> np.ndarray:
        """The head word of each selected place (does not consume it):
        each segment that holds one is read once, up to its last."""
        size = 1 << SEGMENT_BITS
        if idx is None:
            out = np.empty(self.n, dtype=np.uint64)
            for a in range(0, self.n, size):
                m = min(size, self.n - a)
                out[a : a + m] = self._segment(a >> SEGMENT_BITS, m)
            return out
        idx = np.asarray(idx, dtype=np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= self.n):
            raise IndexError(f"places must lie in [0, {self.n})")
        out = np.empty(idx.size, dtype=np.uint64)
        seg = idx >> SEGMENT_BITS
        order = np.argsort(seg, kind="stable")
        bounds = np.flatnonzero(np.diff(seg[order], prepend=-1)).tolist()
        bounds.append(idx.size)
        for a, b in zip(bounds[:-1], bounds[1:]):
            at = order[a:b]
            offset = idx[at] & (size - 1)
            count = int(offset.max()) + 1
            words = self._segment(int(seg[at[0]]), count)
            out[at] = words[offset]
        return out


def table_streams(key: bytes, table: Any) -> CellStreams:
    """The cells' streams of a cell table under the current stream
    version: by place (:class:`PlaceStreams`) for a whole public domain
    under version 3, else by the cells' words (:func:`~.streams.
    cell_streams`; version 3 names them as version 2 does)."""
    if table.by_place():
        return PlaceStreams(key, table.places.digest(), len(table.places))
    return cell_streams(key, table.words)
