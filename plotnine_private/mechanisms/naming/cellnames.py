"""Cell names: the injective, typed encoding that names a cell's noise
stream (:func:`cell_words`, used by
:class:`~plotnine_private.mechanisms.streams.randomness.CellStreams`).

A cell is named by the typed, length-prefixed encoding of its content, so
two different cells never share a name (joined text did: the panels
("x|y", "z") and ("x", "y|z"), the float 4.0 and the string "4.0", True
and "True", 2**53 and 2**53 + 1 written as floats). Each value is one tag
word, ``(type << 56) | payload length in bytes``, then its payload padded
to whole little-endian 64-bit words. Numbers are named by their exact
value: an integral finite float is the integer it equals (4 and 4.0 are
one level, as pandas has them), any other float its IEEE bits (one NaN).

NumPy only (no pandas): pandas values are recognised by what they are
(``datetime`` subclasses, ``NaT``/``NA`` by type name).
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from .cell_values import (
    NAN_BITS,
    T_BOOL,
    T_FLOAT,
    T_INT,
    T_STR,
    memo_bytes,
)
from .encoding import (
    narrowest,
    only_str,
    tagged_float_runs,
    tagged_int_runs,
    tagged_runs,
    utf8_runs,
)
from .time_values import time_ns, time_words

__all__ = [
    "FloatLevels",
    "IntLevels",
    "StrLabels",
    "cell_words",
    "cell_words_at",
    "column_runs",
    "every_row",
    "float_column",
    "float_digest",
    "narrowest",
    "only_str",
    "utf8_runs",
]

_U64 = np.uint64


def _number_words(arr: np.ndarray) -> np.ndarray | None:
    """``(n, 2)`` words of a numeric column, vectorised (None: some value
    needs the general path, e.g. an integer beyond 64 bits)."""
    n = len(arr)
    out = np.empty((n, 2), dtype=_U64)
    int_tag = _U64((T_INT << 56) | 8)
    if arr.dtype.kind == "b":
        out[:, 0] = (T_BOOL << 56) | 1
        out[:, 1] = arr.astype(_U64)
        return out
    if arr.dtype.kind == "u":
        if n and arr.max() >= 2**63:
            return None
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "i":
        out[:, 0] = int_tag
        out[:, 1] = arr.astype(np.int64).view(_U64)
        return out
    f = arr.astype(np.float64)
    with np.errstate(invalid="ignore"):
        whole = np.isfinite(f) & (np.floor(f) == f)
    if np.any(whole & (np.abs(f) >= 2.0**63)):
        return None
    out[:, 0] = np.where(whole, int_tag, _U64((T_FLOAT << 56) | 8))
    ints = np.where(whole, f, 0.0).astype(np.int64).view(_U64)
    bits = np.where(np.isnan(f), NAN_BITS, f.view(_U64))
    out[:, 1] = np.where(whole, ints, bits)
    return out


class _Ragged:
    """Words of a column of values of several lengths: every value's words
    one after the other (``flat``), and how many each has (``widths``)."""

    def __init__(self, flat: np.ndarray, widths: np.ndarray):
        self.flat, self.widths = flat, widths

    def __len__(self) -> int:
        return len(self.widths)


class _Dense:
    """Words of a column of values of several lengths, one row a value
    padded with zero words to the longest (``words``), and how many
    words each value has (``widths``)."""

    def __init__(self, words: np.ndarray, widths: np.ndarray):
        self.words, self.widths = words, widths

    def __len__(self) -> int:
        return len(self.widths)


# the low b bytes of a word, b = 0..8
_LOW_BYTES = np.array([(1 << (8 * b)) - 1 for b in range(9)], dtype=np.uint64)


#: the multiplier of :meth:`StrLabels.hashes` (2**64 / golden ratio)
_MIX = np.uint64(0x9E3779B97F4A7C15)

# "s:" in bytes 4 and 5 of a little-endian word
_S_COLON = np.uint64(int.from_bytes(b"\0\0\0\0s:\0\0", "little"))


class StrLabels:
    """Plain strings kept as one UTF-8 buffer: ``data`` (uint8) holds
    every label's bytes one after the other and ``offsets`` (int64, one
    more than the labels) where each starts and the last ends.

    A declared domain of 10**6 labels is named from these two arrays
    (its cells' words, :meth:`words`; its bytes in a query's identity,
    :meth:`prefixed`) without a Python object per label. The names are
    those of the labels as ``str`` values (:func:`value_bytes`).

    >>> labels = StrLabels.of(["ab", "é", ""])
    >>> len(labels), labels.tolist(), labels[1]
    (3, ['ab', 'é', ''], 'é')
    """

    __slots__ = (
        "_digest",
        "_prefixed",
        "_words",
        "_words_by_place",
        "data",
        "offsets",
    )

    def __init__(self, offsets: np.ndarray, data: np.ndarray):
        offsets = np.asarray(offsets, dtype=np.int64)
        data = np.asarray(data, dtype=np.uint8)
        if (
            offsets.ndim != 1
            or not len(offsets)
            or offsets[0] != 0
            or offsets[-1] != len(data)
            or bool((offsets[1:] < offsets[:-1]).any())
        ):
            raise ValueError(
                "StrLabels: offsets must rise from 0 to len(data)"
            )
        self.offsets, self.data = offsets, data
        self._prefixed: bytes | None = None
        self._digest: bytes | None = None
        self._words: _Dense | _Ragged | None = None
        self._words_by_place: list[np.ndarray] | None = None

    @classmethod
    def of(cls, values: Sequence[str]) -> StrLabels:
        """The labels of plain ``str`` values (one encoding pass)."""
        data, lens = utf8_runs(values)
        offsets = np.zeros(len(lens) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        return cls(offsets, data)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        """Each label's length in bytes."""
        return np.diff(self.offsets)

    def __getitem__(self, i: int) -> str:
        i = range(len(self))[i]  # an index error as a list gives it
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.data[a:b].tobytes().decode("utf-8")

    def tolist(self) -> list[str]:
        """The labels as Python strings (one object each: for the slow
        paths only)."""
        raw = self.data.tobytes()
        at = self.offsets.tolist()
        return [raw[a:b].decode("utf-8") for a, b in zip(at[:-1], at[1:])]

    def __iter__(self):
        return iter(self.tolist())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StrLabels):
            return NotImplemented
        return bool(
            np.array_equal(self.offsets, other.offsets)
            and np.array_equal(self.data, other.data)
        )

    def __hash__(self) -> int:
        return hash(self.prefixed())

    def __repr__(self) -> str:
        return f"StrLabels({len(self)} labels)"

    def _payload(
        self, k: int | np.ndarray, label: np.ndarray | None = None
    ) -> np.ndarray:
        """Payload word ``k`` of each label (of those in ``label``): its
        bytes ``8k .. 8k + 7`` as a little-endian word, zero past its
        end."""
        n = len(self.data)
        if label is None:
            start = self.offsets[:-1] + 8 * k
            left = self.offsets[1:] - start
        else:
            start = self.offsets[label] + 8 * k
            left = self.offsets[label + 1] - start
        if n < 8:
            buf = np.zeros(8, dtype=np.uint8)
            buf[:n] = self.data
            data, n = buf, 8
        else:
            data = np.ascontiguousarray(self.data)
        # the little-endian word at every byte offset of the data (a
        # view): one gather reads a word at any offset; a word that would
        # pass the end is read at the last 8 bytes and shifted into place
        at_byte = np.ndarray((n - 7,), dtype="<u8", buffer=data, strides=(1,))
        raw = at_byte[np.minimum(start, n - 8)].astype(_U64, copy=False)
        late = np.flatnonzero(start > n - 8)
        if late.size:
            over = np.minimum(start[late] - (n - 8), 7)
            raw[late] >>= (8 * over).astype(_U64)
        raw &= np.take(_LOW_BYTES, np.clip(left, 0, 8))
        return raw

    def words(self) -> _Dense | _Ragged:
        """The :func:`value_bytes` words of each label: one row each,
        padded to the longest (:class:`_Dense`), unless one long label
        would make those rows much wider than the words themselves."""
        if self._words is None:
            self._words = self._make_words()
        return self._words

    def _make_words(self) -> _Dense | _Ragged:
        lens = self.lengths
        n = len(lens)
        pads = (lens + 7) >> 3  # words of payload
        widths = 1 + pads
        tags = (T_STR << 56) | lens.astype(_U64)
        most = int(pads.max()) if n else 0
        if n * (1 + most) <= 2 * int(widths.sum()) + 64:
            dense = np.zeros((n, 1 + most), dtype=_U64)
            dense[:, 0] = tags
            for k in range(most):
                if k == 0 or bool((pads > k).all()):
                    dense[:, 1 + k] = self._payload(k)
                else:
                    has = np.flatnonzero(pads > k)
                    dense[has, 1 + k] = self._payload(k, has)
            return _Dense(dense, widths)
        flat = np.empty(int(widths.sum()), dtype=_U64)
        heads = np.cumsum(widths) - widths
        flat[heads] = tags
        label = np.repeat(np.arange(n), pads)
        k = np.arange(label.size) - np.repeat(np.cumsum(pads) - pads, pads)
        flat[np.repeat(heads + 1, pads) + k] = self._payload(k, label)
        return _Ragged(flat, widths)

    def hashes(self) -> np.ndarray:
        """A 64-bit hash of each label (of its length and bytes, word by
        word): equal labels, equal hashes; to find labels among others
        in bulk, a match confirmed by :meth:`same_as`. Not keyed: for
        look-ups only, never a name."""
        lens = self.lengths
        h = lens.astype(_U64) * _MIX
        for k, word in enumerate(self._payloads()):
            # a label's own words only: its hash is the same whatever the
            # longest label beside it
            mixed = (h ^ word) * _MIX
            mixed ^= mixed >> _U64(29)
            h = np.where(lens > 8 * k, mixed, h)
        return h

    def same_as(self, other: StrLabels, at: np.ndarray) -> np.ndarray:
        """Whether each label of ``other`` equals label ``at`` of these
        (``at``: one index a label of ``other``)."""
        at = np.asarray(at, dtype=np.int64)
        same = self.lengths[at] == other.lengths
        # labels of one length have as many words: the fewer words of
        # the two sets hold every word of each pair of equal length
        for mine, theirs in zip(self._payloads(), other._payloads()):
            same &= mine[at] == theirs
        return same

    def _payloads(self) -> list[np.ndarray]:
        """Every payload word of every label (:meth:`_payload`), one
        array a word: made once, for :meth:`hashes` and :meth:`same_as`."""
        if self._words_by_place is None:
            lens = self.lengths
            most = (int(lens.max()) + 7) >> 3 if len(lens) else 0
            self._words_by_place = [self._payload(k) for k in range(most)]
        return self._words_by_place

    def prefixed(self) -> bytes:
        """Each label's length + 2 as 4 little-endian bytes, ``b"s:"``
        and its UTF-8 bytes, joined: the labels' bytes in a query's
        identity (:func:`~.randomness._canonical` of a tuple of them)."""
        if self._prefixed is None:
            self._prefixed = self._make_prefixed()
        return self._prefixed

    def digest(self) -> bytes:
        """32-byte BLAKE2b of the labels (count, lengths at their
        narrowest width, bytes), made once: what stream version 3 names a
        domain of labels by (:mod:`.place_streams`), in one pass."""
        if self._digest is None:
            h = hashlib.blake2b(digest_size=32, person=b"pnp-str-labels")
            lens = narrowest(self.lengths)
            h.update(b"%d %s " % (len(self), lens.dtype.str.encode()))
            h.update(lens.data)
            h.update(np.ascontiguousarray(self.data).data)
            self._digest = h.digest()
        return self._digest

    def _make_prefixed(self) -> bytes:
        lens = self.lengths
        n = len(lens)
        if not n:
            return b""
        words = self.words()
        if isinstance(words, _Dense):
            # each label's row of words with its tag word replaced by its
            # head (length + 2 in 4 bytes, then "s:", then 2 spare bytes),
            # as bytes; the spare bytes and those past the label's end are
            # left out
            rows = words.words.astype("<u8")  # a copy
            rows[:, 0] = (lens + 2).astype(np.uint64) | _S_COLON
            # which bytes of a row are kept, for each length a label can
            # have: one row of this table per label is gathered (a
            # comparison per byte of every row took 10 times as long)
            place = np.arange(8 * rows.shape[1])
            kept = place < np.arange(8, 8 * rows.shape[1] + 1)[:, None]
            kept[:, 6:8] = False
            inside = np.take(kept, lens, axis=0)
            return rows.view(np.uint8).reshape(n, -1)[inside].tobytes()
        head = np.empty((n, 6), dtype=np.uint8)
        head[:, :4] = (lens + 2).astype("<u4").view(np.uint8).reshape(n, 4)
        head[:, 4:] = np.frombuffer(b"s:", dtype=np.uint8)
        size = lens + 6  # length, "s:", bytes
        out = np.empty(int(size.sum()), dtype=np.uint8)
        heads = np.cumsum(size) - size
        is_head = np.zeros(out.size, dtype=bool)
        for k in range(6):  # 6 passes over the labels, none over bytes
            out[heads + k] = head[:, k]
            is_head[heads + k] = True
        out[~is_head] = self.data
        return out.tobytes()


class _ArrayLevels:
    """Levels of one kind kept as one numpy array (``values``), named in
    a query as the tuple of their Python values is (:meth:`prefixed`,
    made once by the subclass's ``_made``); equal when those bytes are."""

    __slots__ = ("_prefixed", "values")
    values: np.ndarray
    _prefixed: bytes | None

    def __len__(self) -> int:
        return len(self.values)

    def tolist(self) -> list:
        """The levels as Python values."""
        return self.values.tolist()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _ArrayLevels)
        return self.prefixed() == other.prefixed()

    def __hash__(self) -> int:
        return hash(self.prefixed())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} levels)"

    def prefixed(self) -> bytes:
        """Each level's text after its length + 2 as 4 little-endian
        bytes and its 2-byte tag, joined: the levels' bytes in a query's
        identity (:func:`~.randomness._canonical` of the tuple of their
        values)."""
        if self._prefixed is None:
            self._prefixed = self._made()
        return self._prefixed

    def _made(self) -> bytes:
        raise NotImplementedError


class FloatLevels(_ArrayLevels):
    """Numeric levels as one float64 array, named in a query as the
    tuple of their Python floats is (:meth:`prefixed`: each ``b"f:"``
    and its ``repr``, after its length), without a float object per
    level where they are whole numbers (:func:`tagged_float_runs`).

    >>> FloatLevels([1, 2.5]).tolist()
    [1.0, 2.5]
    """

    __slots__ = ()

    def __init__(self, values: Any):
        shared = (
            isinstance(values, np.ndarray)
            and values.dtype == np.float64
            and values.ndim == 1
            and not values.flags.writeable
        )
        if not shared:  # a read-only float array is kept as it is
            values = np.array(values, dtype=np.float64)  # a copy of its own
            values.flags.writeable = False
        self.values = values
        self._prefixed: bytes | None = None

    def digest(self) -> bytes:
        """:func:`float_digest` of the levels: what stream version 4
        names them by."""
        return float_digest(self.values)

    def _made(self) -> bytes:
        # each level's text: its ``repr``, a zero ``0.0``, tag ``f:``
        made = tagged_float_runs(self.values)
        if made is None:
            texts = list(map(repr, self.values.tolist()))
            for i in np.flatnonzero(self.values == 0):
                texts[i] = "0.0"  # -0.0 is written as 0.0
            made = tagged_runs(texts, b"f:")
        return made


class IntLevels(_ArrayLevels):
    """Integer levels as one int64 array, named in a query as the tuple
    of their Python ints is (:meth:`prefixed`: each ``b"i:"`` and its
    digits, after its length), without an int object per level
    (:func:`tagged_int_runs`): a Categorical's 10**6 int categories.

    >>> IntLevels([3, -1]).tolist()
    [3, -1]
    """

    __slots__ = ()

    def __init__(self, values: Any):
        values = np.array(values, dtype=np.int64)  # a copy of its own
        values.flags.writeable = False
        self.values = values
        self._prefixed: bytes | None = None

    def _made(self) -> bytes:
        # each level's ``str``, tag ``i:``
        made = tagged_int_runs(self.values)
        if made is None:  # -2**63: its magnitude is no int64
            made = tagged_runs([str(v) for v in self.tolist()], b"i:")
        return made


#: the last few read-only float arrays that own their data digested
#: (held weakly), with their digests: a release names its domain twice
#: (identity, place domain), from one array
_FLOAT_DIGESTS: list[tuple[weakref.ref, bytes]] = []


def _kept(values: Any) -> bool:
    return (
        isinstance(values, np.ndarray)
        and values.base is None
        and not values.flags.writeable
    )


def float_digest(values: Any) -> bytes:
    """32-byte SHA-256 of floats as one float64 buffer (little-endian,
    after a label and their count), each zero written ``0.0`` and each
    NaN as numpy's ``nan``: equal for equal values (``-0.0`` is ``0.0``,
    as the texts of stream version 3 have it), in one pass over the
    buffer. Stream version 4 names a column of floats by it (10**6
    floats: 0.005 s, where their texts take 0.07 s). A read-only array
    that owns its data is digested once.

    >>> float_digest([0.0, 2.5]) == float_digest(np.array([-0.0, 2.5]))
    True
    >>> float_digest([1.0, 2.0]) == float_digest([2.0, 1.0])
    False
    """
    if _kept(values):
        for seen, made in _FLOAT_DIGESTS:
            if seen() is values:
                return made
    v = np.asarray(values, dtype="<f8") + 0.0  # a copy; -0.0 + 0.0 is 0.0
    nan = np.isnan(v)
    if nan.any():
        v[nan] = np.nan
    # SHA-256 (FIPS 180-4): with the CPU's SHA extensions, twice as fast
    # as BLAKE2b here (8 MB: 0.005 s against 0.01 s)
    h = hashlib.sha256(b"plotnine_private v4 floats\0%d <f8 " % len(v))
    h.update(v.data)
    made = h.digest()
    if _kept(values):
        _FLOAT_DIGESTS.insert(0, (weakref.ref(values), made))
        del _FLOAT_DIGESTS[4:]
    return made


def float_column(column: Any) -> np.ndarray | None:
    """``column`` as a float64 array if it is one, or holds only floats
    (Python's, or numpy's float64, a subclass) and is not empty; None
    otherwise (ints, strings, a mix): the columns stream version 4 names
    by :func:`float_digest`.

    >>> float_column([1.0, 2.0]).tolist(), float_column([1, 2.0])
    ([1.0, 2.0], None)
    """
    if isinstance(column, np.ndarray) and column.dtype.kind != "O":
        return column if column.dtype == np.float64 and len(column) else None
    values = column.tolist() if isinstance(column, np.ndarray) else column
    if not len(values) or not all(
        issubclass(t, float) for t in set(map(type, values))
    ):
        return None
    return np.array(values, dtype=np.float64)


def _object_words(values: list) -> _Ragged:
    """The words of :func:`value_bytes` of any values; a value repeated
    as one object (a panel's tuple in every cell) is encoded once, and
    so is each hashable part of a tuple (:func:`memo_bytes`)."""
    seen: dict[int, bytes] = {}
    memo: dict = {}
    enc = []
    for v in values:
        b = seen.get(id(v))
        if b is None:
            b = seen[id(v)] = memo_bytes(v, memo)
        enc.append(b)
    widths = np.fromiter(
        (len(b) >> 3 for b in enc), dtype=np.int64, count=len(enc)
    )
    flat = np.frombuffer(b"".join(enc), dtype="<u8").astype(_U64)
    return _Ragged(flat, widths)


def _column_words(col: Any) -> np.ndarray | _Ragged | _Dense:
    """Words of one column: an ``(n, 2)`` array (numbers), an ``(n, 3)``
    one (naive date-times), else the variable-length words of each
    value."""
    if isinstance(col, StrLabels):
        return col.words()
    if isinstance(col, np.ndarray) and col.dtype.kind in "biuf":
        words = _number_words(col)
        if words is not None:
            return words
    if isinstance(col, np.ndarray) and col.dtype.kind == "M":
        ns = time_ns(col)  # naive date-times: their nanoseconds in bulk
        if ns is not None:
            return time_words(ns)
    values = col.tolist() if isinstance(col, np.ndarray) else list(col)
    if isinstance(col, np.ndarray) and col.dtype.kind in "mM":
        values = list(col)  # numpy scalars: tolist() would give integers
    if only_str(values):
        return StrLabels.of(values).words()
    numbers = _plain_numbers(values)
    if numbers is not None:
        words = _number_words(numbers)
        if words is not None:
            return words
    return _object_words(values)


def _plain_numbers(values: list) -> np.ndarray | None:
    """Values that are all plain ``int`` (within int64) or all plain
    ``float`` as one numpy array, whose :func:`_number_words` are their
    :func:`value_bytes` (a Categorical's 10**6 int levels named in bulk);
    None otherwise (a mix, bools, a subclass: value by value)."""
    kinds = set(map(type, values))
    if kinds == {float}:
        return np.array(values, dtype=np.float64)
    if kinds != {int}:
        return None
    try:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    except OverflowError:
        return None  # beyond 64 bits: its own, longer words


def column_runs(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each value's number of words and all the values' words one after
    the other (:func:`value_bytes` as words): the column's names, once
    per value, whatever the column's type."""
    words = _column_words(col)
    if isinstance(words, np.ndarray):  # one width: (values, k)
        return np.full(len(words), words.shape[1]), words.ravel()
    if isinstance(words, _Ragged):
        return words.widths, words.flat
    inside = np.arange(words.words.shape[1]) < words.widths[:, None]
    return words.widths, words.words[inside]


def _as_block(part: Any) -> Any:
    """Words whose values all have one width, as a block (a panel's one
    tuple, labels of one length, padded labels that all fill their row):
    written a column at a time, not a word at a time."""
    if isinstance(part, _Ragged) and len(part):
        width = int(part.widths[0])
        if width and bool((part.widths == width).all()):
            return part.flat.reshape(len(part), width)
    dense = isinstance(part, _Dense) and len(part)
    if dense and int(part.widths.min()) == part.words.shape[1]:
        return part.words
    return part


def every_row(row: np.ndarray, size: int) -> bool:
    """Whether ``row`` is ``0, 1, ..., size - 1`` (a declared domain's own
    cells, each level once in order): no gather is needed."""
    if len(row) != size or not size or row[0] != 0 or row[-1] != size - 1:
        return False
    return bool((np.diff(row) == 1).all())


def cell_words(*columns: Sequence[Any] | np.ndarray) -> np.ndarray:
    """Name cells: an ``(n, m)`` uint64 array, one row a cell.

    Row ``i`` is the concatenation of :func:`value_bytes` of the cell's
    value in each column (as little-endian words), padded with zero words
    to the longest row of the call. The encodings are self-delimiting, so
    distinct cells of one call have distinct rows; the width is fixed by
    the cells named together (every release's stream key also carries a
    digest of its cells, so a cell's noise is not meant to carry over to
    another set of cells). Columns that are not numpy arrays are taken
    value by value, never coerced by numpy (``[4.0, "4.0"]`` would become
    two equal strings).

    >>> cell_words([1.5, 2.5], ["a", "b"]).shape
    (2, 4)
    >>> w = cell_words(np.array(["x", "x|y"], object), np.array(["y|z", "z"],
    ...                object))
    >>> bool((w[0] != w[1]).any())
    True
    """
    if not columns:
        raise ValueError("cell_words needs at least one column")
    n = len(columns[0])
    if any(len(c) != n for c in columns):
        raise ValueError("cell_words: columns differ in length")
    rows = np.arange(n)
    return cell_words_at(columns, [rows] * len(columns))


def cell_words_at(
    columns: Sequence[Sequence[Any] | np.ndarray],
    rows: Sequence[np.ndarray],
) -> np.ndarray:
    """:func:`cell_words` of the cells whose value in column ``j`` is
    ``columns[j][rows[j]]``: each distinct value is encoded once (a
    declared domain names its 10**6 labels once, not once per cell of a
    product with the panels and groups).

    >>> a = cell_words_at([["p"], ["x", "yz"]], [np.array([0, 0]),
    ...                   np.array([1, 0])])
    >>> a.tolist() == cell_words(["p", "p"], ["yz", "x"]).tolist()
    True
    """
    if not columns or len(columns) != len(rows):
        raise ValueError("cell_words_at needs one row index per column")
    n = len(rows[0])
    if any(len(r) != n for r in rows):
        raise ValueError("cell_words: columns differ in length")
    parts = [_as_block(_column_words(c)) for c in columns]
    if n == 0:
        return np.zeros((0, 2 * len(columns)), dtype=_U64)
    # a column's width per cell: one number while every value has it
    widths: list[Any] = []
    # padded blocks are written whole (their zero words past a value's
    # end are overwritten by the next column's, or are the row's
    # padding): room for the widest block, cut to the widest row
    room: Any = 0
    for part, row in zip(parts, rows):
        if isinstance(part, np.ndarray):
            widths.append(part.shape[1])
            room = room + part.shape[1]
        else:
            widths.append(part.widths[row])
            dense = isinstance(part, _Dense)
            room = room + (part.words.shape[1] if dense else widths[-1])
    out = np.zeros((n, int(np.max(room))), dtype=_U64)
    at: Any = 0  # where each cell's next column starts (one number: all)
    cells = np.arange(n)
    for part, row, width in zip(parts, rows, widths):
        block = part.words if isinstance(part, _Dense) else part
        if isinstance(block, np.ndarray):
            if np.ndim(at) == 0:
                a = int(at)
                span = slice(a, a + block.shape[1])
                if len(block) == 1:  # one value (a single panel)
                    out[:, span] = block[0]
                elif every_row(row, len(block)):  # each level in order
                    out[:, span] = block
                else:
                    out[:, span] = np.take(block, row, axis=0)
            else:
                for j in range(block.shape[1]):
                    out[cells, at + j] = block[row, j]
        else:
            # word k of a cell's value sits at column at + k of its row,
            # read from the value's run in the flat words
            starts = np.cumsum(part.widths) - part.widths
            cell = np.repeat(cells, width)
            place = np.arange(cell.size) - np.repeat(
                np.cumsum(width) - width, width
            )
            out[cell, (at[cell] if np.ndim(at) else at) + place] = part.flat[
                np.repeat(starts[row], width) + place
            ]
        at = at + width
        if np.ndim(at) and bool((at == at[0]).all()):
            at = int(at[0])
    wide = int(np.max(at))
    return out if wide == out.shape[1] else out[:, :wide].copy()
