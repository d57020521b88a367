"""Record keys from a row identifier, the same in numpy and in any engine.

:func:`~plotnine_private.mechanisms.ptable.ckm.add_record_keys` without
``row_id`` draws keys with numpy's generator: they cannot be drawn again
inside a database. With ``row_id=`` the key of a record is a keyed
function of its (integer) row identifier, written with integer ``+``,
``*``, ``//`` and ``%`` only, so that numpy, DuckDB, Polars and Spark
compute the very same keys (:func:`row_keys`, :func:`record_key_expr`,
:func:`record_keys_sql`).

The function is :func:`plotnine_private.mechanisms.naming.idhash.key_ints`
(the key integer is its value ``mod 10**digits`` or ``mod
integer_range``): a pseudorandom function for statistical purposes, not a
cryptographic one, so keep the seed secret, like the keys.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..mechanisms.errors import ParameterError
from ..mechanisms.naming.idhash import PRIME, round_keys
from ..mechanisms.naming.idhash import key_ints as _key_ints
from ..mechanisms.ptable.ckm import key_scale

__all__ = [
    "PRIME",
    "key_scale",
    "record_key_expr",
    "record_keys_sql",
    "id_keys",
    "round_keys",
    "row_keys",
]


def row_keys(
    ids: Any, seed: Any, digits: int = 8, integer_range: int | None = None
) -> np.ndarray:
    """Record keys of integer row identifiers (numpy).

    Uniform keys in [0, 1) with ``digits`` decimals, or integers
    ``0..integer_range-1``; equal to what :func:`record_key_expr` and
    :func:`record_keys_sql` compute in an engine.

    >>> row_keys([0, 1, 2], seed=1).tolist() == row_keys(
    ...     [0, 1, 2], seed=1).tolist()
    True
    """
    arr = np.asarray(ids)
    if arr.dtype.kind not in "iu" and not (
        arr.dtype.kind == "f" and np.all(arr == np.floor(arr))
    ):
        raise ParameterError(
            "row_id must name a column of whole numbers (a stable record "
            f"identifier), got values of type {arr.dtype}."
        )
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ParameterError(
            "row_id values must be >= 0: number the records 0, 1, 2, ..."
        )
    return id_keys(arr, seed, digits, integer_range)


def id_keys(
    codes: np.ndarray,
    seed: Any,
    digits: int = 8,
    integer_range: int | None = None,
) -> np.ndarray:
    """Record keys of int64 identifier codes (any sign: a unit's code,
    :func:`~plotnine_private.identifiers.id_codes`), as :func:`row_keys`
    computes them."""
    scale = key_scale(digits, integer_range)
    ints = _key_ints(np.asarray(codes, dtype=np.int64), seed, scale)
    return ints if integer_range is not None else ints / scale


def record_key_expr(
    row_id: str,
    seed: Any,
    digits: int = 8,
    integer_range: int | None = None,
    missing: int | None = None,
):
    """A narwhals expression of the record keys of column ``row_id``
    (``missing``: the code a missing identifier takes; None keeps it
    missing).

    Works on every narwhals backend (DuckDB, Polars, PySpark, Ibis):
    ``nw.from_native(t).with_columns(record_key_expr("id", seed=7)
    .alias("rkey"))``.
    """
    import narwhals as nw

    scale = key_scale(digits, integer_range)
    ident = nw.col(row_id).cast(nw.Int64)
    if missing is not None:
        ident = ident.fill_null(nw.lit(int(missing), dtype=nw.Int64))
    ints = _key_ints(ident, seed, scale)
    if integer_range is not None:
        return ints
    return ints.cast(nw.Float64) / float(scale)


def record_keys_sql(
    row_id: str,
    seed: Any,
    digits: int = 8,
    integer_range: int | None = None,
) -> str:
    """The record keys of column ``row_id`` as a DuckDB SQL expression.

    Store the keys once, e.g. ``CREATE TABLE keyed AS SELECT *, <expr> AS
    rkey FROM people`` or ``COPY (SELECT *, <expr> AS rkey FROM
    'people.parquet') TO 'keyed.parquet'``; they equal
    ``add_record_keys(frame, rng_seed=seed, row_id=row_id)`` on the same rows.

    >>> record_keys_sql("id", seed=1).startswith("(CAST(")
    True
    """
    scale = key_scale(digits, integer_range)
    k = round_keys(seed)
    p = PRIME

    def cube(a: str) -> str:
        return f"((({a}) * ({a}) % {p}) * ({a}) % {p})"

    ident = f'CAST("{row_id}" AS BIGINT)'
    x0 = f"({ident} % {p})"
    x1 = f"({ident} // {p} % {p})"
    chains = []
    for base in (0, 4):
        a = cube(f"({x0} + {k[base]}) % {p}")
        a = cube(f"({a} + {x1} + {k[base + 1]}) % {p}")
        a = cube(f"({a} + {k[base + 2]}) % {p}")
        a = cube(f"({a} + {k[base + 3]}) % {p}")
        chains.append(a)
    ints = f"(({chains[0]}) * {p} + ({chains[1]})) % {scale}"
    if integer_range is not None:
        return f"({ints})"
    return f"(CAST({ints} AS DOUBLE) / {scale})"
