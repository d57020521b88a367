"""Aggregate at the door: what a private layer knows when it releases.

A private layer turns its rows into released cells as soon as its mapping
is evaluated (the hook in :mod:`plotnine_private._compat`), before
plotnine trains any scale or lays out any panel on them. From then on
plotnine only sees released values and public declarations.

This module gathers the public facts the layer needs for that, in a
:class:`Door`: where its data come from (the *source* of its release), the
declared levels of its columns, its scales, its panels. And it makes the
facet layout public: a private layer shows plotnine's facet one row per
combination of the declared levels of the facet variables (its
*skeleton*), never its records, so panels exist for every declared level
whatever the data and ``drop`` say.
"""

from __future__ import annotations

import contextlib
import itertools
import warnings
import weakref
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._compat import keep_build, kept_build, layer_mapping, layer_own_data
from .cells import level_label
from .declarations import registered
from .exceptions import PlotninePrivateError, PrivacyWarning
from .identifiers import content_ids, id_codes
from .mechanisms.release.bounding import bounded_mask, order_keys
from .mechanisms.session import tagged
from .units import (
    ONE_ROW,
    Unit,
    UnitFrame,
    dataset_of,
    is_private_source,
    kept_warning,
    unit_of,
)
from .validation import from_polars, validate_label

if TYPE_CHECKING:
    from plotnine import ggplot
    from plotnine.layer import layer

__all__ = [
    "Door",
    "BuiltLayer",
    "LayerBuild",
    "layer_build",
    "layer_releases",
    "release_layer",
    "declared_levels",
    "facet_skeleton",
    "charged_as",
    "is_private",
    "label",
    "level_label",
    "make_door",
    "private_twins",
    "refuse_raw_layers",
    "release_label",
    "warn_kept",
]

# plotnine's own columns of a layout (0.16 adds the secondary axes)
LAYOUT_COLUMNS = {
    "AXIS_X_SEC",
    "AXIS_Y_SEC",
    "PANEL",
    "ROW",
    "COL",
    "SCALE_X",
    "SCALE_Y",
    "AXIS_X",
    "AXIS_Y",
}


def is_private(lyr: layer) -> bool:
    """Whether a layer releases through a mechanism (at the door)."""
    return hasattr(lyr.stat, "release_at_door")


def declared_levels(frame: Any, column: str) -> list | None:
    """The public levels of ``column`` of a user's data frame, or None.

    Declared: a pandas Categorical (its categories; build it with explicit
    ``categories=`` from public knowledge), a polars ``Enum`` (its
    categories) and a boolean column (False, True; numpy ``bool``, pandas
    ``boolean``, or an ``object`` column of booleans with missing values,
    which is what a numpy bool column with a missing value becomes). Not
    declared: a polars ``Categorical`` (its categories are the values
    seen, in order of appearance), strings, numbers.

    >>> declared_levels(pd.DataFrame({"a": pd.Categorical(
    ...     ["x"], categories=["x", "y"])}), "a")
    ['x', 'y']
    >>> declared_levels(pd.DataFrame({"a": ["x"]}), "a") is None
    True
    """
    if frame is None or not isinstance(column, str):
        return None
    if isinstance(frame, UnitFrame):
        frame = frame.data
    if hasattr(frame, "declared_levels"):  # a table in an engine
        return frame.declared_levels(column)
    if from_polars(frame):
        import polars as pl

        if column not in frame.columns:
            return None
        dtype = frame.schema[column]
        if isinstance(dtype, pl.Enum):
            return list(dtype.categories.to_list())
        if dtype == pl.Boolean:
            return [False, True]
        return None
    if not isinstance(frame, pd.DataFrame) or column not in frame.columns:
        return None
    dtype = frame[column].dtype
    if isinstance(dtype, pd.CategoricalDtype):
        # tolist(), not list(): iterating 10**6 Arrow-backed labels one by
        # one takes seconds
        return dtype.categories.tolist()
    if pd.api.types.is_bool_dtype(dtype):  # numpy bool and "boolean"
        return [False, True]
    if pd.api.types.is_object_dtype(dtype) and _booleans_with_missing(
        frame[column]
    ):
        return [False, True]
    return None


def _booleans_with_missing(column: pd.Series) -> bool:
    """Whether an object column holds booleans and missing values only:
    a numpy bool column with one missing value becomes ``object``, and
    its domain stays {False, True} (else one missing value would turn a
    declared domain into an observed one)."""
    return pd.api.types.infer_dtype(column, skipna=True) == "boolean"


def _source(plot: ggplot, lyr: layer) -> tuple[str, Any]:
    """(label, object) of the data a layer releases from.

    The plot's data is ``"data"`` (as a table's data is); a layer's own
    ``data=`` is ``"layer k data"``, with k the first layer given the same
    object (or function), so two layers on one frame are one source and a
    layer on another frame, even with equal rows, is another.
    """
    own = layer_own_data(lyr)
    if own is None:
        return "data", plot.data
    for k, other in enumerate(plot.layers):
        if layer_own_data(other) is own:
            break
    else:  # pragma: no cover - the layer is in the plot
        k = 0
    if callable(own):
        return f"layer {k} data (function of the plot's data)", plot.data
    return f"layer {k} data", own


def private_twins(stat_obj: Any) -> list[str]:
    """The private stats (``stat="..."`` names, DP first) that replace a
    plotnine stat, from the registry's counterparts: ``["count_dp",
    "count_ckm"]`` for ``stat_count``; empty for a stat without a twin
    (``stat_identity``, ``stat_smooth``)."""
    entries = registered(aliases=False)
    for cls in type(stat_obj).__mro__:
        name = cls.__name__.removeprefix("stat_")
        found = [e.name for e in entries if e.declaration.counterpart == name]
        if found:
            return sorted(found, key=lambda n: (not n.endswith("_dp"), n))
    return []


def refuse_raw_layers(plot: ggplot, layers: Any) -> None:
    """Refuse, before any layer is released or drawn, a layer that is not
    private on data from ``pp.source(...)`` (a frame in memory with its
    unit, or a table in an engine): plotnine's own stat (or
    ``stat="identity"``) would draw the records themselves. A layer with
    its own plain ``data=`` (numbers already released: a ``dp_table``, a
    geom_text of a released table) and layers on a plain frame are left
    to plotnine."""
    for i, lyr in enumerate(layers):
        if is_private(lyr) or getattr(lyr, "_pnp_unperturbed", False):
            continue
        if not is_private_source(_source_frame(plot, lyr)):
            continue
        geom = type(lyr.geom).__name__
        stat = type(lyr.stat).__name__
        plain = stat.removeprefix("stat_")
        where = (
            f"layer {i} ({geom} with stat={plain!r}) is on data from "
            "pp.source(...), whose records are private"
        )
        twins = private_twins(lyr.stat)
        if twins:
            names = " or ".join(f"stat={t!r}" for t in twins)
            fix = (
                f"plotnine's {stat} would compute on the records "
                "themselves and draw them unprotected. Use its private twin: "
                f"{geom}(stat={twins[0]!r}, ...) ({names}; pp.stats() "
                "lists each private stat and the plotnine stat it "
                "replaces)"
            )
        elif plain == "identity":
            fix = (
                "stat='identity' would draw the records themselves. Use "
                "a private stat (pp.stats()), or draw numbers already "
                "released: give the layer its own data= (a pp.dp_table(...) "
                "or pp.layer_data(...) table)"
            )
        else:
            fix = (
                f"plotnine's {stat} has no private twin and would "
                "compute on the records themselves. Use a private stat "
                "(pp.stats() lists them), or draw numbers already "
                "released as the layer's own data="
            )
        raise PlotninePrivateError(
            f"{where}: {fix}. Nothing was released or drawn."
        )


#: where pp.label keeps a plot's label (plotnine copies a plot's
#: attributes with it)
PLOT_LABEL = "_pnp_label"


def label(plot: ggplot, text: str) -> ggplot:
    """Label the releases of a figure: ``pp.label(plot, "F01 flights by
    carrier")``.

    The label is shown in the ledger's rows (``pp.ledger(path)``, the
    command line) and in the bundle's ``results.json``; it names the
    figure for a reader, and is no part of any release's identity or
    noise (relabelling a figure and drawing it again is not a new
    release, and costs nothing). A layer's own ``label=`` parameter
    takes precedence over the plot's.

    Parameters
    ----------
    plot
        A ggplot; it is labelled in place and returned.
    text
        One line of printable text, at most 200 characters.

    Returns
    -------
    ggplot
        ``plot``, labelled.
    """
    from plotnine import ggplot as _ggplot

    if not isinstance(plot, _ggplot):
        raise PlotninePrivateError(
            f"label(): plot must be a ggplot, got {type(plot).__name__}; "
            "label each plot of a composition (pp.label(a, ...), "
            "pp.label(b, ...)) before composing them."
        )
    setattr(plot, PLOT_LABEL, validate_label("label", text))
    return plot


def release_label(plot: ggplot, lyr: layer) -> str | None:
    """The label of a layer's releases: its own ``label=``, else the
    plot's (:func:`label`), else None."""
    own = getattr(lyr.stat, "params", {}).get("label")
    return own if own is not None else getattr(plot, PLOT_LABEL, None)


def charged_as(plot: ggplot, lyr: layer) -> Any:
    """The block a layer releases in: its releases are charged to the
    data set its source names (``pp.source(..., dataset=...)``) with its
    label (:func:`release_label`)."""
    return tagged(
        dataset_of(_source_frame(plot, lyr)), release_label(plot, lyr)
    )


def _source_frame(plot: ggplot, lyr: layer) -> Any:
    own = layer_own_data(lyr)
    if own is None or callable(own):
        return plot.data
    return own


@dataclass
class Door:
    """Public facts a private layer releases with (see module docstring).

    Attributes
    ----------
    source, data_object
        The data source's label and object (see :func:`make_door`).
    mapping
        Aesthetic -> expression text (``{"x": "class", "fill": "drv"}``).
    declared
        Aesthetic -> declared levels, for aesthetics mapped to a bare
        column of the source whose levels are declared.
    scales
        ``scales.x`` / ``scales.y``: the plot's position scales (or None).
    layout
        plotnine's layout table (one row a panel).
    facet_columns
        The facet variables in the layout.
    panel_labels
        Canonical label of each panel, in layout order (text for the
        query and the report).
    panel_values
        Each panel's facet values (a tuple, empty without facets), in
        layout order: what names a panel in the noise words.
    panels
        Words for the report: how the panels were made.
    multiplicity
        In how many panels one record can be (more than 1 with margins).
    unit
        The privacy unit the data declare (:mod:`plotnine_private.units`):
        its rows are already bounded to ``unit.max_records`` per unit.
    rows
        The layer's rows before its mapping was evaluated (every column of
        its data, with ``PANEL``), read by the evaluated rows' index
        labels (``rows.loc[data.index]``): for stats that need unmapped
        columns (the PCA's features). Where a unit's bound left rows out
        and the labels are unique, the rows left out are still here
        (never read: no evaluated row has their labels).
    """

    source: str
    data_object: Any
    mapping: dict[str, str]
    declared: dict[str, list]
    scales: Any
    layout: pd.DataFrame
    facet_columns: list[str] = field(default_factory=list)
    panel_labels: list[str] = field(default_factory=list)
    panel_values: list[tuple] = field(default_factory=list)
    panels: str = "single panel"
    multiplicity: int = 1
    rows: pd.DataFrame | None = None
    unit: Unit = ONE_ROW


@dataclass
class LayerBuild:
    """What one build of one private layer uses and releases.

    A stat object can be shared by plots, or built twice at once, so
    nothing of a build is kept on it: the door makes one of these per
    layer and build, the stat works on a copy of itself that carries it
    (:meth:`~plotnine_private.stats.base.PrivateCountStat.for_build`),
    and the layer keeps what it released (:func:`layer_build`).

    Attributes
    ----------
    door
        The public facts of the layer.
    records
        The layer's rows at the door.
    releases
        The layer's
        :class:`~plotnine_private.mechanisms.release.engine.Release`
        records, in the order they were made.
    axis_cache
        Each axis's bins (public or privately estimated), computed once a
        build.
    discrete_x, x_order
        Whether x is discrete, and the order of its levels (count family).
    dated_x
        Whether a continuous x's declared levels are dates, its cells
        named by their Timestamps (count family): its scale's transform
        then moves the bars, not the cells.
    fine
        The released fine histogram (density, ECDF, box plot; for
        inspection, never drawn raw).
    hidden_cells
        Cells with records a CKM threshold hid (None under DP, where the
        number is not released).
    weighted
        Whether the layer counts weights (a mapped ``weight``, CKM only):
        its released counts are then not whole numbers.
    marks
        How many of the layer's marks are only noise, how many it has,
        and how it draws them (``noise_marks``;
        :func:`~plotnine_private.stats.marks.mark_layer`).
    """

    door: Door
    records: pd.DataFrame = field(default_factory=pd.DataFrame)
    releases: list = field(default_factory=list)
    axis_cache: dict = field(default_factory=dict)
    discrete_x: bool = False
    x_order: list = field(default_factory=list)
    dated_x: bool = False
    fine: Any = None
    hidden_cells: int | None = None
    weighted: bool = False
    marks: tuple[int, int, str] | None = None
    #: the p-table of a CKM layer drawn from a synopsis (its stat has
    #: none: the synopsis's is used)
    ptable: Any = None

    def done(self) -> BuiltLayer:
        """What the layer keeps: no rows and no door (a copy of the plot
        copies it, and neither belongs in it)."""
        return BuiltLayer(
            self.releases,
            self.axis_cache,
            self.fine,
            self.hidden_cells,
            self.door.unit,
            self.marks,
            self.ptable,
        )


@dataclass
class BuiltLayer:
    """What a built private layer released: its ``releases``, the bins of
    its axes (``axis_cache``), its fine histogram (``fine``) and the
    cells a CKM threshold hid (``hidden_cells``), as in
    :class:`LayerBuild`, the privacy unit it protected (``unit``) and how
    many of its marks are only noise (``marks``: noise marks, all marks,
    how they are drawn; :mod:`~plotnine_private.stats.marks`), and the
    p-table of a CKM layer drawn from a synopsis (``ptable``)."""

    releases: list
    axis_cache: dict
    fine: Any = None
    hidden_cells: int | None = None
    unit: Unit = ONE_ROW
    marks: tuple[int, int, str] | None = None
    ptable: Any = None


#: how a layer draws its noise marks, by its ``noise_marks``
MARKS_DRAWN = {
    "fade": "drawn faded",
    "drop": "not drawn",
    "draw": "drawn as the others",
}


def marks_words(built: BuiltLayer | None) -> str:
    """How many of a built layer's marks are within noise, in words for
    a caption or a report ("" when none is).

    >>> b = BuiltLayer([], {}, marks=(3, 12, "fade"))
    >>> marks_words(b)
    '3 of 12 marks are within noise (drawn faded)'
    """
    if built is None or not built.marks or not built.marks[0]:
        return ""
    noise, total, how = built.marks
    verb = "is" if noise == 1 else "are"
    drawn = MARKS_DRAWN.get(how, how)
    return f"{noise} of {total} marks {verb} within noise ({drawn})"


def layer_build(lyr: layer) -> BuiltLayer | None:
    """What the last build of a private layer released (None before it
    is built)."""
    return kept_build(lyr)


def layer_releases(lyr: layer) -> list | None:
    """The releases of a private layer's last build (empty before it is
    built; None: the layer is not private)."""
    build = kept_build(lyr)
    if build is not None:
        return build.releases
    return [] if is_private(lyr) else None


def _mapping_text(lyr: layer) -> dict[str, str]:
    out = {}
    for ae, expr in layer_mapping(lyr).items():
        out[str(ae)] = expr if isinstance(expr, str) else repr(expr)
    return out


def make_door(
    plot: ggplot, lyr: layer, rows: pd.DataFrame | None = None
) -> Door:
    """The door of a private layer, after ``layout.setup``."""
    source, obj = _source(plot, lyr)
    frame = _source_frame(plot, lyr)
    declared = {}
    for ae, expr in layer_mapping(lyr).items():
        levels = declared_levels(frame, expr)
        if levels is not None:
            declared[str(ae)] = levels
    layout = plot.layout.layout
    cols = [c for c in layout.columns if c not in LAYOUT_COLUMNS]
    values = (
        [tuple(row) for row in layout[cols].itertuples(index=False)]
        if cols
        else [()] * len(layout)
    )
    labels = ["|".join(level_label(v) for v in row) for row in values]
    multiplicity = 1
    if cols:
        patterns = {
            tuple(str(v) == "(all)" for v in row)
            for row in layout[cols].itertuples(index=False)
        }
        multiplicity = len(patterns)
    scales = SimpleNamespace(
        x=plot.scales.get_scales("x"), y=plot.scales.get_scales("y")
    )
    return Door(
        source=source,
        data_object=obj,
        mapping=_mapping_text(lyr),
        declared=declared,
        scales=scales,
        layout=layout,
        facet_columns=cols,
        panel_labels=labels,
        panel_values=values,
        panels=getattr(lyr, "_pnp_panels", "single panel"),
        multiplicity=multiplicity,
        rows=rows,
        unit=unit_of(frame),
    )


def facet_skeleton(
    plot: ggplot, lyr: layer, data: pd.DataFrame, facet_vars: list[str]
) -> pd.DataFrame:
    """What a private layer shows the facet: one row per combination of
    the declared levels of the facet variables.

    DP layers refuse an undeclared facet variable (a panel would appear
    exactly when a record has its value); CKM layers, which do not hide
    empty cells anyway, show the observed values and say so in the report.
    Sets ``lyr._pnp_panels`` (words for the report).
    """
    if not facet_vars:
        lyr._pnp_panels = "single panel"
        return data
    frame = _source_frame(plot, lyr)
    levels = {v: declared_levels(frame, v) for v in facet_vars}
    undeclared = [v for v, lv in levels.items() if lv is None]
    if undeclared:
        if getattr(lyr.stat, "DP", False):
            raise PlotninePrivateError(
                f"{type(lyr.stat).__name__}(): facet variable(s) "
                f"{', '.join(undeclared)} have no public set of levels, so "
                "a panel would appear exactly when some record has its "
                "value. Declare them from public knowledge: a pandas "
                "Categorical with explicit categories=[...] (or a polars "
                "Enum) in the data."
            )
        if hasattr(frame, "declared_levels"):  # a table in an engine
            raise PlotninePrivateError(
                f"{type(lyr.stat).__name__}(): facet variable(s) "
                f"{', '.join(undeclared)} of a table in an engine have no "
                "declared levels, and the panels are laid out before any "
                "query runs. Declare them: an enum column, or "
                "pp.source(..., levels={...})."
            )
        lyr._pnp_panels = f"observed values of {', '.join(undeclared)}"
        return data
    lyr._pnp_panels = f"public: declared facets ({', '.join(facet_vars)})"
    # every variable is declared here (undeclared ones returned above)
    declared = {v: lv for v, lv in levels.items() if lv is not None}
    combos = list(itertools.product(*(declared[v] for v in facet_vars)))
    if not combos:
        raise PlotninePrivateError(
            f"{type(lyr.stat).__name__}(): a facet variable has no "
            "declared levels."
        )
    columns = list(zip(*combos))
    return pd.DataFrame(
        {
            v: pd.Categorical(list(col), categories=declared[v])
            for v, col in zip(facet_vars, columns)
        }
    )


def release_layer(
    lyr: layer, plot: ggplot, rows: pd.DataFrame, data: pd.DataFrame
) -> pd.DataFrame:
    """The released cells of a private layer (the door's hook): its
    evaluated, transformed ``data`` through its stat, with the public
    facts of :func:`make_door` (``rows``: the layer data before its
    mapping was evaluated). Where the data declare a privacy unit, each
    unit first keeps at most ``max_records`` rows (:func:`bound_rows`)."""
    frame = _source_frame(plot, lyr)
    unit = unit_of(frame)
    if unit.bounded:
        keep = bound_rows(type(lyr.stat).__name__, rows, unit, frame)
        if not keep.all():
            # plotnine's facets reorder the evaluated rows (by panel):
            # keep them by index label, not by position
            data = data[_kept_labels(rows.index, data.index, keep)]
            if not rows.index.is_unique:
                rows = rows[keep]
            # else the door's rows stay whole (no copy of every column):
            # they are read by the evaluated rows' labels, which are
            # those of kept rows only
    warn_kept(type(lyr.stat).__name__, unit)
    build = LayerBuild(make_door(plot, lyr, rows))
    with charged_as(plot, lyr):
        out = lyr.stat.release_at_door(data, build)
    keep_build(lyr, build.done())
    return out


def warn_kept(name: str, unit: Unit) -> None:
    """A :class:`PrivacyWarning` when the bound keeps an estimated share
    of records below one half (:func:`~plotnine_private.units.
    kept_warning`)."""
    message = kept_warning(name, unit)
    if message is not None:
        warnings.warn(message, PrivacyWarning, stacklevel=2)


def _kept_labels(
    index: pd.Index, labels: pd.Index, keep: np.ndarray
) -> np.ndarray:
    """Which of ``labels`` (an evaluated layer's index: the rows' labels,
    perhaps reordered) name a kept row of ``index``; by position where
    the labels are not unique."""
    if not index.is_unique:
        return keep
    if (
        isinstance(index, pd.RangeIndex)
        and index.step == 1
        and labels.dtype.kind in "iu"
        and len(labels)
    ):
        # the usual case: a label is its position plus the start (a
        # lookup instead of isin's hash table)
        pos = labels.to_numpy().astype(np.int64) - index.start
        if pos.min() >= 0 and pos.max() < len(keep):
            return keep[pos]
    return labels.isin(index[keep])


#: masks already computed, per source frame (held weakly): the layers of
#: a figure, its report, its bundle and the other figures of one source
#: bound the same rows once
_MASKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def bound_rows(
    name: str, rows: pd.DataFrame, unit: Unit, source: Any = None
) -> np.ndarray:
    """Which of a layer's rows their privacy unit keeps (a boolean array):
    the ``unit.max_records`` with the smallest public keyed hash of (unit,
    record)
    (:func:`~plotnine_private.mechanisms.release.bounding.bounded_mask`);
    a record is its ``record_id`` or, without one, a hash of its content
    (:func:`content_ids`).

    With ``source`` (the frame the rows come from) the mask is remembered
    and reused when the same units and records come again: the mask is a
    function of those alone, and they are compared in full."""
    for col in (unit.column, unit.record_id):
        if col is not None and col not in rows.columns:
            raise PlotninePrivateError(
                f"{name}(): the data have no column {col!r} named by the "
                "privacy unit of pp.source(); a layer with its own data= "
                "must have the unit's columns too."
            )
    memo = _MASKS.get(source) if source is not None else None
    seen = None if memo is None else memo.get(unit)
    values = _remembered(rows[unit.column])
    if seen is not None and _same_values(seen[3], values):
        # the same unit values again (a text column compared, not hashed
        # again: its hashes cost far more than the comparison)
        units, no_unit = seen[0], seen[1]
    else:
        units, no_unit = id_codes(rows[unit.column])
    if (
        seen is not None
        and np.array_equal(seen[0], units)
        and _same_mask(seen[1], no_unit)
    ):
        # the mask is a function of the units and their records: a frame
        # changed in place keeps a mask that still bounds every unit
        return seen[2]
    records: Any
    missing = no_unit
    if unit.record_id is not None:
        records, no_record = id_codes(rows[unit.record_id])
        missing = _either(no_unit, no_record)
    else:

        def records(positions: np.ndarray) -> np.ndarray:
            return content_ids(rows, positions, unit.bounding)

    if missing is None or not missing.any():
        mask = bounded_mask(
            units, records, unit.max_records, unit.salt, unit.bounding
        )
    else:
        # a record without a unit (or a record id) is left out: it
        # belongs to nobody the bound could count
        named = np.flatnonzero(~missing)
        if callable(records):
            content = records

            def records(positions: np.ndarray) -> np.ndarray:
                return content(named[positions])

        else:
            records = records[named]
        mask = np.zeros(len(units), dtype=bool)
        mask[named] = bounded_mask(
            units[named], records, unit.max_records, unit.salt, unit.bounding
        )
    if source is not None:
        with contextlib.suppress(TypeError):  # cannot be held weakly
            _MASKS.setdefault(source, {})[unit] = (
                units,
                no_unit,
                mask,
                values,
            )
    return mask


def record_order(rows: pd.DataFrame, units: np.ndarray, unit: Unit):
    """Each row's key in its unit's public keyed order (the order
    :func:`bound_rows` keeps records in: by ``record_id``, or by a hash
    of the record's content), for the bounds per cell
    (``max_records_per_cell``)."""
    if unit.record_id is not None:
        records, _ = id_codes(rows[unit.record_id])
    else:
        records = content_ids(rows, None, unit.bounding)
    return order_keys(units, records, unit.salt, unit.bounding)


def _remembered(column: pd.Series) -> Any:
    """A copy of a column of unit values that is costly to name again
    (text, objects: each distinct value is hashed), None for numbers
    (named by a cast). A copy, so a column changed in place is seen
    changed (an Arrow-backed column's copy shares its immutable data)."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "biufmM":
        return None
    return column.array.copy()


def _same_values(a: Any, b: Any) -> bool:
    """Whether two remembered columns (:func:`_remembered`) are equal,
    value by value (missing values equal)."""
    if a is None or b is None or type(a) is not type(b) or len(a) != len(b):
        return False
    return bool(a.equals(b))


def _either(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """The union of two optional masks (None: no record)."""
    if a is None or b is None:
        return b if a is None else a
    return a | b


def _same_mask(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(a, b)
