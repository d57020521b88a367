"""Private plots and tables of data beyond memory (DuckDB, Polars, Spark,
Ibis through narwhals): see :func:`source`."""

from .contributions import ContributionTable, contributions
from .keys import record_key_expr, record_keys_sql, row_keys
from .source import Source, is_source, source

__all__ = [
    "ContributionTable",
    "Source",
    "contributions",
    "is_source",
    "record_key_expr",
    "record_keys_sql",
    "row_keys",
    "source",
]
