"""Hexagons of a lattice (binhex) and a grid of points (sum)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cells import chunked_codes, grid_codes
from ..exceptions import PlotninePrivateError
from ..mechanisms.domains.hexbin import SQRT3, hex_assign
from .base import (
    CELL,
    Family,
    Stages,
    _divide,
    _float,
    _int_keys,
    merge_stages,
)

__all__ = ["Hexes", "PointAxis", "Points", "rint_stages"]


# --------------------------------------------------------------------------
# hexagons
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Hexes(Family):
    """The hexagons of a lattice over a box (binhex): a record in the box
    goes to its hexagon (:func:`~plotnine_private.mechanisms.domains.hexbin.
    hex_assign`), numbered by its place in ``(row, col)``."""

    xlim: tuple[float, float]
    ylim: tuple[float, float]
    origin: tuple[float, float]
    binwidth: tuple[float, float]
    row: np.ndarray
    col: np.ndarray
    clamp: bool = False
    _table: np.ndarray = field(init=False, repr=False)
    whole_inner_keys = True

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

    def inner_stages(
        self, columns: Mapping[str, Any], *, engine: str = ""
    ) -> Stages:
        span = self._key_span()
        if span is None:
            return self._stages(columns, inner=True)
        return self._stages(columns, inner=True, wide=span[1], pick=engine)

    def inner_decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        span = self._key_span()
        if span is None:
            return self.decode(grouped)
        first, wide = span
        key = _int_keys(grouped[CELL])
        col = (key - first) % wide + first
        row = (key - col) // wide
        return self._lookup(row, col, np.ones(len(key), dtype=bool))

    def _key_span(self) -> tuple[int, int] | None:
        """``(first, wide)`` of the combined key ``row * wide + col`` of
        the records in the box, or None when that key could pass
        ``2**52`` (the two keys are grouped then): ``first`` is the
        lowest column a record in the box can reach, ``wide`` the number
        of columns it can reach. The scaled coordinates of the box's
        corners bound every record's (division and subtraction by
        constants round monotonically); each floor adds at most one
        column or row on top."""
        (x0, x1), (y0, y1) = self.xlim, self.ylim
        (ox, oy), (bwx, bwy) = self.origin, self.binwidth
        with np.errstate(all="ignore"):
            sx = np.array([x0 - ox, x1 - ox]) / bwx
            sy = np.array([y0 - oy, y1 - oy]) / (bwy * SQRT3)
        if not (np.isfinite(sx).all() and np.isfinite(sy).all()):
            return None
        if max(np.abs(sx).max(), np.abs(sy).max()) >= 2.0**40:
            return None
        first = int(np.floor(sx[0]))
        wide = int(np.floor(sx[1])) + 2 - first
        rows = 2 * int(np.abs(np.floor(sy)).max()) + 4
        reach = (rows + 1) * wide + abs(first) + wide
        if reach >= 2**52:
            return None
        return first, wide

    def _stages(
        self,
        columns: Mapping[str, Any],
        inner: bool,
        wide: int | None = None,
        pick: str = "",
    ) -> Stages:
        """The stages of the hexagon codes; ``wide`` (the combined key's
        columns, :meth:`_key_span`) asks for one key ``row * wide + col``
        of the records in the box; ``pick``: the engine whose fastest
        form to use."""
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
        first = {
            "_hx": _divide(x - ox, bwx, pick),
            "_hy": _divide(y - oy, bwy * SQRT3, pick),
        }
        floors = {
            "_ja": (sx + 0.5).floor(),
            "_ia": (sy + 0.5).floor(),
            "_jb": sx.floor(),
            "_ib": sy.floor(),
        }
        use_a = (da <= db).cast(nw.Float64)
        if wide is not None:
            # one key, row * wide + col, of whole numbers below 2**52
            # (exact): one column to group by instead of two. Polars
            # computes both keys of a when/then anyway and chooses in
            # one pass (a 10**8-row hexbin: 3.4 s CPU against 4.2 s by
            # arithmetic); DuckDB's CASE costs more than the arithmetic
            # (3.4 s against 3.1 s)
            ka = ia * float(2 * wide) + ja
            kb = ib * float(2 * wide) + (jb + float(wide))
            if pick == "polars":
                key = nw.when(da <= db).then(ka).otherwise(kb)
            else:
                key = kb + use_a * (ka - kb)
            return [first, floors, {CELL: key}]
        a = nw.col("_ha")
        # lattice a (a = 1) or b (a = 0) by arithmetic on whole numbers,
        # exact and cheaper in an engine than a CASE per column
        row = 2.0 * ib + 1.0 + a * (2.0 * (ia - ib) - 1.0)
        col = jb + a * (ja - jb)
        if not inner:
            first["_hin"] = inside
            # outside the box: a row below the lattice (decoded outside)
            off = float(self.row.min() - 1)
            row = nw.when(~nw.col("_hin")).then(off).otherwise(row)
        return [first, floors, {"_ha": use_a}, {"_hr": row, "_hc": col}]

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
