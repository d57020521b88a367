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
:class:`~plotnine_private.mechanisms.release.engine.CellTable` that
``assemble``
makes from the records, and the same release engine perturbs it: equal
data, seed and key give equal numbers whatever held the rows.

A family's cells in the engine are those of its stateless contract
(:mod:`~plotnine_private.families`): the family object the stat built
from public parameters gives its codes as narwhals expressions (a few
projections, each quantity computed once) and decodes the grouped keys
into the codes ``codes`` gives for the records in memory.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
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
from ..declarations import registered
from ..door import Door, LayerBuild
from ..exceptions import PlotninePrivateError
from ..families import (
    CELL,
    Family,
    Levels,
    Stages,
    integer_keys,
    merge_stages,
    outside_as_nan,
    represented,
)
from ..mechanisms.naming.cell_values import value_bytes
from ..mechanisms.release.engine import CellTable
from ..stats.domains import RowsNeeded
from ..validation import fail
from .bounding import (
    bounded_frame,
    check_unit_columns,
)
from .key_sums import RecordKeys, key_integers, key_sums

__all__ = [
    "assemble_counts",
    "grouped",
    "release_in_engine",
]


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


#: key integers below this are summed whole, as one int64: no overflow
#: below 2**63 / bound records (9e10 for uniform keys, below 10**8)
_WHOLE_KEYS = 2**40
_INT64 = 2**63 - 1


def grouped(
    frame: Any,
    keys: dict[str, Any],
    *,
    weight: Any = None,
    rkey: RecordKeys | None = None,
    where: Any = None,
    having: Any = None,
    stages: Sequence[dict[str, Any]] = (),
    distinct: Any = None,
    regroup: Sequence[dict[str, Any]] = (),
) -> pd.DataFrame:
    """One row per combination of ``keys`` (name -> expression) and of
    the last of ``stages`` (projections applied in turn, each computing
    its columns once from the previous ones) with ``_n`` records; ``_w``
    (sum of ``weight``), ``_wbad`` (invalid weights); the exact sums of
    the record keys' integers (read them with :func:`key_sums`) and
    ``_kbad`` (invalid keys) when asked.
    ``where`` filters the records, ``having`` the grouped rows (by their
    key names), both in the engine. Collected to pandas: the only thing
    that leaves the engine.

    Key integers below ``2**40`` are summed whole (one int64 sum); if the
    records are so many that such a sum could pass ``2**63``, the query
    is run again with the 24-bit halves summed apart.

    ``distinct`` (an expression naming each record's unit; no weight):
    ``_n`` counts the distinct units of each combination, and the key
    sums add each unit's smallest key there (as
    :func:`~plotnine_private.unit_cells.one_per_cell` in memory).

    ``regroup`` (not with ``distinct``): projections of the grouped rows
    (few), which are then grouped again, in the same query, by ``keys``
    and the last of ``regroup``, their aggregates summed (a family's
    cells from its representatives: :func:`~plotnine_private.families.
    represented`); ``having`` filters those rows."""
    if regroup and distinct is not None:
        raise ValueError("regroup sums the aggregates: not with distinct")
    whole = rkey is not None and rkey.bound <= _WHOLE_KEYS
    args = (frame, keys, weight, where, having, stages, distinct, regroup)
    if rkey is None:
        return _grouped(*args, None)
    result = _grouped(*args, key_integers(rkey.expr, rkey.ptable, whole))
    if whole and int(result["_n"].sum()) > _INT64 // rkey.bound:
        result = _grouped(*args, key_integers(rkey.expr, rkey.ptable))
    return result


def _grouped(
    frame, keys, weight, where, having, stages, distinct, regroup, rkey
):
    import narwhals as nw

    if distinct is not None:
        return _grouped_units(
            frame, keys, where, having, stages, distinct, rkey
        )

    if weight is not None:
        # records with an invalid weight are left out (as in memory)
        w = weight.cast(nw.Float64)
        valid = ~w.is_null() & w.fill_null(0.0).is_finite() & (w >= 0)
        valid = valid.fill_null(False)
        where = valid if where is None else where & valid
    lf = frame if where is None else frame.filter(where)
    cols = dict(keys)
    summed = []
    if weight is not None:
        w = weight.cast(nw.Float64)
        cols["_w"] = w
        cols["_wbad"] = (
            (w.is_null() | ~w.fill_null(0.0).is_finite() | (w < 0))
            .fill_null(True)
            .cast(nw.Int64)
        )
        summed += ["_w", "_wbad"]
    names = [*keys, *(stages[-1] if stages else {})]
    if rkey is not None:
        # the key integers' projections beside the cells' (one pass)
        stages = merge_stages(list(stages), rkey)
        summed += [*rkey[-1], "_kbad"]
    aggs = [nw.len().alias("_n"), *(nw.col(c).sum() for c in summed)]
    stages = list(stages)
    if stages:
        cols.update(stages[0])
    lf = lf.with_columns(**cols)
    for stage in stages[1:]:
        lf = lf.with_columns(**stage)
    out = lf.group_by(*names).agg(*aggs) if names else lf.select(*aggs)
    if regroup:
        for stage in regroup:
            out = out.with_columns(**stage)
        names = [*keys, *regroup[-1]]
        out = out.group_by(*names).agg(
            *(nw.col(c).sum() for c in ("_n", *summed))
        )
    if having is not None:
        # "or _n < 0" (never true: a group has a record) names an
        # aggregate, so DuckDB cannot push the test back below the
        # group-by, where it ran on every record (2.7x the GROUP BY)
        out = out.filter(having | (nw.col("_n") < 0))
    result = out.collect().to_pandas().reset_index(drop=True)
    if not names and len(result) and int(result["_n"].iloc[0]) == 0:
        result = result.iloc[0:0]
    return result


#: the column of a record's unit when cells count units
_UNIT = "_unit"


def _grouped_units(frame, keys, where, having, stages, unit, rkey):
    """:func:`_grouped` of distinct units: one row per (combination,
    unit) first, with the unit's smallest key integer and whether any
    of its keys is invalid, then one per combination, counting those
    rows and summing their keys (whole or in 24-bit halves, the stages
    after ``_kr``)."""
    import narwhals as nw

    lf = frame if where is None else frame.filter(where)
    cols = {**keys, _UNIT: unit}
    names = [*keys, *(stages[-1] if stages else {})]
    stages = list(stages)
    split: list = []
    first = []
    if rkey is not None:
        at = next(i for i, st in enumerate(rkey) if "_kr" in st) + 1
        stages = merge_stages(stages, list(rkey[:at]))
        split = list(rkey[at:])
        first = [nw.col("_kr").min(), nw.col("_kbad").max()]
    if stages:
        cols.update(stages[0])
    lf = lf.with_columns(**cols)
    for stage in stages[1:]:
        lf = lf.with_columns(**stage)
    per_unit = lf.group_by(*names, _UNIT).agg(
        *(first or [nw.len().alias("_per_unit")])
    )
    aggs = [nw.len().alias("_n")]
    for stage in split:
        per_unit = per_unit.with_columns(**stage)
    if rkey is not None:
        aggs += [nw.col(c).sum() for c in (*rkey[-1], "_kbad")]
    out = (
        per_unit.group_by(*names).agg(*aggs)
        if names
        else per_unit.select(*aggs)
    )
    if having is not None:
        out = out.filter(having | (nw.col("_n") < 0))
    result = out.collect().to_pandas().reset_index(drop=True)
    if not names and len(result) and int(result["_n"].iloc[0]) == 0:
        result = result.iloc[0:0]
    return result


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
# a private layer
# --------------------------------------------------------------------------
def _needs_rows(name: str, why: str) -> Exception:
    # the families an engine computes, as their declarations say
    families = ", ".join(
        dict.fromkeys(
            e.declaration.family
            for e in registered(aliases=False)
            if e.declaration.engine
        )
    )
    return fail(
        name,
        f"{why} A table in an engine only answers group-by queries. "
        f"Use a stat that aggregates ({families}, in their _dp or _ckm "
        "forms), or collect the rows you need into a pandas or polars "
        "DataFrame and plot that.",
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


def _within(
    where, cols: dict[str, str], door: Door, keyed: dict[str, str]
) -> tuple[Any, Any]:
    """``where`` and every declared column within its levels: a value
    outside them is filtered in the engine, so its count never leaves it
    (in memory such records are left out of the cells). Returns the
    filter of the records and the filter of the grouped rows: a declared
    column that is a grouping key (``keyed``: source column -> key name)
    is tested once per group after the group-by, still in the engine
    (a list test on every record cost DuckDB more than the group-by)."""
    import narwhals as nw

    conds = [] if where is None else [where]
    having = []
    tests = [
        (cols[ae], list(levels))
        for ae, levels in door.declared.items()
        if ae in cols
    ]
    for i, f in enumerate(door.facet_columns):
        values = list(dict.fromkeys(row[i] for row in door.panel_values))
        tests.append((f, values))
    for column, levels in tests:
        if column in keyed:
            having.append(nw.col(keyed[column]).is_in(levels))
        else:
            conds.append(nw.col(column).is_in(levels))
    return _all(conds), _all(having)


def _all(conds: list) -> Any:
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


@dataclasses.dataclass(frozen=True)
class _FamilyKeys:
    """A family's cells in the engine: ``stages`` (on the records),
    ``regroup`` (on the grouped rows, grouped again by their
    :data:`~plotnine_private.families.CELL`; empty: none), ``finish``
    (grouped rows -> :class:`~plotnine_private.stats.base.FamilyCells`),
    ``keep`` (the test of the records with a cell, or None), ``filter``
    (whether ``keep`` is to filter the records) and ``marked`` (the keys
    are NaN outside, :func:`~plotnine_private.families.outside_as_nan`:
    drop those grouped rows with :func:`_drop_outside`)."""

    stages: Stages
    regroup: Stages
    finish: Callable
    keep: Any
    filter: bool
    marked: bool


def _family_keys(
    stat,
    fam0,
    cols: dict[str, str],
    scales,
    counted_only: bool,
    engine: str = "",
    summed: bool = False,
) -> _FamilyKeys:
    """The family's cells as engine projections and how to turn the
    grouped rows into its :class:`~plotnine_private.stats.base.
    FamilyCells` (by the family's own decoding when its domain is
    public, else, for levels or points seen, by the stat on the grouped
    values). ``counted_only``: the records outside the domain need not
    be seen (no weights or keys to check), so the engine may drop them
    before any arithmetic. ``summed``: the grouped rows' aggregates may
    be summed again (no distinct units, no cell bound), which
    ``regroup`` needs."""
    import narwhals as nw

    family = fam0.family
    if not isinstance(family, Family):
        raise _needs_rows(type(stat).__name__, "this stat has no cells.")
    if family.public:
        exprs = {a: nw.col(cols[a]) for a in family.aes}
        keep = family.domain_filter(exprs) if counted_only else None

        def decoding(inner: bool) -> Callable:
            def decode(g: pd.DataFrame):
                rows = {k: g[k].to_numpy() for k in g.columns}
                code = (
                    family.inner_decode(rows) if inner else family.decode(rows)
                )
                return dataclasses.replace(fam0, code=code)

            return decode

        if keep is None:
            return _FamilyKeys(
                family.stages(exprs), [], decoding(False), None, True, False
            )
        if engine == "polars" and family.whole_inner_keys:
            # Polars filters a scan dearly (a 10**8-row bin2d: the
            # filter 0.77 s CPU, a key chosen per record 0.2 s); a
            # bin's representative costs less than its corrected index
            # and range test (a 10**7-row bin2d: 1.6 -> 1.2 times its
            # GROUP BY, CPU), and the exact stages run per group
            reps = represented(family, exprs) if summed else None
            if reps is not None:
                return _FamilyKeys(*reps, decoding(False), keep, False, False)
            stages = outside_as_nan(
                family.inner_stages(exprs, engine=engine), keep
            )
            return _FamilyKeys(stages, [], decoding(True), keep, False, True)
        stages = family.inner_stages(exprs, engine=engine)
        if engine.startswith("pyspark") and family.whole_inner_keys:
            stages = integer_keys(stages)
        return _FamilyKeys(stages, [], decoding(True), keep, True, False)
    numeric = getattr(family, "numeric", True)
    raw = {
        f"_v_{a}": (
            nw.col(cols[a]).cast(nw.Float64) if numeric else nw.col(cols[a])
        )
        for a in family.aes
    }

    def observed(g: pd.DataFrame):
        frame = pd.DataFrame({a: _plain(g[f"_v_{a}"]) for a in family.aes})
        return stat.family_cells(frame, scales)

    return _FamilyKeys([raw], [], observed, None, True, False)


def _drop_outside(g: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """The grouped rows without the one of the records outside the
    domain (its keys NaN: :func:`~plotnine_private.families.
    outside_as_nan`); its count never leaves this function."""
    inside = g[list(keys)].notna().all(axis=1).to_numpy()
    return g if inside.all() else g[inside].reset_index(drop=True)


def release_in_engine(
    stat, cols: dict[str, str], evaled: pd.DataFrame, build: LayerBuild, src
) -> pd.DataFrame:
    """Release a private layer whose data are a :class:`Source` (the
    counterpart of ``PrivateCountStat.release_at_door``).

    ``cols`` maps each aesthetic to the source column it names;
    ``evaled`` is the evaluated mapping on no rows (types only).
    """
    from ..stats.base import PrivateCountStat, units_mechanism

    name = type(stat).__name__
    # families whose release needs only a count (and key sum) per cell
    # declare it (a summary needs each record's y)
    decl = getattr(stat, "DECLARATION", None)
    if not isinstance(stat, PrivateCountStat) or not (decl and decl.engine):
        raise _needs_rows(name, "this stat needs the rows themselves.")
    check_unit_columns(name, src)
    # per-build state goes to ``build``, on a copy of the stat
    stat = stat.for_build(build)
    door = build.door
    stat.check_input(evaled)
    if stat.params.get("missing_level"):
        raise _needs_rows(
            name, "missing_level=True is counted on rows in memory."
        )
    if "weight" in cols and stat.DP:
        raise fail(
            name,
            "the weight aesthetic is not supported by DP stats: one "
            "record of unbounded weight has unbounded sensitivity. Remove "
            "aes(weight=...) or use the CKM twin.",
        )
    mechanism = stat.make_mechanism()
    stat.build.records = evaled
    try:
        # the domain from public parameters and scales: no record is read
        fam0 = stat.declare_domain(door.scales)
    except RowsNeeded:
        raise fail(
            name,
            "has no public bins and would estimate a private range from "
            "the rows, which a table in an engine does not hand out. Give "
            "public limits=(lo, hi) or breaks=[...] (or xlim/ylim).",
        ) from None
    gcols = stat.group_columns(evaled)
    # records outside the family's domain change nothing when there are
    # no weights or keys to check and no group levels to observe
    counted_only = (
        bool(stat.DP)
        and "weight" not in cols
        and all(stat.declared_of(c) is not None for c in gcols)
    )
    units = stat.counts_units()
    limited = src.unit.bounded and src.unit.max_cells is not None
    fk = _family_keys(
        stat,
        fam0,
        cols,
        door.scales,
        counted_only,
        src.engine,
        summed=not units and not limited,
    )
    fstages, ffinish, keep = fk.stages, fk.finish, fk.keep
    # source columns grouped as they are (-> their key's name)
    keyed = {cols[c]: f"_g{i}" for i, c in enumerate(gcols)}
    keyed.update({f: f"_f{i}" for i, f in enumerate(door.facet_columns)})
    family = fam0.family
    if isinstance(family, Levels) and family.public and not family.numeric:
        keyed[cols[family.axis]] = CELL
    needed = sorted(stat.REQUIRED_AES)
    if keep is not None:
        # a value in the domain is present and finite: test the others
        needed = [a for a in needed if a not in fam0.family.aes]
    # a declared column grouped as it is: its levels test (on the
    # grouped rows) leaves missing values out too
    needed = [
        a
        for a in needed
        if not (cols[a] in keyed and stat.declared_of(a) is not None)
    ]
    where = _present(cols, evaled, needed)
    if keep is not None and fk.filter:
        where = keep if where is None else where & keep
    gkeys = {f"_g{i}": _plain_col(cols[c]) for i, c in enumerate(gcols)}
    pkeys, pfinish = _panel_keys(door, name)
    where, having = _within(where, cols, door, keyed)
    if fk.regroup:
        # the records outside the domain (cell -1) stay in the engine
        having = _inside() if having is None else having & _inside()
    rkey = None
    if not stat.DP:
        import narwhals as nw

        stat.record_key_integers(evaled)  # the rkey error if unmapped
        rkey = RecordKeys(nw.col(cols["rkey"]), stat.params["ptable"])
    weight = None
    if "weight" in cols:
        import narwhals as nw

        weight = nw.col(cols["weight"])
    if units:
        if not src.unit.bounded:
            stat.units_kept(None, evaled, door, None, None)  # its error
        if weight is not None:
            raise fail(
                name,
                "count='units' counts each unit once per cell, and a "
                "weight says how much a record counts: remove "
                "aes(weight=...), or count records (count='records').",
            )
    frame = bounded_frame(src)
    if limited:
        frame = _cells_limited(
            stat,
            frame,
            src,
            door,
            gcols,
            pkeys,
            gkeys,
            fstages,
            where,
            having,
            fk.marked,
            pfinish,
            ffinish,
        )
        mechanism = mechanism.bounded(
            src.unit.cell_records, src.unit.max_cells
        )
    g = grouped(
        frame,
        {**pkeys, **gkeys},
        weight=weight,
        rkey=rkey,
        where=where,
        having=having,
        stages=fstages,
        distinct=nw_col(src.unit.column) if units else None,
        regroup=fk.regroup,
    )
    if fk.marked:
        g = _drop_outside(g, list(fstages[-1]))
    check_aggregates(name, g)
    panel = pfinish(g)
    gdims = [
        categorical_dimension(c, _plain(g[f"_g{i}"]), stat.declared_of(c))
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
    if units:
        mechanism = units_mechanism(mechanism, src.unit, [panel, *gdims, fdim])
    return stat.release_table(door, fam, panel, gdims, table, idx, mechanism)


def _cells_limited(
    stat,
    frame,
    src,
    door,
    gcols,
    pkeys,
    gkeys,
    fstages,
    where,
    having,
    outside,
    pfinish,
    ffinish,
):
    """``frame`` with each unit's records limited to its ``max_cells``
    cells (and ``max_records_per_cell`` in each), as memory limits them
    (:mod:`.cell_bounds`): the layer's distinct cells first, named in
    Python, then the windows in the engine."""
    from .cell_bounds import limit_cells_in_engine

    keys = {**pkeys, **gkeys}
    distinct = grouped(frame, keys, where=where, having=having, stages=fstages)
    if outside:
        distinct = _drop_outside(distinct, list(fstages[-1]))

    def dims(g: pd.DataFrame) -> list[Dimension]:
        gdims = [
            categorical_dimension(c, _plain(g[f"_g{i}"]), stat.declared_of(c))
            for i, c in enumerate(gcols)
        ]
        return [pfinish(g), *gdims, ffinish(g).dimension()]

    return limit_cells_in_engine(
        frame,
        src,
        keys=keys,
        stages=fstages,
        where=where,
        distinct=distinct,
        dims=dims,
    )


def _inside() -> Any:
    """The grouped rows of a cell of the family (not -1)."""
    import narwhals as nw

    return nw.col(CELL) >= 0


def nw_col(column: str | None) -> Any:
    import narwhals as nw

    assert column is not None
    return nw.col(column)


def _plain_col(column: str):
    import narwhals as nw

    return nw.col(column)


def is_dp(mechanism) -> bool:
    return bool(mechanism.formal)


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
    check_unit_columns(name, src, cells=False)
    names = list(dict.fromkeys(columns))
    keys = {f"_c{i}": nw.col(c) for i, c in enumerate(names)}
    rk = None
    if rkey is not None:
        rk = RecordKeys(nw.col(rkey), mechanism.ptable)
    # a value outside a column's declared levels stays in the engine
    # (tested on the grouped rows, as a layer's declared keys are)
    inside = [
        nw.col(f"_c{i}").is_in(levels)
        for i, c in enumerate(names)
        if (levels := src.declared_levels(c)) is not None
    ]
    frame = bounded_frame(src)
    g = grouped(
        frame,
        keys,
        rkey=rk,
        having=_all(inside),
    )
    check_aggregates(name, g)
    rows = pd.DataFrame({c: _plain(g[f"_c{i}"]) for i, c in enumerate(names)})
    return (
        rows,
        g["_n"].to_numpy(dtype=np.int64),
        key_sums(g) if rk is not None else None,
    )
