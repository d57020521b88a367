"""What each private stat declares about itself, and the registry of them.

A stat family states once, in a :class:`Declaration` on its class
(``DECLARATION = Declaration(...)``), what the rest of the package needs
to know about it: its plotnine counterpart, which computed variables carry
released numbers, which have intervals, how it is planned, what its
comparison caption and its noise geom are. :mod:`plotnine_private.
compare`, :mod:`plotnine_private.planning`, ``geom_noise``, the engine
push-down, the signal warnings and the neighbour harness read them here;
:func:`stats_table` (``pp.stats()``) lists them.

Every public private stat (a class named ``stat_*`` that mixes in
:class:`Declared`) registers itself when its class is created; one
without a declaration is a ``TypeError`` there, not a silent refusal
later. A subclass that keeps its parent's declaration and mechanism is an
*alias* (``stat_bin_2d_dp`` of ``stat_bin2d_dp``).

The declaration is of the *family as the user sees it*, which is not the
release's query family (``FAMILY``): density, ECDF and box plot are three
declared families over one query family, ``"fine"`` (one fine histogram:
the same data, limits, bins and seed are one release, charged once).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar, Literal

__all__ = [
    "BINNED_INTERVALS",
    "BINNED_NOISY",
    "PLANS",
    "Declaration",
    "Declared",
    "NoiseGeom",
    "Registered",
    "declared",
    "registered",
    "stats_table",
    "twin",
    "unregister",
]

#: what every binned family (bin, bin2d, binhex) releases: its counts and
#: what is computed from them, and the variables with intervals
BINNED_NOISY = frozenset(
    {"count", "noisy_count", "count_label", "density", "ncount", "ndensity"}
)
BINNED_INTERVALS = ("count", "density", "ncount", "ndensity")

#: how :func:`~plotnine_private.planning.accuracy` plans a family: the
#: noise of one count cell (exact), a simulated curve or box, a summary
#: cell, a PCA score tile
PLANS = ("count", "curve", "summary", "pca")


@dataclass(frozen=True)
class NoiseGeom:
    """How ``geom_noise`` draws a family's intervals.

    Attributes
    ----------
    geom
        plotnine geom name without ``geom_``: ``"errorbar"`` or
        ``"ribbon"`` (a ribbon also maps ``y`` to the variable).
    variable
        The computed variable drawn by default (its ``<variable>_low``/
        ``<variable>_high``).
    params
        The geom's default parameters.
    fixed
        The interval is always ``variable``'s, whatever is asked
        (summaries: ``y_low``/``y_high``).
    """

    geom: Literal["errorbar", "ribbon"]
    variable: str
    params: Mapping[str, Any] = field(default_factory=dict)
    fixed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


@dataclass(frozen=True)
class Declaration:
    """One stat family's facts, read by every table of the package.

    Attributes
    ----------
    family
        The family's name as the user sees it (``"count"``,
        ``"density"``...): shared by its DP and CKM stat; compare,
        planning and ``geom_noise`` find the family's stats by it.
    title
        The family in running text (``"ECDF"``, ``"DP PCA score"``).
    counterpart
        The non-private stat it replaces, as registered with plotnine
        (``"count"`` for ``stat_count``; ``"bin_hex"``, ours) or compare's
        own ``"pca_score_plain"``: the unperturbed panel of ``compare``.
    noisy
        Computed variables that carry released numbers or functions of
        them (``count``, ``prop``, ``density``...): the only columns that
        may differ between neighbouring data sets.
    intervals
        Computed variables with ``<v>_low``/``<v>_high`` columns.
    plan
        How ``accuracy``/``eps_for`` plan the DP stat (one of
        :data:`PLANS`), or None when it cannot be planned.
    judged_by
        The variables a reader judges the layer by: planning bounds their
        largest error (``plan="curve"``) and ``compare`` captions their
        widest interval.
    caption
        Words for ``judged_by`` in ``compare``'s caption (``"density
        band"``), or ``""`` for none.
    noise_geom
        How ``geom_noise`` draws it, or None (``geom_noise`` refuses it).
    compare
        ``pp.compare`` can swap it for its counterpart and twin.
    counterpart_labels
        The counterpart is given ``count_label`` (as the private counts
        have it), so a label mapping works on the unperturbed panel.
    counterpart_params
        Parameters the counterpart takes over from the private layer as
        they are (``coef``, ``width`` of a box plot). Arguments computed
        from the layer's build (a density's bandwidth rule as a number)
        come from the stat's method ``counterpart_arguments(kept)``, where
        it has one (``kept``: :func:`~plotnine_private.door.layer_build`).
    engine
        Released from per-cell counts alone, so a lazy source (DuckDB,
        Polars, Spark; ``pp.source``) computes it in the engine.
    shown_by_noise
        The layer hides cells by their released value (empty hexagons,
        zero points), so which cells are drawn is itself post-processing
        of noisy numbers.
    plan_inputs
        The stat parameters ``accuracy`` needs besides ``eps`` and ``n``
        (``limits`` of a curve, ``bounds`` of a summary).
    example
        A small layer of the stat for the conformance kit
        (``tests/conformance.py``): ``aes`` maps aesthetics to the kit's
        columns (``num`` in [10, 45], ``num2`` in [5, 35], ``num3``, and
        ``cat``, a Categorical of a, b, c) and ``params`` are public
        parameters (the mechanism's are the kit's).
    """

    family: str
    title: str
    counterpart: str
    noisy: frozenset[str]
    intervals: tuple[str, ...] = ()
    plan: str | None = None
    judged_by: tuple[str, ...] = ()
    caption: str = ""
    noise_geom: NoiseGeom | None = None
    compare: bool = True
    counterpart_labels: bool = False
    counterpart_params: tuple[str, ...] = ()
    engine: bool = False
    shown_by_noise: bool = False
    plan_inputs: tuple[str, ...] = ()
    example: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "noisy", frozenset(self.noisy))
        object.__setattr__(
            self, "example", MappingProxyType(dict(self.example))
        )
        problems = []
        if self.plan is not None and self.plan not in PLANS:
            problems.append(f"plan must be one of {PLANS} or None")
        if self.caption and not self.judged_by:
            problems.append("a caption needs the judged_by variables")
        if self.noise_geom is not None and (
            self.noise_geom.variable not in self.intervals
        ):
            problems.append(
                f"noise_geom draws {self.noise_geom.variable!r}, which is "
                "not among the intervals"
            )
        if problems:
            raise ValueError(
                f"Declaration of {self.family!r}: {'; '.join(problems)}."
            )


@dataclass(frozen=True)
class Registered:
    """A registered stat: its class, name and mechanism."""

    cls: type
    #: the name used as ``stat="..."`` (``count_dp``; ``dp_pca_score``)
    name: str
    #: "dp" or "ckm"
    mechanism: str
    #: the name of the stat it is an alias of, or None
    alias_of: str | None

    @property
    def declaration(self) -> Declaration:
        return self.cls.DECLARATION  # type: ignore[attr-defined,no-any-return]


_REGISTRY: dict[str, Registered] = {}


def _short(name: str) -> str:
    return name.removeprefix("stat_")


def register(cls: type) -> Registered:
    """Register a public private stat class (called at its creation).

    Raises
    ------
    TypeError
        The class has no :class:`Declaration`.
    """
    decl = getattr(cls, "DECLARATION", None)
    if not isinstance(decl, Declaration):
        raise TypeError(
            f"{cls.__name__}: a private stat must declare its family: set "
            "DECLARATION = Declaration(family=..., title=..., "
            "counterpart=..., noisy=...) on it or its family base "
            f"(plotnine_private.declarations; got {decl!r})."
        )
    mechanism = "dp" if getattr(cls, "DP", False) else "ckm"
    alias = None
    for base in cls.__mro__[1:]:
        found = _REGISTRY.get(_short(base.__name__))
        if (
            found is not None
            and found.cls is base
            and found.declaration is decl
            and found.mechanism == mechanism
        ):
            alias = found.alias_of or found.name
            break
    entry = Registered(cls, _short(cls.__name__), mechanism, alias)
    _REGISTRY[entry.name] = entry
    return entry


def unregister(name: str) -> None:
    """Take a stat out of the registry (throwaway test classes)."""
    _REGISTRY.pop(_short(name), None)


class Declared:
    """Mixed into every private stat: a public class (``stat_*``)
    registers itself, with its :class:`Declaration`, when created."""

    DECLARATION: ClassVar[Declaration | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__name__.startswith("stat_"):
            register(cls)


def declared(stat: Any) -> Registered | None:
    """The registry entry of a stat given by name (``"count_dp"``,
    ``"stat_count_dp"``), class or instance; None if not registered."""
    if isinstance(stat, str):
        name = stat
    else:
        cls = stat if isinstance(stat, type) else type(stat)
        name = cls.__name__
        found = _REGISTRY.get(_short(name))
        # a class of that name that is not the registered one (a
        # throwaway subclass) is not registered
        return found if found is not None and found.cls is cls else None
    return _REGISTRY.get(_short(name))


def registered(*, aliases: bool = True) -> list[Registered]:
    """Every registered stat, by name (aliases too unless ``aliases``
    is False)."""
    return [
        e
        for _, e in sorted(_REGISTRY.items())
        if aliases or e.alias_of is None
    ]


def twin(family: str, mechanism: str) -> Registered | None:
    """The (non-alias) stat of ``family`` with ``mechanism``, or None."""
    for e in registered(aliases=False):
        if e.declaration.family == family and e.mechanism == mechanism:
            return e
    return None


def _cell(value: Any) -> Any:
    if isinstance(value, frozenset):
        return tuple(sorted(value))
    if isinstance(value, NoiseGeom):
        return f"geom_{value.geom}({value.variable})"
    return value


def stats_table() -> Any:
    """Every registered stat with its declaration, one row each (as
    scikit-learn's ``all_estimators``).

    Returns
    -------
    pandas.DataFrame
        Columns ``name`` (as ``stat="..."``), ``cls``, ``mechanism``
        (``dp``/``ckm``), ``alias_of``, ``query_family`` (the release's
        ``FAMILY``: shared by density, ECDF and box plot) and one column
        per :class:`Declaration` field.

    Examples
    --------
    >>> import plotnine_private as pp
    >>> row = pp.stats().set_index("name").loc["density_dp"]
    >>> row["family"], row["query_family"], row["plan"]
    ('density', 'fine', 'curve')
    """
    import pandas as pd

    rows = []
    for e in registered():
        row: dict[str, Any] = {
            "name": e.name,
            "cls": e.cls,
            "mechanism": e.mechanism,
            "alias_of": e.alias_of,
            "query_family": getattr(e.cls, "FAMILY", None),
        }
        decl = e.declaration
        for f in fields(decl):
            row[f.name] = _cell(getattr(decl, f.name))
        rows.append(row)
    return pd.DataFrame(rows)
