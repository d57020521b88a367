"""A synopsis perturbed by the Cell Key Method: its p-table, its
parameters, its statement, and the p-table kept in a synopsis file.

A CKM synopsis (``pp.synopsis(..., method="ckm")``) is a set of tables,
each cell perturbed by :class:`~plotnine_private.mechanisms.release.
count_mechanisms.CKMCounts` at its cell key (the sum of its records'
keys, mod 1), as ``ckm_table`` perturbs the same cell. The tables are
published as perturbed: no consistency step (see ``docs/synopsis.md``).
"""

from __future__ import annotations

import io
from typing import Any, Literal

import numpy as np

from ..exceptions import PlotninePrivateError
from ..mechanisms.ptable import PTable, read_ptable
from ..validation import as_ptable, validate_threshold

__all__ = [
    "METHODS",
    "check_ckm_arguments",
    "ckm_statement",
    "ptable_from_json",
    "ptable_json",
    "ptable_words",
    "shared_total_gap",
]

#: the methods of ``pp.synopsis``
METHODS = ("dp", "ckm")


def _given(**params: Any) -> list[str]:
    """The names of the parameters given (not None), in order."""
    return [k for k, v in params.items() if v is not None]


def check_ckm_arguments(
    name: str,
    method: str,
    *,
    eps: Any,
    seed: Any,
    weights: Any,
    adjacency: Any,
    rkey: Any,
    ptable: Any,
    threshold: Any,
) -> tuple[str, PTable, float | None] | None:
    """Refuse the arguments of the other method; for ``"ckm"``, the
    record-key column, the count p-table and the threshold (validated)."""
    if method == "dp":
        given = _given(rkey=rkey, ptable=ptable, threshold=threshold)
        if given:
            raise PlotninePrivateError(
                f"{name}(): {given[0]}= is a Cell Key Method parameter; give "
                "method='ckm' for a CKM table set, or remove "
                f"{', '.join(f'{k}=' for k in given)} for a DP synopsis."
            )
        return None
    dp = _given(eps=eps, seed=seed, weights=weights, adjacency=adjacency)
    if dp:
        raise PlotninePrivateError(
            f"{name}(): {dp[0]}= is a differential privacy parameter; a CKM "
            "synopsis (method='ckm') has no budget: its noise is fixed by "
            "the record keys and the p-table. Remove "
            f"{', '.join(f'{k}=' for k in dp)}, or give method='dp'."
        )
    if not isinstance(rkey, str):
        raise PlotninePrivateError(
            f"{name}(): rkey={rkey!r} must name the column of record keys "
            "(method='ckm'); make it once with pp.add_record_keys(data) and "
            "store it with the data, e.g. rkey='rkey'."
        )
    if ptable is None:
        raise PlotninePrivateError(
            f"{name}(): ptable is required with method='ckm': a count "
            "p-table, e.g. ptable=pp.create_cnt_ptable(D=5, V=2.01, js=2)."
        )
    pt = as_ptable(name, ptable)
    if pt.kind != "counts":
        raise PlotninePrivateError(
            f"{name}(): ptable must be a count p-table (create_cnt_ptable or "
            f"a count table read with read_ptable), not a {pt.kind} table."
        )
    return rkey, pt, validate_threshold(name, threshold)


def ptable_words(ptable: PTable, params: dict[str, Any] | None = None) -> str:
    """The p-table named as the CKM stats' report names it: its
    parameters ``D``, ``V``, ``js`` (those it has) and its fingerprint."""
    p = ptable.params if params is None else params
    keys = [k for k in ("D", "V", "js", "pstay") if p.get(k) is not None]
    head = ", ".join(f"{k}={p[k]}" for k in keys)
    if not head:
        head = f"read from {p.get('source', 'a file')!s}"
    return f"p-table {head} (sha256 {ptable.fingerprint[:12]})"


def ckm_statement(
    marginals: list[tuple[str, ...]],
    ptable: PTable,
    threshold: float | None,
    rkey: str,
    unit_words: str,
) -> str:
    """What a CKM synopsis released, for a reader and an output checker."""
    m = len(marginals)
    return (
        f"Synopsis of {m} marginals {[list(mg) for mg in marginals]} over "
        "declared domains, each cell perturbed by the Cell Key Method "
        f"(record keys {rkey!r}, {ptable_words(ptable)}"
        + (
            f", released counts < {threshold:g} hidden"
            if threshold is not None
            else ""
        )
        + unit_words
        + "): a cell's cell key is the sum of its records' keys mod 1, its "
        "deviation the p-table's at that key, as ckm_table perturbs the "
        "same cell. No formal guarantee (no eps). Each marginal is "
        "published as perturbed, not made consistent: two marginals may "
        "differ on a shared total."
    )


def shared_total_gap(
    tables: dict[tuple[str, ...], np.ndarray],
) -> float:
    """The largest difference between two tables' sums over one shared
    dimension's levels (and their totals): how far apart the published
    marginals are where they overlap (0 for one table)."""
    gap = 0.0
    dims = {d for mg in tables for d in mg}
    for d in dims:
        sums = [
            t.sum(axis=tuple(k for k, e in enumerate(mg) if e != d))
            for mg, t in tables.items()
            if d in mg
        ]
        for s in sums[1:]:
            gap = max(gap, float(np.max(np.abs(s - sums[0]))))
    totals = [float(t.sum()) for t in tables.values()]
    if totals:
        gap = max(gap, max(totals) - min(totals))
    return gap


def ptable_json(ptable: PTable, params: dict[str, Any]) -> dict[str, Any]:
    """The p-table as a synopsis file keeps it: its parameters, its
    fingerprint and its text (R style; ONS style for integer keys)."""
    fmt: Literal["r", "ons"] = "ons" if ptable.key_kind == "integer" else "r"
    buf = io.StringIO()
    ptable.to_csv(buf, format=fmt)
    return {
        "params": {
            k: v
            for k, v in params.items()
            if isinstance(v, (str, int, float, bool)) or v is None
        },
        "fingerprint": ptable.fingerprint,
        "format": fmt,
        "text": buf.getvalue(),
    }


def ptable_from_json(path: str, d: dict[str, Any]) -> PTable:
    """The p-table of a synopsis file (:func:`ptable_json`), checked
    against its fingerprint."""
    try:
        pt = read_ptable(io.StringIO(d["text"]), format=d["format"])
    except (KeyError, TypeError, ValueError) as err:
        raise PlotninePrivateError(
            f"load_synopsis(): {path!r} holds no readable p-table ({err}); "
            "save the synopsis again with Synopsis.save(path)."
        ) from None
    if pt.fingerprint != d.get("fingerprint"):
        raise PlotninePrivateError(
            f"load_synopsis(): the p-table in {path!r} does not match its "
            f"fingerprint {str(d.get('fingerprint'))[:12]} (the file was "
            "changed); save the synopsis again with Synopsis.save(path)."
        )
    return pt
