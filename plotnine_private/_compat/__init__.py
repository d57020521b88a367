"""The plotnine adapter: every touch of plotnine's internals lives here.

plotnine has no public extension point for what a private layer needs
(rows become released cells before any scale, facet or geom sees them),
so the package hooks into plotnine's build. Everything it reads or
changes that plotnine does not document is named in this module, once,
and wrapped (the original always runs, nothing is re-implemented):

* reads: a layer's own ``data=`` (``layer._data``), its mapping as the
  user wrote it (``aes._starting``), the built parts of a plot
  (``ggplot._build``; plotnine 0.16 keeps them in ``ggplot.built``), the
  name registry of stats and geoms (``plotnine._utils.registry``) and
  geom helpers (``plotnine._utils``);
* hooks (:func:`install_hooks`):

  - ``layer.compute_aesthetics``: right after plotnine evaluated the
    mapping, a private layer's rows go through the door (the callbacks of
    :class:`DoorHooks`) and plotnine receives released cells;
  - ``layer.compute_statistic`` computes no statistic on a released
    layer (its stat's ``setup_params`` and plotnine's default aesthetics
    still apply): plotnine's stats must not override ``compute_layer``;
  - ``Layers.transform`` runs on the layers not released that way (their
    positions were transformed at the door);
  - ``Layout.setup`` first lets the door refuse the plot
    (``DoorHooks.check_layers``: a layer that is not private on a private
    source), before any layer computes anything; then it shows the facet
    each private layer's skeleton (one row per declared level
    combination) instead of its rows, by wrapping
    ``facet.compute_layout`` and ``facet.map`` for the one call;
  - ``layer.__deepcopy__`` shares a layer's own data frame between
    copies, as plotnine shares the plot's data, so a data source keeps
    its object identity through plotnine's copies;
  - ``Compose.__add__`` keeps a ``privacy_budget`` for the whole
    composition (plotnine would add it to the last plot only), and
    ``Compose.draw`` (behind save, show and notebook display) checks it
    before anything is drawn.

:func:`self_check` runs at import: when a plotnine release no longer has
one of these in the shape used here, importing the package fails with the
plotnine version and the hook, instead of a wrong plot. It lives in
:mod:`.selfcheck`, the supported versions and the adapter's error in
:mod:`.versions` and :func:`init_layer` in :mod:`.layer_init`, all below
this module (which imports and re-exports them, and which none imports).
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from copy import deepcopy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
import pandas as pd
from mizani.transforms import identity_trans
from plotnine._utils import SIZE_FACTOR, resolution, to_rgba
from plotnine._utils.registry import Registry
from plotnine.composition import Compose
from plotnine.facets.facet_null import facet_null
from plotnine.facets.layout import Layout
from plotnine.layer import Layers
from plotnine.layer import layer as _layer
from plotnine.mapping.aes import ALL_AESTHETICS, aes
from plotnine.mapping.evaluation import evaluate
from plotnine.scales.scale_continuous import scale_continuous

from .._panel_codes import _small_panel
from ..validation import check_flat_columns
from .layer_init import init_layer
from .selfcheck import self_check
from .versions import PLOTNINE_VERSION as PLOTNINE_VERSION
from .versions import SUPPORTED as SUPPORTED
from .versions import PlotnineAdapterError

if TYPE_CHECKING:
    from plotnine import ggplot

__all__ = [
    "UTC_NAMES",
    "SIZE_FACTOR",
    "Built",
    "DoorHooks",
    "PlotnineAdapterError",
    "build",
    "built_parts",
    "init_layer",
    "install_hooks",
    "is_released",
    "keep_build",
    "kept_build",
    "keep_checked_params",
    "given_arguments",
    "unknown_arguments",
    "layer_data",
    "layer_mapping",
    "layer_own_data",
    "mean_se_uses_sample_variance",
    "missing_group_first",
    "registered",
    "register",
    "replace_stat",
    "resolution",
    "scale_transform",
    "self_check",
    "stat_arguments",
    "to_rgba",
    "unregister",
]


# -- reads -------------------------------------------------------------------
def layer_own_data(lyr: _layer) -> Any:
    """A layer's own ``data=`` (None: the layer uses the plot's data)."""
    return lyr._data


def layer_mapping(lyr: _layer) -> dict:
    """A layer's mapping as written (aesthetic -> expression), before
    plotnine splits off staged (``after_stat``) aesthetics."""
    return lyr.mapping._starting


def stat_arguments(stat_obj: Any) -> dict:
    """The keyword arguments a stat was made with (plotnine 0.15 keeps
    them as ``_kwargs``, 0.16 as ``_raw_kwargs``)."""
    raw = getattr(stat_obj, "_raw_kwargs", None)
    return getattr(stat_obj, "_kwargs", {}) if raw is None else raw


#: arguments of a layer that are neither a stat's parameters nor a geom's
_LAYER_ARGUMENTS = frozenset(
    {"mapping", "data", "geom", "stat", "position", "inherit_aes"}
    | {"show_legend", "raster", "na_rm"}
)


def _geom_arguments() -> frozenset:
    """Every name a plotnine geom takes as a parameter or an aesthetic
    (plotnine passes a geom's arguments on to its stat); read each time,
    as a geom defined later registers itself then."""
    names: set[str] = set(ALL_AESTHETICS)
    for name, cls in list(Registry.items()):
        if not name.startswith("geom_"):
            continue
        names |= set(getattr(cls, "DEFAULT_PARAMS", {}))
        names |= set(getattr(cls, "DEFAULT_AES", {}))
        names |= set(getattr(cls, "NON_MISSING_AES", ()))
        for ae in getattr(cls, "REQUIRED_AES", ()):
            names |= set(ae.split("|"))
    return frozenset(names)


def unknown_arguments(stat_obj: Any) -> list[str]:
    """The arguments a stat was made with that neither it, nor a layer,
    nor any geom or aesthetic of plotnine knows (a typo: plotnine would
    ignore ``esp=1`` silently)."""
    known = set(stat_obj.DEFAULT_PARAMS) | _LAYER_ARGUMENTS
    known |= set(getattr(stat_obj, "aesthetics", lambda: ())())
    return sorted(
        k
        for k in given_arguments(stat_obj)
        if k not in known and k not in _geom_arguments()
    )


def given_arguments(stat_obj: Any) -> dict:
    """The arguments of the call that made a stat: its own, and, for a
    stat a geom made (``geom_bar(stat="count_dp", ...)``), the geom's,
    of which plotnine passes on only those the stat declares."""
    args = dict(stat_arguments(stat_obj))
    geom = args.get("geom")
    made = stat_arguments(geom) if geom is not None else {}
    # the geom's arguments only where the geom made this stat (compare
    # swaps a stat under a geom another stat was made by)
    wanted = made.get("stat")
    name = type(stat_obj).__name__
    if wanted not in (stat_obj, type(stat_obj), name, name[5:]):
        return args
    return {**made, **args}


def keep_checked_params(stat_obj: Any) -> None:
    """Record a stat's checked parameters as the arguments it was made
    with. plotnine 0.16 sets a stat object's parameters again from those
    arguments when the stat joins a layer, which would undo the checks'
    normalisation (``eps=4`` -> ``4.0``, a p-table spec -> a PTable)."""
    raw = stat_arguments(stat_obj)
    for name in raw.keys() & stat_obj.params.keys():
        raw[name] = stat_obj.params[name]


def replace_stat(lyr: _layer, new: Any) -> None:
    """Give a layer another stat (plotnine 0.15's geom keeps its own
    reference to the stat it made, 0.16's does not)."""
    old = lyr.stat
    lyr.stat = new
    if getattr(lyr.geom, "_stat", None) is old:
        lyr.geom._stat = new


def scale_transform(scale: Any) -> tuple | None:
    """The public identity of a position scale's transform: ``(name,
    (parameter, value), ...)`` from the transform object the scale made
    (mizani's, kept as ``scale._trans``; ``scale.trans`` is only what the
    user wrote, or None), or None for the identity and for scales without
    a transform (discrete ones).

    >>> from plotnine import scale_x_continuous, scale_x_log10
    >>> scale_transform(scale_x_log10())
    ('log10', ('base', '10'))
    >>> scale_transform(scale_x_continuous(trans="identity")) is None
    True
    """
    trans = getattr(scale, "_trans", None)
    if trans is None:
        return None
    name = type(trans).__name__.removesuffix("_trans")
    if name == "identity":
        return None
    # the parameters that define the function (log base, pseudo-log
    # sigma, time zone), not how its breaks and labels look
    params = tuple(
        (k, _zone_identity(v) if k == "tz" else str(v))
        for k, v in sorted(vars(trans).items())
        if k in ("base", "sigma", "tz", "unit", "units")
    )
    return (name, *params)


#: names of UTC (and of GMT, always at its offset): zones whose calendar
#: is the one of a naive time, which mizani reads as UTC
UTC_NAMES = ("UTC", "Etc/UTC", "GMT", "Etc/GMT")


def _zone_identity(tz: Any) -> str:
    """A date scale's time zone as it changes cells: a UTC zone puts every
    time at the same position and calendar step as no zone (naive times,
    read as UTC), so both are ``'None'``. Spark states a naive pandas
    column as a TIMESTAMP in the session's zone: a plot of it is the same
    query, with the same noise, as the plot of the naive frame."""
    return "None" if str(tz) in UTC_NAMES else str(tz)


@functools.cache
def mean_se_uses_sample_variance() -> bool:
    """Whether plotnine's ``mean_se`` divides the sample variance (ddof=1,
    plotnine 0.16) or the population variance (0.15) by n: read from
    plotnine's own function on two values, so a summary's bars follow the
    installed release."""
    import importlib

    module = importlib.import_module("plotnine.stats.stat_summary")
    out = module.mean_se(pd.Series([0.0, 2.0]))
    # population: sqrt(1 / 2) = 0.71; sample: sqrt(2 / 2) = 1
    return bool(float(out["ymax"].iloc[0]) - 1.0 > 0.85)


@functools.cache
def missing_group_first() -> bool:
    """Whether plotnine numbers the group of a missing category before
    the levels' groups (0.15: its code -1 sorts first) or after them
    (0.16): read from plotnine's own group numbering on two rows, so the
    private group ids follow the installed release."""
    from plotnine._utils import ninteraction

    frame = pd.DataFrame({"x": pd.Categorical(["a", None], categories=["a"])})
    ids = ninteraction(frame, drop=True)
    return bool(ids[1] < ids[0])


def registered(name: str) -> type | None:
    """The class plotnine resolves ``name`` (``"stat_count"``) to."""
    return Registry.get(name)


def register(name: str, cls: type) -> None:
    """Make plotnine resolve ``name`` to ``cls`` (the last one wins)."""
    Registry[name] = cls


def unregister(name: str) -> None:
    """Forget ``name`` (classes register themselves when defined)."""
    Registry.pop(name, None)


# -- building ----------------------------------------------------------------
@dataclass
class Built:
    """The computed parts of a built plot (0.15 keeps them on the plot,
    0.16 on ``plot.built``): ``layers`` (with their computed data),
    ``layout``, ``scales``, ``labels``; ``plot`` is the ggplot that was
    built."""

    plot: ggplot
    layers: Layers
    layout: Layout
    scales: Any
    labels: Any

    @property
    def mapping(self) -> aes:
        """The plot's mapping."""
        return self.plot.mapping

    @property
    def theme(self) -> Any:
        """The plot's theme."""
        return self.plot.theme

    def draw(self):
        """Draw the plot (plotnine builds it again as it draws)."""
        return self.plot.draw()


def built_parts(plot: ggplot) -> Built:
    """The parts of a plot that plotnine has built (by ``draw``)."""
    parts = getattr(plot, "built", None) or plot
    return Built(plot, parts.layers, parts.layout, parts.scales, parts.labels)


def build(plot: ggplot) -> Built:
    """Build a deep copy of ``plot`` (the original is left untouched).

    The copy shares the original's theme: building reads no theme, and a
    theme's deep copy (every themeable) was a third of a small plot's
    copy. Drawing sets a theme up for the plot it draws, as plotnine's
    own ``draw`` does on the plot it is called on."""
    theme = getattr(plot, "theme", None)
    memo = {} if theme is None else {id(theme): theme}
    copy = deepcopy(plot, memo)
    copy._build()
    return built_parts(copy)


def layer_data(plot: ggplot, i: int = 0) -> pd.DataFrame:
    """The data of layer ``i`` after the plot is built: what it released.

    Parameters
    ----------
    plot
        A ggplot object; it is copied, not modified.
    i
        Index of the layer (0 is the first ``+ geom_...``).
    """
    return build(plot).layers[i].data


# -- the hooks ---------------------------------------------------------------
@dataclass(frozen=True)
class DoorHooks:
    """What the hooks call back into (given by the package's top level,
    so this module depends on no layer above it).

    Attributes
    ----------
    is_private
        ``(layer) -> bool``: the layer releases at the door.
    release
        ``(layer, plot, rows, data) -> DataFrame``: the released cells of
        a private layer from its evaluated, transformed ``data`` (``rows``:
        the layer data before evaluation).
    in_engine
        ``(layer, plot) -> bool``: the layer's data is a table in an
        engine; such a layer is released by ``release_in_engine(layer,
        plot)`` (its data is set there) instead of plotnine's evaluation.
    release_in_engine
        See ``in_engine``.
    skeleton
        ``(plot, layer, data, facet_vars) -> DataFrame``: what a private
        layer shows the facet.
    add_to_composition
        ``(composition, rhs) -> composition | NotImplemented``: what
        ``composition + rhs`` is when ``rhs`` belongs to the whole
        composition (a privacy budget); NotImplemented leaves it to
        plotnine (which adds to the last plot).
    before_composition_draw
        ``(composition) -> None``: runs before a composition is drawn
        (checks its budget).
    check_layers
        ``(plot, layers) -> None``: runs when a plot's build lays out its
        panels, before any layer computes or releases anything; raises to
        refuse the plot (a layer that is not private on a private
        source).
    """

    is_private: Callable[[Any], bool]
    release: Callable[..., pd.DataFrame]
    in_engine: Callable[[Any, Any], bool]
    release_in_engine: Callable[[Any, Any], Any]
    skeleton: Callable[..., pd.DataFrame]
    add_to_composition: Callable[[Any, Any], Any]
    before_composition_draw: Callable[[Any], None]
    check_layers: Callable[[Any, Any], None] = lambda plot, layers: None


def quiet():
    """Silence numpy and pandas on private rows: a warning such as
    "divide by zero in log10" would tell that some record is <= 0."""
    stack = contextlib.ExitStack()
    stack.enter_context(np.errstate(all="ignore"))
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("ignore")
    return stack


def is_released(lyr: _layer) -> bool:
    """Whether the layer's data are cells released at the door."""
    return getattr(lyr, "_pnp_released", False)


def keep_build(lyr: _layer, build: Any) -> None:
    """Keep a build's record on the layer (its stat may be shared)."""
    lyr._pnp_build = build  # type: ignore[attr-defined]


def kept_build(lyr: _layer) -> Any:
    """What :func:`keep_build` kept (None: not built)."""
    return getattr(lyr, "_pnp_build", None)


def _patch(owner, name: str, make) -> None:
    original = getattr(owner, name)
    if getattr(original, "_plotnine_private", False):
        return
    patched = functools.wraps(original)(make(original))
    patched._plotnine_private = True  # type: ignore[attr-defined]
    setattr(owner, name, patched)


def _evaluated_rows(lyr, plot) -> pd.DataFrame:
    """plotnine's ``compute_aesthetics`` for a private layer, without its
    work on every row: the mapping evaluated and the scales' defaults
    added as plotnine does, ``PANEL`` attached, but no ``add_group``
    (which numbers the interaction of every discrete column row by row,
    most of a private count's time at 10**7 rows, and sorts values of
    mixed kinds, so one record's odd value could make it raise: a private
    layer's groups come from its released cells, and a mapped
    ``group="var"`` column stays as a dimension of them), and plotnine's
    stable sort by ``PANEL`` only where the rows are not in panel order
    already (it is the identity then: 0.15 s at 10**7 rows)."""
    starting = lyr.mapping._starting
    data = lyr.data
    if starting and all(
        isinstance(col, str) and col in data for col in starting.values()
    ):
        # every aesthetic names a column: taken as it is, as plotnine's
        # evaluate takes it, with PANEL, in one frame: no copy of each
        # column (10**7 rows of a float column: 80 MB), no assignment of
        # a column to the rows
        evaled = pd.DataFrame(
            {ae: data[col] for ae, col in starting.items()},
            index=data.index,
            copy=False,
        )
        plot.scales.add_defaults(evaled, aes(**{str(c): c for c in evaled}))
        if len(data):
            evaled = pd.DataFrame(
                {**{c: evaled[c] for c in evaled}, "PANEL": data["PANEL"]},
                index=data.index,
                copy=False,
            )
        else:  # no rows: as plotnine does below
            evaled["PANEL"] = 1 if len(evaled) else data["PANEL"]
    else:
        evaled = evaluate(starting, data, plot.environment)
        plot.scales.add_defaults(evaled, aes(**{str(c): c for c in evaled}))
        if len(data) == 0 and len(evaled) > 0:
            evaled["PANEL"] = 1
        else:
            evaled["PANEL"] = data["PANEL"]
    if not _in_panel_order(evaled["PANEL"]):
        evaled = evaled.sort_values("PANEL", kind="mergesort")
    return evaled


def _in_panel_order(panel: pd.Series) -> bool:
    """Whether the rows are in panel order: every row in the one panel
    of a Categorical of one category (a minimum of its small codes,
    0.002 s at 10**7 rows), else pandas' monotonic test (0.03 s)."""
    if (
        isinstance(panel.dtype, pd.CategoricalDtype)
        and len(panel.cat.categories) == 1
    ):
        codes = np.asarray(panel.array.codes)
        if len(codes) == 0 or codes.min() >= 0:
            return True
    return bool(panel.is_monotonic_increasing)


def _transform_rows(plot, data: pd.DataFrame) -> pd.DataFrame:
    """``plot.scales.transform_df(data)`` without the scales whose
    transform is the identity: plotnine assigns each of their columns to
    itself, a pass over every row that changes nothing."""
    if len(data) == 0:
        return data
    for sc in plot.scales:
        if type(getattr(sc, "_trans", None)) is identity_trans:
            continue
        data = sc.transform_df(data)
    return data


def _compute_aesthetics(hooks: DoorHooks):
    def make(original):
        def compute_aesthetics(self, plot):
            if hooks.in_engine(plot, self):
                # a table in an engine: the layer aggregates there
                hooks.release_in_engine(self, plot)
                self._pnp_released = True
                return None
            if not hooks.is_private(self):
                return original(self, plot)
            rows = self.data
            check_flat_columns(type(self.stat).__name__, rows)
            with quiet():
                self.data = _evaluated_rows(self, plot)
                # the scales' transforms (log10, sqrt, dates) are applied
                # here, on the rows, silently; plotnine's own pass skips
                # this layer
                data = _transform_rows(plot, self.data)
            self.data = hooks.release(self, plot, rows, data)
            self._pnp_released = True
            return None

        return compute_aesthetics

    return make


def _compute_statistic(original):
    def compute_statistic(self, layout):
        if not is_released(self):
            return original(self, layout)
        data = self.data
        if len(data):
            # released at the door: the stat computes nothing more; it
            # sees its released cells in plotnine's parameter and default
            # aesthetic steps, as a stat that computed them would
            self.stat.setup_params(data)
            self.data = self.stat.setup_data(self.stat.use_defaults(data))
        else:
            # nothing released: plotnine maps after_stat on rows only, so
            # give the empty layer the columns its geom reads (a path geom
            # draws nothing instead of failing on a missing y)
            for ae in getattr(self.geom, "REQUIRED_AES", ()):
                if "|" not in ae and ae not in data.columns:
                    data[ae] = pd.Series(dtype=float)
        return None

    return compute_statistic


def _transform(original):
    def transform(self, scales):
        return original(
            Layers(lyr for lyr in self if not is_released(lyr)), scales
        )

    return transform


def _layout_setup(hooks: DoorHooks):
    def make(original):
        def setup(self, layers, plot):
            # before any layer computes (or releases) anything
            hooks.check_layers(plot, layers)
            private = [hooks.is_private(lyr) for lyr in layers]
            facet_obj = plot.facet
            if not any(private):
                return original(self, layers, plot)
            compute_layout = facet_obj.compute_layout
            facet_vars = list(getattr(facet_obj, "vars", None) or []) or [
                *(getattr(facet_obj, "rows", None) or []),
                *(getattr(facet_obj, "cols", None) or []),
            ]

            def public_layout(data, *rest):
                # plotnine 0.16 also passes the scales
                shown = [
                    hooks.skeleton(plot, lyr, d, facet_vars) if p else d
                    for lyr, d, p in zip(layers, data, private)
                ]
                return compute_layout(shown, *rest)

            facet_map = facet_obj.map
            flags = iter(private)

            def public_map(data, layout):
                # called once per layer, in order; a private layer's PANEL
                # is a categorical of small codes (plotnine's facet_null
                # gives every row an int64 1: 8 bytes a record)
                mine = next(flags, False)
                if mine and isinstance(facet_obj, facet_null):
                    panel = pd.Categorical.from_codes(
                        np.zeros(len(data), dtype=np.int8),
                        categories=layout["PANEL"].cat.categories,
                        ordered=True,
                    )
                    # as a Series: pandas would copy a bare Categorical
                    data["PANEL"] = pd.Series(
                        panel, index=data.index, copy=False
                    )
                    return data
                mapped = facet_map(data, layout)
                if mine and "PANEL" in mapped.columns:
                    mapped["PANEL"] = pd.Series(
                        _small_panel(mapped["PANEL"], layout),
                        index=mapped.index,
                        copy=False,
                    )
                return mapped

            facet_obj.compute_layout = public_layout
            facet_obj.map = public_map
            try:
                with quiet():
                    return original(self, layers, plot)
            finally:
                del facet_obj.compute_layout
                del facet_obj.map

        return setup

    return make


def _layer_deepcopy(original):
    def deepcopy_layer(self, memo):
        # a layer's own data frame is shared by copies of the layer, as
        # plotnine shares the plot's data: the frame is only read, and the
        # release engine tells sources apart by object identity
        own = self.__dict__.get("_data")
        if own is not None:
            memo[id(own)] = own
        return original(self, memo)

    return deepcopy_layer


def _compose_add(hooks: DoorHooks):
    # plotnine adds anything to the last plot of a composition; a budget
    # belongs to the whole composition
    def make(original):
        def __add__(self, rhs):
            out = hooks.add_to_composition(self, rhs)
            return original(self, rhs) if out is NotImplemented else out

        return __add__

    return make


def _compose_draw(hooks: DoorHooks):
    # draw, save, show and notebook display of a composition all draw:
    # check its budget (and nested ones) before anything is drawn
    def make(original):
        def draw(self, *args, **kwargs):
            hooks.before_composition_draw(self)
            return original(self, *args, **kwargs)

        return draw

    return make


def _minor_breaks(original):
    def get_minor_breaks(self, major, limits=None):
        # mizani's minor breaks of a log or sqrt scale need two major
        # breaks (IndexError): an empty private panel has none
        if len(major) < 2:
            return []
        return original(self, major, limits)

    return get_minor_breaks


_INSTALLED: list[DoorHooks] = []


def install_hooks(hooks: DoorHooks | None = None) -> None:
    """Install the hooks (idempotent): the door in
    ``layer.compute_aesthetics``, no statistic on released layers,
    plotnine's transform pass skipping released layers, the public facet
    layout, shared layer data. ``hooks``: the door's callbacks (given by
    the package at import; None reuses those)."""
    if hooks is None:
        if not _INSTALLED:
            raise PlotnineAdapterError(
                "install_hooks() needs the door's callbacks the first time; "
                "import plotnine_private, which installs them"
            )
        hooks = _INSTALLED[0]
    elif not _INSTALLED:
        _INSTALLED.append(hooks)
    self_check()
    _patch(_layer, "compute_aesthetics", _compute_aesthetics(hooks))
    _patch(_layer, "compute_statistic", _compute_statistic)
    _patch(Layers, "transform", _transform)
    _patch(Layout, "setup", _layout_setup(hooks))
    _patch(_layer, "__deepcopy__", _layer_deepcopy)
    _patch(Compose, "__add__", _compose_add(hooks))
    _patch(Compose, "draw", _compose_draw(hooks))
    _patch(scale_continuous, "get_minor_breaks", _minor_breaks)
