"""The order of a cell table's rows of words, for its data digest.

:meth:`~.release.CellTable.digest` hashes the cells in one order, that of
their words compared word by word as unsigned integers (ties in row
order), so that a table and a plot that list the same cells in other
orders draw the same noise. :func:`row_order` is ``np.lexsort`` of the
columns, computed with fewer and cheaper sorts (NumPy only).
"""

from __future__ import annotations

import numpy as np

from .encoding import narrowest

__all__ = ["low_rows", "row_order"]


def row_order(words: np.ndarray) -> np.ndarray:
    """The order of ``words``' rows compared word by word (as unsigned
    integers, ties in row order): ``np.lexsort(words.T[::-1])``, sooner.

    A column equal in every row orders nothing and is left out; each
    other column is mapped to as few bits as keep its order (less its
    least value, or only the bits that vary: :func:`_fields`). When
    those bits and a row index fit one 64-bit word, the words
    ``key << b | row`` are sorted as values (a sort of values is about
    twice as fast as an argsort) and the order read from their low bits:
    ties come out in row order, as in lexsort. Otherwise the keys are
    packed as few 64-bit words as their bits allow, each sorted once;
    distinct rows have one order whatever the sort, so the stable sorts
    run only if two rows tie.
    """
    # least significant column first, as np.lexsort reads its keys
    keys = [c for c in words.T[::-1] if len(c) and (c != c[0]).any()]
    if not keys:
        return np.arange(len(words))
    fields = _fields(keys, 64 - (len(words) - 1).bit_length())
    if fields is not None:
        return _value_order(fields, len(words))
    packs: list[np.ndarray] = []
    used = 64
    for c in keys:
        low = c.min()
        bits = int(c.max() - low).bit_length()
        if used + bits > 64:
            packs.append(np.zeros(len(c), dtype=np.uint64))
            used = 0
        packs[-1] |= (c - low) << np.uint64(used)
        used += bits
    order = None
    for key in packs:
        narrow = narrowest(key)
        if order is None:
            order = np.argsort(narrow)  # one sort, stable or not
        else:  # stable: keeps the order of the keys before
            order = order[np.argsort(narrow[order], kind="stable")]
    assert order is not None
    tied = np.ones(len(order) - 1, dtype=bool)
    for key in packs:
        ordered = key[order]
        tied &= ordered[1:] == ordered[:-1]
    if tied.any():  # equal rows: in row order, as lexsort has them
        return np.lexsort(keys)
    return order


def _fields(keys: list[np.ndarray], room: int) -> list | None:
    """Each key (uint64, not constant) as ``(field, bits)``: an
    order-keeping map of it into its ``bits`` low bits, if all fit in
    ``room`` bits together; else None.

    A key is taken less its least value, unless fewer bits are the ones
    that vary (text: a byte of digits varies in 6 of its 8 bits, the
    spread of its word spans them all); those are gathered in their
    order, which keeps the order of the words (the bits every row has
    equal cannot decide a comparison).
    """
    spans = []
    for c in keys:
        low = c.min()
        spans.append((low, int(c.max() - low).bit_length()))
    if sum(bits for _, bits in spans) <= room:
        return [(c - low, bits) for c, (low, bits) in zip(keys, spans)]
    masks: list[int | None] = []
    for c, (_, bits) in zip(keys, spans):
        vary = int(np.bitwise_or.reduce(c ^ c[0]))
        masks.append(vary if vary.bit_count() < bits else None)
    used = sum(
        bits if mask is None else mask.bit_count()
        for (_, bits), mask in zip(spans, masks)
    )
    if used > room:
        return None
    masks = _fewer_runs(masks, room - used)
    return [
        (c - low, bits)
        if mask is None
        else (_gather_bits(c, mask), mask.bit_count())
        for c, (low, bits), mask in zip(keys, spans, masks)
    ]


def _fewer_runs(masks: list[int | None], spare: int) -> list[int | None]:
    """The masks with their narrowest gaps between runs of set bits
    filled while ``spare`` bits allow: each run costs a few passes over
    the rows, and a bit that never varies orders nothing either way."""
    gaps = []
    for j, mask in enumerate(masks):
        if mask is None:
            continue
        # the gaps are the runs of zeros between the lowest and highest
        # set bits
        inner = ~mask & ((1 << mask.bit_length()) - 1) & ~((mask & -mask) - 1)
        while inner:
            low = (inner & -inner).bit_length() - 1
            width = _run_width(inner >> low)
            gaps.append((width, j, ((1 << width) - 1) << low))
            inner &= ~gaps[-1][2]
    out = list(masks)
    for width, j, bits in sorted(gaps):
        if width > spare:
            break
        out[j] = (out[j] or 0) | bits
        spare -= width
    return out


def _run_width(x: int) -> int:
    """How many low bits of ``x`` are set in a row."""
    return ((x + 1) & ~x).bit_length() - 1


def _gather_bits(c: np.ndarray, mask: int) -> np.ndarray:
    """The bits of ``c`` under ``mask``, moved down next to each other in
    their order (a parallel bit extract), a run of set bits at a time."""
    out = np.zeros(len(c), dtype=np.uint64)
    part = np.empty_like(out)
    at = 0
    while mask:
        low = (mask & -mask).bit_length() - 1
        width = _run_width(mask >> low)
        np.right_shift(c, np.uint64(low), out=part)
        part &= np.uint64((1 << width) - 1)
        part <<= np.uint64(at)
        out |= part
        at += width
        mask &= ~(((1 << width) - 1) << low)
    return out


def _value_order(fields: list, n: int) -> np.ndarray:
    """The order of the rows by their fields (least significant first),
    ties in row order: sort ``key << b | row`` as values, read the rows
    back from the low ``b`` bits."""
    b = (n - 1).bit_length()
    value = np.arange(n, dtype=np.uint64)
    at = b
    for field, bits in fields:
        field <<= np.uint64(at)  # each field is a fresh array
        value |= field
        at += bits
    if at <= 32:  # a narrower sort when the whole word fits
        return low_rows(np.sort(value.astype(np.uint32)), b)
    return low_rows(np.sort(value), b)


def low_rows(ordered: np.ndarray, b: int) -> np.ndarray:
    """The row numbers held in the low ``b`` bits of sorted words ``key
    << b | row`` (unsigned; overwritten): the order of the rows by key,
    ties in row order.

    >>> low_rows(np.sort(np.array([3 << 2 | 0, 1 << 2 | 1, 1 << 2 | 2],
    ...                           dtype=np.uint64)), 2).tolist()
    [1, 2, 0]
    """
    ordered &= ordered.dtype.type((1 << b) - 1)
    if ordered.dtype == np.uint64 and np.intp is np.int64:
        # row numbers below 2**63 read the same as signed: no copy
        return ordered.view(np.intp)
    return ordered.astype(np.intp)
