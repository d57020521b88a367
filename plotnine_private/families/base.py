"""The contract every family answers, and helpers of the stages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CELL",
    "Family",
    "Stages",
    "integer_keys",
    "merge_stages",
    "outside_as_nan",
    "represented",
]

CELL = "_cell"

Stages = list[dict[str, Any]]


def integer_keys(stages: Stages) -> Stages:
    """``stages`` with the last stage's columns (grouping keys that are
    whole numbers, never NaN: a family's :attr:`Family.whole_inner_keys`)
    cast to int64. Spark groups by a double through a NaN and signed-zero
    normalisation of every record: a third of a 10**8-row histogram's
    query, which an integer key skips. Polars groups by a double faster
    than it casts (bin2d 20% slower cast), so only Spark asks for it."""
    import narwhals as nw

    *head, last = stages
    return [*head, {k: v.cast(nw.Int64) for k, v in last.items()}]


def outside_as_nan(stages: Stages, inside: Any) -> Stages:
    """``stages`` whose last stage's keys (a family's inner keys, never
    NaN: :attr:`Family.whole_inner_keys`) are NaN for the records where
    ``inside`` (its :meth:`Family.domain_filter`) does not hold: the
    records outside are grouped under NaN, and that grouped row is
    dropped before decoding, instead of being filtered out before the
    arithmetic. Polars filters a scan at about half the cost of its
    whole GROUP BY, and selects a key per record for a fifth of it; the
    inner stages are exact arithmetic on any double (NaN, infinities
    and far values included), so the records inside get their keys."""
    import narwhals as nw

    *head, last = stages
    nan = float("nan")
    return [
        *head,
        {k: nw.when(inside).then(v).otherwise(nan) for k, v in last.items()},
    ]


class Family:
    """What every family answers (see the module docstring)."""

    #: whether the domain was fixed without the data
    public: bool = True
    #: the aesthetics a family reads, in order
    aes: tuple[str, ...] = ()
    #: whether :meth:`inner_stages` ends with keys that are whole numbers
    #: and never NaN (so :func:`integer_keys` may cast them)
    whole_inner_keys: bool = False

    @property
    def size(self) -> int:
        raise NotImplementedError

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def stages(self, columns: Mapping[str, Any]) -> Stages:
        raise NotImplementedError

    def decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        """Codes of grouped rows from their integer key (-1 outside)."""
        return _int_keys(grouped[CELL])

    # a shorter path when the records outside the domain need not be
    # seen (no weights or keys to check): the engine filters them out
    # before any arithmetic, and the stages skip the range tests
    def domain_filter(self, columns: Mapping[str, Any]) -> Any:
        """An expression true exactly for the records with a cell, or
        None (the stages alone decide)."""
        return None

    def inner_stages(
        self, columns: Mapping[str, Any], *, engine: str = ""
    ) -> Stages:
        """Stages for the records that pass :meth:`domain_filter`.
        ``engine`` (a :class:`~plotnine_private.engines.Source`'s
        ``engine``) picks, where a family has several, the form that
        engine evaluates fastest; every form gives the same codes in
        its engine."""
        return self.stages(columns)

    def inner_decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        """:meth:`decode` for :meth:`inner_stages`."""
        return self.decode(grouped)

    def representatives(self, columns: Mapping[str, Any]) -> Stages | None:
        """Stages whose last one holds, for each of :attr:`aes` in
        order, a value in the same cell as the record's own (or outside
        the domain with it), taken from few values: grouped by them, the
        records fall into few groups, and :meth:`stages` applied to each
        group's values gives its records' cell (:func:`represented`).
        None where the family has no such form."""
        return None


def represented(
    family: Family, columns: Mapping[str, Any]
) -> tuple[Stages, Stages] | None:
    """The stages of ``family``'s :meth:`~Family.representatives` (on
    the records) and those of its exact :meth:`~Family.stages` on the
    representatives (on the grouped rows, whose :data:`CELL` then
    :meth:`~Family.decode` reads), or None. A record's cell is decided
    once per group rather than once per record: the per-record work is
    the representative's few operations, with no range test and no edge
    correction."""
    import narwhals as nw

    reps = family.representatives(columns)
    if reps is None:
        return None
    values = {a: nw.col(k) for a, k in zip(family.aes, reps[-1])}
    return reps, family.stages(values)


def _int_keys(values: Any) -> np.ndarray:
    """Grouped integer keys as int64 (a missing key is outside)."""
    v = pd.Series(values).to_numpy(dtype=float, na_value=np.nan)
    return np.where(np.isnan(v), -1, v).astype(np.int64)


def _float(expr):
    import narwhals as nw

    return expr.cast(nw.Float64)


def _divide(num, c: float, engine: str = ""):
    """``num / c`` rounded as numpy rounds it. Polars turns a division by
    a literal into a multiplication by its reciprocal, which rounds some
    quotients differently (a hexagon tie, a half-way grid point); a
    divisor that is a column (``num * 0 + c``, equal to ``c`` for every
    finite ``num``) keeps the true division. DuckDB divides by a literal
    (its codes are tested against numpy's), so ``engine="duckdb"`` skips
    the two extra operations (a 10**7-row hexbin's query: 1.84 -> 1.61
    times its GROUP BY, CPU on one thread)."""
    if engine == "duckdb":
        return num / c
    return num / (num * 0.0 + c)


def merge_stages(*lists: Stages) -> Stages:
    """Stage lists run side by side (stage i of each in projection i)."""
    depth = max(len(s) for s in lists)
    return [
        {k: v for s in lists if i < len(s) for k, v in s[i].items()}
        for i in range(depth)
    ]
