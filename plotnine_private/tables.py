"""Private frequency tables that agree with the plots.

``dp_table`` and ``ckm_table`` release counts of the same cells as
``count_dp`` / ``count_ckm`` with the same mechanism, so a table and a
bar chart of the same data and parameters show the same numbers (one
release, not two).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .exceptions import PlotninePrivateError
from .mechanisms.randomness import cell_words
from .stats.base import (
    CellTable,
    CKMCounts,
    DPCounts,
    aggregate_cells,
    as_ptable,
    level_label,
    validate_choice,
    validate_delta,
    validate_eps,
    validate_seed,
)

__all__ = ["ckm_table", "dp_table"]


def _as_list(v) -> list[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    return list(v)


def _domain(col: pd.Series, levels=None):
    if levels is not None:
        return [level_label(v) for v in levels], True
    if isinstance(col.dtype, pd.CategoricalDtype):
        return [level_label(v) for v in col.cat.categories], True
    return sorted({level_label(v) for v in col.dropna().tolist()}), False


def _release_table(name, data, x, groups, facets, levels, mechanism, keys):
    if not isinstance(data, pd.DataFrame):
        raise PlotninePrivateError(
            f"{name}(): data must be a pandas DataFrame, got "
            f"{type(data).__name__}."
        )
    groups, facets = _as_list(groups), _as_list(facets)
    for c in [x, *groups, *facets]:
        if c not in data.columns:
            raise PlotninePrivateError(
                f"{name}(): column {c!r} is not in the data; columns are "
                f"{list(data.columns)}."
            )
    data = data.dropna(subset=[x, *groups, *facets])
    undeclared = [
        f for f in facets if not isinstance(data[f].dtype, pd.CategoricalDtype)
    ]
    if undeclared and isinstance(mechanism, DPCounts):
        raise PlotninePrivateError(
            f"{name}(): facet column(s) {undeclared} have no public set of "
            "levels; declare them as pandas Categoricals (as the plots "
            "require), so no facet appears just because a record has it."
        )
    fdomains = [_domain(data[f]) for f in facets]
    panels = (
        pd.MultiIndex.from_product([d for d, _ in fdomains]).tolist()
        if facets
        else [()]
    )
    xdom, xpublic = _domain(data[x], levels)
    gdoms = [_domain(data[g]) for g in groups]
    gpublic = all(p for _, p in gdoms)
    out = []
    for panel in panels:
        panel = panel if isinstance(panel, tuple) else (panel,)
        mask = np.ones(len(data), dtype=bool)
        for f, v in zip(facets, panel):
            mask &= data[f].map(level_label).to_numpy() == v
        pdata = data[mask]
        if gpublic and groups:
            gframe = pd.MultiIndex.from_product(
                [d for d, _ in gdoms], names=groups
            ).to_frame(index=False)
        elif groups:
            gframe = (
                pdata[groups].map(level_label).drop_duplicates()
                .sort_values(groups).reset_index(drop=True)
            )
        else:
            gframe = pd.DataFrame(index=[0])
        gidx = pd.MultiIndex.from_frame(gframe) if groups else None
        gcode = (
            gidx.get_indexer(
                pd.MultiIndex.from_frame(pdata[groups].map(level_label))
            )
            if groups
            else np.zeros(len(pdata), dtype=np.int64)
        )
        xindex = {v: i for i, v in enumerate(xdom)}
        xcode = np.fromiter(
            (xindex.get(level_label(v), -1) for v in pdata[x].tolist()),
            dtype=np.int64, count=len(pdata),
        )
        nfam, ngrp = len(xdom), len(gframe)
        code = np.where((xcode >= 0) & (gcode >= 0), gcode * nfam + xcode,
                        -1)
        key_ints = keys(pdata) if keys is not None else None
        n, w, ks = aggregate_cells(code, ngrp * nfam, None, key_ints)
        gi = np.repeat(np.arange(ngrp), nfam)
        fi = np.tile(np.arange(nfam), ngrp)
        frame = pd.DataFrame({x: np.asarray(xdom, dtype=object)[fi]})
        for g in groups:
            frame[g] = gframe[g].to_numpy()[gi]
        for f, v in zip(facets, panel):
            frame[f] = v
        public = xpublic and gpublic
        if not public:
            sel = n > 0
            frame, n, w = frame[sel].reset_index(drop=True), n[sel], w[sel]
            ks = ks[sel] if ks is not None else None
        label = "|".join(panel)
        content = [np.array([label] * len(frame), dtype=object)]
        content += [frame[g].to_numpy(dtype=object) for g in groups]
        content.append(frame[x].to_numpy(dtype=object))
        table = CellTable(
            frame=frame, words=cell_words(*content), n=n, weighted=w,
            key_sum=ks, public=public,
            source="public" if public else "observed",
        )
        rel = mechanism.perturb(table, panel=label or None)
        frame["count"] = np.rint(rel.values).astype(np.int64)
        out.append(frame[rel.keep])
    cols = [*facets, *groups, x, "count"]
    result = pd.concat(out, ignore_index=True)[cols]
    # show the user's values, not the canonical labels used as keys
    for c in [*facets, *groups, x]:
        values = list(levels) if (c == x and levels is not None) else (
            data[c].dropna().unique().tolist()
        )
        back = {level_label(v): v for v in values}
        result[c] = result[c].map(lambda lab, b=back: b.get(lab, lab))
    return result


def dp_table(
    data: pd.DataFrame,
    x: str,
    *,
    groups: Sequence[str] | str | None = None,
    facets: Sequence[str] | str | None = None,
    eps: float,
    delta: float = 1e-6,
    seed: int | None = None,
    adjacency: str = "replace",
    noise: str = "discrete_laplace",
    levels: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """A differentially private frequency table.

    With the same data, parameters and seed, the counts equal what
    ``geom_bar(aes(x, fill=groups...), stat="count_dp") +
    facet_wrap(facets)`` plots for the same cells: the noise of a cell is
    keyed by its content (facet values, group values, x value), not by
    the query that released it.

    Parameters
    ----------
    data
        The records.
    x
        Column counted (the bars).
    groups
        Columns of the fill/colour groups, in mapping order.
    facets
        Facet columns, in facet order.
    eps, delta, seed, adjacency, noise, levels
        As in ``stat_count_dp``.

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
    mech = DPCounts(
        name,
        validate_eps(name, eps),
        validate_delta(name, delta),
        validate_seed(name, seed),
        validate_choice(name, "adjacency", adjacency,
                        ("replace", "add_remove")),
        validate_choice(name, "noise", noise,
                        ("discrete_laplace", "laplace")),
    )
    return _release_table(name, data, x, groups, facets, levels, mech, None)


def ckm_table(
    data: pd.DataFrame,
    x: str,
    *,
    rkey: str,
    ptable,
    groups: Sequence[str] | str | None = None,
    facets: Sequence[str] | str | None = None,
    threshold: float | None = None,
    levels: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """A frequency table perturbed by the Cell Key Method.

    For the same cells it equals what ``count_ckm`` plots: a cell's noise
    depends only on its records' keys and the p-table.

    Examples
    --------
    >>> from plotnine.data import mpg
    >>> from plotnine_private import add_record_keys, create_cnt_ptable
    >>> d = add_record_keys(mpg, seed=1)
    >>> t = ckm_table(d, "class", rkey="rkey",
    ...               ptable=create_cnt_ptable(D=2, V=1.05, js=1))
    >>> int(t["count"].sum()) > 0
    True
    """
    name = "ckm_table"
    ptab = as_ptable(name, ptable)
    if rkey not in data.columns:
        raise PlotninePrivateError(
            f"{name}(): rkey column {rkey!r} is not in the data; create "
            "keys once with add_record_keys(data) and store them."
        )
    mech = CKMCounts(name, ptab, threshold)
    return _release_table(
        name, data, x, groups, facets, levels, mech,
        lambda d: mech.key_integers(d[rkey].to_numpy()),
    )


