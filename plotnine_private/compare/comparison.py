"""The comparison: :func:`compare` and the :class:`Comparison` it
returns (see the package docstring)."""

from __future__ import annotations

import io
import warnings
from copy import deepcopy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from plotnine import coord_cartesian, ggtitle, labs, theme

from .._compat import Built
from ..declarations import registered
from ..door import is_private
from ..exceptions import PlotninePrivateError
from ..mechanisms.ptable import PTable
from ..noise import NoiseIntervals, intervals_of_built
from .families import (
    CKM_KEYS,
    DP_KEYS,
    family_declaration,
    family_of,
    family_stats,
)
from .scales import join_discrete, other_scales, position_limits
from .versions import built, version

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from plotnine import ggplot

__all__ = ["MARKER", "Comparison", "compare"]

#: title of the unperturbed panel
MARKER = "unperturbed: not for release"
#: caption of the unperturbed panel
UNPERTURBED_CAPTION = "plotnine's own stat on the raw data, on its own scales"
#: what ``ckm=`` may hold beyond the p-table: the summaries' magnitude
#: p-table and its options
CKM_TWIN_KEYS = (*CKM_KEYS, "num_ptable", "magnifier", "p", "rkey")


def _fail(message: str) -> PlotninePrivateError:
    return PlotninePrivateError(f"compare(): {message}")


def _check_twin(kind: str, params: Any) -> dict | None:
    if params is False:
        return None
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise _fail(
            f"{kind} must be a dict of {kind.upper()} parameters (or False "
            f"to leave the {kind.upper()} panel out), got {params!r}."
        )
    allowed = DP_KEYS if kind == "dp" else CKM_TWIN_KEYS
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise _fail(
            f"{kind}= does not take {', '.join(unknown)}; it takes "
            f"{', '.join(allowed)}."
        )
    return dict(params)


def interval_caption(built_plot: Built, level: float) -> str:
    """What the drawn values of the curve, box and summary layers are
    within (the widest half-width of their interval variables, at the
    layer's ``level``): post-processing of released values."""
    parts = []
    for lyr in built_plot.layers:
        fam = family_of(lyr.stat) if is_private(lyr) else None
        if fam is None:
            continue
        decl = family_declaration(fam[0])
        if not decl.caption:
            continue
        cols, words = decl.judged_by, decl.caption
        data = lyr.data
        half = max(
            (
                float(((data[f"{c}_high"] - data[f"{c}_low"]) / 2).max())
                for c in cols
                if f"{c}_high" in data and data[f"{c}_high"].notna().any()
            ),
            default=None,
        )
        if half is None:
            continue
        lvl = float(lyr.stat.params.get("level", level))
        part = f"{words} within ±{half:.3g} ({lvl:.0%}, widest)"
        if part not in parts:
            parts.append(part)
    return "; ".join(parts)


def _compared() -> str:
    """The families compare takes, in words (from their declarations)."""
    titles = list(
        dict.fromkeys(
            e.declaration.title
            for e in registered(aliases=False)
            if e.declaration.compare
        )
    )
    return ", ".join(titles[:-1]) + " and " + titles[-1]


# --------------------------------------------------------------------------
# the comparison
# --------------------------------------------------------------------------
@dataclass
class Comparison:
    """Three panels of one plot; displays in a notebook.

    Attributes
    ----------
    plots : dict[str, ggplot]
        ``"unperturbed"``, ``"dp"``, ``"ckm"`` (those made), with the
        shared scales, titles and captions applied.
    limits : dict[str, Any]
        The limits the private panels share, per aesthetic (``x``, ``y``:
        data space; a discrete position axis maps to the joined levels);
        from released values and public parameters only. The unperturbed
        panel has its own.
    intervals : dict[str, NoiseIntervals]
        The noise interval table of each private panel.
    captions : dict[str, str]
        Caption of each panel.
    """

    plots: dict[str, Any]
    limits: dict[str, Any]
    intervals: dict[str, NoiseIntervals]
    captions: dict[str, str]
    figure_size: tuple[float, float] = (15, 4.8)
    notes: list[str] = field(default_factory=list)

    @property
    def composition(self):
        """The panels as a plotnine composition (``a | b | c``)."""
        panels = list(self.plots.values())
        comp = panels[0]
        for p in panels[1:]:
            comp = comp | p
        return comp + theme(figure_size=self.figure_size)

    def draw(self, show: bool = False) -> Figure:
        """Draw the panels into one matplotlib figure."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.composition.draw(show=show)

    def show(self) -> None:
        """Draw the panels and show them through pyplot (a window, a
        notebook or an image scraper such as sphinx-gallery's see it; a
        composition's figure is not made through pyplot)."""
        import matplotlib.pyplot as plt

        plt.figure(self.draw())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # non-interactive backends
            plt.show()

    def save(self, filename, **kwargs) -> None:
        """Save the figure (keyword arguments as plotnine's ``save``)."""
        kwargs.setdefault("verbose", False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.composition.save(filename, **kwargs)

    def _repr_png_(self) -> bytes:
        import matplotlib.pyplot as plt

        fig = self.draw()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=90)
        plt.close(fig)
        return buf.getvalue()

    def __repr__(self) -> str:
        lines = [f"<Comparison: {', '.join(self.plots)}>"]
        lines += [f"{k}: {v}" for k, v in self.captions.items() if v]
        return "\n".join(lines)


def _ptable_words(pt: PTable) -> str:
    params = pt.params
    keys = [k for k in ("D", "V") if params.get(k) is not None]
    if not keys:
        return "p-table"
    return "p-table " + ", ".join(f"{k} = {params[k]}" for k in keys)


def _title(kind: str, built: Built) -> str:
    parts: list[str] = []
    for lyr in built.layers:
        fam = family_of(lyr.stat) if is_private(lyr) else None
        if fam is None:
            continue
        name = type(lyr.stat).__name__.removeprefix("stat_")
        if kind == "dp":
            eps = lyr.stat.params["eps"]
            part = f"{name}, eps = {eps:g}"
        else:
            part = f"{name}, {_ptable_words(lyr.stat.params['ptable'])}"
        if part not in parts:
            parts.append(part)
    return f"{kind.upper()}: " + "; ".join(parts)


def compare(
    plot: ggplot,
    *,
    dp: dict | bool | None = None,
    ckm: dict | bool | None = None,
    level: float = 0.95,
    figure_size: tuple[float, float] = (15, 4.8),
) -> Comparison:
    """The unperturbed, DP and CKM versions of a plot, side by side.

    Parameters
    ----------
    plot
        A ggplot with private layers (``_dp`` or ``_ckm``) of any
        family whose declaration allows it (``pp.stats()["compare"]``:
        every registered family, the DP PCA score included, which has no
        CKM version: the CKM panel is then left out, with a note); not
        modified.
    dp
        Parameters of the DP twin of CKM layers: ``eps`` (required),
        ``seed``, ``delta``, ``adjacency``, ``noise``, ``range_share``.
        ``False`` leaves the DP panel out.
    ckm
        Parameters of the CKM twin of DP layers: ``ptable`` and ``rkey``
        (the record key column) required, ``threshold``; for summaries
        also ``num_ptable`` (and ``magnifier``, ``p``). ``False`` leaves
        the CKM panel out.
    level
        Level of the count-noise intervals in the captions (curves, boxes
        and summaries state their own interval variables, at each layer's
        ``level``).
    figure_size
        (width, height) of the whole figure in inches.

    Returns
    -------
    Comparison
        ``.plots``, ``.limits``, ``.intervals``, ``.captions``;
        ``.draw()``, ``.save(path)``, and it displays in a notebook.

    Examples
    --------
    >>> import pandas as pd
    >>> import plotnine_private as pp
    >>> from plotnine import ggplot, aes, geom_bar
    >>> from plotnine.data import mpg
    >>> cars = pp.add_record_keys(mpg, name="rk", rng_seed=1)
    >>> cars["drv"] = pd.Categorical(cars["drv"], ["4", "f", "r"])
    >>> p = ggplot(cars, aes("drv")) + geom_bar(stat="count_dp", eps=1,
    ...                                         seed=2)
    >>> c = pp.compare(p, ckm=dict(ptable=pp.create_cnt_ptable(D=3, V=1),
    ...                            rkey="rk"))
    >>> list(c.plots)
    ['unperturbed', 'dp', 'ckm']
    >>> c.captions["dp"]
    'noise: ±6 (95%) for count_dp eps=1'
    """
    dp_params = _check_twin("dp", dp)
    ckm_params = _check_twin("ckm", ckm)
    kinds = set()
    no_ckm = []
    for lyr in plot.layers:
        if is_private(lyr):
            fam = family_of(lyr.stat)
            if fam is None:
                raise _fail(
                    f"{type(lyr.stat).__name__} has no unperturbed "
                    f"counterpart here; compare works for the {_compared()} "
                    "stats."
                )
            kinds.add(fam[1])
            if family_stats(fam[0])[2] is None:
                no_ckm.append(type(lyr.stat).__name__)
    if not kinds:
        raise _fail(
            "the plot has no private layer: use a _dp or _ckm stat, e.g. "
            "geom_bar(stat='count_dp', eps=1)."
        )
    notes = []
    if no_ckm and ckm_params is not None:
        if ckm:
            notes.append(
                f"{', '.join(sorted(set(no_ckm)))} has no CKM version: the "
                "CKM panel is left out."
            )
        ckm_params = None
    if (
        "ckm" in kinds
        and dp_params is not None
        and dp_params.get("eps") is None
    ):
        raise _fail(
            "the DP panel needs eps for the CKM layers' DP twin: give "
            "dp=dict(eps=1, seed=...) or dp=False to leave it out."
        )
    if (
        "dp" in kinds
        and ckm_params is not None
        and (
            ckm_params.get("ptable") is None or ckm_params.get("rkey") is None
        )
    ):
        raise _fail(
            "the CKM panel needs a p-table and record keys for the DP "
            "layers' CKM twin: give ckm=dict(ptable=create_cnt_ptable(D=5, "
            "V=2), rkey='<record key column>') or ckm=False to leave it "
            "out."
        )
    original = built(plot)
    plots: dict[str, ggplot] = {
        "unperturbed": version(plot, original, "plain", None)
    }
    if dp_params is not None:
        plots["dp"] = version(plot, original, "dp", dp_params)
    if ckm_params is not None:
        plots["ckm"] = version(plot, original, "ckm", ckm_params)
    # a version whose target is the kind of every private layer is an
    # untouched copy of the plot: its build is ``original`` (same data,
    # seeds and session key), so it is not built a second time. The
    # unperturbed panel is not built here: nothing below reads it (its
    # scales are its own), and it is built when it is drawn
    builds = {
        k: original if kinds == {k} else built(p)
        for k, p in plots.items()
        if k != "unperturbed"
    }

    # limits shared by the private panels: from their builds only, so no
    # raw value reaches a panel that may be released
    limits: dict[str, Any] = {}
    coord_lims: dict[str, Any] = {}
    differing: list[str] = []
    blist = list(builds.values())
    for ax in ("x", "y"):
        kind, value = position_limits(blist, ax)
        if kind == "continuous":
            coord_lims[f"{ax}lim"] = value
            limits[ax] = value
        elif kind == "discrete":
            joined = join_discrete(value)
            limits[ax] = joined
            if any(v != joined for v in value):
                differing.append(ax)
    others = other_scales(blist)
    for ae, s in others.items():
        limits[ae] = s.limits

    intervals = {k: intervals_of_built(b, level) for k, b in builds.items()}
    captions = {"unperturbed": UNPERTURBED_CAPTION}
    for k, t in intervals.items():
        lines = [t.caption(), interval_caption(builds[k], level)]
        captions[k] = "\n".join(x for x in lines if x)
    final: dict[str, ggplot] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "scale already present"
        for k, p in plots.items():
            q = p
            if k == "unperturbed":
                # its own scales: trained on raw data, never shared
                final[k] = q + ggtitle(MARKER) + labs(caption=captions[k])
                continue
            for s in others.values():
                q = q + deepcopy(s)
            coord = q.coordinates
            if coord_lims and isinstance(coord, coord_cartesian):
                new = deepcopy(coord)
                new.limits.x = coord_lims.get("xlim", new.limits.x)
                new.limits.y = coord_lims.get("ylim", new.limits.y)
                q = q + new
            title = _title(k, builds[k])
            final[k] = q + ggtitle(title) + labs(caption=captions[k])
    for ax in differing:
        notes.append(
            f"the {ax} levels differ between the private panels (an "
            "undeclared domain): each shows the levels it released."
        )
    return Comparison(
        final,
        limits,
        intervals,
        captions,
        # a list is accepted too; the tuple has its two numbers
        cast("tuple[float, float]", tuple(figure_size)),
        notes,
    )
