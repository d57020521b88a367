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

The plot door (the stats' ``family_cells``), the engine push-down
(:mod:`~plotnine_private.engines.push`) and :func:`~plotnine_private.
tables.dp_table` / ``ckm_table`` all go through these objects, so a cell
is computed by one definition whatever holds the rows; tests check numpy
codes == engine codes on random data, edges and their float neighbours
included.

The expressions repeat numpy's arithmetic operation by operation, so
IEEE doubles round the same way in both.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .cells import (
    Dimension,
    categorical_dimension,
    chunked_codes,
    grid_codes,
)
from .exceptions import PlotninePrivateError
from .mechanisms.hexbin import SQRT3, hex_assign

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
    "bin_index",
    "merge_stages",
    "rint_stages",
]

#: name of the last stage's cell column (a single grouping key)
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


# --------------------------------------------------------------------------
# bins of one axis (bin, bin2d's axes, fine histograms)
# --------------------------------------------------------------------------
def bin_index(
    values: np.ndarray, breaks: np.ndarray, closed: str, clamp: bool
) -> np.ndarray:
    """Bin of each value; -1 outside the breaks unless ``clamp``.

    ``closed="right"``: bins (a, b], the first one [a, b]; ``"left"``:
    [a, b), the last one [a, b]. NaN is outside. The codes come in the
    smallest integer type that holds them, computed a chunk of records at
    a time (:func:`~plotnine_private.cells.chunked_codes`), so memory
    stays near one byte per record for up to 126 bins.

    >>> bin_index(np.array([0., 1., 1.5, 3.]), np.array([0., 1., 2.]),
    ...           "right", False).tolist()
    [0, 0, 1, -1]
    """
    breaks = np.asarray(breaks, dtype=float)
    values = np.asarray(values, dtype=float)
    nb = len(breaks) - 1
    width = np.diff(breaks)
    even = nb > 0 and np.allclose(width, width[0], rtol=1e-9, atol=0)

    def code_of(part: slice) -> np.ndarray:
        v = values[part]
        if even:
            idx = _even_index(v, breaks, closed)
        elif closed == "right":
            idx = np.searchsorted(breaks, v, side="left") - 1
        else:
            idx = np.searchsorted(breaks, v, side="right") - 1
        if closed == "right":
            idx[v == breaks[0]] = 0
        else:
            idx[v == breaks[-1]] = nb - 1
        if clamp:
            idx[np.isnan(v)] = -1
            low = ~np.isnan(v) & (idx < 0)
            idx[low] = 0
            idx[idx >= nb] = nb - 1
        else:
            idx[(idx < 0) | (idx >= nb)] = -1
        return idx

    return chunked_codes(len(values), nb, code_of)


def _even_index(v: np.ndarray, breaks: np.ndarray, closed: str):
    """``searchsorted``'s answer for equal-width breaks, by arithmetic: a
    guess from the bin width, then one step of correction against the
    breaks themselves, so a value on an edge lands where ``searchsorted``
    would put it (rounding in the division can be off by one)."""
    nb = len(breaks) - 1
    step = (breaks[-1] - breaks[0]) / nb
    with np.errstate(invalid="ignore"):
        guess = np.floor((v - breaks[0]) / step)
    guess = np.nan_to_num(guess, nan=-2.0, posinf=nb + 1, neginf=-2.0)
    idx = np.clip(guess, -1, nb).astype(np.int64)
    inner = np.clip(idx, 0, nb - 1)
    lo, hi = breaks[inner], breaks[inner + 1]
    if closed == "right":
        # bins (a, b]: the bin with a < v <= b
        down = (idx >= 0) & (idx < nb) & (v <= lo)
        up = (idx >= 0) & (idx < nb) & (v > hi)
        below = (idx < 0) & (v > breaks[0])
        above = (idx >= nb) & (v <= breaks[-1])
    else:
        # bins [a, b): the bin with a <= v < b
        down = (idx >= 0) & (idx < nb) & (v < lo)
        up = (idx >= 0) & (idx < nb) & (v >= hi)
        below = (idx < 0) & (v >= breaks[0])
        above = (idx >= nb) & (v < breaks[-1])
    idx = idx - down + up + below - above
    idx[np.isnan(v)] = -1
    return idx


def _linspace_step(breaks: np.ndarray) -> float | None:
    """The step if ``breaks`` are exactly ``k * step + lo`` (and the last
    one ``hi``), as ``numpy.linspace`` makes them; else None."""
    nb = len(breaks) - 1
    lo, hi = float(breaks[0]), float(breaks[-1])
    if nb < 2 or not hi > lo:
        return None
    step = (hi - lo) / nb
    edges = np.arange(nb, dtype=float) * step + lo
    if np.array_equal(edges, breaks[:-1]) and edges[-1] < hi:
        return step
    return None


@dataclass(frozen=True, eq=False)
class Bins(Family):
    """Bins of one axis between public edges.

    ``closed`` as in :func:`bin_index`; ``clamp``: records beyond the
    edges go to the edge bins (a private range, or a fine histogram's
    ``outside="clamp"``) instead of being left out.
    """

    breaks: np.ndarray
    closed: str = "right"
    clamp: bool = False
    axis: str = "x"

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "breaks", np.asarray(self.breaks, dtype=float)
        )
        object.__setattr__(self, "aes", (self.axis,))

    @property
    def size(self) -> int:
        return len(self.breaks) - 1

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        return bin_index(
            columns[self.axis], self.breaks, self.closed, self.clamp
        )

    def stages(self, columns: Mapping[str, Any], out: str = CELL) -> Stages:
        return self.index_stages(_float(columns[self.axis]), out)

    def domain_filter(self, columns: Mapping[str, Any]) -> Any:
        if self.clamp or _linspace_step(self.breaks) is None:
            return None
        x = _float(columns[self.axis])
        return (x >= float(self.breaks[0])) & (x <= float(self.breaks[-1]))

    def inner_stages(
        self, columns: Mapping[str, Any], out: str = CELL
    ) -> Stages:
        return self.index_stages(_float(columns[self.axis]), out, True)

    def inner_decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.clip_index(grouped[CELL])

    def clip_index(self, values: Any) -> np.ndarray:
        """Corrected raw indices of values in range, clipped to the bins
        (a value on the first or last edge), on the grouped rows."""
        return np.clip(_int_keys(values), 0, self.size - 1)

    def index_stages(self, x, out: str, inner: bool = False) -> Stages:
        """The bin index of expression ``x`` as column ``out`` (-1
        outside). Equal widths: the raw index ``floor((x - lo) / w)`` is
        projected once, then corrected by one comparison with each edge
        around it (as ``numpy.linspace`` computes them; the division may
        round a value on an edge into the next bin), then clipped to the
        bins; ``x`` is in range, so the raw index is within one bin of
        the truth."""
        import narwhals as nw

        lo, hi = float(self.breaks[0]), float(self.breaks[-1])
        nb = self.size
        stages: Stages = []
        if self.clamp:
            # NaN is outside (an engine's clip may put it on an edge);
            # anything else is pulled onto the edges
            stages.append(
                {f"{out}_v": x.clip(lo, hi), f"{out}_in": ~x.is_nan()}
            )
            x, inside = nw.col(f"{out}_v"), nw.col(f"{out}_in")
        else:
            inside = (x >= lo) & (x <= hi)
        step = _linspace_step(self.breaks)
        if step is None:
            return [*stages, {out: self._compare_index(x, inside)}]
        r, c = nw.col(f"{out}_r"), nw.col(f"{out}_c")
        left = r * step + lo
        right = (r + 1.0) * step + lo
        if self.closed == "right":
            down, up = x <= left, x > right
        else:
            down, up = x < left, x >= right
        # a raw index of nb (x on the last edge) or a correction to -1
        # (x on the first) is put back in range by the clip (in Python
        # on the grouped rows when only records in range are seen)
        corrected = r - down.cast(nw.Float64) + up.cast(nw.Float64)
        if inner:
            return [{f"{out}_r": ((x - lo) / step).floor()}, {out: corrected}]
        return [
            *stages,
            {f"{out}_r": ((x - lo) / step).floor()},
            {f"{out}_c": corrected},
            {
                out: nw.when(inside)
                .then(c.clip(0.0, float(nb - 1)))
                .otherwise(-1.0)
            },
        ]

    def _compare_index(self, x, inside):
        """Uneven edges: the number of edges below ``x``."""
        import narwhals as nw

        nb = self.size
        edges = [float(b) for b in self.breaks]
        if self.closed == "right":
            below = [(x > b).cast(nw.Int64) for b in edges]
            idx = functools.reduce(operator.add, below) - 1
            idx = nw.when(x == edges[0]).then(0).otherwise(idx)
        else:
            below = [(x >= b).cast(nw.Int64) for b in edges]
            idx = functools.reduce(operator.add, below) - 1
            idx = nw.when(x == edges[-1]).then(nb - 1).otherwise(idx)
        ok = inside & (idx >= 0) & (idx < nb)
        return nw.when(ok).then(idx).otherwise(-1)


def merge_stages(*lists: Stages) -> Stages:
    """Stage lists run side by side (stage i of each in projection i)."""
    depth = max(len(s) for s in lists)
    return [
        {k: v for s in lists if i < len(s) for k, v in s[i].items()}
        for i in range(depth)
    ]


@dataclass(frozen=True, eq=False)
class Grid(Family):
    """Rectangles of two axes of bins (bin2d): cell ``iy * nx + ix``."""

    x: Bins
    y: Bins

    def __post_init__(self) -> None:
        object.__setattr__(self, "aes", ("x", "y"))

    @property
    def size(self) -> int:
        return self.x.size * self.y.size

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        ix = self.x.codes({self.x.axis: columns["x"]})
        iy = self.y.codes({self.y.axis: columns["y"]})
        return grid_codes(ix, iy, self.x.size, self.y.size)

    def stages(self, columns: Mapping[str, Any]) -> Stages:
        import narwhals as nw

        sx = self.x.index_stages(_float(columns["x"]), "_cx")
        sy = self.y.index_stages(_float(columns["y"]), "_cy")
        ix, iy = nw.col("_cx"), nw.col("_cy")
        cell = (
            nw.when((ix >= 0) & (iy >= 0))
            .then(iy * float(self.x.size) + ix)
            .otherwise(-1.0)
        )
        return [*merge_stages(sx, sy), {CELL: cell}]

    def domain_filter(self, columns: Mapping[str, Any]) -> Any:
        fx = self.x.domain_filter({self.x.axis: columns["x"]})
        fy = self.y.domain_filter({self.y.axis: columns["y"]})
        return None if fx is None or fy is None else fx & fy

    def inner_stages(self, columns: Mapping[str, Any]) -> Stages:
        return merge_stages(
            self.x.inner_stages({self.x.axis: columns["x"]}, "_cx"),
            self.y.inner_stages({self.y.axis: columns["y"]}, "_cy"),
        )

    def inner_decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        ix = self.x.clip_index(grouped["_cx"])
        iy = self.y.clip_index(grouped["_cy"])
        return iy * self.x.size + ix


# --------------------------------------------------------------------------
# hexagons
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Hexes(Family):
    """The hexagons of a lattice over a box (binhex): a record in the box
    goes to its hexagon (:func:`~plotnine_private.mechanisms.hexbin.
    hex_assign`), numbered by its place in ``(row, col)``."""

    xlim: tuple[float, float]
    ylim: tuple[float, float]
    origin: tuple[float, float]
    binwidth: tuple[float, float]
    row: np.ndarray
    col: np.ndarray
    clamp: bool = False
    _table: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "aes", ("x", "y"))
        row = np.asarray(self.row, dtype=np.int64)
        col = np.asarray(self.col, dtype=np.int64)
        # dense lookup (row, col) -> position in the lattice
        rmin, cmin = row.min(), col.min()
        nc = col.max() - cmin + 1
        table = np.full((row.max() - rmin + 1) * nc, -1, dtype=np.int64)
        table[(row - rmin) * nc + (col - cmin)] = np.arange(len(row))
        object.__setattr__(self, "_table", table)

    @property
    def size(self) -> int:
        return len(self.row)

    def _lookup(self, r: np.ndarray, c: np.ndarray, inside) -> np.ndarray:
        rmin, cmin = int(self.row.min()), int(self.col.min())
        nc = int(self.col.max()) - cmin + 1
        nr = len(self._table) // nc
        ri, ci = r - rmin, c - cmin
        ok = inside & (ri >= 0) & (ri < nr) & (ci >= 0) & (ci < nc)
        code = np.full(len(r), -1, dtype=np.int64)
        code[ok] = self._table[ri[ok] * nc + ci[ok]]
        return code

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        (x0, x1), (y0, y1) = self.xlim, self.ylim
        xs = np.asarray(columns["x"], dtype=float)
        ys = np.asarray(columns["y"], dtype=float)

        def code_of(part: slice) -> np.ndarray:
            x, y = xs[part], ys[part]
            if self.clamp:
                # private range: records outside go to the edge hexagons
                x, y = np.clip(x, x0, x1), np.clip(y, y0, y1)
            inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
            r, c = hex_assign(x, y, self.origin, self.binwidth)
            return self._lookup(r, c, inside)

        return chunked_codes(len(xs), self.size, code_of)

    def stages(self, columns: Mapping[str, Any]) -> Stages:
        return self._stages(columns, inner=False)

    def domain_filter(self, columns: Mapping[str, Any]) -> Any:
        if self.clamp:
            return None
        (x0, x1), (y0, y1) = self.xlim, self.ylim
        x, y = _float(columns["x"]), _float(columns["y"])
        return (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)

    def inner_stages(self, columns: Mapping[str, Any]) -> Stages:
        return self._stages(columns, inner=True)

    def _stages(self, columns: Mapping[str, Any], inner: bool) -> Stages:
        import narwhals as nw

        (x0, x1), (y0, y1) = self.xlim, self.ylim
        ox, oy = self.origin
        bwx, bwy = self.binwidth
        x, y = _float(columns["x"]), _float(columns["y"])
        if self.clamp:
            # NaN is outside (an engine's clip may put it on an edge)
            inside = ~x.is_nan() & ~y.is_nan()
            x, y = x.clip(x0, x1), y.clip(y0, y1)
        else:
            inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
        sx, sy = nw.col("_hx"), nw.col("_hy")
        ja, ia = nw.col("_ja"), nw.col("_ia")
        jb, ib = nw.col("_jb"), nw.col("_ib")
        # hex_assign's block, one projected column per quantity
        da = (sx - ja) * (sx - ja) + 3.0 * ((sy - ia) * (sy - ia))
        eb, fb = sx - jb - 0.5, sy - ib - 0.5
        db = eb * eb + 3.0 * (fb * fb)
        use_a = nw.col("_ha")
        first = {
            "_hx": _divide(x - ox, bwx),
            "_hy": _divide(y - oy, bwy * SQRT3),
        }
        row = nw.when(use_a).then(2.0 * ia).otherwise(2.0 * ib + 1.0)
        if not inner:
            first["_hin"] = inside
            # outside the box: a row below the lattice (decoded outside)
            off = float(self.row.min() - 1)
            row = nw.when(~nw.col("_hin")).then(off).otherwise(row)
        return [
            first,
            {
                "_ja": (sx + 0.5).floor(),
                "_ia": (sy + 0.5).floor(),
                "_jb": sx.floor(),
                "_ib": sy.floor(),
            },
            {"_ha": da <= db},
            {"_hr": row, "_hc": nw.when(use_a).then(ja).otherwise(jb)},
        ]

    def decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        r = _int_keys(grouped["_hr"])
        c = _int_keys(grouped["_hc"])
        return self._lookup(r, c, np.ones(len(r), dtype=bool))


# --------------------------------------------------------------------------
# a grid of points (sum): the nearest point of each axis
# --------------------------------------------------------------------------
def rint_stages(src: str, out: str) -> Stages:
    """``numpy.rint`` (round half to even) of column ``src`` as column
    ``out``: the floor projected once, then the rounding up."""
    import narwhals as nw

    v, f = nw.col(src), nw.col(f"{out}_f")
    d = v - f
    odd = (f / 2).floor() * 2 != f
    up = (d > 0.5) | ((d == 0.5) & odd)
    return [{f"{out}_f": v.floor()}, {out: f + up.cast(nw.Float64)}]


@dataclass(frozen=True, eq=False)
class PointAxis:
    """Public points of one axis: evenly spaced from ``lo`` by ``step``,
    or calendar points (``step`` the calendar step's text; ``full`` has
    one more point beyond each end, ``first`` the index of the first
    point of ``points`` in it)."""

    points: np.ndarray
    lo: float
    step: float | str
    full: np.ndarray | None = None
    first: int = 0

    def index(self, v: np.ndarray) -> np.ndarray:
        """Nearest point of each value (-1 beyond the ends)."""
        with np.errstate(invalid="ignore"):
            if isinstance(self.step, float):
                f = np.rint((v - self.lo) / self.step)
            else:
                # the nearest calendar point (np.interp clamps records
                # beyond the extra point at each end)
                full = np.asarray(self.full)
                f = (
                    np.rint(np.interp(v, full, np.arange(len(full))))
                    - self.first
                )
        ok = (f >= 0) & (f < len(self.points))
        return np.where(ok, f, -1).astype(np.int64)


@dataclass(frozen=True, eq=False)
class Points(Family):
    """A public grid of points (sum): cell ``iy * nx + ix``."""

    x: PointAxis
    y: PointAxis

    def __post_init__(self) -> None:
        object.__setattr__(self, "aes", ("x", "y"))

    @property
    def size(self) -> int:
        return len(self.x.points) * len(self.y.points)

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        xs = np.asarray(columns["x"], dtype=float)
        ys = np.asarray(columns["y"], dtype=float)
        nx, ny = len(self.x.points), len(self.y.points)
        ix = chunked_codes(len(xs), nx, lambda p: self.x.index(xs[p]))
        iy = chunked_codes(len(ys), ny, lambda p: self.y.index(ys[p]))
        return grid_codes(ix, iy, nx, ny)

    def stages(self, columns: Mapping[str, Any]) -> Stages:
        import narwhals as nw

        per_axis = []
        for ax, pa in (("x", self.x), ("y", self.y)):
            if not isinstance(pa.step, float):
                raise PlotninePrivateError(
                    f"sum: resolution ({ax})={pa.step!r} is a calendar "
                    "step, which a table in an engine cannot round to; "
                    "give a fixed resolution (a number of days or a "
                    "pd.Timedelta), or collect the rows into a DataFrame."
                )
            n = len(pa.points)
            per_axis.append(
                [
                    {f"_s{ax}": _divide(_float(columns[ax]) - pa.lo, pa.step)},
                    *rint_stages(f"_s{ax}", f"_r{ax}"),
                    # beyond the ends: one sentinel each side (decoded
                    # outside)
                    {f"_i{ax}": nw.col(f"_r{ax}").clip(-1.0, float(n))},
                ]
            )
        return merge_stages(*per_axis)

    def decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        ix, iy = _int_keys(grouped["_ix"]), _int_keys(grouped["_iy"])
        nx, ny = len(self.x.points), len(self.y.points)
        ix = np.where(ix < nx, ix, -1)
        iy = np.where(iy < ny, iy, -1)
        return grid_codes(ix, iy, nx, ny).astype(np.int64)


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "aes", (self.axis,))
        if self.declared is not None:
            levels = list(self.declared)
            if self.numeric:
                levels = sorted(float(v) for v in levels)
            object.__setattr__(self, "declared", levels)
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
            name or self.axis, self.values(column), self.declared
        )

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.dimension(columns[self.axis]).codes.astype(np.int64)

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
