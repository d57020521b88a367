"""One plot three ways: unperturbed, DP and CKM, side by side
(:func:`compare`); the private panels share their scales.

The comparison is for the person who makes a private plot, inside the
secure environment: it shows what the noise does. Its unperturbed panel
is the ordinary plotnine plot of the raw data and is marked "unperturbed:
not for release"; only the private panels may leave.

How the panels are made from one plot with private layers:

* **unperturbed**: every private stat is swapped for its plotnine
  counterpart (``count``, ``bin``, ``bin_2d``, our non-private
  ``bin_hex``, ``sum``), binned on the edges the private layer used, so
  the bars and tiles line up;
* **DP**: DP layers as they are; CKM layers become their DP twin with the
  parameters of ``dp=dict(eps=..., seed=...)``;
* **CKM**: CKM layers as they are; DP layers become their CKM twin with
  ``ckm=dict(ptable=..., rkey="<record key column>")``. Bins a DP layer
  estimated privately (a released range) are given to the twin as public
  edges.

Shared scales: the plots are built, and the trained limits of every
scale of the *private* panels are joined (union of ranges, union of
levels) and applied to each private panel: continuous positions through
``coord_cartesian(xlim, ylim)`` (which zooms and changes no stat: position
scale limits would change what a private layer releases), colour, fill,
size and other scales through their own limits. Those limits come from
released values and public parameters only, so a private panel (which may
leave the secure environment) never shows where the raw data lie. The
unperturbed panel keeps its own scales (trained on raw data) and is
marked. Discrete positions whose levels differ between the private panels
(an undeclared domain, released with a threshold) are not joined: a
private panel shows what it released.

A :class:`Comparison` cannot be passed to ``save_release``: it holds the
unperturbed panel; save one of its private plots instead.
"""

from __future__ import annotations

import io
import warnings
from copy import deepcopy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from plotnine import coord_cartesian, ggtitle, labs, theme
from plotnine.scales.scale_continuous import scale_continuous
from plotnine.scales.scale_discrete import scale_discrete
from plotnine.stats import stat_bin, stat_bin_2d, stat_count, stat_sum

from ._compat import (
    Built,
    build,
    replace_stat,
    stat_arguments,
    unregister,
)
from .door import is_private, layer_build, layer_releases
from .exceptions import PlotninePrivateError
from .mechanisms.ptable import PTable
from .noise import NoiseIntervals, intervals_of_built
from .stats.base import count_labels
from .stats.bin import stat_bin_ckm, stat_bin_dp
from .stats.bin2d import stat_bin2d_ckm, stat_bin2d_dp
from .stats.bin_hex import stat_bin_hex
from .stats.binhex import stat_binhex_ckm, stat_binhex_dp
from .stats.count import stat_count_ckm, stat_count_dp
from .stats.sum import stat_sum_ckm, stat_sum_dp

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from plotnine import ggplot

__all__ = ["Comparison", "compare"]

#: title of the unperturbed panel
MARKER = "unperturbed: not for release"
#: caption of the unperturbed panel
UNPERTURBED_CAPTION = "plotnine's own stat on the raw data, on its own scales"

DP_KEYS = ("eps", "delta", "seed", "adjacency", "noise", "range_share")
CKM_KEYS = ("ptable", "threshold")
_MECHANISM_KEYS = set(DP_KEYS) | set(CKM_KEYS)


def _labelled(base):
    """A plotnine stat that also gives ``count_label`` (as the private
    stats do), so a label mapping works on the unperturbed panel. It is
    taken out of plotnine's registry of stat names again."""

    def compute_panel(self, data, scales):
        out = base.compute_panel(self, data, scales)
        if "count" in out.columns:
            out["count_label"] = count_labels(out["count"])
        return out

    name = f"_{base.__name__}_labelled"
    cls = type(
        name,
        (base,),
        {"compute_panel": compute_panel, "__doc__": base.__doc__},
    )
    unregister(name)
    return cls


# family -> (plain, dp, ckm)
FAMILIES: dict[str, tuple[type, type, type]] = {
    "count": (_labelled(stat_count), stat_count_dp, stat_count_ckm),
    "bin": (_labelled(stat_bin), stat_bin_dp, stat_bin_ckm),
    "bin2d": (_labelled(stat_bin_2d), stat_bin2d_dp, stat_bin2d_ckm),
    "binhex": (_labelled(stat_bin_hex), stat_binhex_dp, stat_binhex_ckm),
    "sum": (_labelled(stat_sum), stat_sum_dp, stat_sum_ckm),
}


def _family(stat) -> tuple[str, str] | None:
    """(family, "dp" / "ckm") of a private count stat."""
    for fam, (_, dp, ckm) in FAMILIES.items():
        if isinstance(stat, dp):
            return fam, "dp"
        if isinstance(stat, ckm):
            return fam, "ckm"
    return None


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
    allowed = DP_KEYS if kind == "dp" else (*CKM_KEYS, "rkey")
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise _fail(
            f"{kind}= does not take {', '.join(unknown)}; it takes "
            f"{', '.join(allowed)}."
        )
    return dict(params)


# --------------------------------------------------------------------------
# building the three plots
# --------------------------------------------------------------------------
def _built(plot: ggplot) -> Built:
    b = deepcopy(plot)
    for lyr in b.layers:
        if getattr(lyr, "is_budget", False):
            lyr.enforce = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(b)


def _edges(lyr, family: str) -> dict:
    """The bins a built private layer used (public or released), as
    parameters of the plain stat and of the twin."""
    stat = lyr.stat
    kept = layer_build(lyr)
    cache = kept.axis_cache if kept is not None else {}
    if family == "bin" and "x" in cache:
        b = np.asarray(cache["x"].breaks, dtype=float)
        if stat.params.get("pad"):
            b = np.r_[b[0] - (b[1] - b[0]), b, b[-1] + (b[-1] - b[-2])]
        return {
            "plain": {"breaks": b, "pad": False},
            "twin": {"breaks": b, "pad": False},
        }
    if family == "bin2d" and "x" in cache and "y" in cache:
        bx = np.asarray(cache["x"].breaks, dtype=float)
        by = np.asarray(cache["y"].breaks, dtype=float)
        return {"plain": {"breaks": (bx, by)}, "twin": {"breaks": (bx, by)}}
    if family == "binhex" and "hex" in cache:
        lat = cache["hex"]
        return {
            "plain": {"binwidth": tuple(lat["binwidth"])},
            "twin": {
                "limits": (lat["xlim"], lat["ylim"]),
                "binwidth": tuple(lat["binwidth"]),
            },
        }
    return {"plain": {}, "twin": {}}


def _swap(lyr, cls, params: dict, drop: set) -> None:
    """Give a layer a new stat of class ``cls``: the old stat's arguments
    without ``drop``, updated with ``params``."""
    old = lyr.stat
    kwargs = {
        k: v
        for k, v in stat_arguments(old).items()
        if k not in drop and k not in ("mapping", "data")
    }
    kwargs.update(
        (k, v)
        for k, v in old.params.items()
        if k not in drop and k in cls.DEFAULT_PARAMS
    )
    kwargs.update(params)
    kwargs = {k: v for k, v in kwargs.items() if v is not None or k in params}
    replace_stat(lyr, cls(**kwargs))


def _drop_rkey(plot: ggplot, layers) -> None:
    plot.mapping.pop("rkey", None)
    for lyr in layers:
        lyr.mapping.pop("rkey", None)


def _version(
    plot: ggplot, built: Built, target: str, twin: dict | None
) -> ggplot:
    """The plot with every private count layer as ``target`` ("plain",
    "dp" or "ckm")."""
    out = deepcopy(plot)
    for i, lyr in enumerate(out.layers):
        fam = _family(lyr.stat) if is_private(lyr) else None
        if fam is None:
            continue
        family, kind = fam
        plain, dp, ckm = FAMILIES[family]
        edges = _edges(built.layers[i], family)
        ranged = any(
            r.family == "range" for r in layer_releases(built.layers[i]) or ()
        )
        if target == "plain":
            # the same public bins; a privately estimated range is a noisy
            # guess, so the unperturbed panel bins as plotnine would
            _swap(
                lyr,
                plain,
                {} if ranged else edges["plain"],
                _MECHANISM_KEYS | {"limits", "levels", "resolution"},
            )
        elif target != kind:
            assert twin is not None  # given for "dp" and "ckm"
            params = {k: v for k, v in twin.items() if k != "rkey"}
            if target == "ckm" and ranged:
                # the DP layer estimated its bins privately: the released
                # edges are public now, and CKM needs public bins
                params.update(edges["twin"])
            _swap(lyr, ckm if target == "ckm" else dp, params, _MECHANISM_KEYS)
            if target == "ckm":
                lyr.mapping["rkey"] = twin["rkey"]
    kinds = {
        found[1]
        for lyr in plot.layers
        if is_private(lyr) and (found := _family(lyr.stat))
    }
    if target == "plain" or (target == "dp" and "dp" not in kinds):
        # record keys are for CKM only (a DP query would count them)
        _drop_rkey(out, out.layers)
    return out


# --------------------------------------------------------------------------
# shared scales
# --------------------------------------------------------------------------
def _join_continuous(limits: list) -> tuple[float, float] | None:
    lims = [tuple(map(float, x)) for x in limits if x is not None]
    if not lims:
        return None
    return (min(a for a, _ in lims), max(b for _, b in lims))


def _join_discrete(limits: list) -> list:
    out: list = []
    for lims in limits:
        for v in lims or ():
            if v not in out:
                out.append(v)
    return out


def _position_limits(builds: list[Built], ax: str):
    scales = [
        s
        for b in builds
        for s in getattr(b.layout, f"panel_scales_{ax}") or []
    ]
    if not scales:
        return None, None
    if all(isinstance(s, scale_discrete) for s in scales):
        per_plot = [
            _join_discrete(
                [
                    list(s.final_limits)
                    for s in getattr(b.layout, f"panel_scales_{ax}")
                ]
            )
            for b in builds
        ]
        return "discrete", per_plot
    cont = [s for s in scales if isinstance(s, scale_continuous)]
    joined = _join_continuous(
        [s.final_limits for s in cont if not s.is_empty()]
    )
    if joined is None:
        return None, None
    data_space = tuple(float(v) for v in cont[0].inverse(np.array(joined)))
    return "continuous", data_space


def _other_scales(builds: list[Built]) -> dict[str, Any]:
    """Joined non-position scales: aesthetic -> scale with shared limits."""
    found: dict[str, list] = {}
    for b in builds:
        for s in b.scales:
            ae = s.aesthetics[0]
            if ae in ("x", "y") or s.is_empty():
                continue
            found.setdefault(ae, []).append(s)
    shared: dict[str, Any] = {}
    for name, scales in found.items():
        s = deepcopy(scales[0])
        s.reset()
        if isinstance(s, scale_continuous):
            s.limits = _join_continuous([x.final_limits for x in scales])
        elif isinstance(s, scale_discrete):
            s.limits = _join_discrete([list(x.final_limits) for x in scales])
        else:  # pragma: no cover - identity and other scales
            continue
        shared[name] = s
    return shared


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
        fam = _family(lyr.stat) if is_private(lyr) else None
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
        A ggplot whose private layers use count, bin, bin2d, binhex or sum
        stats (``_dp`` or ``_ckm``); not modified.
    dp
        Parameters of the DP twin of CKM layers: ``eps`` (required),
        ``seed``, ``delta``, ``adjacency``, ``noise``, ``range_share``.
        ``False`` leaves the DP panel out.
    ckm
        Parameters of the CKM twin of DP layers: ``ptable`` and ``rkey``
        (the record key column) required, ``threshold``. ``False`` leaves
        the CKM panel out.
    level
        Level of the noise intervals in the captions.
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
    >>> cars = pp.add_record_keys(mpg, name="rk", seed=1)
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
    for lyr in plot.layers:
        if is_private(lyr):
            fam = _family(lyr.stat)
            if fam is None:
                raise _fail(
                    f"{type(lyr.stat).__name__} has no unperturbed "
                    "counterpart here; compare works for the count, bin, "
                    "bin2d, binhex and sum stats."
                )
            kinds.add(fam[1])
    if not kinds:
        raise _fail(
            "the plot has no private layer: use a _dp or _ckm stat, e.g. "
            "geom_bar(stat='count_dp', eps=1)."
        )
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
    original = _built(plot)
    plots: dict[str, ggplot] = {
        "unperturbed": _version(plot, original, "plain", None)
    }
    if dp_params is not None:
        plots["dp"] = _version(plot, original, "dp", dp_params)
    if ckm_params is not None:
        plots["ckm"] = _version(plot, original, "ckm", ckm_params)
    builds = {k: _built(p) for k, p in plots.items()}

    # limits shared by the private panels: from their builds only, so no
    # raw value reaches a panel that may be released
    limits: dict[str, Any] = {}
    coord_lims: dict[str, Any] = {}
    differing: list[str] = []
    blist = [b for k, b in builds.items() if k != "unperturbed"]
    for ax in ("x", "y"):
        kind, value = _position_limits(blist, ax)
        if kind == "continuous":
            coord_lims[f"{ax}lim"] = value
            limits[ax] = value
        elif kind == "discrete":
            joined = _join_discrete(value)
            limits[ax] = joined
            if any(v != joined for v in value):
                differing.append(ax)
    others = _other_scales(blist)
    for ae, s in others.items():
        limits[ae] = s.limits

    intervals = {
        k: intervals_of_built(b, level)
        for k, b in builds.items()
        if k != "unperturbed"
    }
    captions = {"unperturbed": UNPERTURBED_CAPTION}
    captions.update({k: t.caption() for k, t in intervals.items()})
    notes = []
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
