"""Bins of one axis (histograms, fine histograms) and rectangles of two
(2-D histograms)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..cells import chunked_codes, grid_codes
from .base import CELL, Family, Stages, _float, _int_keys, merge_stages

__all__ = ["Bins", "Grid", "bin_index"]


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
    # a value far outside (1e308) overflows to inf: nan_to_num below
    with np.errstate(invalid="ignore", over="ignore"):
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


_EPS = float(np.finfo(float).eps)
#: how far below a value's position its raw bin index is read (one edge
#: to compare then, :meth:`EdgeForm.one_sided`); a power of two, exact
_SHIFT = 2.0**-20


@dataclass(frozen=True)
class EdgeForm:
    """Inner edges that arithmetic gives to the last bit: edge ``k`` is
    ``k * step + origin`` (as ``numpy.linspace`` and ``numpy.arange``
    compute them), or, with ``fuzz``, that value moved out by one
    relative epsilon, as plotnine's ``stat_bin_2d`` grid has them
    (:func:`_edge_form` checks every inner edge), so an engine computes
    the two edges around a record without a lookup. The outer edges need
    no form: a record outside them is left out (or clamped) first, and
    the index of one inside is clipped to the bins."""

    origin: float
    step: float
    fuzz: bool = False

    def edges(self, k: np.ndarray) -> np.ndarray:
        g = k * self.step + self.origin
        if not self.fuzz:
            return g
        return np.where(
            g > 0, g * (1 + _EPS), np.where(g < 0, g * (1 - _EPS), _EPS)
        )

    def one_sided(self, lo: float, hi: float, nb: int) -> bool:
        """Whether the raw index of a value in ``[lo, hi]`` may be taken
        :data:`_SHIFT` of a bin low, which leaves one edge to compare.

        Let ``t`` be the value's bin by the edges as computed. In units
        of ``step`` from ``origin``, every edge (its arithmetic and the
        one-epsilon fuzz) and the computed position lie within ``c * eps
        * M`` of their exact places (``M`` bounds the positions, ``c`` is
        a small constant, under 8). The position plus one less the shift
        is read as ``x * (1 / step) + (1 - origin / step - shift)``
        (:meth:`lead`): the reciprocal, the product, the constant (two
        roundings, in Python) and the sum each round once, by at most
        ``eps`` times a quantity below ``M + 2``. With
        ``64 * eps * M < _SHIFT`` the position less the shift is above
        ``t - 1`` and below ``t + 1``, so its floor is ``t - 1`` or ``t``
        and the comparison with the right edge of that floor decides.
        Beyond (edges far from zero against their width) both edges are
        compared (:meth:`Bins.index_stages`)."""
        reach = max(abs(lo), abs(hi), abs(self.origin)) / self.step + nb
        return bool(64 * _EPS * (reach + 2) < _SHIFT)

    def edge_expr(self, g, ks: np.ndarray | None):
        """The edge whose unmoved value is the expression ``g`` (a column
        of ``k * step + origin`` for whole numbers ``k`` among ``ks``).
        ``g * (1 + eps)`` and ``g * (1 - eps)`` round the exact ``g + |g|
        eps`` once, as this sum does (``|g| eps`` is exact), so one
        branchless formula serves both signs; 0 becomes eps. Where every
        unmoved edge of ``ks`` (computed as the engine computes them) has
        one sign, that sign's product alone; where none is 0, no term
        for 0 (each is four operations on every record less). ``ks``
        None: any ``k``."""
        import narwhals as nw

        if not self.fuzz:
            return g
        if ks is None:
            return g + g.abs() * _EPS + (g == 0).cast(nw.Float64) * _EPS
        unmoved = np.asarray(ks, dtype=float) * self.step + self.origin
        if (unmoved > 0).all():
            return g * (1 + _EPS)
        if (unmoved < 0).all():
            return g * (1 - _EPS)
        moved = g + g.abs() * _EPS
        if (unmoved == 0).any():
            moved = moved + (g == 0).cast(nw.Float64) * _EPS
        return moved

    def lead(self) -> float:
        """The constant of the one-sided raw index plus one, ``floor(x *
        (1 / step) + lead)`` (:meth:`one_sided`)."""
        return 1.0 - self.origin / self.step - _SHIFT

    def reach(self, lo: float, hi: float, shift: float) -> np.ndarray | None:
        """Every ``k`` whose edge a value in ``[lo, hi]`` may be compared
        with: the raw index ``floor((x - origin) / step - shift)`` of
        such a value (or, one-sided, ``floor(x * (1 / step) + lead) -
        1``, taken too) lies between those of ``lo`` and ``hi`` (each
        operation rounds monotonically), its edges one above; one more
        each side for safety. None if they are too many to list."""
        with np.errstate(all="ignore"):
            v = np.array([lo, hi])
            ends = (v - self.origin) / self.step - shift
            if shift:
                # the one-sided index as the engine reads it, too
                ends = np.r_[ends, v * (1.0 / self.step) + self.lead() - 1]
        first, last = np.floor(ends.min()), np.floor(ends.max())
        if not np.isfinite([first, last]).all() or last - first > 2**24:
            return None
        return np.arange(first - 1, last + 3)


def _edge_form(breaks: np.ndarray) -> EdgeForm | None:
    """An :class:`EdgeForm` that gives every inner edge of ``breaks``
    exactly, else None (the edges are then compared one by one). The
    candidates are few and each is checked edge by edge, so a wrong
    guess costs only the slower path."""
    nb = len(breaks) - 1
    lo, hi = float(breaks[0]), float(breaks[-1])
    if nb < 2 or not hi > lo:
        return None
    k = np.arange(1, nb, dtype=float)
    inner = breaks[1:-1]
    linear = EdgeForm(lo, (hi - lo) / nb)
    if np.array_equal(linear.edges(k), inner):
        return linear
    # plotnine's bin_2d grid: an arange from a multiple of the width (the
    # first edge moved by one epsilon), each edge moved out by one
    # (a grid from 0 has its first edge at -eps)
    for first in (lo, lo / (1 - _EPS), lo / (1 + _EPS), 0.0):
        for off in range(-2, 3):
            start = first + off * float(np.spacing(first))
            for width in ((hi - lo) / nb, float(breaks[2] - breaks[1])):
                for dw in range(-2, 3):
                    w = width + dw * float(np.spacing(width))
                    form = EdgeForm(start, (start + w) - start, fuzz=True)
                    if np.array_equal(form.edges(k), inner):
                        return form
    return None


@dataclass(frozen=True, eq=False)
class Bins(Family):
    """Bins of one axis between public edges.

    ``closed`` as in :func:`bin_index`; ``clamp``: records beyond the
    edges go to the edge bins (a private range, or a fine histogram's
    ``outside="clamp"``) instead of being left out. ``within``: the
    user's scale limits, outside which records are left out even where
    a bin reaches past them (plotnine censors them before any stat).
    """

    breaks: np.ndarray
    closed: str = "right"
    clamp: bool = False
    axis: str = "x"
    within: tuple[float, float] | None = None
    form: EdgeForm | None = field(init=False, repr=False)
    whole_inner_keys = True

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "breaks", np.asarray(self.breaks, dtype=float)
        )
        object.__setattr__(self, "aes", (self.axis,))
        object.__setattr__(self, "form", _edge_form(self.breaks))

    @property
    def size(self) -> int:
        return len(self.breaks) - 1

    def codes(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        values = columns[self.axis]
        idx = bin_index(values, self.breaks, self.closed, self.clamp)
        if self.within is not None:
            v = np.asarray(values, dtype=float)
            lo, hi = self.within
            idx[(v < lo) | (v > hi)] = -1
        return idx

    def stages(self, columns: Mapping[str, Any], out: str = CELL) -> Stages:
        return self.index_stages(_float(columns[self.axis]), out)

    def counted_range(self) -> tuple[float, float]:
        """The values counted (without ``clamp``): the edges' span, cut
        to ``within``."""
        lo, hi = float(self.breaks[0]), float(self.breaks[-1])
        if self.within is not None:
            lo, hi = max(lo, self.within[0]), min(hi, self.within[1])
        return lo, hi

    def domain_filter(self, columns: Mapping[str, Any]) -> Any:
        if self.clamp or self.form is None:
            return None
        x = _float(columns[self.axis])
        lo, hi = self.counted_range()
        return (x >= lo) & (x <= hi)

    def inner_stages(
        self, columns: Mapping[str, Any], out: str = CELL, *, engine: str = ""
    ) -> Stages:
        return self.index_stages(_float(columns[self.axis]), out, True)

    def inner_decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        return self.clip_index(_int_keys(grouped[CELL]) - 1)

    def representatives(
        self, columns: Mapping[str, Any], out: str = ""
    ) -> Stages | None:
        """Each record's value where it lies near the edge above its
        raw bin, else a value just below that edge (column ``out``, by
        default ``_rep_`` and the axis): ``max(x, c)`` with ``c =
        floor(q) * step + (origin - shift * step)``, where ``q``, the
        position plus one read :data:`_SHIFT` of a bin low (as
        :meth:`index_stages` reads it), is within a quarter of the shift
        of the truth (:meth:`EdgeForm.one_sided`). ``c`` (within a
        32nd of the shift of its place, and growing with ``floor(q)``)
        lies a shift below edge ``floor(q)``, inside bin ``floor(q) -
        1``; a value below it, with that ``floor(q)``, lies in the same
        bin, and both lie at least three quarters of the shift from its
        edges (as computed, moved or not: within an eighth); a value at
        or above ``c`` is kept. Below the bins (``floor(q) <= 0``) every
        ``c`` is below the first edge, past them (``floor(q) > nb``)
        above the last, where the value is too (the reading only grows),
        both checked as the engine computes them; the outer edges lie
        where the form's edge 0 or ``nb`` is, to an eighth of the shift
        (else None: scale limits that cut a bin, uneven edges, edges far
        from zero against their width, or clamping). NaN, infinite and
        missing values give NaN, infinite or missing representatives:
        outside, as :meth:`stages` finds them. Per record: one maximum
        where a test of the fractional part and a choice took three
        operations (``c`` costs what a bin's middle cost)."""
        import narwhals as nw

        form = self.form
        if self.clamp or form is None:
            return None
        lo, hi = self.counted_range()
        nb = self.size
        if not form.one_sided(lo, hi, nb):
            return None
        tol = _SHIFT / 8 * form.step
        last = nb * form.step + form.origin
        if abs(lo - form.origin) > tol or abs(hi - last) > tol:
            return None
        below = form.origin - _SHIFT * form.step
        # c of floor(q) = 0 and nb + 1, as the engine computes them
        if not (below < lo and (nb + 1) * form.step + below > hi):
            return None
        out = out or f"_rep_{self.axis}"
        x = _float(columns[self.axis])
        low = (x * (1.0 / form.step) + form.lead()).floor()
        return [{out: nw.max_horizontal(x, low * form.step + below)}]

    def clip_index(self, values: Any) -> np.ndarray:
        """Corrected raw indices of values in range, clipped to the bins
        (a value on the first or last edge), on the grouped rows."""
        return np.clip(_int_keys(values), 0, self.size - 1)

    def index_stages(self, x, out: str, inner: bool = False) -> Stages:
        """The bin index of expression ``x`` as column ``out`` (-1
        outside). Edges of an :class:`EdgeForm` (equal widths): the raw
        index plus one, ``floor(x * (1 / step) + lead)`` (the position
        less ``shift``, plus one: :meth:`EdgeForm.one_sided`), is
        projected once,
        then corrected by one comparison with its right edge, computed as
        the form gives it (:meth:`EdgeForm.one_sided`; edges far from
        zero against their width: no shift, and one comparison with each
        edge around the raw index, as the division may round a value on
        an edge into the next bin), then clipped to the bins; ``x`` is in
        range, so the raw index is within one bin of the truth. Other
        edges: the
        number of edges below ``x``, projected once."""
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
            counted = self.counted_range()
            inside = (x >= counted[0]) & (x <= counted[1])
        form = self.form
        if form is None:
            return [*stages, *self._compare_stages(x, inside, out)]
        # the raw index plus one (the right edge's k, and the grouping
        # key of the short path) is projected: one addition, not two
        r1, c = nw.col(f"{out}_r"), nw.col(f"{out}_c")
        gl, gr = nw.col(f"{out}_gl"), nw.col(f"{out}_gr")
        right_edge = {f"{out}_gr": r1 * form.step + form.origin}
        sided = form.one_sided(lo, hi, nb)
        ks = form.reach(lo, hi, _SHIFT if sided else 0.0)
        right = form.edge_expr(gr, ks)
        up = x > right if self.closed == "right" else x >= right
        if sided:
            # the raw index is the bin or the one below: one comparison
            # with its right edge decides (half the work of two). It
            # plus one is read as one product and one sum, the constant
            # folded: a division, two sums and a subtraction less on
            # every record (a 10**8-row bin2d in DuckDB: 2.9 -> 2.6 s
            # CPU); its few more roundings are within the bound of
            # :meth:`EdgeForm.one_sided`
            r1_expr = (x * (1.0 / form.step) + form.lead()).floor()
            edges = right_edge
            corrected = r1 + up.cast(nw.Float64)
        else:
            # the two edges around the raw index, each projected once
            r1_expr = ((x - form.origin) / form.step).floor() + 1.0
            edges = {
                f"{out}_gl": (r1 - 1.0) * form.step + form.origin,
                **right_edge,
            }
            left = form.edge_expr(gl, ks)
            down = x <= left if self.closed == "right" else x < left
            corrected = r1 - down.cast(nw.Float64) + up.cast(nw.Float64)
        # ``corrected`` is the bin index plus one. A raw index of nb (x
        # on the last edge) or a correction to -1 (x on the first) is put
        # back in range by the clip (in Python on the grouped rows when
        # only records in range are seen)
        if inner:
            return [{f"{out}_r": r1_expr}, edges, {out: corrected}]
        return [
            *stages,
            {f"{out}_r": r1_expr},
            edges,
            {f"{out}_c": corrected},
            {
                out: nw.when(inside)
                .then(c.clip(1.0, float(nb)) - 1.0)
                .otherwise(-1.0)
            },
        ]

    def _compare_stages(self, x, inside, out: str) -> Stages:
        """Uneven edges: the number of edges below ``x``, projected once
        before the range tests read it."""
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
        i = nw.col(f"{out}_k")
        ok = nw.col(f"{out}_ok") & (i >= 0) & (i < nb)
        return [
            {f"{out}_k": idx, f"{out}_ok": inside},
            {out: nw.when(ok).then(i).otherwise(-1)},
        ]


@dataclass(frozen=True, eq=False)
class Grid(Family):
    """Rectangles of two axes of bins (bin2d): cell ``iy * nx + ix``."""

    x: Bins
    y: Bins
    whole_inner_keys = True

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

    def inner_stages(
        self, columns: Mapping[str, Any], *, engine: str = ""
    ) -> Stages:
        import narwhals as nw

        # one grouping key (cheaper to group by than two): the inner
        # stages give each index plus one, in [0, n + 1] for records in
        # range, so (iy + 1) * (nx + 2) + ix + 1 is exact and decodes to
        # both
        ix1, iy1 = nw.col("_cx"), nw.col("_cy")
        wide = float(self.x.size + 2)
        return [
            *merge_stages(
                self.x.inner_stages({self.x.axis: columns["x"]}, "_cx"),
                self.y.inner_stages({self.y.axis: columns["y"]}, "_cy"),
            ),
            {CELL: iy1 * wide + ix1},
        ]

    def representatives(self, columns: Mapping[str, Any]) -> Stages | None:
        rx = self.x.representatives({self.x.axis: columns["x"]}, "_rep_x")
        ry = self.y.representatives({self.y.axis: columns["y"]}, "_rep_y")
        return None if rx is None or ry is None else merge_stages(rx, ry)

    def inner_decode(self, grouped: Mapping[str, np.ndarray]) -> np.ndarray:
        key = _int_keys(grouped[CELL])
        wide = self.x.size + 2
        ix = self.x.clip_index(key % wide - 1)
        iy = self.y.clip_index(key // wide - 1)
        return iy * self.x.size + ix
