"""The three versions of one plot: each private layer swapped for its
unperturbed stat, its DP twin or its CKM twin (:func:`version`)."""

from __future__ import annotations

import warnings
from copy import deepcopy
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._compat import (
    Built,
    build,
    layer_own_data,
    replace_stat,
    stat_arguments,
)
from ..door import is_private, layer_build
from .families import (
    MECHANISM_KEYS,
    PRIVATE_ONLY,
    family_of,
    family_stats,
    plain_params,
    twin_params,
)

if TYPE_CHECKING:
    from plotnine import ggplot

__all__ = ["built", "version"]

#: parameters one mechanism's version of a family takes and its twin's
#: does not (a public total for DP; the magnitude p-table for CKM)
MECHANISM_ONLY = {"total", "sum_share", "num_ptable", "magnifier", "p"}


def built(plot: ggplot) -> Built:
    """A built copy of ``plot`` (a budget layer only watches here)."""
    b = deepcopy(plot)
    for lyr in b.layers:
        if getattr(lyr, "is_budget", False):
            lyr.enforce = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build(b)


def _swap(lyr, cls, params: dict, drop: set) -> None:
    """Give a layer a new stat of class ``cls``: the old stat's arguments
    that ``cls`` takes, without ``drop``, updated with ``params``."""
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
    kwargs = {k: v for k, v in kwargs.items() if k in cls.DEFAULT_PARAMS}
    kwargs.update(params)
    kwargs = {k: v for k, v in kwargs.items() if v is not None or k in params}
    replace_stat(lyr, cls(**kwargs))


def _drop_rkey(plot: ggplot) -> None:
    plot.mapping.pop("rkey", None)
    for lyr in plot.layers:
        lyr.mapping.pop("rkey", None)


def _used_columns(plot: ggplot, lyr) -> tuple:
    """Columns a layer's mapping and the facets read."""
    mapping = dict(plot.mapping) if lyr.inherit_aes else {}
    mapping.update(lyr.mapping)
    used = {str(v) for v in mapping.values()}
    facet = getattr(plot.facet, "vars", ()) or ()
    return tuple(used | {str(v) for v in facet})


def version(
    plot: ggplot, original: Built, target: str, twin: dict | None
) -> ggplot:
    """The plot with every private layer as ``target`` ("plain", "dp" or
    "ckm"); ``twin`` holds the parameters of the DP or CKM twin."""
    out = deepcopy(plot)
    for i, lyr in enumerate(out.layers):
        fam = family_of(lyr.stat) if is_private(lyr) else None
        if fam is None:
            continue
        family, kind = fam
        plain, dp, ckm = family_stats(family)
        stat = original.layers[i].stat
        kept = layer_build(original.layers[i])
        released = [] if kept is None else kept.releases
        ranged = any(r.family == "range" for r in released)
        if target == "plain":
            # the layer's own rows (plotnine keeps them as ``_data``)
            own = layer_own_data(lyr)
            frame = own if isinstance(own, pd.DataFrame) else plot.data
            params = plain_params(
                stat, family, ranged, frame, _used_columns(plot, lyr), kept
            )
            _swap(
                lyr,
                plain,
                params,
                MECHANISM_KEYS | PRIVATE_ONLY | MECHANISM_ONLY,
            )
            # the unperturbed panel is plotnine's stat on the raw rows by
            # design (compare's own panel, never released): the door lets
            # it through on a private source
            lyr._pnp_unperturbed = True
        elif target != kind:
            cls: Any = ckm if target == "ckm" else dp
            assert twin is not None and cls is not None
            # the twin's own parameters only (num_ptable is for summaries)
            params = {
                k: v
                for k, v in twin.items()
                if k != "rkey" and k in cls.DEFAULT_PARAMS
            }
            if target == "ckm":
                # a privately estimated range is public once released,
                # and CKM needs public bins
                params.update(twin_params(stat, family, ranged, kept))
            _swap(lyr, cls, params, MECHANISM_KEYS | MECHANISM_ONLY)
            if target == "ckm":
                lyr.mapping["rkey"] = twin["rkey"]
    kinds = {
        found[1]
        for lyr in plot.layers
        if is_private(lyr) and (found := family_of(lyr.stat))
    }
    if target == "plain" or (target == "dp" and "dp" not in kinds):
        # record keys are for CKM only (a DP query would count them)
        _drop_rkey(out)
    return out
