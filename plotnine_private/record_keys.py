"""Record keys for the Cell Key Method, added to a user's data.

:func:`add_record_keys` draws them (numpy) or derives them from a row
identifier (:mod:`plotnine_private.engines.keys`, the same keys in pandas,
polars and every engine). The per-cell arithmetic on keys is in
:mod:`plotnine_private.mechanisms.ckm`; this module is the data-frame side.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .engines import keys as row_key_fn
from .engines.source import is_source
from .mechanisms.ckm import RecordKeyWarning, key_scale
from .mechanisms.errors import ParameterError
from .validation import frame_type_fix

__all__ = ["add_record_keys"]


def add_record_keys(
    data: Any,
    name: str = "rkey",
    seed: int | None = None,
    digits: int = 8,
    integer_range: int | None = None,
    row_id: str | None = None,
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
        (:func:`~plotnine_private.engines.source`) needs ``row_id`` and
        ``seed``; it gets the key column as an expression evaluated in the
        engine.
    name : str
        Name of the key column (map it to the ``rkey`` aesthetic).
    seed : int, optional
        Seed for :func:`numpy.random.default_rng`. Without it the keys
        cannot be drawn again, so a :class:`RecordKeyWarning` reminds
        you to save them. Keep the seed secret, like the keys.
    digits : int
        Decimals of uniform keys (default 8).
    integer_range : int, optional
        Draw integer keys ``0..integer_range-1`` for ONS p-tables
        (e.g. 256) instead of uniform keys.
    row_id : str, optional
        Column of a stable integer record identifier (>= 0). The keys are
        then a keyed function of it and of ``seed``
        (:mod:`plotnine_private.engines.keys`), not numpy draws: pandas,
        polars and every engine (DuckDB, Polars, Spark) give the same keys
        to the same identifiers, and a table's keys can be stored with
        SQL (:func:`~plotnine_private.engines.record_keys_sql`).

    Examples
    --------
    >>> df = pd.DataFrame({"x": ["a", "b", "a"]})
    >>> keyed = add_record_keys(df, seed=1)
    >>> list(keyed.columns), bool(keyed["rkey"].between(0, 1).all())
    (['x', 'rkey'], True)
    """
    polars_frame = type(data).__module__.split(".")[0] == "polars" and (
        not hasattr(data, "collect")
    )
    if not (isinstance(data, pd.DataFrame) or polars_frame or is_source(data)):
        raise ParameterError(
            "add_record_keys(): data must be a pandas or polars "
            f"DataFrame or a source(...) table, {frame_type_fix(data)}"
        )
    if name in data.columns:
        raise ParameterError(
            f"data already has a column {name!r}; reuse those stored keys "
            f"(drawing new ones breaks consistency) or choose another name"
        )
    if seed is None:
        warnings.warn(
            "record keys were drawn without a seed: save the returned "
            "data (with its key column) and reuse it for every output, or "
            "consistency between plots is lost",
            RecordKeyWarning,
            stacklevel=2,
        )
    if row_id is not None:
        if seed is None:
            raise ParameterError(
                "row_id= needs seed=: the keys are a function of the seed "
                "and the identifier (keep the seed secret)"
            )
        if row_id not in data.columns:
            raise ParameterError(f"row_id {row_id!r} is not a column of data")
        if is_source(data):
            expr = row_key_fn.record_key_expr(
                row_id, seed, digits, integer_range
            )
            return data.with_columns(**{name: expr})
        keys = row_key_fn.row_keys(
            np.asarray(data[row_id]), seed, digits, integer_range
        )
        return _with_keys(data, name, keys)
    if is_source(data):
        raise ParameterError(
            "a table in an engine gets keys from a row identifier: "
            "add_record_keys(src, seed=..., row_id='<id column>')"
        )
    rng = np.random.default_rng(seed)
    out = data.copy() if isinstance(data, pd.DataFrame) else data
    n = len(out)
    scale = key_scale(digits, integer_range)
    keys = rng.integers(0, scale, size=n)
    if integer_range is None:
        # integers first: the stored key has exactly `digits` decimals
        keys = keys / scale
    return _with_keys(out, name, keys)


def _with_keys(data: Any, name: str, keys: np.ndarray) -> Any:
    if isinstance(data, pd.DataFrame):
        out = data.copy()
        out[name] = keys
        return out
    import polars as pl

    return data.with_columns(pl.Series(name, keys))
