"""The records a family and the base of the private stats pass around.

:class:`FamilyCells` is what a family says about its layer's domain;
:class:`CellFrame` holds the released cells as rows, shaped by the family.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..cells import Dimension, small_codes
from ..families import Levels


@dataclass
class FamilyCells:
    """What a family says about its layer's domain.

    Attributes
    ----------
    frame
        One row per cell of the family's domain: output columns (x,
        xmin, ...) of the cell.
    content
        Columns (one value per cell) that name a cell in the noise words
        (labels, bin edges); aligned with ``frame``.
    code
        For each record, the row of ``frame`` it falls in (-1: outside the
        domain, not counted); None for a domain declared without records
        (:meth:`coded` adds them).
    public
        Whether ``frame`` was fixed without looking at the data.
    source
        Words for the report: where the domain came from.
    describe
        Public description of the domain for the release's identity (the
        declared levels or edges; ``"observed"`` when not public).
    family
        The stateless :mod:`~plotnine_private.families` object that gave
        ``code`` (and gives the same codes as engine expressions).
    """

    frame: pd.DataFrame
    content: list
    code: np.ndarray | None
    public: bool
    source: str
    describe: Any = None
    family: Any = None

    def coded(self, data: pd.DataFrame) -> FamilyCells:
        """This domain with the cell of each record of ``data``, from the
        family object (the same codes its engine expressions give)."""
        family = self.family
        # categories compare as values; every other family takes numbers
        numeric = not isinstance(family, Levels)
        columns = {
            a: data[a].to_numpy(dtype=float) if numeric else data[a]
            for a in family.aes
        }
        return replace(self, code=family.codes(columns))

    def dimension(self) -> Dimension:
        """The family's cells as the last dimension of the domain (codes
        in the smallest integer type)."""
        if self.code is None:
            raise ValueError("a declared domain has no records' codes")
        return Dimension(
            "cell",
            small_codes(self.code, len(self.frame)),
            self.content,
            self.frame.index,
            self.public,
        )


@dataclass
class CellFrame:
    """Cells of a layer as the family shapes them: one row a cell, with
    the family's columns, group columns, ``PANEL`` and ``group``."""

    frame: pd.DataFrame
    public: bool
