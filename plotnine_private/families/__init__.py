"""One stateless contract per family of cells, for records in memory and
in an engine.

A family object is built from public parameters only (bin edges, a
hexagon lattice, a grid of points, declared levels) and holds no state of
a build. It states its domain (``size``, the edges or levels) and gives
the cell of each record twice, side by side:

- ``codes(columns)``: numpy arrays in, int64 cell codes out (-1: outside
  the domain, not counted);
- ``stages(columns)``: narwhals expressions in, a list of projections
  out, applied one after another with ``with_columns``; the last one
  holds the grouping keys. Each stage computes a quantity once (the raw
  bin index, then the edge correction on that projected column), so an
  engine does not evaluate a repeated subexpression a dozen times.
  ``decode(grouped)`` turns the grouped keys (one row per group, as
  numpy arrays) into the same cell codes.

A stat's ``domain`` builds its family from public parameters and scales.
The plot door (``family_cells`` adds the records' codes), the engine
push-down (:mod:`~plotnine_private.engines.push`, from
``declare_domain``, without reading a record) and :func:`~plotnine_private.
tables.dp_table` / ``ckm_table`` (:func:`count_levels`) all go through
these objects, so a cell
is computed by one definition whatever holds the rows; tests check numpy
codes == engine codes on random data, edges and their float neighbours
included.

The expressions repeat numpy's arithmetic operation by operation, so
IEEE doubles round the same way in both.
"""

from .base import (
    CELL,
    Family,
    Stages,
    integer_keys,
    merge_stages,
    outside_as_nan,
    represented,
)
from .bins import Bins, Grid, bin_index
from .lattices import Hexes, PointAxis, Points, rint_stages
from .levels import Levels, Observed, count_levels

__all__ = [
    "CELL",
    "Bins",
    "Family",
    "Grid",
    "Hexes",
    "Levels",
    "Observed",
    "PointAxis",
    "Points",
    "Stages",
    "bin_index",
    "count_levels",
    "integer_keys",
    "merge_stages",
    "outside_as_nan",
    "represented",
    "rint_stages",
]
