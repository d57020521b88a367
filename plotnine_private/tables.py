"""Private frequency tables that agree with the plots.

``dp_table`` and ``ckm_table`` state the same query as ``count_dp`` /
``count_ckm`` on the same data (the plot's data is the source ``"data"``,
as a table's is), assemble the same cells with
:func:`~plotnine_private.cells.assemble` and release them through the same
engine: a table and a bar chart of the same data, parameters and seed are
one release with the same numbers, in any row order.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .cells import (
    Dimension,
    assemble,
    categorical_dimension,
    cell_query,
    object_column,
    small_codes,
)
from .date_levels import date_codes, date_levels, date_texts
from .door import bound_rows, declared_levels, level_label, record_order
from .engines.push import assemble_counts, source_groups
from .engines.source import is_source
from .exceptions import PlotninePrivateError
from .families import Levels, count_levels
from .identifiers import id_codes
from .mechanisms.naming.cellnames import (
    FloatLevels,
    IntLevels,
    StrLabels,
    every_row,
)
from .mechanisms.ptable.ckm import record_key_integers
from .mechanisms.release.engine import CKMCounts, LaplaceCounts, release_cells
from .mechanisms.samplers.laplace import DEFAULT_DELTA
from .mechanisms.session import tagged
from .string_levels import (
    arrow_labels,
    arrow_str_codes,
    as_large_string,
    large_string_labels,
)
from .unit_cells import limit_cells, limit_per_cell
from .units import UnitFrame, dataset_of, unit_of
from .validation import (
    as_ptable,
    check_flat_columns,
    frame_type_fix,
    from_polars,
    validate_choice,
    validate_delta,
    validate_eps,
    validate_label,
    validate_seed,
    validate_threshold,
)

__all__ = ["ckm_table", "dp_table"]


def _as_list(v) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return list(v)


def _as_pandas(name: str, data: Any) -> pd.DataFrame:
    check_flat_columns(name, data)
    if isinstance(data, pd.DataFrame):
        return data
    if from_polars(data) and hasattr(data, "to_pandas"):
        if hasattr(data, "collect"):
            raise PlotninePrivateError(
                f"{name}(): data must be a pandas or polars DataFrame or a "
                f"source(...) table, "
                f"{frame_type_fix(data)}"
            )
        return data.to_pandas()
    raise PlotninePrivateError(
        f"{name}(): data must be a pandas or polars DataFrame or a "
        f"source(...) table, "
        f"{frame_type_fix(data)}"
    )


def _panels(name, frame, data, facets, dp) -> tuple[Dimension, list]:
    """The panel dimension: every combination of the declared facet
    levels (observed combinations for CKM when undeclared)."""
    if not facets:
        codes = np.zeros(len(data), dtype=np.int64)
        return Dimension("PANEL", codes, [object_column([()])], [()], True), [
            ""
        ]
    levels = {f: declared_levels(frame, f) for f in facets}
    undeclared = [f for f, lv in levels.items() if lv is None]
    if undeclared and dp:
        raise PlotninePrivateError(
            f"{name}(): facet column(s) {undeclared} have no public set of "
            "levels; declare them as pandas Categoricals with explicit "
            "categories (or polars Enums), as the plots require, so no "
            "facet appears just because a record has it."
        )
    dims = [categorical_dimension(f, data[f], levels[f]) for f in facets]
    if undeclared:
        rows = sorted(
            {row for row in zip(*(d.codes.tolist() for d in dims))},
            key=lambda r: tuple(
                level_label(d.values[c]) for d, c in zip(dims, r)
            ),
        )
        rows = [r for r in rows if min(r) >= 0]
    else:
        rows = list(itertools.product(*(range(d.size) for d in dims)))
    combos = [tuple(d.values[c] for d, c in zip(dims, r)) for r in rows]
    labels = ["|".join(map(level_label, c)) for c in combos]
    # each record's panel from its facet codes (mixed radix), not its text
    sizes = [d.size for d in dims]
    lookup = np.full(int(np.prod(sizes)), -1, dtype=np.int64)
    if rows:
        lookup[np.ravel_multi_index(np.array(rows).T, sizes)] = np.arange(
            len(rows)
        )
    bad = np.zeros(len(data), dtype=bool)
    for d in dims:
        bad |= d.codes < 0
    codes = np.full(len(data), -1, dtype=np.int64)
    if len(data) and min(sizes) > 0:
        safe = [np.where(bad, 0, d.codes) for d in dims]
        codes = lookup[np.ravel_multi_index(safe, sizes)]
    codes[bad] = -1
    return Dimension(
        "PANEL", codes, [object_column(combos)], combos, True
    ), labels


def _count_levels(frame, column: pd.Series, x: str, levels) -> Levels:
    """count's family for the table's x (:func:`~plotnine_private.
    families.count_levels`, as the plots' ``count_dp`` has it): numbers
    are a continuous x, matched as floats, unless no ``levels=`` is given
    and the column's levels are declared (or it holds booleans); other
    values are discrete."""
    declared = declared_levels(frame, x)
    discrete = not pd.api.types.is_numeric_dtype(column)
    if levels is None:
        discrete = (
            discrete
            or declared is not None
            or pd.api.types.is_bool_dtype(column)
        )
    return count_levels(levels, declared, None, discrete, axis=x)[0]


# -- declared string levels kept as one buffer (issue 23) --------------
def str_labels(values: Any) -> StrLabels | None:
    """``values`` as one UTF-8 buffer (:class:`~plotnine_private.
    mechanisms.cellnames.StrLabels`) if every one is a string, else
    None. Strings held by Arrow (pandas' default, ``pd.ArrowDtype``,
    polars) are read from Arrow's own buffers, without a Python object
    per value; Python strings (an ``object`` or python-backed column)
    are encoded once.

    >>> str_labels(pd.Index(["a", "bc"])).tolist()
    ['a', 'bc']
    >>> str_labels(pd.Index(["a", 4], dtype=object)) is None
    True
    """
    pa = _arrow()
    if pa is None:
        return None  # the value-by-value path names them
    if from_polars(values):
        values = values.to_arrow()
    elif isinstance(values, (pd.Index, pd.Series)):
        dtype = values.dtype
        if not (
            isinstance(dtype, pd.StringDtype)
            or (isinstance(dtype, pd.ArrowDtype) and dtype.kind == "U")
            or (
                pd.api.types.is_object_dtype(dtype)
                and pd.api.types.infer_dtype(values, skipna=False) == "string"
            )
        ):
            return None
        values = values.array
    arr = as_large_string(values)
    if arr is None:
        return None
    if arr.null_count:
        return None
    return large_string_labels(arr)


def labelled_dimension(
    name: str, series: pd.Series, declared: Any = None
) -> Dimension | None:
    """The dimension of a Categorical ``series`` over declared string
    levels kept as one buffer (:func:`str_labels`): ``declared`` (a
    polars Enum's categories...), or the series' own categories when
    None. Each record's code is its categorical code, the levels being
    the categories in order; None when they are not, or not all strings
    (:func:`categorical_dimension` then names them value by value).

    >>> d = labelled_dimension("x", pd.Series(pd.Categorical(
    ...     ["b", "a"], categories=["a", "b", "c"])))
    >>> d.codes.tolist(), d.values.tolist(), d.public
    ([1, 0], ['a', 'b', 'c'], True)
    """
    if not isinstance(series.dtype, pd.CategoricalDtype):
        return None
    own = str_labels(series.cat.categories)
    labels = own if declared is None else str_labels(declared)
    if not own or labels is None or (labels is not own and labels != own):
        # no levels: the general path, whose empty column is an object one
        return None
    codes = small_codes(np.asarray(series.array.codes), len(labels))
    return Dimension(name, codes, [labels], labels, True)


def _arrow() -> Any:
    """pyarrow if it is installed (an optional dependency), else None."""
    try:
        import pyarrow
    except ImportError:
        return None
    return pyarrow


def _inferred_string_dtype() -> Any:
    """The dtype a frame gives a column of Python strings (``str`` in
    pandas 3, ``object`` before unless ``future.infer_string`` is on)."""
    probe = pd.DataFrame(index=range(1))
    probe["x"] = np.array(["a"], dtype=object)
    return probe["x"].dtype


def label_values(labels: StrLabels, idx: np.ndarray) -> Any:
    """The labels ``labels[idx]`` as the column pandas makes of Python
    strings (its default string dtype), taken in Arrow when that dtype
    is Arrow-backed.

    >>> label_values(StrLabels.of(["a", "b"]), np.array([1, 1])).tolist()
    ['b', 'b']
    """
    pa = _arrow()
    dtype = _inferred_string_dtype()
    if pa is None or getattr(dtype, "storage", None) != "pyarrow":
        # Python strings: the frame infers their dtype, as it always did
        return np.asarray(labels.tolist(), dtype=object)[idx]
    arr = pa.LargeStringArray.from_buffers(
        len(labels), pa.py_buffer(labels.offsets), pa.py_buffer(labels.data)
    )
    idx = np.asarray(idx, dtype=np.int64)
    if not (len(idx) == len(labels) and (idx == np.arange(len(idx))).all()):
        arr = arr.take(pa.array(idx))
    return pd.array(arr, dtype=dtype)


def _declared_labels(frame, data: pd.DataFrame, x: str):
    """x's dimension when its declared levels are strings, kept as one
    buffer (:func:`labelled_dimension`): x is a
    Categorical of a pandas frame (its categories are the declared
    levels) or a polars Enum (its categories). None otherwise: then
    :func:`_count_levels` finds the levels as the plots do."""
    column = data[x]
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return None
    source = frame.data if isinstance(frame, UnitFrame) else frame
    if isinstance(source, pd.DataFrame):
        if not _own_categorical(source, column, x):
            return None
        return labelled_dimension(x, column)
    if from_polars(source):
        import polars as pl

        dtype = source.schema.get(x)
        if not isinstance(dtype, pl.Enum):
            return None
        return labelled_dimension(x, column, dtype.categories)
    return None


def _own_categorical(source: pd.DataFrame, column: pd.Series, x: str) -> bool:
    """Whether the Categorical ``column`` is the frame's own column, or
    its rows a unit keeps (one dtype): its categories are declared."""
    return x in source.columns and source[x].dtype is column.dtype


def _declared_categorical(
    frame, data: pd.DataFrame, x: str
) -> pd.Series | None:
    """x's column when it is a Categorical of a pandas frame, the frame's
    own (its categories are declared levels); None otherwise."""
    column = data[x]
    source = frame.data if isinstance(frame, UnitFrame) else frame
    if not (
        isinstance(column.dtype, pd.CategoricalDtype)
        and isinstance(source, pd.DataFrame)
        and _own_categorical(source, column, x)
    ):
        return None
    return column


def _declared_dates(frame, data: pd.DataFrame, x: str) -> Dimension | None:
    """x's dimension when x is a Categorical of a pandas frame whose
    categories are naive date-times (:func:`~plotnine_private.date_levels.
    date_levels`): the categories named in bulk, each record's level its
    categorical code. None otherwise (:func:`_count_levels` then finds
    the levels value by value)."""
    column = _declared_categorical(frame, data, x)
    if column is None:
        return None
    found = date_levels(column.cat.categories)
    if found is None:
        return None
    index, ns = found
    codes = small_codes(np.asarray(column.array.codes), len(ns))
    return Dimension(x, codes, [ns.view("M8[ns]")], index, True)


def _declared_ints(frame, data: pd.DataFrame, x: str) -> Dimension | None:
    """x's dimension when x is a Categorical of a pandas frame whose
    categories are integers (within int64): the categories kept as one
    int64 array (named in bulk: their words are the ints' ``value_bytes``,
    their identity the tuple of their ints'), each record's level its
    categorical code. None otherwise (:func:`_count_levels` then names
    them value by value)."""
    column = _declared_categorical(frame, data, x)
    if column is None:
        return None
    categories = column.cat.categories
    if not (
        isinstance(categories.dtype, np.dtype)
        and categories.dtype.kind in "iu"
        and len(categories)
    ):
        return None
    ints = categories.to_numpy()
    if ints.dtype.kind == "u" and int(ints.max()) > 2**63 - 1:
        return None
    ints = ints.astype(np.int64)
    codes = small_codes(np.asarray(column.array.codes), len(ints))
    return Dimension(x, codes, [ints], categories, True)


def _date_level_dimension(
    column: pd.Series, x: str, levels: Any
) -> Dimension | None:
    """x's dimension when ``levels=`` are naive date-times and x a column
    of them (:mod:`~plotnine_private.date_levels`): the levels named and
    each record's level found in bulk, as :func:`_count_levels` finds
    them value by value; None otherwise."""
    found = date_levels(levels)
    if found is None:
        return None
    index, ns = found
    codes = date_codes(column, ns)
    if codes is None:
        return None
    return Dimension(
        x, small_codes(codes, len(ns)), [ns.view("M8[ns]")], index, True
    )


def _str_level_dimension(
    column: pd.Series, x: str, levels: Sequence[Any]
) -> Dimension | None:
    """x's dimension when ``levels=`` are all strings and x is a column
    of Arrow-backed strings: the levels kept as one buffer
    (:func:`~plotnine_private.cells.arrow_labels`), each record's level
    found in bulk (:func:`~plotnine_private.cells.arrow_str_codes`), as
    :func:`_count_levels` finds them value by value; None otherwise."""
    dtype = column.dtype
    if not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
        return None
    labels = arrow_labels(levels)
    if labels is None:
        return None
    codes = arrow_str_codes(column, labels, x)
    if codes is None:
        return None
    return Dimension(x, codes, [labels], labels, True)


def _domain(xdim: Dimension):
    """The public part of x's domain in the query: its levels (a
    buffer of strings names the same bytes as their tuple)."""
    if not xdim.public:
        return "observed"
    content = xdim.content[0]
    if isinstance(content, np.ndarray) and content.dtype.kind == "f":
        # the floats, named as the tuple of their Python floats is
        return FloatLevels(content)
    if isinstance(content, np.ndarray) and content.dtype.kind == "i":
        # ints (a Categorical's), named as the tuple of their Python ints
        return IntLevels(content)
    if isinstance(content, np.ndarray) and content.dtype.kind == "M":
        # naive date-times: the texts of their Timestamps, as one buffer
        texts = date_texts(content.view(np.int64))
        return tuple(xdim.values) if texts is None else texts
    return content if isinstance(content, StrLabels) else tuple(content)


def _release_table(
    name, data, x, groups, facets, levels, mechanism, seed, rkey=None
):
    frame = data
    groups, facets = _as_list(groups), _as_list(facets)
    counts = key_sums = None
    unit = unit_of(data)
    in_memory = isinstance(data, UnitFrame)
    if unit.bounded:
        # max_cells counts only where it is enforced (limit_cells below)
        mechanism = mechanism.bounded(
            unit.cell_records if in_memory else unit.max_records,
            unit.max_cells if in_memory else None,
        )
    if in_memory:
        # in memory: each unit keeps its records as a plot's layer does
        data = bounded_rows(name, data)
    if is_source(data):
        # a table in an engine: one row per combination, with its counts
        data, counts, key_sums = source_groups(
            name, data, [*facets, *groups, x], rkey, mechanism
        )
    else:
        data = _as_pandas(name, data)
    stored = [rkey] if rkey and counts is None else []
    for c in [x, *groups, *facets, *stored]:
        if c not in data.columns:
            raise PlotninePrivateError(
                f"{name}(): column {c!r} is not in the data; columns are "
                f"{list(data.columns)}."
            )
    panel, labels = _panels(name, frame, data, facets, mechanism.formal)
    gdims = [
        categorical_dimension(g, data[g], declared_levels(frame, g))
        for g in groups
    ]
    if levels is None:
        xdim = _declared_labels(frame, data, x)
        if xdim is None:
            xdim = _declared_dates(frame, data, x)
        if xdim is None:
            xdim = _declared_ints(frame, data, x)
    else:
        xdim = _str_level_dimension(data[x], x, levels)
        if xdim is None:
            xdim = _date_level_dimension(data[x], x, levels)
    family = None
    if xdim is None:
        family = _count_levels(frame, data[x], x, levels)
        xdim = family.dimension(data[x], x)
    key_ints = None
    if rkey is not None and counts is None:
        pt = mechanism.ptable
        try:
            key_ints = record_key_integers(
                data[rkey].to_numpy(),
                kind=pt.key_kind,
                modulus=pt.key_modulus if pt.key_kind == "integer" else None,
            )
        except ValueError as err:
            raise PlotninePrivateError(f"{name}(): rkey: {err}") from None
    dims = [panel, *gdims, xdim]
    if counts is None:
        keep = None
        if unit.max_cells is not None and in_memory:
            units, _ = id_codes(data[unit.column])  # bounded: no missing
            keep = limit_cells(
                dims, units, unit.max_cells, unit.salt, unit.bounding
            )
            if unit.max_records_per_cell is not None:
                # as a plot's count layer keeps them (PrivateCountStat.
                # cells_kept): the first records of each cell in the
                # keyed order
                keep = limit_per_cell(
                    dims,
                    units,
                    record_order(data, units, unit),
                    unit.max_records_per_cell,
                    keep,
                )
        table, idx = assemble(dims, key_ints=key_ints, keep=keep)
    else:
        table, idx = assemble_counts(
            [panel, *gdims, xdim], counts, key_sum=key_sums
        )
    query = cell_query(
        "count",
        "data",
        seed,
        aes={"x": x, **({"rkey": rkey} if rkey else {})},
        groups=[(g, d) for g, d in zip(groups, gdims)],
        facets=facets,
        panel_labels=labels,
        domain=_domain(xdim),
        mechanism=mechanism,
        unit=unit.query_parts(),
    )
    released = release_cells(
        query,
        table,
        mechanism,
        domain="public" if xdim.public else "observed",
        data_object=frame,
    )
    keep: Any = released.keep
    if keep.all():  # a public domain: every cell, without copies
        keep = slice(None)
    # the columns made first and the frame once: a column assigned to a
    # frame is checked and copied again (0.015 s at 10**6 cells)
    out = {}
    for k, f in enumerate(facets):
        out[f] = [panel.values[i][k] for i in idx[keep, 0]]
    for k, (g, d) in enumerate(zip(groups, gdims)):
        out[g] = np.asarray(d.values, dtype=object)[idx[keep, 1 + k]]
    at = idx[keep, -1]
    if levels is not None and pd.api.types.is_numeric_dtype(data[x]):
        xs = _declared_numbers(levels, xdim, at, family)
    elif isinstance(xdim.values, StrLabels):
        xs = label_values(xdim.values, at)
    elif isinstance(xdim.values, pd.DatetimeIndex):
        xs = xdim.values.to_numpy()[at]  # the dtype their Timestamps had
    else:
        xs = np.asarray(xdim.values, dtype=object)[at]
    out[x] = xs
    out["count"] = np.rint(released.values[keep]).astype(np.int64)
    return pd.DataFrame(out, index=pd.RangeIndex(len(at)))


def _declared_numbers(
    levels: Sequence[Any], xdim: Dimension, at: np.ndarray, family: Any
) -> np.ndarray:
    """The declared level (as given: ``4``, not ``4.0``) of each shown
    cell of a numeric x, whose levels are its numbers sorted as floats
    (at places ``at``): a level's number is found by its
    :func:`level_label`. Where every level is a plain int or float whose
    float is a number (none NaN), the sort of those floats (``family``'s
    ``order``) gives it in bulk (a level's label is its float's
    ``repr``)."""
    order = getattr(family, "order", None)
    if order is not None and len(levels) == xdim.size:
        if isinstance(levels, range):
            # ints below 2**53 (the family's floats): made in numpy
            given = np.arange(
                levels.start, levels.stop, levels.step, dtype=np.int64
            ).astype(object)
        else:
            given = np.empty(len(levels), dtype=object)
            given[:] = levels  # plain ints and floats (the family's order)
        if not every_row(order, len(given)):
            given = given[order]
        return given if every_row(at, len(given)) else given[at]
    xs = np.asarray(xdim.values, dtype=object)[at]
    back = {level_label(v): v for v in levels}
    return np.array([back.get(level_label(v), v) for v in xs], object)


def bounded_rows(name: str, data: UnitFrame) -> pd.DataFrame:
    """The rows of an in-memory frame that its privacy unit keeps (at most
    ``max_records`` per unit, chosen as a plot's layer chooses them:
    :func:`~plotnine_private.door.bound_rows`), as pandas."""
    rows = data.to_pandas()
    if not data.unit.bounded:
        return rows
    keep = bound_rows(name, rows, data.unit, data)
    return rows if keep.all() else rows[keep]


def dp_table(
    data: Any,
    x: str,
    *,
    groups: Sequence[str] | str | None = None,
    facets: Sequence[str] | str | None = None,
    eps: float,
    delta: float = DEFAULT_DELTA,
    seed: int | str | None = None,
    adjacency: str = "replace",
    noise: str = "discrete_laplace",
    levels: Sequence[Any] | None = None,
    label: str | None = None,
) -> pd.DataFrame:
    """A differentially private frequency table.

    With the same data, parameters and seed, the counts equal what
    ``ggplot(data, aes(x, fill=groups...)) + geom_bar(stat="count_dp") +
    facet_wrap(facets)`` plots: one release, with the same numbers and
    counted once.

    Parameters
    ----------
    data
        The records: a pandas or polars DataFrame, or a table in an
        engine (:func:`~plotnine_private.engines.source`), counted there.
        With a privacy unit (``pp.source(df, unit=..., max_records=k)``)
        each unit keeps at most ``k`` records, the ones a plot keeps, and
        the noise protects a whole unit.
    x
        Column counted (the bars).
    groups
        Columns of the fill/colour groups, in mapping order.
    facets
        Facet columns, in facet order (declared levels required).
    eps, delta, seed, adjacency, noise, levels
        As in ``stat_count_dp``.
    label
        A label for the ledger and the bundle (``"T03 flights by
        carrier"``); no part of the release's identity or noise.

    Returns
    -------
    DataFrame with the facet, group and x columns and ``count``.

    Examples
    --------
    >>> from plotnine.data import mpg
    >>> t = dp_table(mpg, "class", eps=1, seed=42)
    >>> list(t.columns)
    ['class', 'count']
    """
    name = "dp_table"
    mech = LaplaceCounts(
        validate_eps(name, eps),
        validate_delta(name, delta),
        validate_choice(
            name, "adjacency", adjacency, ("replace", "add_remove")
        ),
        validate_choice(name, "noise", noise, ("discrete_laplace", "laplace")),
    )
    seed = validate_seed(name, seed)
    with tagged(dataset_of(data), validate_label(name, label)):
        return _release_table(
            name, data, x, groups, facets, levels, mech, seed
        )


def ckm_table(
    data: Any,
    x: str,
    *,
    rkey: str,
    ptable,
    groups: Sequence[str] | str | None = None,
    facets: Sequence[str] | str | None = None,
    threshold: float | None = None,
    levels: Sequence[Any] | None = None,
    label: str | None = None,
) -> pd.DataFrame:
    """A frequency table perturbed by the Cell Key Method.

    For the same cells it equals what ``count_ckm`` plots: a cell's noise
    depends only on its records' keys and the p-table.

    Parameters
    ----------
    data
        The records: a pandas or polars DataFrame, or a table in an
        engine (:func:`~plotnine_private.engines.source`); with a privacy
        unit, each unit keeps the records a plot keeps.
    x, groups, facets, levels
        As in :func:`dp_table` (undeclared facets are allowed: CKM shows
        the observed ones).
    rkey
        Column of record keys (``add_record_keys``).
    ptable, threshold
        As in ``stat_count_ckm``.
    label
        As in :func:`dp_table`.

    Examples
    --------
    >>> from plotnine.data import mpg
    >>> from plotnine_private import add_record_keys, create_cnt_ptable
    >>> d = add_record_keys(mpg, rng_seed=1)
    >>> t = ckm_table(d, "class", rkey="rkey",
    ...               ptable=create_cnt_ptable(D=2, V=1.05, js=1))
    >>> int(t["count"].sum()) > 0
    True
    """
    name = "ckm_table"
    mech = CKMCounts(
        as_ptable(name, ptable), validate_threshold(name, threshold)
    )
    with tagged(dataset_of(data), validate_label(name, label)):
        return _release_table(
            name, data, x, groups, facets, levels, mech, None, rkey=rkey
        )
