"""Record keys for the Cell Key Method, added to a user's data.

:func:`add_record_keys` draws them (numpy) or derives them from a row
identifier (:mod:`plotnine_private.engines.keys`, the same keys in pandas,
polars and every engine). The per-cell arithmetic on keys is in
:mod:`plotnine_private.mechanisms.ptable.ckm`; this module is the data-frame
side.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .engines import keys as row_key_fn
from .engines.source import is_source
from .identifiers import MISSING_CODE, id_codes
from .mechanisms.errors import ParameterError
from .mechanisms.ptable.ckm import RecordKeyWarning, key_scale
from .units import UnitFrame, unit_of
from .validation import frame_type_fix, is_polars_frame

__all__ = ["add_record_keys"]


_NOT_GIVEN: Any = object()


def add_record_keys(
    data: Any,
    name: str = "rkey",
    rng_seed: int | str | None = None,
    digits: int = 8,
    integer_range: int | None = None,
    row_id: str | None = None,
    unit: str | None = None,
    *,
    seed: Any = _NOT_GIVEN,
) -> Any:
    """Return a copy of ``data`` with a column of random record keys.

    .. warning::
       Store the keys with the microdata and reuse them for **every**
       plot and table. Consistency (the same cell gets the same noise
       everywhere) holds only for the same keys; drawing new keys for
       each output gives each cell fresh noise, and averaging the outputs
       then reveals the true counts.

    Parameters
    ----------
    data : pandas.DataFrame, polars.DataFrame or Source
        The microdata (not modified). A table in an engine
        (:func:`~plotnine_private.engines.source`) needs ``rng_seed`` and
        ``row_id`` or ``unit``; it gets the key column as an expression
        evaluated in the engine. A frame from ``pp.source(frame,
        unit=...)`` keeps its declaration (and its unit is the default of
        ``unit`` when no ``row_id`` is given).
    name : str
        Name of the key column (map it to the ``rkey`` aesthetic).
    rng_seed : int or str, optional
        Seed of the random generator (numpy's, or the keyed function of
        ``row_id``/``unit``). Without it the keys cannot be drawn again,
        so a :class:`RecordKeyWarning` reminds you to save them. Keep it
        secret, like the keys. (Called ``seed`` before; ``seed=`` still
        works with a :class:`DeprecationWarning`. A *seed* elsewhere in
        the package is a public release label.)
    digits : int
        Decimals of uniform keys (default 8).
    integer_range : int, optional
        Draw integer keys ``0..integer_range-1`` for ONS p-tables
        (e.g. 256) instead of uniform keys.
    row_id : str, optional
        Column of a stable integer record identifier (>= 0). The keys are
        then a keyed function of it and of ``rng_seed``
        (:mod:`plotnine_private.engines.keys`), not numpy draws: pandas,
        polars and every engine (DuckDB, Polars, Spark) give the same keys
        to the same identifiers, and a table's keys can be stored with
        SQL (:func:`~plotnine_private.engines.record_keys_sql`).
    unit : str, optional
        Column naming each record's privacy unit (a person, a household):
        every record of a unit gets the unit's key, as statistical
        offices key persons, so a cell's key sums whole persons. With
        ``rng_seed`` the key is the keyed function of the unit's
        identifier (named by its value: whole numbers, negative ones
        too, as they are; other values through a hash in memory; records
        without a unit share one key), the same in pandas, polars and
        every engine (where the unit column must hold whole numbers);
        without it, one numpy draw per unit. Not with ``row_id``.

    Examples
    --------
    >>> df = pd.DataFrame({"x": ["a", "b", "a"]})
    >>> keyed = add_record_keys(df, rng_seed=1)
    >>> list(keyed.columns), bool(keyed["rkey"].between(0, 1).all())
    (['x', 'rkey'], True)
    >>> people = pd.DataFrame({"pid": [7, 7, 3], "x": ["a", "b", "a"]})
    >>> k = add_record_keys(people, rng_seed=1, unit="pid")["rkey"]
    >>> bool(k[0] == k[1] != k[2])
    True
    """
    rng_seed = _seed_alias(rng_seed, seed)
    declared = data if isinstance(data, UnitFrame) else None
    if declared is not None:
        data = declared.data
    if unit is None and row_id is None:
        # a declared privacy unit keys its records together by default
        unit = unit_of(declared if declared is not None else data).column
    if not (
        isinstance(data, pd.DataFrame)
        or is_polars_frame(data)
        or is_source(data)
    ):
        raise ParameterError(
            "add_record_keys(): data must be a pandas or polars "
            f"DataFrame or a source(...) table, {frame_type_fix(data)}"
        )
    if name in data.columns:
        raise ParameterError(
            f"data already has a column {name!r}; reuse those stored keys "
            f"(drawing new ones breaks consistency) or choose another name"
        )
    if row_id is not None and unit is not None:
        raise ParameterError(
            f"add_record_keys(): give row_id= (a key per record) or unit= "
            f"(one key per unit), not both (got row_id={row_id!r}, "
            f"unit={unit!r})"
        )
    ident = row_id if row_id is not None else unit
    which = "row_id" if row_id is not None else "unit"
    if ident is not None and ident not in data.columns:
        raise ParameterError(f"{which} {ident!r} is not a column of data")
    if rng_seed is None:
        if ident is not None and (row_id is not None or is_source(data)):
            raise ParameterError(
                f"{which}= needs rng_seed=: the keys are a function of the "
                "seed and the identifier (keep the seed secret)"
            )
        warnings.warn(
            "record keys were drawn without a seed: save the returned "
            "data (with its key column) and reuse it for every output, or "
            "consistency between plots is lost",
            RecordKeyWarning,
            stacklevel=2,
        )
    out = _keyed(data, name, rng_seed, digits, integer_range, ident, which)
    return out if declared is None else UnitFrame(out, declared.unit)


def _seed_alias(rng_seed: Any, seed: Any) -> Any:
    """``rng_seed``, or the deprecated ``seed=`` (not both)."""
    if seed is _NOT_GIVEN:
        return rng_seed
    if rng_seed is not None:
        raise ParameterError(
            "add_record_keys(): give rng_seed= only (seed= is its old, "
            "deprecated name)"
        )
    warnings.warn(
        "add_record_keys(seed=...) is deprecated: call it rng_seed=... "
        "(a seed is a public release label elsewhere in the package; this "
        "one is a secret)",
        DeprecationWarning,
        stacklevel=3,
    )
    return seed


def _keyed(data, name, rng_seed, digits, integer_range, ident, which):
    """``data`` with its key column (see :func:`add_record_keys`)."""
    if ident is not None and rng_seed is not None:
        if is_source(data):
            if which == "unit":
                _check_engine_unit(data, ident)
            expr = row_key_fn.record_key_expr(
                ident,
                rng_seed,
                digits,
                integer_range,
                # as in memory: records without a unit share one key
                missing=MISSING_CODE if which == "unit" else None,
            )
            return data.with_columns(**{name: expr})
        if which == "unit":
            # records without a unit id share the key of the missing code
            codes, _ = id_codes(_column(data, ident))
            keys = row_key_fn.id_keys(codes, rng_seed, digits, integer_range)
        else:
            keys = row_key_fn.row_keys(
                np.asarray(data[ident]), rng_seed, digits, integer_range
            )
        return _with_keys(data, name, keys)
    if is_source(data):
        raise ParameterError(
            "a table in an engine gets keys from an identifier: "
            "add_record_keys(src, rng_seed=..., row_id='<id column>') or "
            "unit='<unit column>'"
        )
    rng = np.random.default_rng(rng_seed)
    scale = key_scale(digits, integer_range)
    if ident is None:
        keys = rng.integers(0, scale, size=len(data))
    else:
        # one draw per unit, in the order of the sorted unit identifiers
        units, _ = id_codes(_column(data, ident))
        uniq, inverse = np.unique(units, return_inverse=True)
        keys = rng.integers(0, scale, size=len(uniq))[inverse.ravel()]
    if integer_range is None:
        # integers first: the stored key has exactly `digits` decimals
        keys = keys / scale
    return _with_keys(data, name, keys)


def _check_engine_unit(data: Any, column: str) -> None:
    """An engine computes unit keys from whole-number identifiers only."""
    dtype = data.schema[column]
    if not dtype.is_integer():
        raise ParameterError(
            f"add_record_keys(): in an engine the unit column {column!r} "
            f"must hold whole numbers (it is {dtype}); number the "
            "units first (e.g. a lookup table of DENSE_RANK() over the "
            "unit, stored with the data), or key a frame in memory, where "
            "any unit values work"
        )


def _with_keys(data: Any, name: str, keys: np.ndarray) -> Any:
    if isinstance(data, pd.DataFrame):
        out = data.copy()
        out[name] = keys
        return out
    import polars as pl

    return data.with_columns(pl.Series(name, keys))


def _column(data: Any, name: str) -> pd.Series:
    """Column ``name`` of a pandas or polars frame, as pandas."""
    col = data[name]
    return col if isinstance(col, pd.Series) else col.to_pandas()
