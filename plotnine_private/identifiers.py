"""How privacy units and their records are named: one code for each
value, whatever the other values of its column are.

Which records a privacy unit keeps (:mod:`~plotnine_private.mechanisms.
bounding`) must depend on that unit's own records and on public
declarations only. So the integer that names a unit or a record, and the
word that names a record's content, are functions of the *value* alone:

* a number is named by its value, whatever the column's storage: ``3``,
  ``3.0``, ``True``-as-``1``, ``np.int8(3)`` and ``Decimal(3)`` are one
  name, so one missing value (which turns a pandas integer column into
  floats) or one string among numbers (which makes it ``object``) renames
  nobody else;
* whole numbers in the int64 range name themselves (negative ones too);
  other numbers (``2.5``, ``inf``) and every other value (strings, dates,
  tuples) are named by a 62-bit hash of a typed text of the value;
* a missing value (``None``, ``NaN``, ``NaT``, ``pd.NA``) names no unit
  and no record: such a record is left out before bounding (the rule of
  :func:`id_codes`; the report says so). A missing value *inside* a
  record's content is one more value (:data:`MISSING_WORD`).

Whole numbers at or past ``2**63`` (unsigned 64-bit columns, Python ints)
are named by their hash, so no two values share a name but by a 62-bit
hash collision.
"""

from __future__ import annotations

import decimal
import hashlib
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "factorized",
    "MISSING_CODE",
    "MISSING_WORD",
    "content_ids",
    "id_codes",
    "value_words",
]

#: the word of a missing value in a record's content
MISSING_WORD = np.uint64(0x5A5A5A5A5A5A5A5A)
#: whole floats in [-2**63, 2**63) name themselves as integers
_INT64_EDGE = float(2**63)


#: the keyed BLAKE2b of identifiers, copied per text (half the cost of
#: setting up the personalised hash for each of a million ids)
_TEXT_HASH = hashlib.blake2b(digest_size=8, person=b"pnp-unit-id")


def _text_code(text: str) -> int:
    """A 62-bit hash of ``text`` (the name of a non-integer identifier)."""
    h = _TEXT_HASH.copy()
    h.update(text.encode())
    return int.from_bytes(h.digest(), "big") >> 2


def _all_text(uniques: np.ndarray) -> bool:
    """Whether every value is a ``str`` (one pass in C, no Python loop)."""
    return pd.api.types.infer_dtype(uniques, skipna=False) == "string"


def _codes_of(uniques: np.ndarray) -> np.ndarray:
    """:func:`_value_code` of distinct values; text alone by its repr
    without asking each value whether it is a number."""
    if _all_text(uniques):
        return np.fromiter(
            (_text_code(repr(str(u))) for u in uniques),
            dtype=np.int64,
            count=len(uniques),
        )
    return np.array([_value_code(x) for x in uniques], dtype=np.int64)


#: the code of a missing identifier: records without a unit are left out
#: of every bounded release; add_record_keys keys them as one unit
MISSING_CODE = np.int64(_text_code("<missing>"))


def _number(v: Any) -> int | float | None:
    """``v`` as an exact int (a whole number) or a float, None if it is
    not a number. Booleans are numbers (0 and 1), as numpy counts them."""
    if isinstance(v, (numbers.Real, decimal.Decimal)):
        if isinstance(v, decimal.Decimal) and not v.is_finite():
            return float(v)
        if isinstance(v, numbers.Integral) or (
            isinstance(v, decimal.Decimal) and v == v.to_integral_value()
        ):
            return int(v)
        f = float(v)
        return int(f) if f.is_integer() else f
    return None


def _typed_text(v: Any) -> str:
    """The text a value that is no whole number is hashed by: a string by
    its ``repr`` (the name units have always had), anything else by its
    type and value (``float:2.5``, ``Timestamp:1700000000000000000``)."""
    if isinstance(v, str):
        return repr(str(v))
    if isinstance(v, (pd.Timestamp, pd.Timedelta)):
        return f"{type(v).__name__}:{v.value}"
    num = _number(v)
    if num is not None:
        return f"float:{float(num)!r}"
    return f"{type(v).__name__}:{v!r}"


def _value_code(v: Any) -> int:
    num = _number(v)
    if isinstance(num, int) and -(2**63) <= num < 2**63:
        return num
    return _text_code(_typed_text(v))


def _whole(v: np.ndarray) -> np.ndarray:
    """Which float64 values are whole numbers in the int64 range (named as
    the integers they are, in ids and in content words alike)."""
    return (v == np.floor(v)) & (v >= -_INT64_EDGE) & (v < _INT64_EDGE)


def _float_codes(v: np.ndarray) -> np.ndarray:
    """Codes of finite float64 values: whole ones as integers."""
    whole = _whole(v)
    codes = np.zeros(len(v), dtype=np.int64)
    codes[whole] = v[whole].astype(np.int64)
    other = np.flatnonzero(~whole)
    if len(other):
        uniq, inv = np.unique(v[other], return_inverse=True)
        table = np.array(
            [_text_code(f"float:{float(x)!r}") for x in uniq], dtype=np.int64
        )
        codes[other] = table[inv.ravel()]
    return codes


def factorized(series: pd.Series) -> tuple[np.ndarray, Any]:
    """``pd.factorize`` of a column in the order values are met (missing:
    -1), where an unhashable value (a list, a dict, a set) is the level
    named by its ``repr``, whatever the other values are."""
    try:
        return pd.factorize(series, use_na_sentinel=True)
    except TypeError:
        hashable = series.map(_hashable, na_action="ignore")
        return pd.factorize(hashable, use_na_sentinel=True)


def _hashable(value: Any) -> Any:
    """``value``, or its ``repr`` where it cannot be hashed."""
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _by_value(
    values: Any, table: Callable[[Any], np.ndarray], missing: Any
) -> tuple[np.ndarray, np.ndarray]:
    """Per value: ``table`` of the distinct values present (a column's
    factorisation, which compares values, not their storage), and the
    mask of missing ones (given ``missing`` in the result)."""
    codes, uniques = factorized(values)
    lookup = np.append(table(np.asarray(uniques, dtype=object)), missing)
    return lookup[codes], codes < 0


def _as_series(values: Any) -> pd.Series:
    if isinstance(values, pd.Series):
        return values
    if isinstance(values, pd.Index):
        return values.to_series(index=None)
    return pd.Series(
        np.asarray(values) if not hasattr(values, "dtype") else values
    )


def id_codes(values: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """An int64 name of each identifier (a unit's, or a record's within
    its unit) and the mask of missing ones (None where none can be: an
    integer or boolean column).

    Whole numbers name themselves; other values a 62-bit hash of their
    typed text (see the module docstring). The name of a value never
    depends on the other values of the column.

    >>> id_codes(np.array([3, -1]))[0].tolist()
    [3, -1]
    >>> codes, missing = id_codes(pd.Series([3.0, None, 2.5]))
    >>> int(codes[0]), missing.tolist()
    (3, [False, True, False])
    >>> int(id_codes(pd.Series(["a", 3], dtype=object))[0][1])
    3
    """
    col = _as_series(values)
    dtype = col.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind in "bi" or (dtype.kind == "u" and dtype.itemsize < 8):
            return col.to_numpy().astype(np.int64), None
        if dtype.kind == "f":
            v = col.to_numpy().astype(np.float64)
            missing = np.isnan(v)
            if not missing.any():
                return _float_codes(v), missing
            codes = np.full(len(v), MISSING_CODE, dtype=np.int64)
            codes[~missing] = _float_codes(v[~missing])
            return codes, missing
    return _by_value(col, _codes_of, MISSING_CODE)


def _float_words(v: np.ndarray) -> np.ndarray:
    """Words of float64 values: a whole number in the int64 range by its
    integer's bits (as an integer column names it), any other by its
    IEEE bits (``-0.0`` as ``0.0``), NaN as :data:`MISSING_WORD`."""
    v = v + 0.0
    words = v.view(np.uint64).copy()
    whole = _whole(v)
    words[whole] = v[whole].astype(np.int64).view(np.uint64)
    words[np.isnan(v)] = MISSING_WORD
    return words


def _object_words(uniques: np.ndarray) -> np.ndarray:
    """Words of distinct values of any kind, by value (numbers as
    :func:`_float_words` names them, strings by pandas' hash of the
    text, dates by their nanoseconds, the rest by their typed text)."""
    if _all_text(uniques):  # strings alone: pandas' hash, no Python loop
        return pd.util.hash_array(uniques.astype(object))
    out = np.empty(len(uniques), dtype=np.uint64)
    texts: list[str] = []
    at: list[int] = []
    for i, v in enumerate(uniques):
        num = _number(v)
        if isinstance(v, (pd.Timestamp, pd.Timedelta)):
            out[i] = np.int64(v.value).view(np.uint64)
        elif num is not None:
            if isinstance(num, int) and -(2**63) <= num < 2**63:
                out[i] = np.int64(num).view(np.uint64)
            elif isinstance(num, float):
                out[i] = _float_words(np.array([num]))[0]
            else:
                texts.append(f"int:{num}")
                at.append(i)
        else:
            texts.append(v if isinstance(v, str) else _typed_text(v))
            at.append(i)
    if texts:
        out[at] = pd.util.hash_array(np.array(texts, dtype=object))
    return out


def value_words(col: pd.Series, at: Any = slice(None)) -> np.ndarray:
    """A uint64 word of each value of ``col`` at ``at``, a function of the
    value alone (numbers by value whatever their storage, strings by
    pandas' hash of the text, a category by its value, a missing value by
    :data:`MISSING_WORD`).

    >>> a = value_words(pd.Series([1, 2]))
    >>> b = value_words(pd.Series([1.0, None]))
    >>> bool(a[0] == b[0]), bool(b[1] == MISSING_WORD)
    (True, True)
    """
    dtype = col.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind in "mM":
            # nanoseconds, as a Timestamp among other values is named
            v = col.to_numpy()[at]
            ns = v.astype(f"{v.dtype.str[1:3]}[ns]")
            words = ns.astype(np.int64).view(np.uint64)
            words[np.isnat(v)] = MISSING_WORD
            return words
        if dtype.kind in "biu" and not (
            dtype.kind == "u" and dtype.itemsize == 8
        ):
            return col.to_numpy()[at].astype(np.int64).view(np.uint64)
        if dtype.kind == "f":
            return _float_words(col.to_numpy()[at].astype(np.float64))
    if isinstance(dtype, pd.CategoricalDtype):
        cats = np.asarray(col.cat.categories, dtype=object)
        table = np.append(_object_words(cats), MISSING_WORD)
        # code -1 (missing) picks the last word
        return table[col.cat.codes.to_numpy()[at]]
    part = col if isinstance(at, slice) else col.iloc[at]
    words, _ = _by_value(part, _object_words, MISSING_WORD)
    return words


#: SplitMix64's constants (a public, well-tested 64-bit mixer; written
#: out because numpy has no vectorised integer hash of its own)
_SEED = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(h: np.ndarray) -> None:
    """SplitMix64's finaliser of ``h`` (uint64) in place: a bijection
    whose every output bit depends on every input bit."""
    h ^= h >> np.uint64(30)
    h *= _M1
    h ^= h >> np.uint64(27)
    h *= _M2
    h ^= h >> np.uint64(31)


def content_ids(
    rows: pd.DataFrame,
    positions: np.ndarray | None = None,
    bounding: str = "v2",
) -> np.ndarray:
    """Record identifiers from the records' content: a 62-bit hash of each
    row's values (every column but plotnine's ``PANEL``, each value by
    :func:`value_words`), for the rows at ``positions`` (None: all).

    Never a row's position: removing another unit's rows would shift the
    positions, and so change which records this unit keeps. Identical
    rows of one unit get one identifier, and which of them is kept does
    not change what is released.

    ``v2`` mixes the columns' words with SplitMix64's finaliser (numpy, no
    copy of the rows); ``v1`` hashes them with pandas' row hash, as the
    first order did.
    """
    cols = [c for c in rows.columns if c != "PANEL"]
    at = slice(None) if positions is None else positions
    if bounding == "v1":
        frame = pd.DataFrame(
            {c: value_words(rows[c], at) for c in cols}, columns=cols
        )
        hashed = pd.util.hash_pandas_object(frame, index=False)
        words = hashed.to_numpy(dtype=np.uint64)
    else:
        words = np.full(len(rows), _SEED, dtype=np.uint64)[at]
        for c in cols:
            words ^= value_words(rows[c], at)
            _mix(words)
    return (words >> np.uint64(2)).astype(np.int64)
