"""The privacy unit a data set declares, and in-memory frames that carry it.

``pp.source(data, unit="person_id", max_records=k)`` declares that the
data's records belong to privacy units (people, households, firms) named
by the column ``unit``, and that each unit keeps at most ``k`` of them
before any aggregation (:mod:`plotnine_private.mechanisms.release.bounding`).
Every mechanism then protects a whole unit: its sensitivity is ``k``
times that of one record. Without a declaration the unit is one row
(:data:`ONE_ROW`), as before.

For a pandas or polars frame in memory, :func:`source` returns a
:class:`UnitFrame`: plotnine reads it as the frame itself (its
``to_pandas``), and the private layers read the declaration from it.
Tables in an engine carry the same :class:`Unit` on their
:class:`~plotnine_private.engines.source.Source`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from numbers import Integral
from typing import Any

import numpy as np
import pandas as pd

from .exceptions import PlotninePrivateError
from .mechanisms.errors import ParameterError
from .mechanisms.release.bounding import BOUNDINGS
from .mechanisms.release.count_mechanisms import check_bound
from .mechanisms.release.engine import Query

__all__ = [
    "ONE_ROW",
    "kept_warning",
    "Unit",
    "UnitFrame",
    "dataset_of",
    "is_private_source",
    "make_unit",
    "unit_of",
    "with_unit",
]


@dataclass(frozen=True)
class Unit:
    """A declared privacy unit and its contribution bound.

    Attributes
    ----------
    column
        The column naming each record's unit; None: each row is a unit.
    max_records
        Records a unit keeps at most (``k``).
    max_cells
        Cells of one layer a unit's records may fall in at most (None:
        ``max_records``); lowers the threshold of undeclared domains.
    record_id
        A column identifying each record within its unit (whole numbers
        for engines); None: a hash of the record's content (in memory).
    salt
        Varies which records a unit keeps (public; None: the default
        order).
    bounding
        The order records are kept in: ``"v2"`` (``pnp-bounding-v2``,
        the default) or ``"v1"`` (``pnp-bounding-v1``, the first order).
    max_records_per_cell
        Records a unit keeps at most in each cell of a count layer (None:
        no bound per cell); with ``max_cells``, the records a unit adds
        to a count layer are at most ``max_cells * max_records_per_cell``
        (:attr:`cell_records`).
    """

    column: str | None = None
    max_records: int = 1
    max_cells: int | None = None
    record_id: str | None = None
    salt: int | str | None = None
    bounding: str = "v2"
    #: the released histogram of records per unit the source carries
    #: (:class:`~plotnine_private.mechanisms.release.contributions.
    #: Contributions`): what the figures say of the records kept
    contributions: Any = field(default=None, compare=False, repr=False)
    #: how ``max_records`` was chosen: None (given), or words such as
    #: ``"max_records='auto'"``
    chosen: str | None = field(default=None, compare=False)
    max_records_per_cell: int | None = None

    @property
    def cell_records(self) -> int:
        """The records one unit adds at most to a layer whose cells are
        limited per unit (``max_cells``, then ``max_records_per_cell``
        in each): ``min(max_records, max_cells * max_records_per_cell)``,
        else ``max_records``. Its sensitivity multiplier."""
        if self.max_records_per_cell is None or self.max_cells is None:
            return self.max_records
        return min(
            self.max_records, self.max_cells * self.max_records_per_cell
        )

    @property
    def unit_cells(self) -> int:
        """The cells one unit is counted in at most when cells count
        units (``count="units"``): ``max_cells``, else ``max_records``
        (its records fall in at most that many cells)."""
        if self.max_cells is None:
            return self.max_records
        return min(self.max_cells, self.max_records)

    def kept(self) -> Any:
        """The estimated share of records kept (a :class:`~plotnine_
        private.mechanisms.release.contributions.KeptShare`), or None
        without a released histogram."""
        if self.contributions is None or not self.bounded:
            return None
        return self.contributions.kept(self.max_records)

    @property
    def name(self) -> str:
        """The unit's name for reports and the ledger."""
        return "one row" if self.column is None else self.column

    @property
    def bounded(self) -> bool:
        """Whether records are chosen per unit (a unit column given)."""
        return self.column is not None

    def describe(self) -> str:
        """Words for a report: ``person_id (at most 5 records)``."""
        if self.column is None:
            return "one row"
        cells = (
            f" in at most {self.max_cells} cells"
            if self.max_cells is not None
            else ""
        )
        if self.max_records_per_cell is not None:
            cells += f", at most {self.max_records_per_cell} per cell"
        plural = "s" if self.max_records != 1 else ""
        return (
            f"{self.column} (at most {self.max_records} record{plural}"
            f"{cells} each)"
        )

    def query_parts(self) -> dict[str, Any]:
        """Public parts of a release's query (read by the ledger as
        ``privacy_unit`` and ``max_records``). The order of a unit's
        records is named from ``v2`` on, so a release under ``v1`` keeps
        the identity (and the noise) it had before orders had names."""
        if self.column is None:
            return {}
        parts: dict[str, Any] = {
            "privacy_unit": self.column,
            "max_records": self.max_records,
            "max_cells": self.max_cells,
            "record_id": self.record_id,
            "bounding_salt": self.salt,
        }
        if self.bounding != "v1":
            parts["bounding"] = BOUNDINGS[self.bounding]
        if self.max_records_per_cell is not None:
            # only where given: releases without it keep their identity
            parts["max_records_per_cell"] = self.max_records_per_cell
        return parts


#: the unit of data without a declaration
ONE_ROW = Unit()


def make_unit(
    columns: list[str],
    unit: str | None,
    max_records: int | None,
    max_cells: int | None = None,
    record_id: str | None = None,
    salt: int | str | None = None,
    bounding: str = "v2",
    max_records_per_cell: int | None = None,
) -> Unit:
    """Check a declaration against the data's columns (public schema).

    ``max_records`` may be left out with ``max_records_per_cell``: it is
    then ``max_cells * max_records_per_cell``.

    Raises
    ------
    PlotninePrivateError
        Naming the parameter, the value and the fix.
    """
    if unit is None:
        for name, v in (
            ("max_records", max_records),
            ("max_cells", max_cells),
            ("record_id", record_id),
            ("bounding", None if bounding == "v2" else bounding),
            ("max_records_per_cell", max_records_per_cell),
        ):
            if v is not None:
                raise PlotninePrivateError(
                    f"source(): {name}={v!r} needs a privacy unit: give "
                    "unit='<column naming each record's person>'."
                )
        return ONE_ROW
    for name, col in (("unit", unit), ("record_id", record_id)):
        if col is not None and col not in columns:
            raise PlotninePrivateError(
                f"source(): {name}={col!r} is not a column; the data "
                f"have {', '.join(map(str, columns[:8]))}"
                f"{' ...' if len(columns) > 8 else ''}."
            )
    if max_records_per_cell is not None:
        check_per_cell(max_records_per_cell, max_cells)
        if max_records is None and isinstance(max_cells, Integral):
            max_records = int(max_cells) * max_records_per_cell
    if max_records is None:
        raise PlotninePrivateError(
            f"source(): unit={unit!r} needs max_records=k, the most "
            "records one unit may contribute (e.g. max_records=5); records "
            "beyond k are left out before any aggregation."
        )
    try:
        check_bound(max_records, max_cells)
    except ParameterError as err:
        raise PlotninePrivateError(f"source(): {err}") from None
    if salt is not None and (
        isinstance(salt, bool) or not isinstance(salt, (int, str))
    ):
        raise PlotninePrivateError(
            f"source(): salt must be an int or a str, got {salt!r}."
        )
    if bounding not in BOUNDINGS:
        raise PlotninePrivateError(
            f"source(): bounding={bounding!r} is not an order of records; "
            f"use one of {sorted(BOUNDINGS)} ('v2', the default, is "
            "faster; 'v1' keeps the records of releases made before it)."
        )
    return Unit(
        unit,
        int(max_records),
        max_cells,
        record_id,
        salt,
        bounding,
        max_records_per_cell=(
            None if max_records_per_cell is None else int(max_records_per_cell)
        ),
    )


def check_per_cell(per_cell: Any, max_cells: Any) -> None:
    """Refuse a ``max_records_per_cell`` that is not a whole number >= 1,
    or without ``max_cells`` (the bound of a unit's records in a layer is
    ``max_cells * max_records_per_cell``: without the first, none)."""
    if (
        isinstance(per_cell, bool)
        or not isinstance(per_cell, Integral)
        or per_cell < 1
    ):
        raise PlotninePrivateError(
            f"source(): max_records_per_cell={per_cell!r} must be a whole "
            "number >= 1 (the records one unit keeps in each cell, e.g. "
            "max_records_per_cell=2)."
        )
    if max_cells is None:
        raise PlotninePrivateError(
            f"source(): max_records_per_cell={per_cell} needs max_cells=c, "
            "the most cells one unit's records may fall in: a unit then "
            "adds at most c * max_records_per_cell records to a count "
            f"layer. Give e.g. max_cells=4, max_records_per_cell={per_cell}."
        )


class UnitFrame:
    """A pandas or polars frame in memory with its declared privacy unit.

    plotnine converts it with :meth:`to_pandas`; private layers read
    :attr:`unit`, and a layer that is not private on it is refused when
    the plot is built (:func:`~plotnine_private.door.refuse_raw_layers`).
    Build it with :func:`plotnine_private.source`.
    """

    def __init__(self, data: Any, unit: Unit, dataset: str | None = None):
        self.data = data
        self.unit = unit
        #: the data set the ledger charges its releases to (None: the
        #: ledger's own)
        self.dataset = dataset
        self._pandas: pd.DataFrame | None = None

    def __repr__(self) -> str:
        named = "" if self.dataset is None else f", data set {self.dataset!r}"
        return (
            f"<plotnine_private source (in memory, "
            f"{type(self.data).__module__.split('.')[0]}): unit "
            f"{self.unit.describe()}{named}>"
        )

    @property
    def columns(self) -> list[str]:
        return [str(c) for c in self.data.columns]

    def to_pandas(self) -> pd.DataFrame:
        """The frame as pandas (converted once)."""
        if self._pandas is None:
            data = self.data
            if isinstance(data, pd.DataFrame):
                self._pandas = data
            else:
                frame = data.to_pandas()
                for c in frame.columns:
                    # a polars Enum declares levels, not an order (as
                    # for tables in an engine)
                    if isinstance(frame[c].dtype, pd.CategoricalDtype):
                        frame[c] = frame[c].cat.as_unordered()
                self._pandas = frame
        return self._pandas

    def __len__(self) -> int:
        return len(self.data)

    # Filtering and selecting, as on the frame itself. The result is a
    # new source of the same unit and data set: its records are bounded
    # per unit when it is drawn (a filter is a function of each record
    # alone, so a unit still keeps at most ``max_records`` of them). The
    # frame is the analyst's own: reading a column to build a mask
    # releases nothing.

    def _like(self, data: Any) -> UnitFrame:
        if not hasattr(data, "columns"):
            raise TypeError(
                "a source filtered or selected to a single column is no "
                "data set to plot: keep a frame (src[['a', 'b']], "
                "src[src['x'] > 0])"
            )
        unit = self.unit
        if unit.contributions is not None:
            # the released records-per-unit histogram was of all rows
            unit = replace(unit, contributions=None)
        needed = list(
            dict.fromkeys(c for c in (unit.column, unit.record_id) if c)
        )
        missing = [
            c for c in needed if c not in [str(c) for c in data.columns]
        ]
        if missing:
            raise PlotninePrivateError(
                f"source: the selection drops {missing}, which the privacy "
                f"unit needs ({unit.describe()}); keep them, e.g. "
                f"src[[..., {', '.join(repr(c) for c in missing)}]]"
            )
        return UnitFrame(data, unit, self.dataset)

    def __getitem__(self, key: Any) -> Any:
        """``src["x"]``: the column (to build a mask); ``src[mask]``,
        ``src[["a", "b"]]``: a source of those rows or columns."""
        if isinstance(key, str):
            return self.data[key]
        return self._like(self.data[key])

    def __getattr__(self, name: str) -> Any:
        # only reached for names that are not attributes: a column, as
        # ``df.x`` is on a pandas frame (``src[src.x > 0]``)
        if name.startswith("_") or name in ("data", "unit", "dataset"):
            raise AttributeError(name)
        data = self.__dict__.get("data")
        if data is not None and name in getattr(data, "columns", ()):
            return data[name]
        raise AttributeError(
            f"a pp.source has no attribute {name!r}: it is neither a "
            "column nor one of filter, select, query, to_pandas, columns"
        )

    def query(self, expr: str, **kwargs: Any) -> UnitFrame:
        """Rows by a pandas query string (a pandas frame's source)."""
        if not isinstance(self.data, pd.DataFrame):
            raise PlotninePrivateError(
                "source.query: a query string is pandas'; this source "
                "holds a polars frame: use src.filter(pl.col('x') > 0)"
            )
        return self._like(self.data.query(expr, **kwargs))

    def filter(self, *predicates: Any, **labels: Any) -> UnitFrame:
        """Rows for which every predicate holds: boolean masks (or a
        function of the frame giving one) on a pandas frame, polars
        expressions on a polars frame. With pandas' own keywords
        (``items=``, ``like=``, ``regex=``, ``axis=``) it is pandas'
        ``DataFrame.filter``: columns (or rows) by their labels."""
        data = self.data
        if labels:
            if predicates or not isinstance(data, pd.DataFrame):
                raise PlotninePrivateError(
                    "source.filter: items=, like=, regex= and axis= are "
                    "pandas' DataFrame.filter (labels, on a pandas "
                    "frame's source, without masks); filter rows with a "
                    "mask or an expression: src.filter(src['x'] > 0)"
                )
            return self._like(data.filter(**labels))
        if not isinstance(data, pd.DataFrame):
            return self._like(data.filter(*predicates))
        keep = np.ones(len(data), dtype=bool)
        for p in predicates:
            mask = p(data) if callable(p) else p
            mask = np.asarray(mask)
            if mask.dtype != bool or mask.shape != (len(data),):
                raise PlotninePrivateError(
                    f"source.filter: a predicate must be a boolean mask of "
                    f"one value per row (or a function of the frame giving "
                    f"one), got {type(p).__name__}; e.g. "
                    "src.filter(src['x'] > 0)"
                )
            keep &= mask
        return self._like(data[keep])

    def select(self, *columns: Any) -> UnitFrame:
        """A source of these columns (the unit's are needed)."""
        names = [c for group in columns for c in _names(group)]
        if isinstance(self.data, pd.DataFrame):
            return self._like(self.data[names])
        return self._like(self.data.select(names))


def _names(group: Any) -> list:
    return [group] if isinstance(group, str) else list(group)


def is_private_source(data: Any) -> bool:
    """Whether ``data`` came from ``pp.source(...)`` (a
    :class:`UnitFrame` or a table in an engine): its records may only be
    released through a private stat."""
    return isinstance(getattr(data, "unit", None), Unit)


def dataset_of(data: Any) -> str | None:
    """The data set a source names (``pp.source(..., dataset=...)``), or
    None (not a source, or no name given)."""
    if not is_private_source(data):
        return None
    name = getattr(data, "dataset", None)
    return name if isinstance(name, str) else None


def unit_of(data: Any) -> Unit:
    """The privacy unit ``data`` declares (:data:`ONE_ROW` if none)."""
    unit = getattr(data, "unit", None)
    return unit if isinstance(unit, Unit) else ONE_ROW


def with_unit(query: Query, unit: Unit) -> Query:
    """``query`` with the unit's parts (:meth:`Unit.query_parts`) among
    its own; the same query for one row. Idempotent, so a query that
    already names its unit is unchanged.

    >>> q = Query.make("count", "data", 1, eps=1.0)
    >>> with_unit(q, ONE_ROW) == q
    True
    >>> u = Unit("person", 3)
    >>> with_unit(with_unit(q, u), u) == with_unit(q, u)
    True
    """
    extra = unit.query_parts()
    if not extra:
        return query
    parts = {**dict(query.parts), **extra}
    return Query.make(query.family, query.source, query.seed, **parts)


def kept_warning(name: str, unit: Unit) -> str | None:
    """The words of a :class:`PrivacyWarning` when the estimated share of
    records a bounded unit keeps is below one half (None otherwise)."""
    kept = unit.kept()
    if kept is None or not kept.share < 0.5:
        return None
    return (
        f"{name}(): max_records={unit.max_records} keeps an estimated "
        f"{kept.share_words()}: the figure shows less than half of the "
        "records, and the bias (records removed) is not in its noise "
        "intervals. Choose k from the released histogram: "
        "pp.contributions(data, unit=..., eps=...) gives the share kept "
        "and the error for each k, and pp.source(..., max_records='auto', "
        "auto_eps=...) chooses it."
    )
