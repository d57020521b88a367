"""The shared base of every private count stat.

A private stat does plumbing only (``docs/architecture.md``). It releases
*at the door* (:mod:`plotnine_private.door`): as soon as its mapping is
evaluated, :meth:`PrivateCountStat.release_at_door` turns the layer's rows
into released cells, before plotnine trains a scale or lays out a panel.

1. **Domain.** The family (count, bin, bin2d, sum, hex) maps each record to
   a cell of a domain (:class:`FamilyCells`) and says whether that domain
   is *public* (from parameters, declared levels or user scale limits) or
   only *observed*. Group aesthetics (``fill``, ``colour`` ...) and panels
   multiply it (:mod:`plotnine_private.cells`).
2. **Aggregation** (:func:`~plotnine_private.cells.assemble`): true
   counts, weighted counts and exact record-key sums per cell, by integer
   codes; every cell of a public domain, only non-empty ones otherwise.
3. **Release** by the engine
   (:func:`~plotnine_private.mechanisms.release.engine.release_cells`) with the
   layer's mechanism, :class:`~plotnine_private.mechanisms.release.engine.
   LaplaceCounts` (DP) or :class:`~plotnine_private.mechanisms.release.engine.
   CKMCounts`: the only thing in which a DP stat and its CKM twin differ.
   The engine decides the release's public identity from the query
   (:meth:`PrivateCountStat.query`) and records a typed ``Release``.
4. **Shaping** the output like the plotnine stat it replaces, with derived
   variables (prop, density, ...) recomputed from released counts, and
   ``count_label`` (:func:`count_labels`: the count as text, empty where
   the released count is 0) for every family with a ``count``.

Writing a family: subclass :class:`PrivateCountStat`, set ``FAMILY`` and
``QUERY_PARAMS``, implement ``domain(scales, rows=None) -> FamilyCells``
and ``shape_output(cells, released) -> DataFrame``; then
``class stat_x_dp(DPMixin, FamilyBase)`` and
``class stat_x_ckm(CKMMixin, FamilyBase)`` with merged ``DEFAULT_PARAMS``.
"""

from __future__ import annotations

import copy
import difflib
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from plotnine.scales.scale_discrete import scale_discrete
from plotnine.stats.stat import stat

from .._compat import (
    given_arguments,
    keep_checked_params,
    scale_transform,
    unknown_arguments,
)
from ..cells import (
    CHUNK,
    Dimension,
    assemble,
    categorical_dimension,
    cell_query,
)
from ..declarations import Declared
from ..door import Door, LayerBuild, level_label, record_order
from ..identifiers import id_codes
from ..mechanisms.errors import PrivacyWarning
from ..mechanisms.release.engine import (
    Query,
    Release,
    Released,
    data_digest,
    release_cells,
)
from ..unit_cells import limit_cells, limit_per_cell, one_per_cell
from ..validation import fail as _fail
from ..validation import (
    validate_breaks,
    validate_label,
    validate_layer_data,
    validate_range,
    validate_range_share,
)
from ..validation import validate_choice as validate_choice
from .cell_frames import CellFrame, FamilyCells
from .domains import advise_edge_mass
from .grouping import GroupingMixin
from .intervals import add_count_bounds, count_noise_bounds
from .marks import draw_noise_marks, mark_layer, validate_noise_marks
from .mixins import CKM_PARAMS as CKM_PARAMS
from .mixins import DP_PARAMS as DP_PARAMS
from .mixins import CKMMixin, DPMixin
from .signal import warn_eps_scale

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "CKMMixin",
    "CellFrame",
    "DPMixin",
    "FamilyCells",
    "PrivateCountStat",
    "level_label",
    "validate_breaks",
    "validate_range",
    "validate_range_share",
]


def scale_facts(scale) -> tuple:
    """The public facts of a position scale that change cells: a transform
    other than the identity, and user limits (empty for a default scale,
    so that a table states the same query as a plot)."""
    if scale is None:
        return ()
    trans = scale_transform(scale)
    facts: tuple = ()
    if trans is not None:
        facts += (("transform", *trans),)
    limits = getattr(scale, "limits", None)
    if callable(limits):
        facts += (("limits", "function"),)
    elif limits is not None:
        facts += (("limits", tuple(level_label(v) for v in limits)),)
    return facts


def _missing(col: pd.Series):
    """Chunks of a column with, for each, whether each value is missing
    (or infinite, for numbers): no temporary as long as the column."""
    n = len(col)
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = np.asarray(col.array.codes)
        for start in range(0, n, CHUNK):
            part = slice(start, start + CHUNK)
            yield part, codes[part] < 0
    elif pd.api.types.is_numeric_dtype(col) and not (
        pd.api.types.is_bool_dtype(col)
    ):
        values = col.to_numpy(dtype=float, na_value=np.nan)
        for start in range(0, n, CHUNK):
            part = slice(start, start + CHUNK)
            yield part, ~np.isfinite(values[part])
    else:
        yield slice(0, n), col.isna().to_numpy()


def count_labels(count: pd.Series) -> np.ndarray:
    """Released counts as label text, empty where the released count is 0.

    The computed variable ``count_label`` of every private count stat:
    ``aes(label=after_stat("count_label"))`` labels a bar, bin or tile
    with its count but leaves cells released as 0 unlabelled (stacked or
    dodged bars over a declared domain then do not print "0" for every
    empty combination). Post-processing of released values: free.

    >>> count_labels(pd.Series([3, 0, 12])).tolist()
    ['3', '', '12']
    """
    v = np.asarray(count, dtype=float)
    return np.array(
        [
            "" if x == 0 else (f"{x:.0f}" if x == int(x) else f"{x:g}")
            for x in v
        ],
        dtype=object,
    )


#: names users write for a parameter that spelling alone does not find
_SYNONYMS = {"epsilon": "eps", "budget": "eps", "privacy_budget": "eps"}


def refuse_unknown_arguments(stat_obj: Any) -> None:
    """Refuse an argument no stat, layer or geom takes (plotnine would
    drop ``esp=1`` or ``max_record=5`` silently, and the layer would be
    drawn without what the user asked for), naming the closest
    parameter."""
    unknown = unknown_arguments(stat_obj)
    if not unknown:
        return
    key = unknown[0]
    value = given_arguments(stat_obj)[key]
    params = sorted(p for p in stat_obj.DEFAULT_PARAMS if p != "geom")
    near = [_SYNONYMS[key]] if _SYNONYMS.get(key) in params else []
    near = near or difflib.get_close_matches(key, params, n=1, cutoff=0.6)
    fix = (
        f"did you mean {near[0]}={value!r}?"
        if near
        else f"its parameters are {', '.join(params)}."
    )
    raise _fail(
        type(stat_obj).__name__,
        f"unknown parameter {key}={value!r} (plotnine would ignore it "
        f"silently): {fix}",
    )


def _rows_of(rows: pd.DataFrame, labels: pd.Index) -> pd.DataFrame:
    """``rows.loc[labels]``, by position where the rows' index is a plain
    range (the usual case: a lookup of each label's place instead of a
    hash table of ten million labels)."""
    index = rows.index
    if (
        isinstance(index, pd.RangeIndex)
        and index.step == 1
        and labels.dtype.kind in "iu"
        and len(labels)
    ):
        pos = labels.to_numpy().astype(np.int64) - index.start
        if pos.min() >= 0 and pos.max() < len(rows):
            return rows.iloc[pos]
    return rows.loc[labels]


def units_mechanism(mechanism, unit, dims: list[Dimension]):
    """The mechanism of a layer that counts units (``count="units"``):
    one unit adds 1 to each of at most ``unit.unit_cells`` cells, and to
    no more cells than a public domain has (its size is public)."""
    cells = unit.unit_cells
    if dims and all(d.public for d in dims):
        cells = max(1, min(cells, int(np.prod([d.size for d in dims]))))
    return mechanism.bounded(cells, None if unit.max_cells is None else cells)


class PrivateCountStat(Declared, GroupingMixin, stat):
    """Base of all private count stats (not registered under a stat name).

    Subclasses implement :meth:`domain` and :meth:`shape_output`.

    The layer is released at the door (:meth:`release_at_door`), so
    plotnine runs no statistic on its released cells (the adapter's hook;
    stats do not override ``compute_layer``).
    """

    DP: bool = False
    #: the query family (the engine's identity of the release)
    FAMILY: str = ""
    #: parameters that change the released cells (part of the query)
    QUERY_PARAMS: tuple[str, ...] = ()
    #: the released count of a cell (its interval variables are
    #: ``<column>_low``/``<column>_high``)
    COUNT_COLUMN = "count"
    #: whether ``count="units"`` (distinct units per cell) is offered
    UNIT_COUNTS: bool = False

    def __init__(self, mapping=None, data=None, **kwargs) -> None:
        validate_layer_data(type(self).__name__, mapping, data)
        super().__init__(mapping, data, **kwargs)
        refuse_unknown_arguments(self)
        if self.UNIT_COUNTS:
            validate_choice(
                type(self).__name__,
                "count",
                self.params.get("count"),
                ("records", "units"),
            )
        self.validate_params()
        # a label names the release for readers (ledger, bundle): never
        # part of its query, so never of its identity or noise
        self.params["label"] = validate_label(
            type(self).__name__, self.params.get("label")
        )
        # how marks that are only noise are drawn (stats/marks.py)
        self.params["noise_marks"] = validate_noise_marks(
            type(self).__name__, self.params.get("noise_marks", "fade")
        )
        keep_checked_params(self)

    # -- hooks for subclasses ------------------------------------------
    def validate_params(self) -> None:
        """Check parameter values; raise before any plotting."""

    def domain(
        self, scales, rows: pd.DataFrame | None = None
    ) -> FamilyCells:  # pragma: no cover - abstract
        """The family's domain (cells, naming content, the stateless
        :mod:`~plotnine_private.families` object) without records' codes.

        Extension hook: every family implements it, from public facts
        (parameters, ``self.build.door.declared``, user scale limits).
        ``rows`` (the layer's rows after the mapping, or None) are read
        only for a private range (DP without public bins; without rows,
        :class:`~plotnine_private.stats.domains.RowsNeeded`) and for an
        observed domain (``public=False``, thresholded by the engine;
        without rows it has no cells yet). ``scales``: the plot's
        position scales. Returns a ``FamilyCells`` with ``code`` None, or
        the records' codes when ``rows`` made an observed domain.
        """
        raise NotImplementedError

    def declare_domain(self, scales) -> FamilyCells:
        """:meth:`domain` from the public parameters and scales alone: no
        record is read. The plot door, the engine push-down and the
        tables share this declaration (tests check it equals what the
        door uses on real data)."""
        return self.domain(scales)

    def family_cells(self, data: pd.DataFrame, scales) -> FamilyCells:
        """Each record's cell of the family's domain (:meth:`domain`,
        then the family object's codes).

        Parameters
        ----------
        data
            The layer's rows after the mapping, without missing positions.
        scales
            The plot's position scales (``scales.x``, ``scales.y``).

        Returns
        -------
        FamilyCells
            The domain's cells, their naming content and each record's
            cell (``-1``: outside, not counted).
        """
        fam = self.domain(scales, data)
        return fam if fam.code is not None else fam.coded(data)

    def drawn_range(self) -> dict[str, tuple[float, float]]:
        """The documented range of what the layer's marks are drawn
        from: by position axis (``"y"``: every drawn extent on it, ``y``,
        ``ymin``, ``ymax`` of bars, columns, ranges, areas, error bars and
        their intervals) or by computed variable (``"count"`` of tiles
        and hexagons, whose positions are public bins). Released values
        are clipped to it, so no mark reaches past it (a bar's baseline
        0 is the geom's own)."""
        return {}

    def shape_output(
        self, cells: CellFrame, released: Released
    ) -> pd.DataFrame:  # pragma: no cover - abstract
        """Shape released cells like the plotnine stat the family replaces.

        Extension hook: every family implements it. Use released values
        only (``released.values``, ``released.noisy``, ``released.keep``);
        derived variables (``prop``, ``density``...) are recomputed from
        them, which is free post-processing.

        Parameters
        ----------
        cells
            One row per cell: the family's columns, group columns,
            ``PANEL`` and ``group``, aligned with ``released``.
        released
            The engine's output for those cells.

        Returns
        -------
        pandas.DataFrame
            The layer's computed data, one row per shown cell.
        """
        raise NotImplementedError

    def make_mechanism(self):  # pragma: no cover - provided by mixins
        """The layer's count mechanism, built from its parameters.

        Provided by :class:`DPMixin` (``LaplaceCounts``) and
        :class:`CKMMixin` (``CKMCounts``); a new mechanism comes with a
        mixin that overrides it.

        Returns
        -------
        LaplaceCounts or CKMCounts
            An object with ``parameters()``, ``privacy_map()`` and
            ``perturb()`` (see
            :mod:`plotnine_private.mechanisms.release.engine`).
        """
        raise NotImplementedError

    def record_key_integers(self, data: pd.DataFrame):
        """The CKM record keys of the rows, as exact integers.

        Parameters
        ----------
        data
            The layer's rows.

        Returns
        -------
        numpy.ndarray or None
            ``None`` here (DP stats need no keys); :class:`CKMMixin`
            reads the ``rkey`` aesthetic.
        """
        return None

    # -- plotnine entry points -----------------------------------------
    @property
    def name(self) -> str:
        """The stat's class name, used in error messages and reports."""
        return type(self).__name__

    def setup_params(self, data):
        """Nothing to set up from the data: parameters are validated when
        the layer is created, and nothing may be read from the rows."""

    # -- the door --------------------------------------------------------
    def for_build(self, build: LayerBuild) -> Self:
        """A copy of the stat for one build, carrying its ``build``.

        The per-build state (the door, the rows, the axes' bins, the
        releases) lives on ``build``, never on the stat the user made: one
        stat object may be in two plots, or built twice at once."""
        run = copy.copy(self)
        run.build = build
        return run

    def release_at_door(
        self, data: pd.DataFrame, build: LayerBuild
    ) -> pd.DataFrame:
        """Release the layer's rows as cells (see the module docstring);
        what the build uses and releases goes to ``build``."""
        return self.for_build(build).release_rows(data)

    def release_rows(self, data: pd.DataFrame) -> pd.DataFrame:
        """:meth:`release_at_door` on the copy that carries the build."""
        door = self.build.door
        self.check_input(data)
        data = self.drop_missing(data)
        mechanism = self.make_mechanism()
        if mechanism.formal:
            warn_eps_scale(self, self.params.get("total"), mechanism)
        key_ints = self.record_key_integers(data)
        self.build.records = data
        fam = self.family_cells(data, door.scales)
        spent = sum(
            r.eps or 0.0 for r in self.build.releases if r.family == "range"
        )
        # a private range was paid out of this layer's eps
        mechanism = mechanism.after_spending(spent)
        gcols = self.group_columns(data)
        gdims = [
            categorical_dimension(c, data[c], self.declared_of(c))
            for c in gcols
        ]
        panel = self.panel_dimension(data, door)
        fdim = fam.dimension()
        weight = None
        if "weight" in data.columns:
            if self.counts_units():
                raise _fail(
                    self.name,
                    "count='units' counts each unit once per cell, and a "
                    "weight says how much a record counts: remove "
                    "aes(weight=...), or count records (count='records').",
                )
            weight = self.checked_weights(data["weight"])
        dims = [panel, *gdims, fdim]
        kept = self.cells_kept(dims, data, door)
        if kept is not None:
            # each unit now opens at most max_cells cells (with at most
            # max_records_per_cell records in each): the threshold of an
            # undeclared domain may count that many, the noise that many
            # records
            mechanism = mechanism.bounded(
                door.unit.cell_records, door.unit.max_cells
            )
        if self.counts_units():
            kept = self.units_kept(dims, data, door, key_ints, kept)
            mechanism = units_mechanism(mechanism, door.unit, dims)
        table, idx = assemble(
            dims,
            weight=weight,
            key_ints=key_ints,
            multiplicity=door.multiplicity,
            keep=kept,
        )
        return self.release_table(
            door, fam, panel, gdims, table, idx, mechanism
        )

    def cells_kept(self, dims, data: pd.DataFrame, door: Door):
        """Which records their privacy unit keeps when the data declare
        ``max_cells`` (None: every record): a unit's records fall in at
        most that many cells of the layer (:func:`~plotnine_private.cells.
        limit_cells`), which lets the threshold of an undeclared domain
        count ``max_cells`` new cells per unit instead of ``max_records``.
        """
        unit = door.unit
        if unit.max_cells is None or door.rows is None:
            return None
        # the door left out records without a unit: every code is a unit
        rows = door.rows
        if unit.max_records_per_cell is None or unit.record_id is not None:
            # the columns read (records named by content read them all)
            rows = rows[[c for c in (unit.column, unit.record_id) if c]]
        rows = _rows_of(rows, data.index)
        units, _ = id_codes(rows[unit.column])
        keep = limit_cells(
            dims, units, unit.max_cells, unit.salt, unit.bounding
        )
        if unit.max_records_per_cell is not None:
            keep = limit_per_cell(
                dims,
                units,
                record_order(rows, units, unit),
                unit.max_records_per_cell,
                keep,
            )
        return keep

    def counts_units(self) -> bool:
        """Whether the layer counts units (``count="units"``), not
        records."""
        return self.UNIT_COUNTS and self.params.get("count") == "units"

    def units_kept(self, dims, data: pd.DataFrame, door: Door, key_ints, kept):
        """The records that count their unit in a cell when cells count
        units: one per (unit, cell) among those kept
        (:func:`~plotnine_private.unit_cells.one_per_cell`; the smallest
        CKM key of the unit's records there)."""
        unit = door.unit
        if not unit.bounded or door.rows is None:
            raise _fail(
                self.name,
                "count='units' counts the distinct privacy units of each "
                "cell, and the data declare none: give pp.source(data, "
                "unit='<person column>', max_records=k), or leave "
                "count='records' (the default).",
            )
        rows = _rows_of(door.rows[[unit.column]], data.index)
        units, _ = id_codes(rows[unit.column])
        return one_per_cell(dims, units, key_ints, kept)

    def release_table(
        self, door, fam, panel, gdims, table, idx, mechanism
    ) -> pd.DataFrame:
        """Release an assembled cell table and shape the layer's rows.

        Shared by the in-memory door and the engine push-down: the query
        (public), the release engine, the undeclared-domain warning, the
        cell rows and :meth:`finish_output`.
        """
        query = self.query(door, fam, gdims, mechanism)
        domain = fam.source
        if fam.public and not all(g.public for g in gdims):
            domain = "thresholded"
        released = release_cells(
            query,
            table,
            mechanism,
            domain=domain,
            panels=door.panels,
            data_object=door.data_object,
        )
        self.build.releases.append(released.release)
        self.build.weighted = table.weighted is not None
        self.build.hidden_cells = self.count_hidden(table, released)
        if not table.public:
            self.warn_undeclared(fam, gdims, released.release)
        cells = self.cell_frame(fam, panel, gdims, idx, table, released, door)
        return self.finish_output(cells, released)

    def released_counts(self, values: np.ndarray, dtype=np.int64):
        """Released counts as the layer shows them: whole numbers of
        ``dtype`` (DP noise is an integer, and so is a CKM count), or, for
        weighted counts (CKM: the perturbed count times the cell's mean
        weight, as cellKey and Tau-Argus publish them), the floats
        themselves, as plotnine shows weighted counts (weights 1.5 and
        1.6 count 3.1). Whether a layer is weighted is public: its
        mapping says so."""
        if self.build.weighted:
            return np.asarray(values, dtype=np.float64)
        return np.rint(values).astype(dtype)

    def finish_output(self, cells: CellFrame, released: Released):
        """The layer's rows from its released cells: the family's
        :meth:`shape_output`, then what every family adds (post-processing
        of released values only): the ``count_label`` text and the advice
        on a privately estimated range that is too narrow. Both the
        in-memory door and the engine push-down end here."""
        out = self.shape_output(cells, released)
        advise_edge_mass(self, out, released)
        if "count" in out.columns:
            out["count_label"] = count_labels(out["count"])
        self.add_intervals(out, released)
        return mark_layer(self, out)

    def finish_layer(self, data: pd.DataFrame) -> pd.DataFrame:
        """Draw the marks that are only noise as ``noise_marks`` says
        (:func:`~plotnine_private.stats.marks.draw_noise_marks`, in
        place: plotnine keeps the frame it passes)."""
        draw_noise_marks(data, self.params.get("noise_marks", "fade"))
        return data

    def add_intervals(self, out: pd.DataFrame, released: Released) -> None:
        """The interval variables at the layer's ``level`` (in place):
        ``count_low``/``count_high`` and those of the scaled count
        columns (:func:`~plotnine_private.stats.intervals.
        add_count_bounds`). Families whose output is not a count per
        cell (curves from a fine histogram) override it."""
        col = self.COUNT_COLUMN
        if col in out.columns and len(out):
            release = released.release
            low, high, _ = count_noise_bounds(
                release,
                self.params.get("level", 0.95),
                self.params.get("ptable"),
            )
            # not zero_stays under CKM: a true 0 is released as 0, but a
            # released 0 may hide a true 1..D (a p-table moves a small
            # count to 0: 1 -> 0 with probability 0.67 for D=5, V=2.01,
            # js=2), so its interval is [0, -low], not [0, 0]
            add_count_bounds(out, (low, high), column=col)

    #: what a hidden cell of the family is called in a caption
    HIDDEN_WORD = "cells"

    def count_hidden(self, table, released: Released) -> int | None:
        """How many cells with records a CKM threshold hid (None under
        DP: there the number depends on which rare cells exist, which is
        what the threshold protects, so it is never computed)."""
        rel = released.release
        if rel.mechanism != "ckm" or rel.details.get("threshold") is None:
            return None
        n = np.asarray(table.n)
        return int(((n > 0) & ~np.asarray(released.keep)).sum())

    def warn_undeclared(
        self, fam, gdims, release: Release, unit: str = "cells"
    ) -> None:
        """Say, from public facts only, that an undeclared domain hides
        ``unit`` (DP) or shows which exist (CKM), and the fix."""
        what = [
            self.build.door.mapping.get(g.name, g.name)
            for g in gdims
            if not g.public
        ]
        if not fam.public:
            what.insert(0, self.build.door.mapping.get("x", "x"))
        names = " and ".join(f"{w!r}" for w in what) or "the cells"
        if release.formal:
            tau = release.details.get("threshold")
            effect = (
                f"{unit} whose noisy count is below a threshold of "
                f"{tau:.4g} (from eps and delta) are hidden, so small "
                "categories may vanish"
            )
        else:
            effect = f"which {unit} exist is shown without protection"
        fix = (
            "Declare the levels to show every category: levels=[...], a "
            "pandas Categorical with explicit categories=[...] or a polars "
            "Enum (for binned stats, public breaks= or limits=)."
        )
        binned = self._binned_twin(fam)
        if binned is not None:
            # a float column (its dtype is public) counted value by value
            fix = (
                f"x is a continuous (float) column, counted value by "
                f"value: to draw its distribution, bin it with public "
                f"limits: geom_histogram(stat={binned!r}, limits=(lo, "
                f"hi), bins=...). To count categories, {fix[0].lower()}"
                f"{fix[1:]}"
            )
        warnings.warn(
            f"{self.name}: the domain of {names} is not declared: {effect}. "
            + fix,
            PrivacyWarning,
            stacklevel=2,
        )

    def _binned_twin(self, fam) -> str | None:
        """The binned stat of this count stat's mechanism, where its x
        is an observed float column; None otherwise."""
        records = getattr(self.build, "records", None)
        if fam.public or self.FAMILY != "count" or records is None:
            return None
        if "x" not in records or not pd.api.types.is_float_dtype(
            records["x"].dtype
        ):
            return None
        return "bin_ckm" if self.name.endswith("_ckm") else "bin_dp"

    def query(
        self, door: Door, fam: FamilyCells, gdims: list[Dimension], mechanism
    ) -> Query:
        """The public query of this layer's release."""
        counted = sorted(self.REQUIRED_AES | {"rkey", "weight"})
        return cell_query(
            self.FAMILY,
            door.source,
            self.params.get("seed"),
            aes={ae: door.mapping[ae] for ae in counted if ae in door.mapping},
            groups=[(door.mapping.get(g.name, g.name), g) for g in gdims],
            facets=door.facet_columns,
            panel_labels=door.panel_labels,
            domain=fam.describe if fam.public else "observed",
            mechanism=mechanism,
            scales=self.scale_parts(door),
            params=tuple((k, self.params.get(k)) for k in self.QUERY_PARAMS)
            # only counts of units say so: counts of records keep the
            # identity (and the noise) they always had
            + ((("count", "units"),) if self.counts_units() else ()),
            unit=door.unit.query_parts(),
        )

    def scale_parts(self, door: Door) -> tuple:
        """The facts of its axes' scales (a log transform) its query names."""
        return tuple(
            (ax, facts)
            for ax in ("x", "y")
            if ax in self.REQUIRED_AES
            and (facts := scale_facts(getattr(door.scales, ax)))
        )

    def range_query(self, axis: str, **parts: Any) -> Query:
        """The query of a private range estimate of this layer's axis."""
        door = self.build.door
        return Query.make(
            "range",
            door.source,
            self.params.get("seed"),
            stat=self.FAMILY,
            axis=axis,
            aes=door.mapping.get(axis),
            facets=tuple(door.facet_columns),
            scale=scale_facts(getattr(door.scales, axis, None)),
            **door.unit.query_parts(),
            **parts,
        )

    def range_digest(self, values: np.ndarray) -> bytes:
        """Digest of the values a private range estimate perturbs (keys its
        noise together with the range query's identity)."""
        return data_digest(np.asarray(values, dtype=np.float64))

    # -- shared steps --------------------------------------------------
    def check_input(self, data: pd.DataFrame) -> None:
        """Refuse missing required aesthetics and a mapped ``y`` (the stat
        computes it), before anything is released.

        Parameters
        ----------
        data
            The layer's rows after the mapping.

        Raises
        ------
        PlotninePrivateError
            Naming the aesthetic and the fix.
        """
        missing = [
            ae for ae in sorted(self.REQUIRED_AES) if ae not in data.columns
        ]
        if missing:
            raise _fail(
                self.name,
                f"missing required aesthetic(s) {', '.join(missing)}: map "
                f"them, e.g. aes({missing[0]}='column').",
            )
        if "y" in data.columns and "y" not in self.REQUIRED_AES:
            raise _fail(
                self.name,
                "must not be used with a y aesthetic: it computes y (the "
                "released count) itself.",
            )

    def declared_of(self, column: str) -> list | None:
        """The public levels of a group column: the data's declaration
        (a Categorical's categories), or None."""
        return self.build.door.declared.get(column)

    def drop_missing(self, data: pd.DataFrame) -> pd.DataFrame:
        """Leave out records with missing or infinite positions (as plotnine
        does for continuous ones; it shows a missing category as NA, which
        the count twins do with ``missing_level=True``), and
        records whose weight is missing, infinite, negative or
        not a number, without any warning or error: either would tell
        whether some record is missing or outside the scale's domain, a
        fact about the data."""
        cols = [c for c in sorted(self.REQUIRED_AES) if c in data.columns]
        bad = None
        for c in cols:
            for part, miss in _missing(data[c]):
                if miss.any():
                    if bad is None:
                        # allocated only when something is missing
                        bad = np.zeros(len(data), dtype=bool)
                    bad[part] |= miss
        if "weight" in data.columns:
            w = self.checked_weights(data["weight"])
            invalid = ~np.isfinite(w) | (w < 0)
            if invalid.any():
                bad = invalid if bad is None else bad | invalid
        return data if bad is None else data[~bad]

    def checked_weights(self, column: pd.Series) -> np.ndarray:
        """Weights as floats (NaN where not a number); records with a
        weight that is not a finite number >= 0 are left out by
        :meth:`drop_missing`, by rule rather than by an error."""
        return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)

    def require_continuous(self, scales, *axes: str) -> None:
        """Binned families need continuous positions."""
        for ax in axes:
            if isinstance(getattr(scales, ax), scale_discrete):
                raise _fail(
                    self.name,
                    f"{ax} is discrete: this stat bins continuous positions. "
                    f"Map a numeric column, or count categories with "
                    f"stat='count_dp'/'count_ckm' (x) and a declared "
                    f"Categorical.",
                )
