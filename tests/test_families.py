"""The family contract: numpy codes == engine codes (DuckDB, Polars) for
every family, on random data with values on the edges, their float
neighbours, out-of-range, infinite, NaN and missing values."""

from __future__ import annotations

import duckdb
import narwhals as nw
import numpy as np
import polars as pl
import pytest

from plotnine_private.engines.push import grouped
from plotnine_private.families import (
    Bins,
    Grid,
    Hexes,
    Levels,
    PointAxis,
    Points,
    integer_keys,
    outside_as_nan,
    represented,
)
from plotnine_private.mechanisms.domains.hexbin import SQRT3, hex_lattice
from plotnine_private.stats.domains import _bin2d_edges

SEEDS = [0, 1, 2]

# numpy warns of NaN and infinite inputs, which are part of the test
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _axis_values(rng, edges: np.ndarray, n: int = 3000) -> np.ndarray:
    """Uniform values around ``edges``, the edges, their neighbours one
    float away, far values, infinities and NaN."""
    lo, hi = float(edges[0]), float(edges[-1])
    span = hi - lo
    vals = np.r_[
        rng.uniform(lo - span / 4, hi + span / 4, n),
        edges,
        np.nextafter(edges, np.inf),
        np.nextafter(edges, -np.inf),
        [lo - 10 * span, hi + 10 * span, np.inf, -np.inf, np.nan],
    ]
    return rng.permutation(vals)


def _with_missing(rng, values: np.ndarray) -> list:
    """Values as a list with about 1% missing (None)."""
    out: list = values.tolist()
    for i in rng.choice(len(out), size=max(len(out) // 100, 1), replace=0):
        out[i] = None
    return out


def _engine_codes(
    family,
    columns: dict[str, list],
    native: str,
    inner: bool = False,
    whole: bool = False,
    marked: bool = False,
    form: str = "",
    reps: bool = False,
):
    """Each record's code through the family's projections, in the
    engine, decoded as the engine path decodes grouped keys. ``inner``:
    the short path (records outside the domain filtered out first; they
    get -1 here); ``whole``: its keys cast to int64 (:func:`integer_keys`,
    as Spark asks for them); ``marked``: the short path without the
    filter, the keys of records outside NaN (:func:`outside_as_nan`, as
    Polars asks for them), which are dropped before decoding; ``form``:
    the engine whose form of the inner stages to take (the forms of
    DuckDB and Polars each in its engine, Polars' and Spark's in both:
    all give numpy's codes); ``reps``: each record's representative
    (:func:`represented`, as Polars groups bins), then the exact stages
    on it (per record here, per group in the engine)."""
    table = pl.DataFrame(
        {k: pl.Series(k, v, strict=False) for k, v in columns.items()}
    )
    frame = table.lazy()
    if native == "duckdb":
        frame = duckdb.from_arrow(table.to_arrow())
    lf = nw.from_native(frame)
    exprs = {a: nw.col(a) for a in family.aes}
    if reps:
        stages, regroup = represented(family, exprs)
        for stage in stages:
            lf = lf.with_columns(**stage)
        values = lf.select(*family.aes, *stages[-1]).collect().to_pandas()
        own = values[list(family.aes)].to_numpy(dtype=float)
        rep = values[list(stages[-1])].to_numpy(dtype=float)
        # a value just below the next edge for most records, their own
        # value near the edges
        assert (rep != own).any() and (rep == own).any()
        stages = [*stages, *regroup]
    elif inner:
        inside = family.domain_filter(exprs)
        stages = family.inner_stages(exprs, engine=form)
        if marked:
            stages = outside_as_nan(stages, inside)
        else:
            lf = lf.filter(inside)
        if whole:
            stages = integer_keys(stages)
    else:
        stages = family.stages(exprs)
    for stage in stages:
        lf = lf.with_columns(**stage)
    keys = list(stages[-1])
    got = lf.select("_row", *keys).collect().to_pandas()
    if marked:
        # the records outside (NaN keys, or missing for a missing value)
        out = got[keys].isna().any(axis=1)
        assert out.sum() > 0
        got = got[~out]
    if whole:
        assert all(np.issubdtype(got[k].dtype, np.integer) for k in keys)
    rows = {k: got[k].to_numpy() for k in keys}
    codes = family.inner_decode(rows) if inner else family.decode(rows)
    out = np.full(len(columns["_row"]), -1, dtype=np.int64)
    out[got["_row"].to_numpy()] = codes
    return out


def _numpy_codes(family, columns: dict[str, list]) -> np.ndarray:
    if not getattr(family, "numeric", True):
        arrays = {a: np.array(columns[a], dtype=object) for a in family.aes}
        return np.asarray(family.codes(arrays), dtype=np.int64)
    arrays = {
        a: np.array(
            [np.nan if v is None else v for v in columns[a]], dtype=float
        )
        for a in family.aes
    }
    return np.asarray(family.codes(arrays), dtype=np.int64)


def _check(family, columns: dict[str, list]) -> np.ndarray:
    n = len(next(iter(columns.values())))
    columns = {**columns, "_row": list(range(n))}
    ref = _numpy_codes(family, columns)
    assert (ref >= 0).any() and (ref == -1).any()
    exprs = {a: nw.col(a) for a in family.aes}
    short = family.domain_filter(exprs)
    for native in ("duckdb", "polars"):
        # (inner, whole, marked, form, reps): as each engine asks for them
        paths = [(False, False, False, "", False)]
        if short is not None:
            paths.append((True, False, False, native, False))
            if family.whole_inner_keys:
                paths += [
                    (True, True, False, "pyspark", False),
                    (True, False, True, "polars", False),
                ]
        if represented(family, exprs) is not None:
            paths.append((False, False, False, "", True))
        for path in paths:
            got = _engine_codes(family, columns, native, *path)
            bad = np.flatnonzero(got != ref)
            assert not len(bad), (native, path, bad[:5])
    return ref


BREAKS = [
    np.linspace(-5, 5, 31),
    np.linspace(0.1, 0.7, 8),
    np.linspace(1999, 2008, 10),
    np.array([0, 1, 2.5, 4, 10.0]),
    np.array([0.1, 0.2, 0.30000000000000004, 0.4]),
    # plotnine's bin_2d grids: each edge moved out by one epsilon, which
    # the engine computes as the form gives it (no lookup)
    _bin2d_edges((-5, 5), 30, None),
    _bin2d_edges((-9, 11), 30, None),
    _bin2d_edges((0.1, 7.3), 13, None),
    _bin2d_edges((-2, 3), None, 0.25),
    # far from zero against the width: one edge compared, then both
    np.linspace(3e6, 3e6 + 30, 31),
    np.linspace(1e9, 1e9 + 12, 13),
    # plotnine grids whose edges are all positive, all negative: each
    # moved by one product (EdgeForm.edge_expr)
    _bin2d_edges((3.1, 9.7), 11, None),
    _bin2d_edges((-9.7, -3.1), 11, None),
    # the farthest from zero that still reads one edge: the raw index's
    # product and folded constant round most here (EdgeForm.one_sided)
    np.linspace(5e7, 5e7 + 7, 8),
]
FUZZY = [5, 6, 7, 8, 11, 12]


def test_far_edges_compare_both_sides():
    """The raw index is read a little low (one edge to compare) only
    where rounding cannot move it by a whole bin; the codes test checks
    both paths at the edges and their float neighbours."""
    sided = {}
    for i, breaks in enumerate(BREAKS):
        form = Bins(breaks).form
        if form is not None:
            sided[i] = form.one_sided(breaks[0], breaks[-1], len(breaks) - 1)
    assert sided[0] and sided[5] and sided[9] and sided[13]
    assert sided[10] is False
    # 5e7 is within a factor of two of the limit of one edge
    assert not Bins(np.linspace(1e8, 1e8 + 7, 8)).form.one_sided(
        1e8, 1e8 + 7, 7
    )


@pytest.mark.parametrize("i", FUZZY)
def test_bin2d_edges_have_an_exact_form(i):
    """The fast path is taken for plotnine's grids (the codes test above
    then checks it at the edges and their float neighbours), and a form
    is only used when it gives every inner edge to the last bit."""
    breaks = BREAKS[i]
    form = Bins(breaks).form
    assert form is not None and form.fuzz
    k = np.arange(1, len(breaks) - 1, dtype=float)
    assert np.array_equal(form.edges(k), breaks[1:-1])
    moved = breaks.copy()
    moved[len(breaks) // 2] = np.nextafter(moved[len(breaks) // 2], np.inf)
    other = Bins(moved).form
    assert other is None or np.array_equal(other.edges(k), moved[1:-1])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("clamp", [False, True])
@pytest.mark.parametrize("closed", ["right", "left"])
@pytest.mark.parametrize("breaks", BREAKS, ids=range(len(BREAKS)))
def test_bins(breaks, closed, clamp, seed):
    rng = np.random.default_rng(seed)
    x = _with_missing(rng, _axis_values(rng, breaks))
    ref = _check(Bins(breaks, closed, clamp), {"x": x})
    if clamp:
        # every present, non-NaN value has a bin
        nan = np.array([v is None or np.isnan(v) for v in x])
        assert np.array_equal(ref == -1, nan)


@pytest.mark.parametrize("seed", SEEDS)
def test_fine_histogram_on_y(seed):
    # density / ECDF / boxplot: many fine bins along y, clamped
    rng = np.random.default_rng(seed)
    edges = np.linspace(-3, 3, 513)
    y = _with_missing(rng, _axis_values(rng, edges))
    _check(Bins(edges, "right", True, axis="y"), {"y": y})
    _check(Bins(edges, "right", False, axis="y"), {"y": y})


@pytest.mark.parametrize("seed", SEEDS)
def test_bin2d_grid(seed):
    rng = np.random.default_rng(seed)
    bx, by = np.linspace(-5, 5, 31), np.array([-9, -1, 0, 2.5, 11.0])
    x = _axis_values(rng, bx)
    y = rng.permutation(np.resize(_axis_values(rng, by), len(x)))
    family = Grid(Bins(bx), Bins(by, "left", axis="y"))
    _check(family, {"x": _with_missing(rng, x), "y": _with_missing(rng, y)})


@pytest.mark.parametrize("seed", SEEDS)
def test_bin2d_grid_of_even_bins(seed):
    # plotnine's grid on both axes: Polars groups by representatives
    rng = np.random.default_rng(seed)
    bx, by = BREAKS[5], BREAKS[6]
    x = _axis_values(rng, bx)
    y = rng.permutation(np.resize(_axis_values(rng, by), len(x)))
    family = Grid(Bins(bx), Bins(by, "left", axis="y"))
    assert represented(family, {"x": nw.col("x"), "y": nw.col("y")})
    _check(family, {"x": _with_missing(rng, x), "y": _with_missing(rng, y)})


def test_bins_have_representatives_where_the_bound_holds():
    """A bin's representative (a value a shift below its right edge, or
    the record's own near that edge) is taken only for equal widths
    read on one side (the bound of :meth:`EdgeForm.one_sided`), without
    clamping, and with the counted range on the outer edges (scale
    limits that cut a bin: none)."""
    x = {"x": nw.col("x")}
    for breaks in BREAKS:
        form = Bins(breaks).form
        sided = form is not None and form.one_sided(
            breaks[0], breaks[-1], len(breaks) - 1
        )
        assert (represented(Bins(breaks), x) is not None) == sided
        assert represented(Bins(breaks, clamp=True), x) is None
    edges = np.linspace(0, 10, 11)
    assert represented(Bins(edges, within=(0.0, 10.0)), x) is not None
    assert represented(Bins(edges, within=(-1.0, 11.0)), x) is not None
    for cut in ((0.5, 10.0), (0.0, 9.99), (1e-6, 10.0)):
        assert represented(Bins(edges, within=cut), x) is None
    # limits a float inside the edges: a value that far from an edge is
    # kept, so the codes are still numpy's
    rng = np.random.default_rng(4)
    v = _with_missing(rng, _axis_values(rng, edges))
    for cut in ((np.nextafter(0, 1), 10.0), (0.0, np.nextafter(10, 0))):
        family = Bins(edges, within=cut)
        assert represented(family, x) is not None
        _check(family, {"x": v})


def _threshold_values(breaks: np.ndarray) -> np.ndarray:
    """Values where a representative changes kind: each ``c = k * step
    + (origin - shift * step)`` (below it a record takes ``c``, from it
    its own value), the engine's way, a shift above each edge (where the
    raw index, read a shift low, moves up) and at a few fractions of
    the shift around both, each with its float neighbours, from two
    bins below the edges to two above."""
    form = Bins(breaks).form
    assert form is not None
    step, shift = form.step, 2.0**-20
    k = np.arange(-2.0, len(breaks) + 2)
    c = k * step + (form.origin - shift * step)
    edge = k * step + form.origin
    parts = [c, edge + shift * step]
    for f in (-1.5, -0.75, -0.25, 0.25, 0.75, 1.5):
        parts += [c + f * shift * step, edge + f * shift * step]
    v = np.concatenate(parts)
    return np.r_[v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf)]


@pytest.mark.parametrize("i", [0, 1, 2, 4, 5, 6, 7, 8, 9, 11, 12, 13])
def test_representatives_at_their_thresholds(i):
    """Around the value where a representative switches from ``c`` to
    the record's own value, and where the raw index moves up, the cells
    are numpy's (both closures, one axis and a grid)."""
    breaks = BREAKS[i]
    x = {"x": nw.col("x")}
    assert represented(Bins(breaks), x) is not None
    rng = np.random.default_rng(i)
    v = rng.permutation(
        np.r_[_threshold_values(breaks), _axis_values(rng, breaks, 300)]
    )
    for closed in ("right", "left"):
        _check(Bins(breaks, closed), {"x": _with_missing(rng, v)})
    other = BREAKS[6]
    w = rng.permutation(
        np.resize(
            np.r_[_threshold_values(other), _axis_values(rng, other, 300)],
            len(v),
        )
    )
    grid = Grid(Bins(breaks), Bins(other, "left", axis="y"))
    _check(grid, {"x": _with_missing(rng, v), "y": _with_missing(rng, w)})


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("clamp", [False, True])
def test_hexagons(seed, clamp):
    rng = np.random.default_rng(seed)
    xlim, ylim = (-5.0, 5.0), (-9.0, 11.0)
    binwidth = (10 / 30, 20 / 17)
    row, col = hex_lattice(xlim, ylim, (xlim[0], ylim[0]), binwidth)
    family = Hexes(xlim, ylim, (xlim[0], ylim[0]), binwidth, row, col, clamp)
    # centres, and points on hexagon sides (ties between candidates)
    x = _axis_values(rng, np.linspace(*xlim, 61))
    y = rng.permutation(
        np.resize(_axis_values(rng, np.linspace(*ylim, 35)), len(x))
    )
    x = np.r_[x, xlim[0] + binwidth[0] * np.arange(-2, 33) / 2]
    y = np.r_[y, ylim[0] + binwidth[1] * np.sqrt(3) * np.arange(35) / 4]
    _check(family, {"x": _with_missing(rng, x), "y": _with_missing(rng, y)})


def test_hexagon_ties_in_engines():
    """Points exactly as far from both candidate centres (hexbin gives
    them to lattice a): the engines' forms choose as numpy does. With
    binwidth (1, 2/sqrt(3)) the scaled coordinates are exact, and a
    point a quarter from a square's sides in both is a tie."""
    bw = (1.0, 2.0 / 3**0.5)
    assert bw[1] * SQRT3 == 2.0
    lim = (0.0, 8.0)
    row, col = hex_lattice(lim, lim, (0.0, 0.0), bw)
    family = Hexes(lim, lim, (0.0, 0.0), bw, row, col)
    q = np.r_[0.25, 0.75]
    sx = (np.arange(8.0)[:, None] + q).ravel()
    sy = (np.arange(4.0)[:, None] + q).ravel()
    gx, gy = (a.ravel() for a in np.meshgrid(sx, sy))
    # a tie under hex_assign's own arithmetic
    ja, ia = np.floor(gx + 0.5), np.floor(gy + 0.5)
    da = (gx - ja) ** 2 + 3.0 * (gy - ia) ** 2
    db = (gx - np.floor(gx) - 0.5) ** 2 + 3.0 * (gy - np.floor(gy) - 0.5) ** 2
    assert np.array_equal(da, db)
    rng = np.random.default_rng(3)
    x = np.r_[gx, rng.uniform(-1, 9, 500)]
    y = np.r_[2.0 * gy, rng.uniform(-1, 9, 500)]
    _check(family, {"x": x.tolist(), "y": y.tolist()})


def test_hexagons_group_by_one_key_while_it_is_exact():
    """The short path groups hexagons by one key, ``row * wide + col``,
    where every key a record in the box can reach is a whole number
    below 2**52; beyond (a box far wider than its hexagons, or far from
    the origin) it groups by (row, col), and both give numpy's codes."""
    xlim, ylim, bw = (-5.0, 5.0), (-9.0, 11.0), (10 / 30, 20 / 17)
    row, col = hex_lattice(xlim, ylim, (xlim[0], ylim[0]), bw)
    near = Hexes(xlim, ylim, (xlim[0], ylim[0]), bw, row, col)
    first, wide = near._key_span()
    assert first == 0 and wide == 32
    xy = {"x": nw.col("x"), "y": nw.col("y")}
    assert list(near.inner_stages(xy)[-1]) == ["_cell"]
    # 2**27 hexagons across and 2**26 rows: keys up to about 2**54
    far = (-(2.0**27) * bw[0], 5.0), (-(2.0**26) * bw[1] * 3**0.5, 11.0)
    for box in (far, ((-5.0, 5.0), (-9.0, 2.0**41 * bw[1] * 3**0.5))):
        wide_box = Hexes(*box, (xlim[0], ylim[0]), bw, row, col)
        assert wide_box._key_span() is None
        assert list(wide_box.inner_stages(xy)[-1]) == ["_hr", "_hc"]
    rng = np.random.default_rng(5)
    x = np.r_[rng.uniform(-6, 6, 2000), rng.uniform(far[0][0], 0, 50)]
    y = np.r_[rng.uniform(-10, 12, 2000), rng.uniform(far[1][0], 0, 50)]
    for family in (near, Hexes(*far, (xlim[0], ylim[0]), bw, row, col)):
        _check(family, {"x": x.tolist(), "y": y.tolist()})


@pytest.mark.parametrize("seed", SEEDS)
def test_sum_points(seed):
    rng = np.random.default_rng(seed)
    px = 0.5 + np.arange(21) * 0.25
    py = -2.0 + np.arange(9) * 0.5
    family = Points(PointAxis(px, 0.5, 0.25), PointAxis(py, -2.0, 0.5))
    # midpoints between grid points: round half to even
    mx = np.r_[px, px + 0.125, px - 0.125]
    x = _axis_values(rng, mx)
    y = rng.permutation(
        np.resize(_axis_values(rng, np.r_[py, py + 0.25]), len(x))
    )
    _check(family, {"x": _with_missing(rng, x), "y": _with_missing(rng, y)})


def test_sum_calendar_points_are_refused_in_an_engine():
    pa = PointAxis(np.arange(3.0), 0.0, "1 month", np.arange(-1, 4.0), 1)
    with pytest.raises(Exception, match="calendar step"):
        Points(pa, pa).stages({"x": nw.col("x"), "y": nw.col("y")})


@pytest.mark.parametrize("seed", SEEDS)
def test_count_levels(seed):
    rng = np.random.default_rng(seed)
    words = rng.choice(["a", "b", "c", "zz"], 2000).tolist()
    words[3] = None
    _check(Levels(["c", "a", "b"]), {"x": words})
    nums = rng.choice([1.0, 2.0, 2.5, 7.0], 2000)
    _check(Levels([7, 1, 2], numeric=True), {"x": _with_missing(rng, nums)})


def test_grouped_rows_decode_to_the_numpy_counts():
    """Through the engine path itself (``grouped``): per-cell counts
    equal numpy's bincount of the codes."""
    rng = np.random.default_rng(7)
    breaks = np.linspace(-5, 5, 31)
    x = _axis_values(rng, breaks, 20000)
    family = Bins(breaks)
    ref = np.asarray(family.codes({"x": x}), dtype=np.int64)
    for frame in (
        pl.DataFrame({"x": x}).lazy(),
        duckdb.from_arrow(pl.DataFrame({"x": x}).to_arrow()),
    ):
        g = grouped(
            nw.from_native(frame),
            {},
            stages=family.stages({"x": nw.col("x")}),
        )
        code = family.decode({k: g[k].to_numpy() for k in g.columns})
        n = g["_n"].to_numpy()
        got = np.bincount(code[code >= 0], n[code >= 0], minlength=30)
        want = np.bincount(ref[ref >= 0], minlength=30)
        assert np.array_equal(got, want)
        assert int(n[code < 0].sum()) == int((ref < 0).sum())


class _PT:
    """The two facts of a p-table the key integers read."""

    def __init__(self, kind: str, modulus: int | None = None):
        self.key_kind, self.key_modulus = kind, modulus


@pytest.mark.parametrize(
    "kind, modulus", [("uniform", None), ("integer", 4096), ("integer", None)]
)
def test_record_key_integers_in_engines(kind, modulus):
    """Each record's key integer (high and low halves) and its validity,
    in DuckDB and Polars, equal numpy's (mechanisms.ckm)."""
    from plotnine_private.engines.push import key_integers
    from plotnine_private.mechanisms.ptable.ckm import record_key_integers

    rng = np.random.default_rng(11)
    if kind == "uniform":
        good = np.r_[
            np.round(rng.uniform(0, 1, 3000), 8),
            rng.uniform(0, 1, 3000),  # more decimals: rounded
            [0.0, 0.999999995, 0.999999999, 0.5, 1e-9, 5e-9, 1.5e-8],
            # keys * 10**8 exactly half-way: ties go to the even integer
            [2.5e-08, 4.5e-08, 5.5e-08, 7.5e-08, 0.009999975],
        ]
        bad = [-0.1, 1.0, 2.0, np.inf, np.nan]
    else:
        top = 2**40 if modulus is None else modulus
        good = np.r_[rng.integers(0, top, 3000).astype(float), 0.0]
        bad = [-1.0, 0.5, np.inf, np.nan, *([4096.0] if modulus else [])]
    keys = rng.permutation(np.r_[good, bad]).tolist()
    keys[7] = None
    # one set for all lookups (a set per key made this test O(n^2))
    good_set = set(good)
    valid = np.array([v is not None and v in good_set for v in keys])
    ref = record_key_integers(
        np.array([v for v, ok in zip(keys, valid) if ok]),
        kind=kind,
        modulus=modulus,
    )
    stages = key_integers(nw.col("k"), _PT(kind, modulus))
    table = pl.DataFrame({"k": pl.Series(keys, dtype=pl.Float64)})
    for native in (table.lazy(), duckdb.from_arrow(table.to_arrow())):
        lf = nw.from_native(native)
        for stage in stages:
            lf = lf.with_columns(**stage)
        got = lf.select("_khi", "_klo", "_kbad").collect().to_pandas()
        assert np.array_equal(got["_kbad"].to_numpy() == 1, ~valid)
        ints = got["_khi"].to_numpy() * 2**24 + got["_klo"].to_numpy()
        assert np.array_equal(ints[valid], ref)


@pytest.mark.parametrize(
    "kind, modulus", [("uniform", None), ("integer", 4096), ("integer", None)]
)
def test_key_sums_whole_or_in_halves(kind, modulus, monkeypatch):
    """Grouped key sums are exact whether the key integers are summed
    whole (one int64 sum) or in 24-bit halves, and the halves are taken
    when so many records could overflow the whole sum."""
    from plotnine_private.engines import push
    from plotnine_private.mechanisms.ptable.ckm import record_key_integers

    rng = np.random.default_rng(5)
    n = 5000
    if kind == "uniform":
        keys = rng.uniform(0, 1, n)
    else:
        top = 2**50 if modulus is None else modulus
        keys = rng.integers(0, top, n).astype(float)
    g = rng.integers(0, 7, n)
    ints = record_key_integers(keys, kind=kind, modulus=modulus)
    expected = np.array([int(ints[g == i].sum()) for i in range(7)])
    table = pl.DataFrame({"g": g, "k": keys})
    rkey = push.RecordKeys(nw.col("k"), _PT(kind, modulus))
    whole = rkey.bound <= push._WHOLE_KEYS
    assert whole == (modulus is not None or kind == "uniform")
    for limit in (2**63 - 1, n * 100):
        monkeypatch.setattr(push, "_INT64", limit)
        runs: list = []
        original = push._grouped

        def spy(*args, _original=original, _runs=runs):
            _runs.append("_ksum" in args[-1][-1])
            return _original(*args)

        monkeypatch.setattr(push, "_grouped", spy)
        for native in (table.lazy(), duckdb.from_arrow(table.to_arrow())):
            runs.clear()
            out = push.grouped(
                nw.from_native(native), {"_g": nw.col("g")}, rkey=rkey
            )
            out = out.sort_values("_g")
            assert np.array_equal(push.key_sums(out), expected)
            # whole first when the keys allow; halves when n * bound
            # could pass the limit
            over = whole and n > limit // rkey.bound
            assert runs == ([True, False] if over else [whole])
        monkeypatch.setattr(push, "_grouped", original)
