"""The contract every family answers, and helpers of the stages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CELL", "Family", "Stages", "merge_stages"]

CELL = "_cell"

Stages = list[dict[str, Any]]


class Family:
    """What every family answers (see the module docstring)."""

    #: whether the domain was fixed without the data
    public: bool = True
    #: the aesthetics a family reads, in order
    aes: tuple[str, ...] = ()

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

    def inner_stages(self, columns: Mapping[str, Any]) -> Stages:
        """Stages for the records that pass :meth:`domain_filter`."""
        return self.stages(columns)

    def inner_decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        """:meth:`decode` for :meth:`inner_stages`."""
        return self.decode(grouped)


def _int_keys(values: Any) -> np.ndarray:
    """Grouped integer keys as int64 (a missing key is outside)."""
    v = pd.Series(values).to_numpy(dtype=float, na_value=np.nan)
    return np.where(np.isnan(v), -1, v).astype(np.int64)


def _float(expr):
    import narwhals as nw

    return expr.cast(nw.Float64)


def _divide(num, c: float):
    """``num / c`` rounded as numpy rounds it. Polars turns a division by
    a literal into a multiplication by its reciprocal, which rounds some
    quotients differently (a hexagon tie, a half-way grid point); a
    divisor that is a column (``num * 0 + c``, equal to ``c`` for every
    finite ``num``) keeps the true division."""
    return num / (num * 0.0 + c)


def merge_stages(*lists: Stages) -> Stages:
    """Stage lists run side by side (stage i of each in projection i)."""
    depth = max(len(s) for s in lists)
    return [
        {k: v for s in lists if i < len(s) for k, v in s[i].items()}
        for i in range(depth)
    ]
