"""Which stat each private stat becomes in each panel of a comparison.

:func:`family_stats` gives a family's three stats, read from its
declaration (:mod:`plotnine_private.declarations`): the unperturbed (its
``counterpart``, plotnine's own or ours, such as
:class:`stat_pca_score_plain` for the private PCA), the DP and the CKM one
(``None`` where the family has no CKM version). :func:`plain_params`
and :func:`twin_params` give the parameters that make a swapped stat draw
on the same public grid as the private layer (bins, fine-histogram limits,
bandwidth, summary function).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._compat import registered as plotnine_stat
from .._compat import unregister
from ..declarations import Declaration, declared, twin
from ..stats.base import count_labels
from .plain_pca import stat_pca_score_plain

__all__ = [
    "CKM_KEYS",
    "DP_KEYS",
    "family_stats",
    "MECHANISM_KEYS",
    "PRIVATE_ONLY",
    "family_declaration",
    "family_of",
    "plain_params",
    "twin_params",
]

DP_KEYS = ("eps", "delta", "seed", "adjacency", "noise", "range_share")
CKM_KEYS = ("ptable", "threshold")
#: the parameters of the mechanisms, left out when a stat is swapped
MECHANISM_KEYS = set(DP_KEYS) | set(CKM_KEYS)
#: parameters of the private stats that their plotnine counterparts do
#: not take (public grids, interval variables, the public total)
PRIVATE_ONLY = {
    "limits",
    "levels",
    "resolution",
    "bins",
    "outside",
    "band",
    "level",
    "total",
    "bounds",
    "fun",
    "errorbar",
    "drop",
    "whiskers",
    "sum_share",
    "magnifier",
    "num_ptable",
    "p",
    "same_key",
    "label",
}


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


#: the unperturbed stats made so far (one class per counterpart)
_PLAIN: dict[str, type] = {}
#: counterparts of our own that plotnine's registry of stat names leaves
#: out (a name there would be usable as ``stat="..."``)
_UNREGISTERED = {"pca_score_plain": stat_pca_score_plain}


def family_declaration(family: str) -> Declaration:
    """The declaration of a registered family."""
    entry = twin(family, "dp") or twin(family, "ckm")
    assert entry is not None, family
    return entry.declaration


def _plain(family: str) -> type:
    """The counterpart of a family, made once (with ``count_label`` where
    the declaration asks for it)."""
    if family not in _PLAIN:
        entry = twin(family, "dp") or twin(family, "ckm")
        assert entry is not None, family
        decl = entry.declaration
        base = _UNREGISTERED.get(decl.counterpart) or plotnine_stat(
            f"stat_{decl.counterpart}"
        )
        if base is None:
            raise TypeError(
                f"{entry.name}: its declared counterpart "
                f"stat_{decl.counterpart} is not a registered stat."
            )
        _PLAIN[family] = _labelled(base) if decl.counterpart_labels else base
    return _PLAIN[family]


def family_stats(family: str) -> tuple[type, type, type | None]:
    """(unperturbed, DP, CKM) stats of a declared family; CKM is None
    where the family has none."""
    dp, ckm = twin(family, "dp"), twin(family, "ckm")
    assert dp is not None, family
    return _plain(family), dp.cls, None if ckm is None else ckm.cls


def family_of(stat) -> tuple[str, str] | None:
    """(family, "dp" / "ckm") of a private stat that ``compare`` takes,
    or None."""
    for cls in type(stat).__mro__:
        entry = declared(cls)
        if entry is not None and entry.declaration.compare:
            return entry.declaration.family, entry.mechanism
    return None


def _bin_edges(stat, family: str, kept: Any = None) -> dict:
    """The bins a built count-like layer used (public or released), from
    what its build kept (``kept``: :func:`~plotnine_private.door.
    layer_build`)."""
    cache = getattr(kept, "axis_cache", None) or {}
    if family == "bin" and "x" in cache:
        b = np.asarray(cache["x"].breaks, dtype=float)
        if stat.params.get("pad"):
            b = np.r_[b[0] - (b[1] - b[0]), b, b[-1] + (b[-1] - b[-2])]
        return {"plain": {"breaks": b, "pad": False}, "twin": {"breaks": b}}
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


def plain_params(
    stat,
    family: str,
    ranged: bool,
    frame=None,
    used: tuple = (),
    kept: Any = None,
) -> dict:
    """Parameters of the unperturbed stat of a built private layer.

    ``ranged``: the layer estimated its bins privately (a noisy guess:
    the unperturbed panel then bins as plotnine would). ``frame``: the
    layer's raw rows and ``used`` the columns its mapping and facets use
    (for the plain PCA, which reads unmapped feature columns).
    """
    decl = family_declaration(family)
    p = stat.params
    copied = {k: p[k] for k in decl.counterpart_params}
    # a family whose counterpart needs arguments computed from the build
    # (a density's bandwidth rule as a number, a summary's function) says
    # so itself
    own = getattr(stat, "counterpart_arguments", None)
    if own is not None:
        return {**copied, **own(kept)}
    if decl.counterpart != "pca_score_plain":
        # a count-like family: the bins its build used (none for a family
        # without cached axes, or a private range: plotnine's own bins)
        edges = {} if ranged else _bin_edges(stat, family, kept)["plain"]
        return {**edges, **copied}
    # pca: the private layer's default features, read the same way
    columns = p["columns"] or [
        c
        for c in frame.columns
        if c not in used
        and pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
    ]
    return {
        "frame": frame,
        "columns": list(columns),
        "axes": p["axes"],
        "bins": p["bins"],
        "scale": p["scale"],
        "output": p["output"],
    }


def twin_params(stat, family: str, ranged: bool, kept: Any = None) -> dict:
    """Parameters the DP or CKM twin takes over from a built layer
    beyond its own: the released edges of a privately estimated range
    (public once released; CKM needs public bins)."""
    if ranged:
        return _bin_edges(stat, family, kept)["twin"]
    return {}
