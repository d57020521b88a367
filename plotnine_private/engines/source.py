"""Lazy data sources: tables that stay in their engine.

:func:`source` wraps a DuckDB relation (or a connection and a table
name), a Parquet path or glob (read through DuckDB), a Polars LazyFrame,
an Ibis table or a PySpark DataFrame in a :class:`Source`. All engines are
reached through one dataframe-agnostic layer, narwhals: its lazy API
(``filter``, ``with_columns``, ``group_by().agg()``) is translated to each
engine's own query, so a private layer's aggregation runs where the data
are and only the cell table comes back.

plotnine sees a :class:`Source` as an empty frame with the table's columns
and types (:meth:`Source.to_pandas`): enough to choose scales and lay out
declared facets, and nothing to train a scale on. The private layers
release through :mod:`plotnine_private.engines.push`.
"""

from __future__ import annotations

import glob as _glob
import itertools
import os
from typing import Any

import pandas as pd

from ..exceptions import PlotninePrivateError
from ..units import ONE_ROW, Unit, UnitFrame, make_unit
from ..validation import (
    check_flat_columns,
    is_polars_frame,
    validate_dataset,
)

__all__ = ["Source", "is_source", "source"]

#: numbers of the DuckDB temporary tables of kept bounded rows
_KEPT = itertools.count()
#: engines that can keep bounded rows (``keep_bounded=True``)
KEEP_ENGINES = ("duckdb", "polars", "pyspark")


class Source:
    """A table in an engine, for private plots and tables.

    Build it with :func:`source`. Attributes: ``frame``, the narwhals
    LazyFrame; ``engine``, the backend's name; ``native``, the object
    given.
    """

    def __init__(
        self,
        frame: Any,
        native: Any,
        engine: str,
        levels: dict | None = None,
        unit: Unit = ONE_ROW,
        keep_bounded: bool = False,
        dataset: str | None = None,
    ):
        self.frame = frame
        self.native = native
        self.engine = engine
        self.levels = dict(levels or {})
        self.unit = unit
        self.keep_bounded = keep_bounded
        #: the data set the ledger charges its releases to (None: the
        #: ledger's own)
        self.dataset = dataset
        self._empty: pd.DataFrame | None = None
        self._kept: Any = None
        self._kept_table: str | None = None

    def __repr__(self) -> str:
        cols = ", ".join(self.columns)
        return f"<plotnine_private source ({self.engine}): {cols}>"

    @property
    def columns(self) -> list[str]:
        return list(self.frame.collect_schema().names())

    @property
    def schema(self):
        return self.frame.collect_schema()

    def to_pandas(self) -> pd.DataFrame:
        """An empty frame with the table's columns and types.

        plotnine converts a plot's data with ``to_pandas``: what it gets is
        no row at all, so nothing but the private layers (which aggregate
        in the engine) can use the data, and no scale is trained on it.
        """
        if self._empty is None:
            import narwhals as nw

            empty = self.frame.head(0).collect().to_pandas()
            schema = self.schema
            for c in empty.columns:
                if schema[c] == nw.Date and empty[c].dtype == object:
                    # a DATE arrives as datetime.date objects (DuckDB),
                    # which plotnine would put on a discrete scale: a
                    # date axis, as for a polars Date
                    empty[c] = empty[c].astype("datetime64[ns]")
                # an enum declares levels, as a pandas Categorical does,
                # not an order (polars Enums arrive ordered)
                if isinstance(empty[c].dtype, pd.CategoricalDtype):
                    empty[c] = empty[c].cat.as_unordered()
            self._empty = empty.reset_index(drop=True)
        return self._empty.copy()

    def declared_levels(self, column: str) -> list | None:
        """Public levels of a column: an Enum's categories (DuckDB ENUM,
        polars Enum) or (False, True) for a boolean; None otherwise (a
        polars Categorical's categories are the values seen)."""
        import narwhals as nw

        if column in self.levels:
            return list(self.levels[column])
        schema = self.schema
        if column not in schema:
            return None
        dtype = schema[column]
        if isinstance(dtype, nw.Enum):
            return list(dtype.categories)
        if dtype == nw.Boolean:
            return [False, True]
        return None

    def with_columns(self, *exprs: Any, **named: Any) -> Source:
        """A source with more columns (narwhals expressions), e.g. stored
        record keys: ``src.with_columns(rkey=record_key_expr("id", 7))``
        (rows kept by ``keep_bounded`` are not shared: the new source
        bounds its own rows, which a record's content may name)."""
        return self._like(self.frame.with_columns(*exprs, **named))

    def filter(self, *predicates: Any) -> Source:
        """A source of the rows for which every predicate (a narwhals
        expression: ``nw.col("x") > 0``) holds, computed in the engine;
        its units are bounded on those rows when it is drawn."""
        return self._like(self.frame.filter(*predicates))

    def select(self, *columns: Any) -> Source:
        """A source of these columns (the unit's are needed)."""
        frame = self.frame.select(*columns)
        needed = list(
            dict.fromkeys(
                c for c in (self.unit.column, self.unit.record_id) if c
            )
        )
        missing = [c for c in needed if c not in frame.collect_schema()]
        if missing:
            raise PlotninePrivateError(
                f"source.select: the selection drops {missing}, which the "
                f"privacy unit needs; keep them: src.select(..., "
                f"{', '.join(repr(c) for c in missing)})"
            )
        return self._like(frame)

    def __getitem__(self, key: Any) -> Any:
        raise PlotninePrivateError(
            f"a source in {self.engine} is filtered in the engine: "
            'src.filter(nw.col("x") > 0) or src.select("a", "b") (import '
            "narwhals as nw), or filter the table before pp.source(...)"
        )

    query = __getitem__

    def _like(self, frame: Any) -> Source:
        return Source(
            frame,
            self.native,
            self.engine,
            self.levels,
            self.unit,
            self.keep_bounded,
            self.dataset,
        )

    def bounded_rows(self) -> Any:
        """The rows each unit keeps (a narwhals LazyFrame): bounded in the
        query of each figure, or with ``keep_bounded=True`` once, by the
        first figure, and kept in the engine for every later one (a
        DuckDB temporary table, a Spark ``persist``, a collected Polars
        frame) until :meth:`invalidate`."""
        from .bounding import bound

        if not self.keep_bounded:
            return bound(self)
        if self._kept is None:
            from .bounding import KEY, UNIT_CODE

            # bounds per cell rank the kept records again: their unit's
            # code and order key are kept with them
            extra = [UNIT_CODE, KEY] if self.unit.max_cells is not None else []
            self._kept = self._keep(bound(self).select(*self.columns, *extra))
        return self._kept

    def _keep(self, frame: Any) -> Any:
        import narwhals as nw

        native = frame.to_native()
        if self.engine == "duckdb":
            name = f"_pnp_bounded_{next(_KEPT)}"
            native.query(
                "_pnp_rows",
                f"CREATE TEMP TABLE {name} AS SELECT * FROM _pnp_rows",
            )
            self._kept_table = name
            return nw.from_native(
                native.query("_pnp_rows", f"SELECT * FROM {name}")
            )
        if self.engine == "polars":
            return nw.from_native(native.collect().lazy())
        # Spark: cached by the first query that reads it
        return nw.from_native(native.persist())

    def invalidate(self) -> None:
        """Forget the rows kept by ``keep_bounded`` (drop the DuckDB
        temporary table, unpersist the Spark frame, free the Polars
        frame): call it when the table changed, or to free the engine's
        memory. The next figure bounds the rows again (and keeps them).
        Nothing to do without ``keep_bounded``."""
        kept, self._kept = self._kept, None
        if kept is None:
            return
        native = kept.to_native()
        if self._kept_table is not None:
            native.query(
                "_pnp_rows", f"DROP TABLE IF EXISTS {self._kept_table}"
            )
            self._kept_table = None
        elif self.engine == "pyspark":
            native.unpersist()


def is_source(obj: Any) -> bool:
    return isinstance(obj, Source)


def _parquet(path: str, con: Any) -> Any:
    try:
        import duckdb
    except ImportError:
        raise PlotninePrivateError(
            "source(): reading Parquet needs DuckDB: pip install "
            "'plotnine_private[duckdb]'."
        ) from None
    if not _glob.has_magic(path) and not os.path.exists(path):
        raise PlotninePrivateError(
            f"source(): no file {path!r}; give a Parquet path or glob."
        )
    con = con if con is not None else duckdb.connect()
    return con.read_parquet(path)


def source(
    obj: Any,
    table: str | None = None,
    *,
    con: Any = None,
    levels: dict[str, list] | None = None,
    unit: str | None = None,
    max_records: int | str | None = None,
    max_cells: int | None = None,
    record_id: str | None = None,
    salt: int | str | None = None,
    bounding: str = "v2",
    max_records_per_cell: int | None = None,
    keep_bounded: bool = False,
    dataset: str | None = None,
    auto_eps: float | None = None,
    auto_seed: int | str | None = None,
    auto_plot_eps: float = 1.0,
    auto_cells: int = 10,
    contributions: Any = None,
) -> Source | UnitFrame:
    """A lazy data source for ``ggplot`` and the private tables.

    Parameters
    ----------
    obj
        A DuckDB relation; a DuckDB connection (with ``table``); a path or
        glob of Parquet files (read through DuckDB, on ``con`` or a new
        in-memory connection); a Polars LazyFrame; an Ibis table; a
        PySpark DataFrame; or a pandas or polars DataFrame in memory
        (which can also be passed to ``ggplot`` directly, with one row as
        the privacy unit).
    table
        Table or view name when ``obj`` is a DuckDB connection.
    con
        DuckDB connection to read a Parquet path with.
    levels
        Public levels of columns (``{"region": ["N", "S"]}``), for engines
        and files without an enum type (Spark, Parquet strings): declared
        as a pandas Categorical's categories are.
    unit
        The column naming each record's privacy unit (a person, a
        household): every mechanism then protects a whole unit. Without
        it a unit is one row.
    max_records
        Records one unit keeps at most (``k``, required with ``unit``):
        the ``k`` with the smallest public keyed hash of (unit, record),
        before any aggregation; sensitivities are ``k`` times those of
        one record. ``"auto"``: chosen from a histogram of records per
        unit released here with ``auto_eps`` (charged; see
        :func:`~plotnine_private.engines.contributions.contributions`),
        the ``k`` with the smallest expected error of a cell (bias +
        noise) for a figure of ``auto_cells`` cells at ``auto_plot_eps``.
    max_cells
        Cells of one layer a unit's records may fall in at most (at most
        ``max_records``): the ``max_cells`` cells with the smallest
        public keyed hash of (unit, cell), a cell named by its content;
        lowers the display threshold of undeclared domains. In an engine
        (DuckDB, Polars, Spark) for a plot's layers, not for a private
        table.
    record_id
        A column identifying each record within its unit (whole numbers
        in an engine); without it, a hash of the record's content in a frame in
        memory (an engine table needs it when ``unit`` is given).
    salt
        An int or str that varies which records a unit keeps.
    bounding
        The public order a unit's records are kept in: ``"v2"`` (the
        default, one keyed hash of (unit, record)) or ``"v1"`` (the
        first order, two nested hashes: it keeps the records, and so
        the release identities, of figures made before ``v2``).
    max_records_per_cell
        With ``max_cells``: records one unit keeps at most in each cell
        of a count layer (count, bin, bin2d, hex, sum and the fine
        histograms), those first in its public keyed order of (unit,
        record). A count layer's sensitivity is then ``min(max_records,
        max_cells * max_records_per_cell)`` times one record's (as
        PipelineDP's ``max_partitions_contributed`` and
        ``max_contributions_per_partition``); ``max_records`` may be left
        out (it is then that product). Where ``max_cells`` is.
    keep_bounded
        Bound once, draw many (DuckDB, Polars, Spark, with ``unit``): the
        first figure keeps the rows each unit keeps in the engine (a
        DuckDB temporary table, a Spark ``persist``, a collected Polars
        frame) and every later figure of this source reads them instead
        of bounding again. Call :meth:`Source.invalidate` when the table
        changes (or to free the engine's memory). A frame in memory
        always remembers the records its units keep: nothing to ask.
    dataset
        The name of the data set these data are (``"flights"``): under
        :func:`~plotnine_private.use_ledger`, every release drawn from
        this source is charged to that data set of the ledger, whatever
        data set the ledger was selected with (which keeps the releases
        of data without a name). The data set must be known to the
        ledger (:meth:`~plotnine_private.LedgerBook.add_dataset`, or a
        ``use_ledger`` with it). None: the ledger's data set.
    auto_eps, auto_seed, auto_plot_eps, auto_cells
        With ``max_records="auto"``: the eps the histogram spends
        (required), its seed, and the figure the choice is made for.
    contributions
        What ``pp.contributions(...)`` released on these data: the
        figures then state the share of records ``max_records`` keeps
        (already released and charged: nothing more is spent).

    Returns
    -------
    Source or UnitFrame
        A :class:`Source` for a table in an engine; a
        :class:`~plotnine_private.units.UnitFrame` for a frame in memory.

    Examples
    --------
    >>> import polars as pl
    >>> src = source(pl.LazyFrame({"g": ["a", "b"]}))
    >>> src.engine, src.columns
    ('polars', ['g'])
    """
    import narwhals as nw

    auto = max_records == "auto" if isinstance(max_records, str) else False
    _check_auto(auto, max_records, auto_eps, contributions)
    if auto and unit is None:
        raise PlotninePrivateError(
            "source(): max_records='auto' needs a privacy unit: give "
            "unit='<column naming each record's person>'."
        )
    choose = {
        "auto": auto,
        "auto_eps": auto_eps,
        "auto_seed": auto_seed,
        "auto_plot_eps": auto_plot_eps,
        "auto_cells": auto_cells,
        "contributions": contributions,
    }
    native = obj
    dataset = validate_dataset("source", dataset)
    if auto and (max_cells is not None or max_records_per_cell is not None):
        raise PlotninePrivateError(
            "source(): max_records='auto' chooses one bound of a unit's "
            "records; with max_cells= or max_records_per_cell= give "
            "max_records=k (e.g. the recommended k of "
            "pp.contributions(...)), or leave them out."
        )
    bound: Any = 1 if auto else max_records
    declared = (
        unit,
        bound,
        max_cells,
        record_id,
        salt,
        bounding,
        max_records_per_cell,
    )
    if isinstance(obj, UnitFrame):
        dataset = dataset if dataset is not None else obj.dataset
        obj = obj.data
    if isinstance(obj, Source):
        return _chosen(
            _checked(
                Source(
                    obj.frame,
                    obj.native,
                    obj.engine,
                    {**obj.levels, **(levels or {})},
                    make_unit(obj.columns, *declared) if unit else obj.unit,
                    keep_bounded or obj.keep_bounded,
                    dataset if dataset is not None else obj.dataset,
                )
            ),
            **choose,
        )
    if isinstance(obj, (str, os.PathLike)):
        obj = _parquet(os.fspath(obj), con)
    elif type(obj).__module__.lstrip("_").split(".")[0] == "duckdb" and (
        hasattr(obj, "table") and hasattr(obj, "execute")
    ):
        if table is None:
            raise PlotninePrivateError(
                "source(): a DuckDB connection needs table='<name>' (or "
                "pass con.table('<name>'))."
            )
        obj = obj.table(table)
    if isinstance(obj, pd.DataFrame) or is_polars_frame(obj):
        check_flat_columns("source", obj)
        if levels:
            raise PlotninePrivateError(
                "source(): levels= is for tables in an engine; declare the "
                "levels of a frame in memory as a pandas Categorical with "
                "categories=[...] (or a polars Enum)."
            )
        cols = [str(c) for c in obj.columns]
        return _chosen(
            UnitFrame(obj, make_unit(cols, *declared), dataset), **choose
        )
    try:
        frame = nw.from_native(obj)
    except TypeError:
        raise PlotninePrivateError(
            f"source(): cannot read {type(obj).__module__}."
            f"{type(obj).__name__}; give a DuckDB relation or connection "
            "and table, a Parquet path, a Polars LazyFrame, an Ibis table "
            "or a PySpark DataFrame."
        ) from None
    if isinstance(frame, nw.DataFrame):
        frame = frame.lazy()
    engine = str(frame.implementation).lower().rsplit(".", 1)[-1]
    bad = [c for c in (levels or {}) if c not in frame.collect_schema()]
    if bad:
        raise PlotninePrivateError(
            f"source(): levels= names {bad[0]!r}, which is not a column."
        )
    columns = list(frame.collect_schema().names())
    return _chosen(
        _checked(
            Source(
                frame,
                native,
                engine,
                levels,
                make_unit(columns, *declared),
                keep_bounded,
                dataset,
            )
        ),
        **choose,
    )


def _check_auto(
    auto: bool, max_records: Any, auto_eps: Any, contributions: Any
) -> None:
    """Refuse ``auto_eps`` without ``max_records="auto"`` (and the
    reverse is refused by :func:`~.contributions.release_for`), another
    word than ``"auto"``, and a histogram given twice."""
    if isinstance(max_records, str) and not auto:
        raise PlotninePrivateError(
            f"source(): max_records={max_records!r} is not a bound; give a "
            "whole number >= 1 or 'auto' (with auto_eps=...)."
        )
    if auto_eps is not None and not auto:
        raise PlotninePrivateError(
            f"source(): auto_eps={auto_eps!r} is the eps of the histogram "
            "that max_records='auto' releases to choose k; give "
            "max_records='auto', or leave auto_eps out."
        )
    if auto and contributions is not None:
        raise PlotninePrivateError(
            "source(): max_records='auto' releases its own histogram of "
            "records per unit; leave contributions= out, or give "
            "max_records=k (e.g. the recommended k of the histogram)."
        )


def _chosen(
    src: Any,
    *,
    auto: bool,
    auto_eps: Any,
    auto_seed: Any,
    auto_plot_eps: Any,
    auto_cells: Any,
    contributions: Any,
) -> Any:
    """``src`` with its bound chosen from a released histogram
    (``max_records="auto"``), or carrying one (``contributions=``)."""
    from .contributions import attached, auto_unit

    if auto:
        src.unit = auto_unit(
            src,
            src.unit,
            auto_eps=auto_eps,
            auto_seed=auto_seed,
            auto_plot_eps=auto_plot_eps,
            auto_cells=auto_cells,
        )
    elif contributions is not None:
        if not src.unit.bounded:
            raise PlotninePrivateError(
                "source(): contributions= says what a bound keeps, and "
                "there is no unit: give unit='<column>' and max_records=k."
            )
        src.unit = attached(src.unit, contributions)
    return src


def _checked(src: Source) -> Source:
    """``src``, once its unit is one an engine can bound (refused here,
    at the declaration, as well as before each query)."""
    from .bounding import check_unit_columns

    check_unit_columns("source", src)
    if src.keep_bounded:
        if not src.unit.bounded:
            raise PlotninePrivateError(
                "source(): keep_bounded=True keeps the rows each privacy "
                "unit keeps, and there is no unit: give unit='<column>' "
                "and max_records=k, or leave keep_bounded out."
            )
        if src.engine not in KEEP_ENGINES:
            raise PlotninePrivateError(
                f"source(): keep_bounded=True is not supported for a "
                f"table in the {src.engine} engine (DuckDB, Polars and "
                "Spark keep bounded rows); leave keep_bounded out (each "
                "figure then bounds in its own query)."
            )
    return src
