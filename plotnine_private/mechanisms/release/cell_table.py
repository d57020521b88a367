"""The cells a release perturbs: :class:`CellTable`, and the digest of the
data a release perturbs (:func:`data_digest`).

Each stream key of a release is derived from a digest of its data
(:mod:`.release`): rerunning the same code on changed data never reuses
noise. A cell table's digest does not depend on the order its cells are
listed in, so a table and a plot listing the same cells in other orders
draw the same noise (:mod:`.row_order`).

This module imports numpy only (no plotnine, no pandas).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..naming.row_order import row_order
from ..streams.places import PlaceDomain, place_digest
from ..streams.randomness import _canonical
from ..streams.versions import stream_version

__all__ = ["CellTable", "data_digest"]


def data_digest(*arrays: Any) -> bytes:
    """16-byte digest of the data a release perturbs (dtype, shape, bytes).

    >>> data_digest(np.arange(3)) == data_digest(np.arange(3))
    True
    >>> data_digest(np.arange(3)) == data_digest(np.arange(1, 4))
    False
    """
    h = hashlib.blake2b(digest_size=16, person=b"pnp-data")
    for a in arrays:
        arr = np.asarray(a)
        if arr.ndim == 0:
            arr = arr.reshape(1)  # as ascontiguousarray did
        h.update(_canonical((str(arr.dtype), arr.shape)))
        if arr.size == 0 or arr.dtype.hasobject:
            h.update(arr.tobytes())
            continue
        if arr.flags.c_contiguous:
            h.update(arr.data)
            continue
        # the C-order bytes a block of rows at a time: the same digest
        # without two full copies of a (10**6, 20) matrix
        rows = max(1, _DIGEST_BLOCK // max(1, arr[:1].nbytes))
        for start in range(0, arr.shape[0], rows):
            part = np.ascontiguousarray(arr[start : start + rows])
            h.update(part.data)
    return h.digest()


_DIGEST_BLOCK = 1 << 22  # bytes hashed per copied block


@dataclass
class CellTable:
    """Cells of one release, before perturbation (numpy only).

    Attributes
    ----------
    words
        ``(cells, k)`` uint64 content of each cell (panel, groups, domain
        cell), from
        :func:`~plotnine_private.mechanisms.streams.randomness.cell_words`;
        each cell's noise stream is named by its words (by its place under
        stream version 3, see ``places``: then made only if read).
    n
        True record counts (int64).
    weighted
        Weighted counts (float64); equal to ``n`` without weights.
    key_sum
        Exact integer sums of the CKM record keys per cell, or ``None``.
    public
        Whether the cells were fixed without looking at the data. If not,
        only non-empty cells are in the table (thresholded release).
    multiplicity
        How many cells one record can be counted in (1; more with facet
        margins, which repeat every record in the margin panels).
    places
        The whole public domain whose cell ``p`` is row ``p``, when the
        table lists one (set by :meth:`named_by`, never copied by
        ``dataclasses.replace``, whose rows may be other cells): stream
        version 3 names these cells by place (:mod:`.place_streams`).
    """

    words: np.ndarray | None
    n: np.ndarray
    weighted: np.ndarray | None = None
    key_sum: np.ndarray | None = None
    public: bool = True
    multiplicity: int = 1
    places: PlaceDomain | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def named_by(self, places: PlaceDomain) -> CellTable:
        """This table with its cells named by their place in ``places``
        (row ``p`` is place ``p``); words not given (``None``) are made
        only if read."""
        self.places = places
        if self.__dict__.get("words") is None:
            del self.words  # made by __getattr__ if ever read
        return self

    def __getattr__(self, name: str) -> Any:
        # only called for a missing attribute: the words of a
        # place-named table, which version 3 never needs
        places = self.__dict__.get("places")
        if name != "words" or places is None:
            raise AttributeError(name)
        self.words = places.cell_words()
        return self.words

    def by_place(self) -> bool:
        """Whether the cells are named by their place (a whole public
        domain, under stream version 3)."""
        return (
            self.places is not None and self.public and stream_version() >= 3
        )

    def digest(self) -> bytes:
        """Digest of the cells and their true counts, independent of the
        order the cells are listed in (a table and a plot list them in
        different orders and must draw the same noise). Under stream
        version 3, a whole public domain's: its domain digest and its
        counts in place order (:func:`.place_streams.place_digest`)."""
        if self.places is not None and self.by_place():
            return place_digest(self.places.digest(), self.n, self.key_sum)
        words = np.asarray(self.words, dtype=np.uint64)
        if words.ndim == 1:  # one word per cell
            words = words[:, None]
        order = row_order(words)
        # np.take gathers whole rows (indexing copies them word by word)
        parts = [
            np.take(words, order, axis=0),
            np.take(np.asarray(self.n, dtype=np.int64), order),
        ]
        if self.key_sum is not None:
            parts.append(np.take(np.asarray(self.key_sum, np.int64), order))
        return data_digest(*parts)
