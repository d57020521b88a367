"""The privacy report of a plot and its plot-level budget.

Each private layer records typed
:class:`~plotnine_private.mechanisms.release.Release` s while the plot is
built (the release engine decides their identity and cost);
:func:`privacy_report` builds a copy of the plot and composes them:

* **identical releases count once**: releases with the same public
  identity (same source, query and seed: a bar layer and its text layer)
  are one release; later copies are charged nothing;
* **parallel composition** over declared facets is part of a release's own
  privacy map (one histogram over all panels), so it needs nothing here;
* **sequential composition** (sum of eps and of delta) for everything
  else: across layers and for a private range estimate;
* **CKM** releases have no formal guarantee and no eps: they appear in the
  report with their p-table but add nothing to the total;
* a layer without a mechanism (``geom_blank``, a layer on raw data) is
  **not protected**: the report says which axis it trains.

Nothing here depends on the data's content. :func:`privacy_budget` caps
the composed cost of a plot: drawing, saving or displaying a plot whose
layers compose to more raises
:class:`~plotnine_private.exceptions.BudgetExceededError` before anything
is drawn.
"""

from __future__ import annotations

import html
import math
import numbers
from copy import deepcopy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
from plotnine import geom_blank
from plotnine.layer import Layers, layer

from ._compat import build
from .exceptions import BudgetExceededError, PlotninePrivateError

if TYPE_CHECKING:
    from plotnine import ggplot

    from .mechanisms.release import Release

__all__ = [
    "PrivacyBudget",
    "PrivacyReport",
    "privacy_budget",
    "privacy_report",
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
    "source",
    "identity",
    "composition",
    "charged_eps",
    "charged_delta",
]


# --------------------------------------------------------------------------
# the budget
# --------------------------------------------------------------------------
def _check_budget(eps: Any, delta: Any) -> tuple[float, float]:
    if (
        isinstance(eps, bool)
        or not isinstance(eps, numbers.Real)
        or not math.isfinite(eps)
        or eps <= 0
    ):
        raise PlotninePrivateError(
            f"privacy_budget(): eps must be a finite number > 0, got {eps!r}."
        )
    if (
        isinstance(delta, bool)
        or not isinstance(delta, numbers.Real)
        or not (0 <= delta < 1)
    ):
        raise PlotninePrivateError(
            f"privacy_budget(): delta must be a number in [0, 1), got "
            f"{delta!r}; use 0 for pure eps-DP or a small value such as "
            "1e-6 when a layer thresholds cells from the data."
        )
    return float(eps), float(delta)


class _BudgetLayer(layer):
    """A layer that draws nothing and checks the plot's composed cost.

    plotnine builds every layer's statistic (``layers.compute_statistic``)
    before it prepares any layer's geom data (``layers.setup_data``), so
    the check in :meth:`setup_data` sees the releases of all layers, also
    those added after the budget, and runs before anything is drawn.
    """

    def __init__(self, eps: float, delta: float):
        blank = geom_blank(
            data=pd.DataFrame(), inherit_aes=False, show_legend=False
        )
        self.__dict__.update(layer.from_geom(blank).__dict__)
        self.budget_eps = eps
        self.budget_delta = delta
        self.enforce = True

    def __deepcopy__(self, memo: dict[Any, Any]) -> _BudgetLayer:
        # the plot being built is a build-time reference, never copied
        plot = self.__dict__.pop("_plot", None)
        try:
            return super().__deepcopy__(memo)  # type: ignore[return-value]
        finally:
            if plot is not None:
                self._plot = plot

    def setup(self, plot: ggplot):
        super().setup(plot)
        self._plot = plot

    def setup_data(self):
        plot = self.__dict__.pop("_plot", None)
        if self.enforce and plot is not None:
            ledger = _compose(_private_layers(plot.layers))
            _raise_if_exceeded(ledger, self.budget_eps, self.budget_delta)
        super().setup_data()


class _BudgetedLayers(Layers):
    """The layers of a plot with a budget: the budget layer stays last, so
    layers added later keep the indices a user expects (``layer_data(p,
    i)``) and the budget layer never shifts them."""

    def append(self, lyr):
        if (
            self
            and isinstance(self[-1], _BudgetLayer)
            and not isinstance(lyr, _BudgetLayer)
        ):
            self.insert(len(self) - 1, lyr)
        else:
            super().append(lyr)


@dataclass(frozen=True)
class PrivacyBudget:
    """The most a plot may spend; add it to a ggplot with ``+``.

    Made by :func:`privacy_budget`.
    """

    eps: float
    delta: float = 0.0

    def __post_init__(self):
        _check_budget(self.eps, self.delta)

    def __radd__(self, plot: ggplot) -> ggplot:
        # ggplot.__add__ has already copied the plot; a later budget
        # replaces an earlier one
        plot.layers = _BudgetedLayers(
            lyr for lyr in plot.layers if not isinstance(lyr, _BudgetLayer)
        )
        plot.layers.append(_BudgetLayer(self.eps, self.delta))
        return plot


def privacy_budget(eps: float, delta: float = 0.0) -> PrivacyBudget:
    """A privacy budget for a whole plot.

    ``plot + privacy_budget(eps=1, delta=1e-6)`` makes drawing, saving and
    notebook display fail with
    :class:`~plotnine_private.exceptions.BudgetExceededError` when the
    layers of the plot compose (see :func:`privacy_report`) to more than
    ``eps`` or more than ``delta``. CKM layers cost nothing (they have no
    formal guarantee).

    Parameters
    ----------
    eps
        Total eps, a finite number > 0.
    delta
        Total delta in [0, 1). The default 0 allows only pure eps-DP
        releases: a layer that thresholds cells observed in the data
        spends its ``delta`` too.

    Examples
    --------
    >>> b = privacy_budget(eps=1.5)
    >>> (b.eps, b.delta)
    (1.5, 0.0)
    """
    return PrivacyBudget(*_check_budget(eps, delta))


def _budget_layer(plot: ggplot) -> _BudgetLayer | None:
    found = [lyr for lyr in plot.layers if isinstance(lyr, _BudgetLayer)]
    return found[-1] if found else None


def _exceeds(cost: float, cap: float) -> bool:
    return cost > cap * (1 + _SLACK) + 1e-15


def _raise_if_exceeded(ledger: _Ledger, eps: float, delta: float) -> None:
    if not (
        _exceeds(ledger.total_eps, eps) or _exceeds(ledger.total_delta, delta)
    ):
        return
    spent = [
        f"layer {r['layer']} ({r['stat']}, {r['composition']}): "
        f"eps={_fmt(r['charged_eps'])}, delta={_fmt(r['charged_delta'])}"
        for r in ledger.rows
        if r["charged_eps"] or r["charged_delta"]
    ]
    raise BudgetExceededError(
        f"privacy budget exceeded: the plot's layers compose to "
        f"eps={_fmt(ledger.total_eps)}, delta={_fmt(ledger.total_delta)}, "
        f"more than the budget eps={_fmt(eps)}, delta={_fmt(delta)}. "
        f"Spent by: {'; '.join(spent)}. Lower eps in the layers, repeat "
        "an identical release (same seed and parameters) instead of a "
        "new one, or raise privacy_budget(). Nothing was drawn."
    )


# --------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------
@dataclass
class _Ledger:
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def total_eps(self) -> float:
        return math.fsum(r["charged_eps"] or 0.0 for r in self.rows)

    @property
    def total_delta(self) -> float:
        return math.fsum(r["charged_delta"] or 0.0 for r in self.rows)


def _private_layers(layers) -> list[tuple[int, Any]]:
    return [
        (i, lyr)
        for i, lyr in enumerate(layers)
        if not isinstance(lyr, _BudgetLayer)
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
        source=r.source,
        identity=r.identity,
        composition=composition,
        charged_eps=(r.eps or 0.0) if charged else 0.0,
        charged_delta=(r.delta or 0.0) if charged and r.formal else 0.0,
    )


def _trained_axes(lyr) -> list[str]:
    """Position axes an unprotected layer trains from its own data."""
    mapping = getattr(lyr, "mapping", None) or {}
    names = {str(ae) for ae in mapping}
    axes = [
        ax
        for ax in ("x", "y")
        if any(n == ax or n.startswith(ax) and n[len(ax):] in
               ("min", "max", "end", "intercept") for n in names)
    ]
    return axes


def _compose(layers: list[tuple[int, Any]]) -> _Ledger:
    """Compose the releases of built layers into report rows.

    A release is charged once, at its first appearance: releases with the
    same public identity (a bar and its text layer on one source, with the
    same query and seed) are one release. Everything else composes
    sequentially; parallel composition over declared facets is already in
    each release's privacy map (one histogram over all panels).
    """
    ledger = _Ledger()
    first_seen: dict[str, int] = {}
    for i, lyr in layers:
        stat_name = type(lyr.stat).__name__
        releases = getattr(lyr.stat, "releases", None)
        if releases is None:
            axes = _trained_axes(lyr)
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
        if not releases:
            ledger.rows.append(_row(i, lyr, composition="no release"))
            continue
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
        _layer_notes(ledger, i, stat_name, releases)
    return ledger


def _layer_notes(ledger: _Ledger, i: int, stat_name: str, releases):
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
                f"under DP (Durfee quantiles) with eps={_fmt(r.eps)}, "
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


def _domain_notes(ledger: _Ledger, i: int, stat_name: str, releases):
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


# --------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


class PrivacyReport:
    """What a plot releases and what it costs.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per release of a layer (panels of a facet partition are
        summarised in one row), one row per non-private layer, and a final
        ``"total"`` row. ``composition`` says which rule was applied;
        ``charged_eps`` / ``charged_delta`` are what the row adds to the
        total.
    total_eps, total_delta : float
        The composed cost of the plot.
    budget : tuple[float, float] or None
        The plot's :func:`privacy_budget`, if any.
    remaining_eps, remaining_delta : float or None
        Budget minus cost (negative when exceeded).
    notes : list[str]
        Things a person (and an output checker) should know.
    """

    def __init__(self, ledger: _Ledger, budget: tuple[float, float] | None):
        self.total_eps = ledger.total_eps
        self.total_delta = ledger.total_delta
        self.budget = budget
        self.notes = list(ledger.notes)
        total = dict.fromkeys(COLUMNS)
        total.update(
            layer="total",
            composition="sequential over layers",
            charged_eps=self.total_eps,
            charged_delta=self.total_delta,
        )
        self.table = pd.DataFrame(
            [*ledger.rows, total], columns=COLUMNS, dtype=object
        )
        if budget is not None and self.exceeded:
            self.notes.append(
                f"the composed cost (eps={_fmt(self.total_eps)}, "
                f"delta={_fmt(self.total_delta)}) exceeds the budget "
                f"(eps={_fmt(budget[0])}, delta={_fmt(budget[1])}): "
                "drawing or saving this plot fails."
            )

    @property
    def remaining_eps(self) -> float | None:
        """The plot's eps budget minus the composed eps, or ``None``
        without a ``privacy_budget``."""
        return None if self.budget is None else self.budget[0] - self.total_eps

    @property
    def remaining_delta(self) -> float | None:
        """The plot's delta budget minus the composed delta, or ``None``
        without a ``privacy_budget``."""
        if self.budget is None:
            return None
        return self.budget[1] - self.total_delta

    @property
    def exceeded(self) -> bool:
        """Whether the composed cost exceeds the plot's budget (then
        drawing and saving raise ``BudgetExceededError``)."""
        if self.budget is None:
            return False
        return _exceeds(self.total_eps, self.budget[0]) or _exceeds(
            self.total_delta, self.budget[1]
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready content (written by ``save_release``)."""
        return {
            "releases": [
                {k: _plain(v) for k, v in row.items()}
                for row in self.table.to_dict("records")
            ],
            "total_eps": self.total_eps,
            "total_delta": self.total_delta,
            "budget": (
                None
                if self.budget is None
                else {"eps": self.budget[0], "delta": self.budget[1]}
            ),
            "remaining": (
                None
                if self.budget is None
                else {"eps": self.remaining_eps, "delta": self.remaining_delta}
            ),
            "notes": list(self.notes),
        }

    def display_table(self) -> pd.DataFrame:
        """The table with words for what has no number."""
        shown = self.table.copy()
        for idx, row in shown.iterrows():
            if row["composition"] == "not protected":
                shown.loc[idx, ["eps", "charged_eps"]] = "not protected"
            elif row["mechanism"] == "ckm":
                shown.loc[idx, "eps"] = "no formal guarantee"
        return shown.map(lambda v: "" if v is None else _fmt(v))

    def _footer(self) -> list[str]:
        lines = [
            f"total: eps={_fmt(self.total_eps)}, "
            f"delta={_fmt(self.total_delta)} "
            "(sequential over layers; identical releases once)"
        ]
        if self.budget is not None:
            lines.append(
                f"budget: eps={_fmt(self.budget[0])}, "
                f"delta={_fmt(self.budget[1])}; remaining: "
                f"eps={_fmt(self.remaining_eps)}, "
                f"delta={_fmt(self.remaining_delta)}"
                + (" -- EXCEEDED" if self.exceeded else "")
            )
        return lines

    def __str__(self) -> str:
        cols = [
            "layer",
            "stat",
            "mechanism",
            "eps",
            "delta",
            "domain",
            "cells",
            "panel",
            "composition",
            "charged_eps",
        ]
        text = self.display_table()[cols].to_string(index=False)
        lines = ["Privacy report", text, *self._footer()]
        if self.notes:
            lines.append("notes:")
            lines.extend(f"- {n}" for n in self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        parts = [
            "<div><strong>Privacy report</strong>",
            self.display_table().to_html(index=False),
        ]
        parts.extend(f"<p>{html.escape(x)}</p>" for x in self._footer())
        if self.notes:
            items = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
            parts.append(f"<ul>{items}</ul>")
        parts.append("</div>")
        return "".join(parts)


def _plain(v: Any) -> Any:
    """A JSON-ready version of a table value."""
    if v is None or isinstance(v, (str, bool)):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        f = float(v)
        return f if math.isfinite(f) else None
    return str(v)


def report_from_built(built: ggplot) -> PrivacyReport:
    """The report of a plot that has been built (layers hold releases)."""
    bl = _budget_layer(built)
    budget = None if bl is None else (bl.budget_eps, bl.budget_delta)
    ledger = _compose(_private_layers(built.layers))
    return PrivacyReport(ledger, budget)


def privacy_report(plot: ggplot) -> PrivacyReport:
    """Build a copy of ``plot`` and report what each layer releases.

    The plot's budget, if any, is shown with what remains, but not
    enforced: the report of a plot over its budget says by how much.

    A layer without a seed is keyed by a secret drawn from OS entropy once
    per Python session, so within a session the report describes the same
    noise as the figure (another session draws other noise).

    Parameters
    ----------
    plot
        A ggplot object (not modified).

    Returns
    -------
    PrivacyReport
        ``.table`` (one row per release, and a total), ``.total_eps``,
        ``.total_delta``, ``.notes``, ``.budget`` and
        ``.remaining_eps``; prints as a table.
    """
    plot = deepcopy(plot)
    for lyr in plot.layers:
        if isinstance(lyr, _BudgetLayer):
            lyr.enforce = False
    return report_from_built(build(plot))
