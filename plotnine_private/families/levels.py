"""Categories of a column (count, the tables' x) and positions seen
(sum without a grid)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..cells import Dimension, as_floats, categorical_dimension
from ..exceptions import PlotninePrivateError
from .base import CELL, Family, Stages, _float

__all__ = ["FloatSequence", "Levels", "Observed", "count_levels"]


class FloatSequence(Sequence):
    """A read-only sequence of the Python floats of a float64 array,
    made one at a time when asked for (``list(s)`` equals
    ``array.tolist()``).

    >>> s = FloatSequence(np.array([1.0, 2.5]))
    >>> len(s), s[1], list(s), type(s[0]).__name__, s == [1, 2.5]
    (2, 2.5, [1.0, 2.5], 'float', True)
    """

    __slots__ = ("array",)

    def __init__(self, array: np.ndarray):
        self.array = array

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return self.array[i].tolist()
        return float(self.array[i])

    def __iter__(self) -> Any:
        return iter(self.array.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FloatSequence):
            other = other.array.tolist()
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        return self.array.tolist() == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FloatSequence({self.array.tolist()!r})"


# --------------------------------------------------------------------------
# levels (count, and the tables' x)
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Levels(Family):
    """Categories of one column: the declared levels (public), else the
    values seen (sorted; not public). ``numeric``: values are numbers,
    matched as floats (declared levels sorted as numbers)."""

    declared: Sequence | None = None
    numeric: bool = False
    axis: str = "x"
    #: numeric levels all plain ints and floats: their floats sorted
    numbers: np.ndarray | None = field(default=None, init=False, repr=False)
    #: and the place of each given level in that sort
    order: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "aes", (self.axis,))
        # numeric levels of plain ints and floats: their floats sorted,
        # and where each given level went (the tables show it as given)
        numbers = order = None
        if self.declared is not None:
            given = self.declared
            # a range or an array of numbers is read in bulk (as_floats),
            # without a Python object per level
            in_bulk = self.numeric and isinstance(
                given, (range, np.ndarray, pd.Index, pd.Series)
            )
            levels = given if in_bulk else list(given)
            if self.numeric:
                floats = as_floats(levels)
                if floats is None:
                    levels = sorted(float(v) for v in levels)
                elif bool((floats[1:] >= floats[:-1]).all()):
                    numbers = floats  # in order already (range(m))
                    order = np.arange(len(floats))
                else:
                    order = np.argsort(floats, kind="stable")
                    numbers = floats[order]
                if numbers is None:
                    levels = list(levels)  # a range of huge ints
                else:
                    # the floats stay one array: no Python float per
                    # level unless one is asked for (0.04 s at 10**6)
                    numbers.flags.writeable = False
                    levels = FloatSequence(numbers)
            object.__setattr__(self, "declared", levels)
        object.__setattr__(self, "numbers", numbers)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "public", self.declared is not None)

    @property
    def size(self) -> int:
        if self.declared is None:
            raise PlotninePrivateError(
                "the levels are observed: their number is the data's"
            )
        return len(self.declared)

    def values(self, column: Any) -> pd.Series:
        """The column as the levels compare it."""
        if self.numeric:
            if isinstance(column, pd.Series):
                return pd.Series(column.to_numpy(dtype=float))
            return pd.Series(np.asarray(column, dtype=float))
        if isinstance(column, pd.Series):
            return column
        return pd.Series(column)

    def dimension(self, column: Any, name: str | None = None) -> Dimension:
        """The levels and each value's code."""
        return categorical_dimension(
            name or self.axis,
            self.values(column),
            self.declared,
            numbers=self.numbers,
        )

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        # in the smallest integer type: a 10**7-row column of 10 levels
        # keeps 10 MB of codes, not 80 MB
        return self.dimension(columns[self.axis]).codes

    def stages(self, columns: Mapping[str, Any]) -> Stages:
        x = columns[self.axis]
        return [{CELL: _float(x) if self.numeric else x}]

    def decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.dimension(grouped[CELL]).codes.astype(np.int64)


@dataclass(frozen=True, eq=False)
class Observed(Family):
    """Positions seen (sum without a grid): not public. The cells are the
    distinct (x, y) pairs, sorted; in an engine the stat builds them
    from the grouped values."""

    aes: tuple[str, ...] = ("x", "y")
    public = False
    numeric = True

    def positions(
        self, columns: Mapping[str, np.ndarray]
    ) -> tuple[pd.MultiIndex, np.ndarray]:
        """The distinct positions (sorted) and each record's code."""
        pos = pd.MultiIndex.from_arrays(
            [np.asarray(columns[a], dtype=float) for a in self.aes]
        )
        uniq = pos.unique().sort_values()
        return uniq, uniq.get_indexer(pos).astype(np.int64)

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.positions(columns)[1]


def count_levels(
    levels: list | None,
    declared: list | None,
    scale_limits: list | None,
    discrete: bool,
    axis: str = "x",
) -> tuple[Levels, str]:
    """count's family of x and where its domain comes from, in order of
    precedence: ``levels=``; the declared levels of a discrete x (a
    Categorical or Enum column); user limits of a discrete scale; else
    the values seen. A continuous x is matched as numbers. The plots and
    ``dp_table``/``ckm_table`` share it, so a table and a bar chart of
    the same data have one domain."""
    if not discrete:
        family = Levels(levels, numeric=True, axis=axis)
        return family, "public: levels" if family.public else "observed"
    for given, source in (
        (levels, "public: levels"),
        (declared, "public: declared levels"),
        (scale_limits, "public: scale limits"),
    ):
        if given is not None:
            return Levels(given, axis=axis), source
    return Levels(None, axis=axis), "observed"
