"""Private layers and tables released from a table in an engine.

The seam is the cell table. In memory, a private layer maps each record to
a cell (integer codes per dimension) and :func:`~plotnine_private.cells.
assemble` counts records per cell. Here every dimension is an expression
the engine evaluates per record instead: a raw category (facet, group,
count's x), or an integer index computed from public breaks, limits and
lattices (bin, bin2d, hex, sum's grid). The engine groups by them and
returns one row per non-empty combination with its record count, weighted
count and exact record-key sums (split in 24-bit halves, summed as
integers). :func:`assemble_counts` turns those rows into the same
:class:`~plotnine_private.mechanisms.release.CellTable` that ``assemble``
makes from the records, and the same release engine perturbs it: equal
data, seed and key give equal numbers whatever held the rows.

A family that wants its layers pushed down registers a *plan*
(:func:`register_plan`): given its public domain (its ``family_cells`` on
no rows), the expressions of its dimensions and a function that turns the
grouped rows into :class:`~plotnine_private.stats.base.FamilyCells`.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..cells import (
    Dimension,
    categorical_dimension,
    cell_table,
    combined_codes,
    object_column,
)
from ..door import Door
from ..exceptions import PlotninePrivateError
from ..mechanisms.cellnames import value_bytes
from ..mechanisms.release import CellTable, LaplaceCounts
from ..validation import fail

__all__ = [
    "assemble_counts",
    "bin_index_expr",
    "grouped",
    "register_plan",
    "release_in_engine",
    "rint_expr",
]

_LO_BITS = 1 << 24
_PLANS: dict[str, Callable] = {}


def register_plan(family: str):
    """Register the engine plan of a stat family (decorator)."""

    def deco(fn):
        _PLANS[family] = fn
        return fn

    return deco


# --------------------------------------------------------------------------
# expressions (narwhals): the same arithmetic as numpy, operation by
# operation, so IEEE doubles round the same way
# --------------------------------------------------------------------------
def rint_expr(v):
    """``numpy.rint`` (round half to even) as an expression."""
    import narwhals as nw

    f = v.floor()
    d = v - f
    odd = (f / 2).floor() * 2 != f
    up = (d > 0.5) | ((d == 0.5) & odd)
    return (f + nw.when(up).then(1.0).otherwise(0.0)).cast(nw.Int64)


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


def _uniform_index(x, breaks: np.ndarray, closed: str, step: float):
    """Equal-width bins: an arithmetic guess within one bin of the truth,
    corrected by exact comparisons with the two edges around it (the
    edges computed in the engine as ``numpy.linspace`` computes them)."""
    import narwhals as nw

    nb = len(breaks) - 1
    lo, hi = float(breaks[0]), float(breaks[-1])
    guess = ((x - lo) / step).floor()
    k0 = (
        nw.when(guess < 0)
        .then(0)
        .otherwise(nw.when(guess > nb - 1).then(nb - 1).otherwise(guess))
        .cast(nw.Int64)
    )
    left = k0.cast(nw.Float64) * step + lo
    right = (
        nw.when(k0 + 1 == nb)
        .then(hi)
        .otherwise((k0 + 1).cast(nw.Float64) * step + lo)
    )
    if closed == "right":
        down, up = (x <= left) & (k0 > 0), (x > right) & (k0 < nb - 1)
    else:
        down, up = (x < left) & (k0 > 0), (x >= right) & (k0 < nb - 1)
    idx = k0 - down.cast(nw.Int64) + up.cast(nw.Int64)
    return nw.when((x >= lo) & (x <= hi)).then(idx).otherwise(-1)


def bin_index_expr(x, breaks: np.ndarray, closed: str):
    """:func:`~plotnine_private.stats.domains.bin_index` (no clamp) as an
    expression: exact comparisons with the public edges (around an
    arithmetic guess for equal widths, else with every edge)."""
    import narwhals as nw

    breaks = np.asarray(breaks, dtype=float)
    step = _linspace_step(breaks)
    if step is not None:
        return _uniform_index(x, breaks, closed, step)
    nb = len(breaks) - 1
    edges = [float(b) for b in breaks]
    if closed == "right":
        below = [(x > b).cast(nw.Int64) for b in edges]
        idx = functools.reduce(operator.add, below) - 1
        idx = nw.when(x == edges[0]).then(0).otherwise(idx)
    else:
        below = [(x >= b).cast(nw.Int64) for b in edges]
        idx = functools.reduce(operator.add, below) - 1
        idx = nw.when(x == edges[-1]).then(nb - 1).otherwise(idx)
    return nw.when((idx >= 0) & (idx < nb)).then(idx).otherwise(-1)


def _float(col: str):
    import narwhals as nw

    return nw.col(col).cast(nw.Float64)


# --------------------------------------------------------------------------
# cells from grouped rows
# --------------------------------------------------------------------------
def assemble_counts(
    dims: Sequence[Dimension],
    n: np.ndarray,
    *,
    weighted: np.ndarray | None = None,
    key_sum: np.ndarray | None = None,
    multiplicity: int = 1,
) -> tuple[CellTable, np.ndarray]:
    """:func:`~plotnine_private.cells.assemble` for grouped rows: each row
    (one per combination of dimension levels) brings its record count
    ``n``, weighted count and exact key sum; the cells, their order and
    their words are those ``assemble`` gives for the records.

    >>> a = categorical_dimension("g", pd.Series(["u", "v"]), ["u", "v"])
    >>> table, idx = assemble_counts([a], np.array([3, 2]))
    >>> table.n.tolist(), idx.tolist()
    ([3, 2], [[0], [1]])
    """
    sizes = [d.size for d in dims]
    public = all(d.public for d in dims)
    total = int(np.prod(sizes, dtype=object)) if dims else 1
    n = np.asarray(n, dtype=np.int64)
    code, bad = combined_codes(dims)
    if not dims:
        code = np.zeros(len(n), dtype=np.int64)
        bad = np.zeros(len(n), dtype=bool)
    ok = ~bad & (n > 0)
    code = code[ok]
    if public:
        cells = np.arange(total, dtype=np.int64)
        inv = code
    else:
        cells, inv = np.unique(code, return_inverse=True)
        inv = inv.ravel()
    size = len(cells)
    counts = np.zeros(size, dtype=np.int64)
    np.add.at(counts, inv, n[ok])
    wsum = None
    if weighted is not None:
        wsum = np.zeros(size)
        np.add.at(wsum, inv, np.asarray(weighted, dtype=float)[ok])
    ksum = None
    if key_sum is not None:
        ksum = np.zeros(size, dtype=np.int64)
        np.add.at(ksum, inv, np.asarray(key_sum, dtype=np.int64)[ok])
    return cell_table(dims, cells, counts, wsum, ksum, public, multiplicity)


def _plain(col: pd.Series) -> pd.Series:
    """Engine categories as plain values (their order is the engine's)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return pd.Series(col.astype(object).to_numpy(), index=col.index)
    return col


def grouped(
    frame: Any,
    keys: dict[str, Any],
    *,
    weight: Any = None,
    rkey: Any = None,
    where: Any = None,
) -> pd.DataFrame:
    """One row per combination of ``keys`` (name -> expression) with
    ``_n`` records; ``_w`` (sum of ``weight``), ``_wbad`` (invalid
    weights); ``_khi``, ``_klo`` (sums of the key integers' high and low
    24 bits) and ``_kbad`` (invalid keys) when asked. Collected to pandas:
    the only thing that leaves the engine."""
    import narwhals as nw

    if weight is not None:
        # records with an invalid weight are left out (as in memory)
        w = weight.cast(nw.Float64)
        valid = ~w.is_null() & w.fill_null(0.0).is_finite() & (w >= 0)
        valid = valid.fill_null(False)
        where = valid if where is None else where & valid
    lf = frame if where is None else frame.filter(where)
    cols = dict(keys)
    aggs = [nw.len().alias("_n")]
    if weight is not None:
        w = weight.cast(nw.Float64)
        cols["_w"] = w
        cols["_wbad"] = (
            (w.is_null() | ~w.fill_null(0.0).is_finite() | (w < 0))
            .fill_null(True)
            .cast(nw.Int64)
        )
        aggs += [nw.col("_w").sum(), nw.col("_wbad").sum()]
    if rkey is not None:
        ints, bad = rkey
        cols["_khi"] = ints // _LO_BITS
        cols["_klo"] = ints % _LO_BITS
        cols["_kbad"] = bad.fill_null(True).cast(nw.Int64)
        aggs += [
            nw.col("_khi").sum(),
            nw.col("_klo").sum(),
            nw.col("_kbad").sum(),
        ]
    lf = lf.with_columns(**cols)
    names = list(keys)
    out = lf.group_by(*names).agg(*aggs) if names else lf.select(*aggs)
    result = out.collect().to_pandas().reset_index(drop=True)
    if not names and len(result) and int(result["_n"].iloc[0]) == 0:
        result = result.iloc[0:0]
    return result


def key_integers(expr, ptable):
    """Expressions of the CKM key integers and of invalid keys (as
    :func:`~plotnine_private.mechanisms.ckm.record_key_integers` with its
    default 8 digits)."""
    import narwhals as nw

    k = expr.cast(nw.Float64)
    if ptable.key_kind == "uniform":
        scale = 10**8
        bad = k.is_null() | ~k.fill_null(0.0).is_finite() | (k < 0) | (k >= 1)
        safe = nw.when(bad).then(0.0).otherwise(k)
        return rint_expr(safe * float(scale)) % scale, bad
    bad = (
        k.is_null()
        | ~k.fill_null(0.0).is_finite()
        | (k < 0)
        | (k != k.floor())
    )
    if ptable.key_modulus is not None:
        bad = bad | (k >= ptable.key_modulus)
    safe = nw.when(bad).then(0.0).otherwise(k)
    return safe.cast(nw.Int64), bad


def key_sums(g: pd.DataFrame) -> np.ndarray:
    hi = g["_khi"].to_numpy(dtype=np.int64)
    lo = g["_klo"].to_numpy(dtype=np.int64)
    return hi * _LO_BITS + lo


def check_aggregates(name: str, g: pd.DataFrame) -> None:
    """The errors the in-memory path raises on invalid weights and keys."""
    if "_wbad" in g and int(g["_wbad"].sum()):
        raise fail(
            name,
            "the weight aesthetic must hold finite numbers >= 0 (survey or "
            "frequency weights); found negative or missing values. Clean "
            "or drop them before plotting.",
        )
    if "_kbad" in g and int(g["_kbad"].sum()):
        raise fail(
            name,
            "aesthetic rkey: the record keys must be stored, non-missing "
            "and in [0, 1) (uniform p-table) or whole numbers in the key "
            "range (ONS p-table); see add_record_keys(..., row_id=).",
        )


# --------------------------------------------------------------------------
# plans of the families
# --------------------------------------------------------------------------
def _frame_of(g: pd.DataFrame, **cols: str) -> pd.DataFrame:
    return pd.DataFrame({k: _plain(g[v]) for k, v in cols.items()})


@register_plan("count")
def _count_plan(stat, fam0, cols, scales):
    import narwhals as nw

    x = nw.col(cols["x"])
    if not getattr(stat, "discrete_x", True):
        x = x.cast(nw.Float64)

    def finish(g):
        return stat.family_cells(_frame_of(g, x="_x"), scales)

    return {"_x": x}, finish


@register_plan("bin")
def _bin_plan(stat, fam0, cols, scales):
    lo, hi = fam0.content[0], fam0.content[1]
    breaks = np.r_[lo, hi[-1:]]
    idx = bin_index_expr(_float(cols["x"]), breaks, stat.params["closed"])

    def finish(g):
        return _with_code(fam0, g["_x"].to_numpy(dtype=np.int64))

    return {"_x": idx}, finish


def _with_code(fam0, code):
    from ..stats.base import FamilyCells

    return FamilyCells(
        fam0.frame, fam0.content, code, fam0.public, fam0.source, fam0.describe
    )


@register_plan("fine")
def _fine_plan(stat, fam0, cols, scales):
    # density, ECDF, boxplot: one fine histogram along stat.AXIS; records
    # beyond the public limits go to the edge bins with outside="clamp"
    lo, hi = fam0.content[0], fam0.content[1]
    breaks = np.r_[lo, hi[-1:]]
    v = _float(cols[stat.AXIS])
    if stat.params["outside"] == "clamp":
        v = v.clip(float(breaks[0]), float(breaks[-1]))
    idx = bin_index_expr(v, breaks, "right")

    def finish(g):
        return _with_code(fam0, g["_x"].to_numpy(dtype=np.int64))

    return {"_x": idx}, finish


@register_plan("bin2d")
def _bin2d_plan(stat, fam0, cols, scales):
    bx = stat.axis_cache["x"].breaks
    by = stat.axis_cache["y"].breaks
    nx = len(bx) - 1
    keys = {
        "_ix": bin_index_expr(_float(cols["x"]), bx, "right"),
        "_iy": bin_index_expr(_float(cols["y"]), by, "right"),
    }

    def finish(g):
        ix = g["_ix"].to_numpy(dtype=np.int64)
        iy = g["_iy"].to_numpy(dtype=np.int64)
        return _with_code(
            fam0, np.where((ix >= 0) & (iy >= 0), iy * nx + ix, -1)
        )

    return keys, finish


@register_plan("sum")
def _sum_plan(stat, fam0, cols, scales):
    if not fam0.public:
        keys = {"_x": _float(cols["x"]), "_y": _float(cols["y"])}

        def finish(g):
            return stat.family_cells(_frame_of(g, x="_x", y="_y"), scales)

        return keys, finish
    from ..stats.bin2d import per_axis

    p = stat.params
    (x0, x1), (y0, y1) = (
        tuple(map(float, v))
        for v in per_axis(p["limits"], stat.name, "limits", True)
    )
    rx, ry = (
        float(v) for v in per_axis(p["resolution"], stat.name, "resolution")
    )
    nx = int(np.floor((x1 - x0) / rx + 1e-9)) + 1
    ny = int(np.floor((y1 - y0) / ry + 1e-9)) + 1
    keys = {
        "_ix": rint_expr((_float(cols["x"]) - x0) / rx),
        "_iy": rint_expr((_float(cols["y"]) - y0) / ry),
    }

    def finish(g):
        ix = g["_ix"].to_numpy(dtype=np.int64)
        iy = g["_iy"].to_numpy(dtype=np.int64)
        inside = (ix >= 0) & (ix < nx) & (iy >= 0) & (iy < ny)
        return _with_code(fam0, np.where(inside, iy * nx + ix, -1))

    return keys, finish


@register_plan("binhex")
def _hex_plan(stat, fam0, cols, scales):
    import narwhals as nw

    from ..mechanisms.hexbin import SQRT3

    lat = stat.axis_cache["hex"]
    (x0, x1), (y0, y1) = lat["xlim"], lat["ylim"]
    ox, oy = lat["origin"]
    bwx, bwy = lat["binwidth"]
    x, y = _float(cols["x"]), _float(cols["y"])
    # hex_assign's block, operation by operation
    sx = (x - ox) / bwx
    sy = (y - oy) / (bwy * SQRT3)
    ja = (sx + 0.5).floor()
    ia = (sy + 0.5).floor()
    jb = sx.floor()
    ib = sy.floor()
    ea, fa = sx - ja, sy - ia
    eb, fb = sx - jb - 0.5, sy - ib - 0.5
    da = ea * ea + 3.0 * (fa * fa)
    db = eb * eb + 3.0 * (fb * fb)
    use_a = da <= db
    keys = {
        "_r": nw.when(use_a)
        .then(2.0 * ia)
        .otherwise(2.0 * ib + 1.0)
        .cast(nw.Int64),
        "_c": nw.when(use_a).then(ja).otherwise(jb).cast(nw.Int64),
        "_in": (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1),
    }
    row, col = lat["row"], lat["col"]

    def finish(g):
        r = g["_r"].to_numpy(dtype=np.int64)
        c = g["_c"].to_numpy(dtype=np.int64)
        inside = g["_in"].to_numpy(dtype=bool)
        rmin, cmin = row.min(), col.min()
        nr, nc = row.max() - rmin + 1, col.max() - cmin + 1
        table = np.full(nr * nc, -1, dtype=np.int64)
        table[(row - rmin) * nc + (col - cmin)] = np.arange(len(row))
        ri, ci = r - rmin, c - cmin
        ok = inside & (ri >= 0) & (ri < nr) & (ci >= 0) & (ci < nc)
        code = np.full(len(r), -1, dtype=np.int64)
        code[ok] = table[ri[ok] * nc + ci[ok]]
        return _with_code(fam0, code)

    return keys, finish


# --------------------------------------------------------------------------
# a private layer
# --------------------------------------------------------------------------
def _needs_rows(name: str, why: str) -> Exception:
    return fail(
        name,
        f"{why} A table in an engine only answers group-by queries. "
        "Use a stat that aggregates (count, bin, bin2d, binhex, sum, "
        "density, ecdf, boxplot, in "
        "their _dp or _ckm forms), or collect the rows you need into a "
        "pandas or polars DataFrame and plot that.",
    )


def _present(cols: dict[str, str], evaled: pd.DataFrame, aes: Sequence):
    """Records with every position present and finite (as
    ``drop_missing``)."""
    import narwhals as nw

    conds = []
    for ae in aes:
        c = nw.col(cols[ae])
        dtype = evaled[ae].dtype
        ok = ~c.is_null()
        if pd.api.types.is_float_dtype(dtype):
            ok = ok & c.fill_null(0.0).is_finite()
        conds.append(ok)
    return functools.reduce(operator.and_, conds) if conds else None


def _within(where, cols: dict[str, str], door: Door):
    """``where`` and every declared column within its levels: a value
    outside them is filtered in the engine, so its count never leaves it
    (in memory such records are left out of the cells)."""
    import narwhals as nw

    conds = [] if where is None else [where]
    for ae, levels in door.declared.items():
        if ae in cols:
            conds.append(nw.col(cols[ae]).is_in(list(levels)))
    for i, f in enumerate(door.facet_columns):
        values = list(dict.fromkeys(row[i] for row in door.panel_values))
        conds.append(nw.col(f).is_in(values))
    return functools.reduce(operator.and_, conds) if conds else None


def _panel_keys(door: Door, name: str) -> tuple[dict, Callable]:
    import narwhals as nw

    facets = door.facet_columns
    layout = door.layout
    if door.multiplicity > 1:
        raise fail(
            name,
            "facet margins repeat every record in several panels; on a "
            "table in an engine, facet without margins=.",
        )
    keys = {f"_f{i}": nw.col(f) for i, f in enumerate(facets)}
    index = (
        {
            tuple(map(value_bytes, row)): k
            for k, row in enumerate(door.panel_values)
        }
        if facets
        else {}
    )
    names = object_column(door.panel_values)

    def finish(g: pd.DataFrame) -> Dimension:
        if facets:
            vals = zip(*(_plain(g[k]).tolist() for k in keys))
            codes = np.array(
                [index.get(tuple(map(value_bytes, row)), -1) for row in vals],
                dtype=np.int64,
            )
        else:
            codes = np.zeros(len(g), dtype=np.int64)
        return Dimension("PANEL", codes, [names], list(layout["PANEL"]), True)

    return keys, finish


def release_in_engine(
    stat, cols: dict[str, str], evaled: pd.DataFrame, door: Door, src
) -> pd.DataFrame:
    """Release a private layer whose data are a :class:`Source` (the
    counterpart of ``PrivateCountStat.release_at_door``).

    ``cols`` maps each aesthetic to the source column it names;
    ``evaled`` is the evaluated mapping on no rows (types only).
    """
    from ..stats.base import PrivateCountStat

    name = type(stat).__name__
    family = getattr(stat, "FAMILY", None)
    if not isinstance(stat, PrivateCountStat) or family not in _PLANS:
        raise _needs_rows(name, "this stat needs the rows themselves.")
    stat.releases = []
    stat.door = door
    stat.check_input(evaled)
    if "weight" in cols and stat.DP:
        raise fail(
            name,
            "the weight aesthetic is not supported by DP stats: one "
            "record of unbounded weight has unbounded sensitivity. Remove "
            "aes(weight=...) or use the CKM twin.",
        )
    mechanism = stat.make_mechanism()
    stat.layer_records = evaled
    stat.axis_cache = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fam0 = stat.family_cells(evaled, door.scales)
    if any(r.family == "range" for r in stat.releases):
        raise fail(
            name,
            "has no public bins and would estimate a private range from "
            "the rows, which a table in an engine does not hand out. Give "
            "public limits=(lo, hi) or breaks=[...] (or xlim/ylim).",
        )
    fkeys, ffinish = _PLANS[family](stat, fam0, cols, door.scales)
    gcols = stat.group_columns(evaled)
    gkeys = {f"_g{i}": _plain_col(cols[c]) for i, c in enumerate(gcols)}
    pkeys, pfinish = _panel_keys(door, name)
    rkey = None
    if not stat.DP:
        import narwhals as nw

        stat.record_key_integers(evaled)  # the rkey error if unmapped
        rkey = key_integers(nw.col(cols["rkey"]), stat.params["ptable"])
    weight = None
    if "weight" in cols:
        import narwhals as nw

        weight = nw.col(cols["weight"])
    g = grouped(
        src.frame,
        {**pkeys, **gkeys, **fkeys},
        weight=weight,
        rkey=rkey,
        where=_within(
            _present(cols, evaled, sorted(stat.REQUIRED_AES)), cols, door
        ),
    )
    check_aggregates(name, g)
    panel = pfinish(g)
    gdims = [
        categorical_dimension(c, _plain(g[f"_g{i}"]), door.declared.get(c))
        for i, c in enumerate(gcols)
    ]
    fam = ffinish(g)
    fdim = fam.dimension()
    table, idx = assemble_counts(
        [panel, *gdims, fdim],
        g["_n"].to_numpy(dtype=np.int64),
        weighted=(
            g["_w"].to_numpy(dtype=float) if weight is not None else None
        ),
        key_sum=key_sums(g) if rkey is not None else None,
        multiplicity=door.multiplicity,
    )
    return stat.release_table(door, fam, panel, gdims, table, idx, mechanism)


def _plain_col(column: str):
    import narwhals as nw

    return nw.col(column)


def is_dp(mechanism) -> bool:
    return isinstance(mechanism, LaplaceCounts)


def source_groups(
    name: str, src, columns: Sequence[str], rkey: str | None, mechanism
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray | None]:
    """The rows of a private table of a :class:`Source`: one per
    combination of ``columns`` (named as the columns), with the record
    counts and exact key sums of each."""
    import narwhals as nw

    missing = [
        c
        for c in [*columns, *([rkey] if rkey else [])]
        if c not in src.columns
    ]
    if missing:
        raise PlotninePrivateError(
            f"{name}(): column {missing[0]!r} is not in the table; columns "
            f"are {src.columns}."
        )
    names = list(dict.fromkeys(columns))
    keys = {f"_c{i}": nw.col(c) for i, c in enumerate(names)}
    rk = None
    if rkey is not None:
        rk = key_integers(nw.col(rkey), mechanism.ptable)
    # a value outside a column's declared levels stays in the engine
    inside = [
        nw.col(c).is_in(levels)
        for c in names
        if (levels := src.declared_levels(c)) is not None
    ]
    where = functools.reduce(operator.and_, inside) if inside else None
    g = grouped(src.frame, keys, rkey=rk, where=where)
    check_aggregates(name, g)
    rows = pd.DataFrame({c: _plain(g[f"_c{i}"]) for i, c in enumerate(names)})
    return (
        rows,
        g["_n"].to_numpy(dtype=np.int64),
        key_sums(g) if rk is not None else None,
    )
