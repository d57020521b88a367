"""Versions of the per-cell keyed streams, and the session's choice.

Every release records the version of the streams its noise came from
(:attr:`~plotnine_private.mechanisms.release.engine.Release.stream_version`),
and
a release's identity names its version when it is not 1, so that the two
versions of one query are two releases (charged twice), never one.

**Version 1** (:class:`~.randomness.CellStreams`): a cell's stream is
ChaCha12 blocks under a nonce named by SipHash-2-4-128 of the cell's words.
Every draw costs at least one ChaCha12 block (about 1,000 vectorised
32-bit operations per cell), which caps the exact sampler near 2-3 million
cells per second in NumPy.

**Version 2** (:class:`CellStreamsV2`): a cell's stream
starts with one *head* word, ``SipHash-2-4(K_head, words_c)``, followed by
a version-1 stream under a second derived key (the *body*), computed only
for cells that read past their head. The exact discrete Laplace sampler
needs one 64-bit word for all but about one cell in 2**60
(:mod:`.dlap_inversion`), so a draw costs one SipHash of the cell's
words. Both words and body are functions of the release key and the
cell's own words: a cell's numbers do not depend on which other cells are
drawn, in which order, or in how many calls.

SipHash-2-4 is a keyed pseudo-random function (Aumasson & Bernstein 2012);
its 64-bit tags are the standard output mode, and the key halves ``K_head``
and the body key are derived from the release key with keyed BLAKE2b under
distinct personalisations, so head and body are independent.

**Version 3** (the default; :mod:`.place_streams`): the cells of a whole
public domain are named by their place in it, bound to the domain by a
digest of its content, and their heads are read from SHAKE-128 (FIPS
202) a segment of places at a time; other cell tables name their cells
by words as version 2 does. Releases of version 3 have their own
identity, and their data digest hashes a public domain's counts in place
order (no sort of the cells).

**Version 4** (opt in: ``use_stream_version(4)``): version 3, except
that a public domain of floats (numeric ``levels=``, as float64) is
named by one digest of its float64 buffer
(:func:`~.cellnames.float_digest`), in the release's identity (more
than 64 floats) and in its domain digest alike, where version 3 writes
each level's text for the identity and its words for the domain: 10**6
integer levels cost 0.005 s to name instead of 0.1 s. Its releases have
their own identity and numbers; versions 1 to 3 are unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..errors import ParameterError
from ..session import current_session, update_session
from .randomness import CellStreams, _key_words, siphash24

__all__ = [
    "STREAM_VERSIONS",
    "CellStreamsV2",
    "cell_streams",
    "stream_version",
    "use_stream_version",
]

#: the stream versions this package can draw from
STREAM_VERSIONS = (1, 2, 3, 4)


def stream_version() -> int:
    """The stream version new releases draw from (3 unless changed).

    >>> stream_version() in STREAM_VERSIONS
    True
    """
    return current_session().stream_version


def _check(version: int) -> int:
    if version not in STREAM_VERSIONS or isinstance(version, bool):
        raise ParameterError(
            f"stream_version must be one of {STREAM_VERSIONS}, got "
            f"{version!r}; 3 is the default, 1 and 2 reproduce releases "
            "made before version 3 existed (a release records its "
            "version), 4 names numeric domains in bulk"
        )
    return int(version)


@contextmanager
def _restoring(previous: int) -> Iterator[None]:
    try:
        yield
    finally:
        update_session(stream_version=previous)


def use_stream_version(version: int):
    """Draw new releases from streams of ``version`` (1, 2, 3 or 4).

    Sets the version of the current session (this thread or asyncio
    task: :mod:`.session`) and returns a context manager that restores
    the previous one on exit, so both forms work::

        use_stream_version(2)            # from now on
        with use_stream_version(2):      # inside the block only
            ...

    Versions 1 and 2 reproduce the numbers of releases made before the
    next version existed; version 1 is about four times slower. Version
    4 differs from 3 only where a public domain holds floats (numeric
    ``levels=``): it names them by one digest of their buffer, faster
    and with other numbers than version 3.
    """
    checked = _check(version)
    previous = update_session(stream_version=checked).stream_version
    return _restoring(previous)


class CellStreamsV2(CellStreams):
    """Version-2 streams: one SipHash-2-4 head word per cell, then a
    version-1 body (see the module docstring).

    :meth:`words` returns a cell's head the first time it is asked for
    that cell and body words after that; the block methods inherited from
    :class:`~.randomness.CellStreams` read the body only. The body's
    SipHash tags are computed on first use.
    """

    version = 2

    def __init__(self, query_key: bytes, words: np.ndarray):
        words = np.asarray(words, dtype=np.uint64)
        if words.ndim == 1:
            words = words[:, None]
        self._words = words
        self._head_key = _key_words(_derived(query_key, b"pnp-v2-head"))
        self._start(query_key, len(words))

    def _start(self, query_key: bytes, n: int) -> None:
        """Every cell's stream before its first word."""
        self.n = n
        self._query_key = query_key
        self._head_used = np.zeros(n, dtype=bool)
        self._counter = np.zeros(n, dtype=np.int64)
        self._body_ready = False

    def _body_names(self) -> tuple[bytes, np.ndarray]:
        """The bodies' key and the words that name each cell's body."""
        return _derived(self._query_key, b"pnp-v2-body"), self._words

    def _body(self) -> None:
        if not self._body_ready:
            counter = self._counter
            CellStreams.__init__(self, *self._body_names())
            self._counter = counter
            self._body_ready = True

    def block_at(self, idx, offset=0) -> np.ndarray:
        self._body()
        return super().block_at(idx, offset)

    def heads(self, idx: np.ndarray | None = None) -> np.ndarray:
        """The head word of each selected cell (does not consume it)."""
        # np.take gathers whole rows (indexing copies them word by word)
        words = (
            self._words if idx is None else np.take(self._words, idx, axis=0)
        )
        return siphash24(*self._head_key, words)

    def words(self, idx: np.ndarray | None = None) -> np.ndarray:
        """Next 64-bit word of each selected cell: its head the first
        time, then the first two 32-bit words of each next body block."""
        if idx is None and not self._head_used.any():
            self._head_used[:] = True
            return self.heads()  # all cells, without a copy of the words
        idx = self._index(idx)
        used = self._head_used[idx]
        if not used.any():
            self._head_used[idx] = True
            return self.heads(idx)
        fresh = ~used
        out = np.empty(idx.size, dtype=np.uint64)
        at = np.flatnonzero(fresh)
        out[at] = self.heads(idx[at])
        self._head_used[idx[at]] = True
        rest = np.flatnonzero(~fresh)
        out[rest] = super().words(idx[rest])
        return out


def _derived(query_key: bytes, person: bytes) -> bytes:
    return hashlib.blake2b(
        b"cell streams v2", key=query_key[:16], digest_size=16, person=person
    ).digest()


def cell_streams(
    query_key: bytes, words: np.ndarray, version: int | None = None
) -> CellStreams:
    """Per-cell streams of ``version`` (default: :func:`stream_version`)
    for the cells named by ``words`` under ``query_key``. Version 3 names
    cells by words as version 2 does (its place-named streams are
    :class:`~.place_streams.PlaceStreams`); its releases differ from
    version 2's by their identity."""
    version = stream_version() if version is None else _check(version)
    if version == 1:
        return CellStreams(query_key, words)
    return CellStreamsV2(query_key, words)
