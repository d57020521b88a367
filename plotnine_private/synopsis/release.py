"""``pp.synopsis``: the noisy marginals of a workload, released once.

Every marginal of the workload is a set of cells over declared levels
(numeric dimensions cut into fine bins of a declared resolution), so the
cells are a public domain. All of them are one cell table in which each
record is counted once per marginal (``multiplicity`` = the number of
marginals) and go through the package's release engine once: one
discrete Laplace draw per cell of scale ``m * sensitivity / eps``
(each marginal at ``eps / m``), one charge of ``eps`` in the report and
the ledger. The noisy counts are then made consistent
(:mod:`.consistency`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..cells import Dimension, assemble, object_column
from ..engines.push import assemble_counts
from ..engines.source import is_source, source
from ..exceptions import PlotninePrivateError
from ..mechanisms.ptable.ckm import record_key_integers
from ..mechanisms.release.count_mechanisms import BlockLaplaceCounts
from ..mechanisms.release.engine import CKMCounts, LaplaceCounts, release_cells
from ..mechanisms.release.query import Query
from ..mechanisms.samplers.laplace import DEFAULT_DELTA, dlap_variance
from ..mechanisms.session import tagged
from ..tables import bounded_rows
from ..units import UnitFrame, dataset_of, unit_of
from ..validation import (
    validate_choice,
    validate_eps,
    validate_label,
    validate_seed,
)
from .ckm import METHODS, check_ckm_arguments, ckm_statement, shared_total_gap
from .consistency import make_consistent
from .engine_cells import engine_codes
from .result import Dim, Synopsis

__all__ = ["synopsis"]

NAME = "synopsis"
_LEVEL_TYPES = (str, int, float, bool)


def _dim(name: str, spec: Any) -> Dim:
    if isinstance(spec, tuple) and len(spec) == 3:
        try:
            lo, hi, res = (float(v) for v in spec)
        except (TypeError, ValueError):
            lo = hi = res = math.nan
        n = (hi - lo) / res if res > 0 else math.nan
        if not (
            math.isfinite(lo)
            and math.isfinite(hi)
            and lo < hi
            and res > 0
            and abs(n - round(n)) <= 1e-9 * max(1.0, n)
        ):
            raise PlotninePrivateError(
                f"{NAME}(): dims[{name!r}]={spec!r}: a numeric dimension is "
                "(lo, hi, resolution) with finite lo < hi and a resolution "
                "> 0 that divides hi - lo, e.g. (0, 120, 5)."
            )
        return Dim(name, limits=(lo, hi), resolution=res)
    if isinstance(spec, (list, pd.Index, np.ndarray)):
        levels = [v.item() if isinstance(v, np.generic) else v for v in spec]
        bad = [v for v in levels if not isinstance(v, _LEVEL_TYPES)]
        if not levels or bad or len(set(levels)) != len(levels):
            raise PlotninePrivateError(
                f"{NAME}(): dims[{name!r}] must list its public levels, "
                "unique, each a str, int, float or bool"
                + (f" (not {bad[0]!r})" if bad else "")
                + "; e.g. dims={'carrier': ['AA', 'B6', 'UA']}."
            )
        return Dim(name, levels=tuple(levels))
    raise PlotninePrivateError(
        f"{NAME}(): dims[{name!r}]={spec!r} is neither a list of public "
        "levels (['AA', 'UA']) nor a tuple (lo, hi, resolution) of a "
        "numeric dimension ((0, 120, 5))."
    )


def _workload(workload: Any, dims: dict[str, Dim]) -> list[tuple[str, ...]]:
    names = list(dims)
    if workload is None:
        return [(a,) for a in names] + list(itertools.combinations(names, 2))
    out: list[tuple[str, ...]] = []
    for w in workload if isinstance(workload, (list, tuple)) else [None]:
        m = (w,) if isinstance(w, str) else w
        if (
            not isinstance(m, tuple)
            or len(m) not in (1, 2)
            or len(set(m)) != len(m)
            or any(d not in dims for d in m)
        ):
            raise PlotninePrivateError(
                f"{NAME}(): workload entry {w!r} must be a tuple of one or "
                f"two distinct declared dimensions {names}, e.g. "
                f"workload=[{tuple(names[:2])!r}, ({names[0]!r},)]."
            )
        if any(set(m) == set(o) for o in out):
            raise PlotninePrivateError(
                f"{NAME}(): workload entry {w!r} is listed twice; list "
                "each marginal once."
            )
        out.append(m)
    if not out:
        raise PlotninePrivateError(
            f"{NAME}(): workload=[] holds no marginal; give None (every "
            "1- and 2-way marginal) or a list of tuples."
        )
    return out


def _weights(
    weights: Any, marginals: list[tuple[str, ...]]
) -> list[float] | None:
    """Each marginal's share of eps, in workload order (None: equal)."""
    if weights is None:
        return None
    if not isinstance(weights, dict):
        raise PlotninePrivateError(
            f"{NAME}(): weights={weights!r} must be None (equal shares) or a "
            "dict {marginal: share} over the workload, e.g. the weights of "
            "pp.plan_synopsis(...)."
        )
    shares: dict[int, float] = {}
    for key, w in weights.items():
        m = (key,) if isinstance(key, str) else key
        k = next(
            (
                i
                for i, mg in enumerate(marginals)
                if isinstance(m, tuple) and set(m) == set(mg)
            ),
            None,
        )
        if k is None:
            raise PlotninePrivateError(
                f"{NAME}(): weights key {key!r} is not a marginal of the "
                f"workload {marginals}; give one share per workload entry."
            )
        if (
            isinstance(w, bool)
            or not isinstance(w, (int, float))
            or not math.isfinite(w)
            or not w > 0
        ):
            raise PlotninePrivateError(
                f"{NAME}(): weights[{key!r}]={w!r} must be a share > 0 of eps."
            )
        shares[k] = float(w)
    missing = [mg for i, mg in enumerate(marginals) if i not in shares]
    if missing:
        raise PlotninePrivateError(
            f"{NAME}(): weights has no share for {missing}; give one share "
            "per workload entry (or weights=None for equal shares)."
        )
    total = sum(shares.values())
    if abs(total - 1.0) > 1e-6:
        raise PlotninePrivateError(
            f"{NAME}(): the weights sum to {total:g}; they are shares of "
            "eps and must sum to 1."
        )
    return [shares[i] / total for i in range(len(marginals))]


def _codes(rows: pd.DataFrame, d: Dim) -> np.ndarray:
    """Each record's cell of ``d`` (-1: missing or outside its domain)."""
    column = rows[d.name]
    if d.levels is not None:
        return d.level_codes(column.astype(object))
    try:
        v = pd.to_numeric(column, errors="raise").to_numpy(
            dtype=float, na_value=np.nan
        )
    except (TypeError, ValueError):
        raise PlotninePrivateError(
            f"{NAME}(): column {d.name!r} is declared numeric "
            f"(limits {d.limits}) but holds {column.dtype} values; declare "
            "its levels as a list instead."
        ) from None
    assert d.limits is not None and d.resolution is not None
    lo, hi = d.limits
    with np.errstate(invalid="ignore"):
        k = np.floor((v - lo) / d.resolution)
        k = np.where(v == hi, d.bins - 1, k)  # the last bin is closed
        ok = (v >= lo) & (v <= hi)
    return np.where(ok, k, -1).astype(np.int64)


def _records(data: Any) -> pd.DataFrame:
    """The records of an in-memory ``data`` as pandas, each unit's
    bounded as a plot's layer bounds them."""
    if isinstance(data, UnitFrame):
        return bounded_rows(NAME, data)
    if isinstance(data, pd.DataFrame):
        return data
    if hasattr(data, "to_pandas"):
        return data.to_pandas()
    raise PlotninePrivateError(
        f"{NAME}(): data must be a pandas or polars DataFrame, or a table "
        f"in an engine (pp.source(...)), not {type(data).__name__}."
    )


def synopsis(
    data: Any,
    dims: dict[str, Any],
    *,
    eps: float | None = None,
    workload: Sequence[tuple[str, ...]] | None = None,
    weights: dict[Any, float] | None = None,
    seed: int | str | None = None,
    unit: str | None = None,
    max_records: int | None = None,
    adjacency: str | None = None,
    label: str | None = None,
    method: str = "dp",
    rkey: str | None = None,
    ptable: Any = None,
    threshold: float | None = None,
) -> Synopsis:
    """Release the noisy marginals of a workload once, made consistent.

    Parameters
    ----------
    data
        The records: a pandas or polars DataFrame, one with a privacy unit
        (``pp.source(df, unit=..., max_records=k)``), or a table in an
        engine (``pp.source(con, "flights")``: DuckDB, Polars, Spark),
        whose records are counted in the engine (a row per combination
        of cells collected, never a record).
    dims
        The public domain of each column explored: a list of its levels,
        or a tuple ``(lo, hi, resolution)`` cutting a numeric column into
        fine bins ``[lo, lo + resolution)``, ... (the last one closed). A
        record whose value is missing or outside the domain of any
        declared column is counted in no marginal, so every marginal
        counts the same records.
    eps
        The whole budget, charged once; each of the ``m`` marginals gets
        ``eps / m``, or its share of ``weights`` (``method="dp"`` only,
        where it is required).
    workload
        The marginals to release: tuples of one or two declared columns;
        by default every 1-way and 2-way marginal.
    weights
        Each marginal's share of ``eps`` (a dict keyed by the workload's
        tuples, shares > 0 summing to 1), e.g. the ``weights`` of
        :func:`~plotnine_private.plan_synopsis`; by default equal shares.
    seed, adjacency, label
        As in :func:`~plotnine_private.dp_table` (``adjacency``: by
        default ``"replace"``; ``seed`` and ``adjacency`` are DP's).
    unit, max_records
        A privacy unit (``pp.source``'s): each unit keeps at most
        ``max_records`` records and the noise protects a whole unit.
    method
        ``"dp"`` (default): discrete Laplace noise, made consistent;
        ``"ckm"``: a CKM table set, each cell perturbed by the Cell Key
        Method as :func:`~plotnine_private.ckm_table` perturbs the same
        cell, and each marginal published as perturbed (no ``eps``).
    rkey, ptable, threshold
        ``method="ckm"`` only, as in :func:`~plotnine_private.ckm_table`:
        the column of record keys (``add_record_keys``), the count
        p-table, and the threshold under which a perturbed count is
        hidden (shown as 0).

    Returns
    -------
    A :class:`~plotnine_private.synopsis.Synopsis`.
    """
    method = validate_choice(NAME, "method", method, METHODS)
    ckm = check_ckm_arguments(
        NAME,
        method,
        eps=eps,
        seed=seed,
        weights=weights,
        adjacency=adjacency,
        rkey=rkey,
        ptable=ptable,
        threshold=threshold,
    )
    # the budget and adjacency of a DP synopsis (unused by CKM)
    budget, adj = 0.0, "replace"
    if ckm is None:
        budget = validate_eps(NAME, eps)
        seed = validate_seed(NAME, seed)
        adj = validate_choice(
            NAME,
            "adjacency",
            "replace" if adjacency is None else adjacency,
            ("replace", "add_remove"),
        )
    label = validate_label(NAME, label)
    if not isinstance(dims, dict) or not dims:
        raise PlotninePrivateError(
            f"{NAME}(): dims={dims!r} must be a non-empty dict of column -> "
            "levels or (lo, hi, resolution)."
        )
    declared = {str(k): _dim(str(k), v) for k, v in dims.items()}
    marginals = _workload(workload, declared)
    if unit is not None:
        data = source(data, unit=unit, max_records=max_records)
    elif max_records is not None:
        raise PlotninePrivateError(
            f"{NAME}(): max_records={max_records!r} needs unit=... (the "
            "column naming each person)."
        )
    frame = data
    u = unit_of(data)
    in_engine = is_source(data) and not isinstance(data, UnitFrame)
    if u.max_cells is not None:
        raise PlotninePrivateError(
            f"{NAME}(): a unit with max_cells is not supported yet; bound "
            "it with max_records only."
        )
    shares = _weights(weights, marginals)
    m = len(marginals)
    shapes = [tuple(declared[d].bins for d in mg) for mg in marginals]
    sizes = [int(np.prod(s)) for s in shapes]
    mech: LaplaceCounts | BlockLaplaceCounts | CKMCounts
    scales: list[float] = []
    if ckm is not None:
        # the Cell Key Method: no budget, nothing scaled by a unit (a
        # unit's records share its key, add_record_keys(unit=...))
        mech = CKMCounts(ckm[1], ckm[2])
    elif shares is None:
        equal = LaplaceCounts(budget / m, DEFAULT_DELTA, adj)
        if u.bounded:
            equal = equal.bounded(u.cell_records, None)
        scales = [equal.scale] * m
        mech = equal
    else:
        block = BlockLaplaceCounts(budget, tuple(shares), tuple(sizes), adj)
        if u.bounded:
            block = block.bounded(u.cell_records, None)
        scales = list(block.scales)
        mech = block
    counts: np.ndarray | None = None  # None: one row a record
    key_sums: np.ndarray | None = None
    if in_engine:
        # grouped in the engine: a row per combination of cells seen,
        # with its count (and its records' exact key sum, for CKM)
        codes, counts, key_sums = engine_codes(
            NAME, data, declared, ckm[:2] if ckm else None
        )
    else:
        rows = _records(data)
        missing = [
            d
            for d in [*declared, *([ckm[0]] if ckm else [])]
            if d not in rows.columns
        ]
        if missing:
            raise PlotninePrivateError(
                f"{NAME}(): column {missing[0]!r} is not in the data; "
                f"columns are {list(rows.columns)}."
            )
        codes = {d: _codes(rows, v) for d, v in declared.items()}
    nrows = len(next(iter(codes.values())))
    inside = np.ones(nrows, dtype=bool)
    for c in codes.values():
        inside &= c >= 0
    # one cell table: marginal j's cells follow marginal j-1's, and each
    # record is counted once in every marginal
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    parts = []
    names: list[tuple] = []
    for mg, shape, off in zip(marginals, shapes, offsets):
        idx = [np.where(inside, codes[d], 0) for d in mg]
        cell = np.ravel_multi_index(idx, shape) + off
        parts.append(np.where(inside, cell, -1))
        labels = [declared[d].labels() for d in mg]
        names.extend((mg, combo) for combo in itertools.product(*labels))
    dim = Dimension(
        "synopsis cell",
        np.concatenate(parts) if parts else np.zeros(0, np.int64),
        [object_column(names)],
        names,
        True,
    )
    key_ints = None
    if ckm is not None and counts is None:
        pt = ckm[1]
        try:
            keys = record_key_integers(
                rows[ckm[0]].to_numpy(),
                kind="integer" if pt.key_kind == "integer" else "uniform",
                modulus=pt.key_modulus if pt.key_kind == "integer" else None,
            )
        except ValueError as err:
            raise PlotninePrivateError(
                f"{NAME}(): rkey={ckm[0]!r}: {err}"
            ) from None
        # each record's key once per marginal, as its codes are
        key_ints = np.tile(keys, m)
    if counts is None:
        table, _ = assemble([dim], key_ints=key_ints, multiplicity=m)
    else:  # the same cell table as the records would give
        table, _ = assemble_counts(
            [dim],
            np.tile(counts, m),
            key_sum=None if key_sums is None else np.tile(key_sums, m),
            multiplicity=m,
        )
    query = Query.make(
        "synopsis",
        "data",
        seed,
        dims=tuple((k, repr(v.to_json())) for k, v in declared.items()),
        workload=tuple(marginals),
        **({"rkey": ckm[0]} if ckm else {}),
        **u.query_parts(),
        **mech.parameters(),
    )
    with tagged(dataset_of(frame), label):
        released = release_cells(
            query,
            table,
            mech,
            domain="public",
            panels=f"one record in each of {m} marginals",
            data_object=frame,
        )
    noisy = np.asarray(released.noisy, dtype=float)
    raw = {
        mg: noisy[a:b].reshape(s)
        for mg, s, a, b in zip(marginals, shapes, offsets[:-1], offsets[1:])
    }
    if ckm is not None:
        # published as perturbed: each cell is ckm_table's (no
        # consistency step, see docs/synopsis.md)
        return Synopsis(
            declared,
            dict(raw),
            None,
            0.0,
            ckm_statement(
                marginals,
                ckm[1],
                ckm[2],
                ckm[0],
                f", unit {u.name} keeping {u.cell_records} records"
                if u.bounded
                else "",
            ),
            shared_total_gap(raw),
            raw,
            release=released.release,
            method="ckm",
            ptable=ckm[1],
            threshold=ckm[2],
            rkey=ckm[0],
        )
    if shares is not None:
        tables, gap = make_consistent(
            list(raw.values()), marginals, [dlap_variance(b) for b in scales]
        )
        noise = (
            "shares "
            + ", ".join(
                f"{w:.4g} ({'x'.join(mg)}: eps {w * budget:.4g}, "
                f"scale {b:.4g})"
                for mg, w, b in zip(marginals, shares, scales)
            )
            + " per cell"
        )
    else:
        tables, gap = make_consistent(list(raw.values()), marginals)
        noise = (
            f"eps/{m}={budget / m:g} per marginal, "
            f"scale {scales[0]:g} per cell"
        )
    statement = (
        f"Synopsis of {m} marginals {[list(mg) for mg in marginals]} over "
        f"declared domains, released once with discrete Laplace noise "
        f"(eps={budget:g} in total, {noise}, {adj} adjacency"
        + (
            f", unit {u.name} keeping {u.cell_records} records"
            if u.bounded
            else ""
        )
        + "), then made consistent: the total and each 1-way marginal "
        "averaged over the tables holding it (inverse-variance weights), "
        "projected onto non-negative values with the shared total, each "
        "table adjusted additively (least squares) to those sums, and "
        "raked if a cell went negative."
    )
    return Synopsis(
        declared,
        dict(zip(marginals, tables)),
        budget,
        0.0,
        statement,
        gap,
        raw,
        release=released.release,
        scale=float(scales[0]) if len(set(scales)) == 1 else math.nan,
        shares=dict(zip(marginals, shares or [1.0 / m] * m)),
        scales=dict(zip(marginals, scales)),
    )
