"""Composition: the releases of a built plot's layers become report rows.

A release is charged once, at its first appearance (same public identity:
same source, query and seed); everything else composes sequentially;
parallel composition over declared facets is in each release's own
privacy map. CKM releases have no eps. A layer without a mechanism is
"not protected" and the rows say which axis it trains. Nothing here
looks at data: only at the typed releases the layers recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..door import layer_build, layer_releases, marks_words
from ..units import ONE_ROW, Unit

if TYPE_CHECKING:
    from ..mechanisms.release.engine import Release

__all__ = [
    "COLUMNS",
    "POLICY_WORDS",
    "Ledger",
    "compose",
    "exceeds",
    "fmt",
    "private_layers",
    "shortfalls",
]

#: relative slack when comparing a composed cost with a budget, so that
#: 0.1 + 0.2 fits a budget of 0.3
_SLACK = 1e-9

COLUMNS = [
    "layer",
    "stat",
    "geom",
    "mechanism",
    "eps",
    "delta",
    "adjacency",
    "sensitivity",
    "domain",
    "cells",
    "panel",
    "parameters",
    "ptable_fingerprint",
    "seed_policy",
    "stream_version",
    "source",
    "unit",
    "identity",
    "composition",
    "charged_eps",
    "charged_delta",
]


def exceeds(cost: float, cap: float) -> bool:
    """Whether a composed cost is over a cap (with float slack)."""
    return cost > cap * (1 + _SLACK) + 1e-15


def shortfalls(
    spent: tuple[float, float],
    adding: tuple[float, float],
    cap: tuple[float | None, float | None],
) -> list[str]:
    """Words for each quantity (``eps``, ``delta``) that ``adding`` to
    ``spent`` would take past its ``cap`` (None: no cap): what is needed,
    what is left and the cap, e.g. ``"delta: this needs delta=1e-05 and
    delta=0 is left of the cap delta=0 (spent 0)"``; empty when it fits.

    >>> shortfalls((0.0, 0.0), (1.0, 1e-5), (10.0, 0.0))
    ['delta: this needs delta=1e-05 and delta=0 is left of the cap delta=0 (spent 0)']
    """  # noqa: E501
    out = []
    for name, s, a, c in zip(("eps", "delta"), spent, adding, cap):
        if c is not None and exceeds(s + a, c):
            left = max(c - s, 0.0)
            out.append(
                f"{name}: this needs {name}={fmt(float(a))} and "
                f"{name}={fmt(float(left))} is left of the cap "
                f"{name}={fmt(float(c))} (spent {fmt(float(s))})"
            )
    return out


def fmt(v: Any) -> str:
    """A value as the report shows it."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


@dataclass
class Ledger:
    """Report rows and notes, and the totals they compose to."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: layers whose cells are released by both DP and CKM (the DP
    #: guarantee does not hold for those cells)
    mixed: list[str] = field(default_factory=list)
    #: the privacy unit of each private layer, in words (layer key ->
    #: :func:`unit_words`)
    units: dict[Any, str] = field(default_factory=dict)

    @property
    def unit_line(self) -> str:
        """What one protected unit is, in one line: ``"privacy unit:
        person_id, at most 5 records each"`` (layers named where the
        units differ)."""
        kinds = list(dict.fromkeys(self.units.values()))
        if not kinds:
            return "privacy unit: none (no private layer)"
        if len(kinds) == 1:
            return f"privacy unit: {kinds[0]}"
        parts = []
        for w in kinds:
            keys = ", ".join(str(k) for k, v in self.units.items() if v == w)
            parts.append(f"{w} (layer {keys})")
        return "privacy units differ: " + "; ".join(parts)

    @property
    def total_eps(self) -> float:
        return math.fsum(r["charged_eps"] or 0.0 for r in self.rows)

    @property
    def total_delta(self) -> float:
        return math.fsum(r["charged_delta"] or 0.0 for r in self.rows)


def layer_unit(lyr) -> Unit:
    """The privacy unit a built private layer protected (its door's)."""
    built = layer_build(lyr)
    unit = None if built is None else built.unit
    return unit if isinstance(unit, Unit) else ONE_ROW


def unit_words(unit: Unit) -> str:
    """A unit in words for the report.

    >>> unit_words(Unit("person_id", 5))
    'person_id, at most 5 records each; records without an id left out'
    >>> unit_words(ONE_ROW)
    'one row'
    """
    if not unit.bounded:
        return "one row"
    plural = "s" if unit.max_records != 1 else ""
    cells = (
        ""
        if unit.max_cells is None
        else f" in at most {unit.max_cells} cells of a layer"
    )
    if unit.max_records_per_cell is not None:
        cells += f", at most {unit.max_records_per_cell} in each"
    chosen = "" if unit.chosen is None else f" ({unit.chosen})"
    # the rule of plotnine_private.identifiers, said where it applies
    return (
        f"{unit.column}, at most {unit.max_records} record{plural} each"
        f"{cells}{chosen}; records without an id left out"
    )


def private_layers(layers) -> list[tuple[int, Any]]:
    """The plot's layers with their indices, the budget layer left out
    (it releases nothing and draws nothing)."""
    return [
        (i, lyr)
        for i, lyr in enumerate(layers)
        if not getattr(lyr, "is_budget", False)
    ]


#: words for the key policy of a release
POLICY_WORDS = {
    "key": "key file (seed is a public label)",
    "seed-only": (
        "seed-only key: anyone who has the code can remove the noise"
    ),
    "session": "session entropy (not reproducible)",
    "record keys": "record keys (CKM)",
}


def _parameters(r: Release) -> str:
    d = r.details or {}
    parts = []
    if r.mechanism == "ckm":
        pt = d.get("ptable") or {}
        keys = [k for k in ("D", "V", "js", "pstay") if pt.get(k) is not None]
        parts.append(
            "p-table "
            + ", ".join(f"{k}={pt[k]}" for k in keys)
            + f" (sha256 {str(d.get('ptable_fingerprint', ''))[:12]})"
        )
        if d.get("threshold") is not None:
            parts.append(f"released counts < {d['threshold']} hidden")
        return "; ".join(parts)
    if "what" in d:
        parts.append(str(d["what"]))
    if "range" in d:
        lo, hi = d["range"]
        parts.append(f"estimate [{lo:.4g}, {hi:.4g}]")
    if "scale" in d:
        parts.append(f"scale={d['scale']:.4g}")
    if "laplace_scale_counts" in d:
        parts.append(f"scale={d['laplace_scale_counts']:.4g}")
    if d.get("threshold") is not None:
        parts.append(f"threshold={d['threshold']:.4g}")
    return "; ".join(parts)


def _row(i, lyr, **values) -> dict[str, Any]:
    row = dict.fromkeys(COLUMNS)
    row.update(
        layer=i,
        stat=type(lyr.stat).__name__,
        geom=type(lyr.geom).__name__,
        charged_eps=0.0,
        charged_delta=0.0,
    )
    row.update(values)
    return row


def _release_row(i, lyr, r: Release, composition: str, charged: bool):
    return _row(
        i,
        lyr,
        mechanism=r.mechanism,
        eps=r.eps,
        delta=r.delta if r.formal else None,
        adjacency=r.adjacency,
        sensitivity=r.sensitivity,
        domain=r.domain,
        cells=r.cells,
        panel=r.panels,
        parameters=_parameters(r),
        ptable_fingerprint=(r.details or {}).get("ptable_fingerprint"),
        seed_policy=POLICY_WORDS.get(r.policy, r.policy),
        # which keyed streams drew the noise (CKM draws none)
        stream_version=r.stream_version if r.formal else None,
        source=r.source,
        # a seed-only identity is keyed by a guessable secret: shown, it
        # would let a reader test seed guesses offline
        identity=None if r.policy == "seed-only" else r.identity,
        composition=composition,
        unit=unit_words(layer_unit(lyr)),
        charged_eps=(r.eps or 0.0) if charged else 0.0,
        charged_delta=(r.delta or 0.0) if charged and r.formal else 0.0,
    )


def trained_axes(lyr) -> list[str]:
    """Position axes an unprotected layer trains from its own data."""
    mapping = getattr(lyr, "mapping", None) or {}
    names = {str(ae) for ae in mapping}
    axes = [
        ax
        for ax in ("x", "y")
        if any(
            n == ax
            or n.startswith(ax)
            and n[len(ax) :] in ("min", "max", "end", "intercept")
            for n in names
        )
    ]
    return axes


def compose(layers: list[tuple[Any, Any]]) -> Ledger:
    """Compose the releases of built layers into report rows.

    ``layers`` pairs each layer with its key in the report: its index in
    one plot, or ``"0 of plot 2"`` in a composition (:mod:`.figures`).

    A release is charged once, at its first appearance: releases with the
    same public identity (a bar and its text layer on one source, with the
    same query and seed) are one release. Everything else composes
    sequentially; parallel composition over declared facets is already in
    each release's privacy map (one histogram over all panels).
    """
    ledger = Ledger()
    first_seen: dict[str, Any] = {}
    for i, lyr in layers:
        stat_name = type(lyr.stat).__name__
        releases = layer_releases(lyr)
        if releases is None:
            axes = trained_axes(lyr)
            trains = (
                f"; it trains the {' and '.join(axes)} axis from its data"
                if axes
                else ""
            )
            ledger.rows.append(
                _row(
                    i,
                    lyr,
                    composition="not protected",
                    charged_eps=None,
                    charged_delta=None,
                    parameters=f"trains: {', '.join(axes) or 'nothing'}",
                )
            )
            ledger.notes.append(
                f"layer {i} ({type(lyr.geom).__name__}, {stat_name}) is "
                "not protected: it draws its data through no privacy "
                f"mechanism and is not covered by the total{trains}. A "
                "checker must review it (harmless only if its data is "
                "public, e.g. an annotation)."
            )
            continue
        ledger.units[i] = unit_words(layer_unit(lyr))
        _contribution_rows(ledger, i, lyr, first_seen)
        if not releases:
            ledger.rows.append(_row(i, lyr, composition="no release"))
            continue
        # a layer that only repeats earlier releases (a geom_noise layer)
        # has its notes said once, at the layer it repeats
        repeats = all(r.identity in first_seen for r in releases)
        for r in releases:
            if r.identity in first_seen:
                k = first_seen[r.identity]
                ledger.rows.append(
                    _release_row(i, lyr, r, f"duplicate of layer {k}", False)
                )
                ledger.notes.append(
                    f"layer {i} repeats a release of layer {k} (same "
                    "source, query and seed or record keys): counted once."
                )
                continue
            first_seen[r.identity] = i
            if not r.formal:
                composition = "no formal guarantee (CKM)"
            elif r.family == "range":
                composition = "sequential (private range)"
            else:
                composition = f"sequential ({r.composition})"
            ledger.rows.append(_release_row(i, lyr, r, composition, True))
        if repeats:
            continue
        _layer_notes(ledger, i, stat_name, releases)
        marks = marks_words(layer_build(lyr))
        if marks:
            ledger.notes.append(
                f"layer {i} ({stat_name}): {marks}: their released "
                "interval cannot tell them from nothing (the after_stat "
                "variable signal is False there; noise_marks= chooses how "
                "they are drawn)."
            )
    _mixed_notes(ledger, layers)
    _unit_notes(ledger)
    return ledger


def _contribution_rows(ledger: Ledger, i, lyr, first_seen: dict) -> None:
    """The histogram of records per unit a layer's source released (to
    choose or state its bound): a release row, charged once, and the
    share of records the bound keeps."""
    unit = layer_unit(lyr)
    if unit.contributions is None or not unit.bounded:
        return
    r = unit.contributions.release
    if r.identity in first_seen:
        k = first_seen[r.identity]
        ledger.rows.append(
            _release_row(i, lyr, r, f"duplicate of layer {k}", False)
        )
    else:
        first_seen[r.identity] = i
        ledger.rows.append(
            _release_row(
                i, lyr, r, "sequential (records per unit, for the bound)", True
            )
        )
        ledger.notes.append(
            f"layer {i} ({type(lyr.stat).__name__}): the source's histogram "
            f"of records per {unit.column} was released with "
            f"eps={fmt(r.eps)} (charged once) to "
            + ("choose" if unit.chosen else "state")
            + f" its bound: {unit.kept().words()}, estimated from it (the "
            "interval holds over its noise and the bins' edges, given "
            "that the units above the bins seen keep falling at the rate "
            "of the last reliable bins); the records removed are a bias "
            "that no noise interval shows."
        )


def _unit_notes(ledger: Ledger) -> None:
    """Say what one protected unit is; warn where it is one row."""
    if not ledger.units:
        return
    rows = [k for k, v in ledger.units.items() if v == "one row"]
    text = ledger.unit_line
    if rows:
        text += (
            ": the guarantee is per row, so a person with k rows is "
            "protected only at k times the eps shown. Declare the person "
            "with pp.source(data, unit='<id column>', max_records=k)."
        )
    else:
        text += (
            ": each unit keeps at most that many records (chosen by a "
            "public keyed hash), and every sensitivity is scaled by it, so "
            "the eps shown protects a whole unit."
        )
    ledger.notes.append(text)


def _mixed_notes(ledger: Ledger, layers: list[tuple[Any, Any]]) -> None:
    """Cells released by DP in one layer and by CKM in another: CKM is
    deterministic and not DP, so the DP guarantee does not cover them."""
    by_cells: dict[str, dict[bool, list]] = {}
    for i, lyr in layers:
        for r in layer_releases(lyr) or ():
            if r.cells_name:
                found = by_cells.setdefault(r.cells_name, {})
                keys = found.setdefault(r.formal, [])
                if i not in keys:
                    keys.append(i)
    for found in by_cells.values():
        if True in found and False in found:
            dp = ", ".join(f"layer {k}" for k in found[True])
            ckm = ", ".join(f"layer {k}" for k in found[False])
            ledger.mixed.append(f"{dp} (DP) and {ckm} (CKM)")
            ledger.notes.insert(
                0,
                f"MIXED PROTECTION: {dp} (differential privacy) and {ckm} "
                "(Cell Key Method) release the same cells. CKM is not DP: "
                "its noise is fixed by the record keys, so the DP "
                "guarantee (and the eps total) does NOT hold for those "
                "cells. Release them by one method only.",
            )


def _layer_notes(ledger: Ledger, i: int, stat_name: str, releases):
    if any(not r.formal for r in releases):
        ledger.notes.append(
            f"layer {i} ({stat_name}) uses the Cell Key Method: "
            "statistical disclosure control without a formal privacy "
            "guarantee; it has no eps and adds nothing to the total. "
            "Repeated or overlapping outputs (shifted bins, subsets) "
            "are not accounted for."
        )
    for r in releases:
        if r.family == "range" and r.formal:
            ledger.notes.append(
                f"layer {i} ({stat_name}): the "
                f"{(r.details or {}).get('what', 'range')} was estimated "
                f"under DP (Durfee quantiles) with eps={fmt(r.eps)}, "
                "taken from the layer's eps. Give public breaks or limits "
                "to spend it all on the counts instead."
            )
    if any(r.policy == "seed-only" for r in releases):
        ledger.notes.append(
            f"layer {i} ({stat_name}): seed-only key: anyone who has the "
            "code can remove the noise (the seed in it is the secret). "
            "Keep the code secret, or make a key file with create_key() "
            "and select it with use_key() or PLOTNINE_PRIVATE_KEY_FILE; "
            "the seed is then a public label."
        )
    _domain_notes(ledger, i, stat_name, releases)


def _domain_notes(ledger: Ledger, i: int, stat_name: str, releases):
    domains = {r.domain for r in releases}
    if "thresholded" in domains:
        taus = sorted(
            {
                r.details["threshold"]
                for r in releases
                if r.domain == "thresholded"
                and r.details.get("threshold") is not None
            }
        )
        tau = f" (threshold {', '.join(f'{t:.4g}' for t in taus)})"
        if stat_name == "stat_dp_pca_score":
            advice = (
                "This is the 'sparse' (stability) histogram; "
                "method='add' noises every cell of the private frame."
            )
        else:
            advice = (
                "Declare categorical levels or give public breaks/limits "
                "for pure eps-DP."
            )
        ledger.notes.append(
            f"layer {i} ({stat_name}): the cells come from the data, not "
            "from a public domain: only cells whose noisy value cleared "
            f"a threshold{tau if taus else ''} are shown, which costs "
            f"delta. {advice}"
        )
    panels = sorted(
        {r.panels for r in releases if str(r.panels).startswith("observed")}
    )
    for source in panels:
        ledger.notes.append(
            f"layer {i} ({stat_name}): facet panels come from the {source} "
            "in the data, so which panels exist is shown unprotected."
        )
    if "observed" in domains:
        ledger.notes.append(
            f"layer {i} ({stat_name}): CKM on cells observed in the data: "
            "which cells exist is shown unprotected. Declare categorical "
            "levels or give public breaks/limits."
        )
