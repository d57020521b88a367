"""A bundle for output checking: the figure, its released numbers, metadata.

:func:`save_release` writes what a research data centre's output checker
asks for with a graph (the layout of ACRO's results.json, SACRO project):

* ``figure.png``: the figure, raster only (vector formats are refused by
  many checkers);
* ``layer_<i>_<stat>.csv``: per private layer, exactly the values it
  released and the identity of each cell; never the unclipped noisy
  values or any true count;
* ``results.json``: modelled on ACRO's results file, one output per
  layer with status (pass / review / fail), properties (mechanism and
  parameters), files with per-check summaries, per-cell flags, the
  command, a summary and a timestamp; plus library versions and the
  privacy report. The seed is never written, only its policy;
* ``config.json``: the rules applied (risk appetite);
* ``checksums.sha256``: SHA-256 of every file (``sha256sum -c``).

The figure, the CSVs and the report come from one build of the plot, so
they agree by construction (one build, one release).
"""

from __future__ import annotations

import hashlib
import json
import linecache
import math
import numbers
import os
import platform
import sys
from copy import deepcopy
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from plotnine.composition import Compose

from .._compat import built_parts
from .._version import installed_version
from ..door import layer_releases, release_label
from ..exceptions import PlotninePrivateError
from ..ledger.book import rows_of as ledger_rows
from ..mechanisms.streams.keys import current_key_id
from ..report.budget import budget_layer, composition_budget
from ..report.composition import private_layers, trained_axes
from ..report.figures import figures, is_several, layer_key
from ..report.presentation import report_from_built, report_of_figures
from ..statements import redact_seed_words, redact_seeds, statement_at
from .checks import FIGURE, _layer_output
from .tables import released_table

if TYPE_CHECKING:
    from types import FrameType

    from ..report import PrivacyReport

__all__ = ["DEFAULT_RULES", "save_release"]

#: rule-of-thumb checks on released counts (DwB guidelines, ACRO defaults)
DEFAULT_RULES: dict[str, Any] = {
    "threshold": 10,
    "zeros_are_disclosive": True,
}

RESULTS = "results.json"
CONFIG = "config.json"
CHECKSUMS = "checksums.sha256"


# --------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------
def _check_rules(rules: dict[str, Any] | None) -> dict[str, Any]:
    merged = dict(DEFAULT_RULES)
    if rules is None:
        return merged
    if not isinstance(rules, dict):
        raise PlotninePrivateError(
            f"save_release(): rules must be a dict such as "
            f"{DEFAULT_RULES!r}, got {rules!r}."
        )
    unknown = sorted(set(rules) - set(DEFAULT_RULES))
    if unknown:
        raise PlotninePrivateError(
            f"save_release(): unknown rule(s) {', '.join(unknown)}; valid "
            f"rules are {', '.join(DEFAULT_RULES)}."
        )
    merged.update(rules)
    thr = merged["threshold"]
    if (
        isinstance(thr, bool)
        or not isinstance(thr, numbers.Real)
        or not math.isfinite(thr)
        or thr < 0
    ):
        raise PlotninePrivateError(
            f"save_release(): rules['threshold'] must be a number >= 0, "
            f"got {thr!r}."
        )
    if not isinstance(merged["zeros_are_disclosive"], bool):
        raise PlotninePrivateError(
            "save_release(): rules['zeros_are_disclosive'] must be True or "
            f"False, got {merged['zeros_are_disclosive']!r}."
        )
    return merged


def _caller_line() -> str:
    """The statement (every line of it) of the first caller outside this
    package: what called ``save_release``."""
    here = Path(__file__).resolve().parent
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        fname = frame.f_code.co_filename
        try:
            inside = Path(fname).resolve().is_relative_to(here)
        except (OSError, ValueError):
            inside = False
        if not inside:
            lines = linecache.getlines(fname, frame.f_globals)
            statement = statement_at("".join(lines), frame.f_lineno)
            if statement:
                return statement
            line = linecache.getline(fname, frame.f_lineno).strip()
            return line or "<source not available>"
        frame = frame.f_back
    return "<source not available>"


# --------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------
def _versions() -> dict[str, str]:
    import plotnine

    return {
        "plotnine_private": installed_version(),
        "plotnine": plotnine.__version__,
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "matplotlib": mpl.__version__,
        "python": platform.python_version(),
    }


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def _refuse_comparison(plot: Any) -> None:
    """A comparison holds the unperturbed panel (raw data, on scales
    trained on raw data): it is never released, only its private plots."""
    from ..compare import Comparison

    if isinstance(plot, Comparison):
        private = [k for k in plot.plots if k != "unperturbed"]
        names = " or ".join(f"comparison.plots[{k!r}]" for k in private)
        raise PlotninePrivateError(
            "save_release(): a comparison cannot be released: its "
            "unperturbed panel shows the raw data. Save the private plot "
            f"instead, e.g. save_release({names or 'plot'}, folder), or "
            "the original private plot you passed to compare()."
        )


def _refuse_seed_only(plot: Any) -> None:
    """A bundle is never drawn with a seed-only secret.

    Without a key file the seed *is* the secret, and a seed is typically
    a short, guessable label. Everything drawn from it (the release
    identity in the report, and the released values themselves) lets
    whoever holds the bundle test seed guesses offline: rebuild the
    release for a guessed seed on the records they know, compare. Leaving
    the identity out would not close that oracle, so the bundle is
    refused. Decided from public facts only (is a key in use, was a
    seed given), before anything is built or written.
    """
    if current_key_id() is not None:
        return
    plots = figures(plot, "save_release") if is_several(plot) else [plot]
    seeded = [
        f"layer {i} ({type(lyr.stat).__name__})"
        for one in plots
        for i, lyr in enumerate(one.layers)
        if (getattr(lyr.stat, "params", None) or {}).get("seed") is not None
    ]
    if seeded:
        raise PlotninePrivateError(
            f"save_release(): {', '.join(seeded)} draw their noise from "
            "seed= without a key file, so the seed is the only secret and "
            "anyone holding the bundle could test guessed seeds against "
            "it offline. Create a key file once and keep it apart from "
            "the code: plotnine_private.create_key('~/.plotnine_private."
            "key'), then plotnine_private.use_key(that path) or set "
            "PLOTNINE_PRIVATE_KEY_FILE before building the plot (the seed "
            "becomes a public label); or leave seed= out (session "
            "entropy, not reproducible)."
        )


def _prepare_folder(folder: Path, overwrite: bool) -> None:
    if folder.exists():
        if not folder.is_dir():
            raise PlotninePrivateError(
                f"save_release(): {folder.name!r} exists and is not a folder."
            )
        if any(folder.iterdir()) and not overwrite:
            raise PlotninePrivateError(
                f"save_release(): the folder {folder.name!r} is not empty; "
                "give a new folder or overwrite=True."
            )
    folder.mkdir(parents=True, exist_ok=True)


def save_release(
    plot: Any,
    folder: str | os.PathLike,
    *,
    code: str | None = None,
    rules: dict[str, Any] | None = None,
    comments: list[str] | None = None,
    dpi: float | None = None,
    overwrite: bool = False,
) -> Path:
    """Write a plot and what it releases to a folder for output checking.

    The plot is built and drawn once; its :func:`privacy_budget` is
    enforced (nothing is written when it is exceeded).

    Parameters
    ----------
    plot
        A ggplot object (not modified); or a composition (``a | b``,
        ``a / b``: one ``figure.png``, its budget enforced) or a list of
        plots (``figure_1.png``, ...). The layers of plot ``p`` (from 1)
        write ``plot_<p>_layer_<i>_<stat>.csv`` and outputs
        ``output_<p>_<i>``; the report composes all plots (shared
        releases once).
    folder
        A new or empty folder.
    code
        The code that made the plot, for the checker (``command`` in
        ``results.json``). Without it, the line that called
        ``save_release`` is recorded. It is parsed and written back
        with every seed replaced by ``<seed>`` (also a seed reached
        through a loop, a comprehension or a name bound in the code;
        code that does not parse is not kept), and its comments
        dropped; seeds in ``comments`` are hidden too.
    rules
        Rule-of-thumb checks on the released counts, merged into
        :data:`DEFAULT_RULES` (``threshold`` 10, ``zeros_are_disclosive``
        True). A CKM layer fails when a released count is below the
        threshold and needs review for zero cells; for DP layers the
        flags are informational and the status is "pass".
    comments
        Notes for the checker, copied to every output.
    dpi
        Resolution of ``figure.png`` (default: the theme's).
    overwrite
        Allow a non-empty folder (files of the same name are replaced).

    Returns
    -------
    pathlib.Path
        The folder: ``figure.png``, ``layer_<i>_<stat>.csv`` per private
        layer, ``results.json``, ``config.json``, ``checksums.sha256``.
        Under :func:`~plotnine_private.use_ledger`, ``results.json`` also
        holds the ledger rows of the releases in the bundle (and the data
        set's total and cap).

    Raises
    ------
    PlotninePrivateError
        Before anything is built, when a layer has a ``seed`` but no key
        file is in use (the seed would be the only, guessable, secret:
        see ``create_key`` / ``use_key``).
    """
    _refuse_comparison(plot)
    rules = _check_rules(rules)
    _refuse_seed_only(plot)
    command = redact_seeds(code if code is not None else _caller_line())
    timestamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    comments = [redact_seed_words(str(c)) for c in (comments or [])]

    # one build: figure, tables and report agree (budget enforced here)
    drawn, builts, report = _draw(plot)
    try:
        folder = Path(folder)
        _prepare_folder(folder, overwrite)
        written: list[str] = []
        for (name, figure), theme_of, _ in drawn:
            with mpl.rc_context(theme_of.theme.rcParams):
                kwargs: dict[str, Any] = {"format": "png"}
                if dpi is not None:
                    kwargs["dpi"] = dpi
                figure.savefig(folder / name, **kwargs)
            written.append(name)
        results: dict[str, Any] = {}
        for p, built in enumerate(builts):
            results.update(
                _write_layers(
                    built,
                    report,
                    folder,
                    rules,
                    command,
                    timestamp,
                    comments,
                    written,
                    plot=None if len(builts) == 1 and not drawn[0][2] else p,
                    figure_name=drawn[min(p, len(drawn) - 1)][0][0],
                )
            )
    finally:
        import matplotlib.pyplot as plt

        for (_, figure), _, _ in drawn:
            plt.close(figure)

    meta = {
        "version": _versions()["plotnine_private"],
        "results": results,
        "plotnine_private": {
            "figure": FIGURE,
            "versions": _versions(),
            "seed_policy": {
                out["uid"]: out["properties"]["seed_policy"]
                for out in results.values()
            },
            "budget": _budget(plot, builts),
            "rules": rules,
            "privacy_report": report.to_dict(),
            "method_statement": _method_statement(report, results),
            "ledger": ledger_rows(
                [
                    r.identity
                    for b in builts
                    for _, lyr in private_layers(b.layers)
                    for r in layer_releases(lyr) or ()
                ]
            ),
        },
    }
    _write_json(folder / RESULTS, meta)
    written.append(RESULTS)
    _write_json(folder / CONFIG, {"rules": rules})
    written.append(CONFIG)
    lines = [f"{_sha256(folder / name)}  {name}\n" for name in written]
    (folder / CHECKSUMS).write_text("".join(lines), encoding="utf-8")
    return folder


def _draw(plot: Any):
    """Draw a plot, a composition or a list of plots once.

    Returns ``([((file name, figure), plot with the theme, several)],
    built plots, report)``: a composition is one figure, a list one figure
    per plot (``figure_1.png``...).
    """
    if not is_several(plot):
        if not hasattr(plot, "layers"):
            figures(plot, "save_release")  # raises: names the type
        copy = deepcopy(plot)
        figure = copy.draw()
        built = built_parts(copy)
        return (
            [((FIGURE, figure), copy, False)],
            [built],
            report_from_built(built),
        )
    if isinstance(plot, Compose):
        cmp = deepcopy(plot)
        figure = cmp.draw()  # the composition's budget is checked first
        builts = [built_parts(p) for p in figures(cmp, "save_release")]
        drawn = [((FIGURE, figure), cmp.last_plot, True)]
    else:
        builts, drawn = [], []
        for p, one in enumerate(figures(plot, "save_release")):
            copy = deepcopy(one)
            drawn.append(((f"figure_{p + 1}.png", copy.draw()), copy, True))
            builts.append(built_parts(copy))
    return drawn, builts, report_of_figures(builts, composition_budget(plot))


def _write_layers(
    built,
    report: PrivacyReport,
    folder,
    rules,
    command,
    timestamp,
    comments,
    written,
    plot: int | None = None,
    figure_name: str = FIGURE,
) -> dict[str, Any]:
    """Tables and outputs of one built plot (``plot``: its index in a
    composition or list, which names its layers, files and outputs)."""
    rows_by_layer: dict[Any, list[dict]] = {}
    for row in report.table.to_dict("records"):
        if row["layer"] != "total":
            rows_by_layer.setdefault(row["layer"], []).append(row)
    results: dict[str, Any] = {}
    for i, lyr in private_layers(built.layers):
        key = i if plot is None else layer_key(plot, i)
        rows = rows_by_layer.get(key, [])
        private = layer_releases(lyr) is not None
        if (
            not private
            and type(lyr.geom).__name__ == "geom_blank"
            and not trained_axes(lyr)
        ):
            continue  # draws nothing and trains no axis
        table = csv_name = None
        prefix = "" if plot is None else f"plot_{plot + 1}_"
        if private:
            table = released_table(built, i)
            csv_name = f"{prefix}layer_{i}_{type(lyr.stat).__name__}.csv"
            table.to_csv(folder / csv_name, index=False)
            written.append(csv_name)
        out = _layer_output(
            i,
            lyr,
            rows,
            table,
            csv_name,
            rules,
            command,
            timestamp,
            comments,
        )
        if private:
            # the label the ledger shows for these releases (the layer's
            # label=, else pp.label's of the plot); None: unlabelled
            out["properties"]["label"] = release_label(built.plot, lyr)
        if plot is not None:  # one of several plots: name it
            out["uid"] = f"output_{plot + 1}_{i}"
            out["properties"]["plot"] = plot + 1
            for f in out["files"]:
                if f["name"] == FIGURE:
                    f["name"] = figure_name
        results[out["uid"]] = out
    return results


def _method_statement(report: PrivacyReport, results: dict) -> str:
    """A sentence for the figure caption, per mechanism and statistic
    ("means (noisy totals over noisy record counts) and counts perturbed
    with differential privacy (total eps=1, delta=0)")."""
    said: dict[str, list[str]] = {"Noise": [], "CKM": []}
    for out in results.values():
        props = out["properties"]
        kind = props.get("mitigation")
        if kind in said and props["statistic"] not in said[kind]:
            said[kind].append(props["statistic"])
    parts = []
    if report.total_eps > 0:
        parts.append(
            f"{_joined(said['Noise']) or 'counts'} perturbed with "
            f"differential privacy (total eps={report.total_eps:.6g}, "
            f"delta={report.total_delta:.3g})"
        )
    if report.mixed:
        # the same cells by DP and CKM: no DP statement may stand alone
        parts = [
            "the same counts released with differential privacy and with "
            "the Cell Key Method: no differential privacy guarantee for "
            "them"
        ]
    if (report.table["mechanism"] == "ckm").any():
        parts.append(
            f"{_joined(said['CKM']) or 'counts'} perturbed with the Cell "
            "Key Method"
        )
    if (report.table["composition"] == "not protected").any():
        parts.append("some layers are not protected")
    return "; ".join(parts) or "no private layers"


def _joined(words: list[str]) -> str:
    return (
        ", ".join(words[:-1]) + " and " + words[-1]
        if len(words) > 1
        else "".join(words)
    )


def _budget(plot: Any, builts: list) -> dict[str, Any] | None:
    """The budgets that drawing enforced: a composition's own (``(a | b)
    + pp.privacy_budget(...)``, ``"of": "composition"``) or the figure's
    (``"of": "figure"``); of several plots, each plot's own under
    ``"plots"`` (its number from 1, as the outputs name it). None: none
    set."""
    own = composition_budget(plot)
    found = [
        (p, bl)
        for p, bl in ((p, budget_layer(b)) for p, b in enumerate(builts))
        if bl is not None
    ]
    if len(builts) == 1 and own is None:
        if not found:
            return None
        bl = found[0][1]
        return {"eps": bl.budget_eps, "delta": bl.budget_delta, "of": "figure"}
    out: dict[str, Any] = {}
    if own is not None:
        out = {"eps": own[0], "delta": own[1], "of": "composition"}
    if found:
        out["plots"] = [
            {"plot": p + 1, "eps": bl.budget_eps, "delta": bl.budget_delta}
            for p, bl in found
        ]
    return out or None


def _write_json(path: Path, obj: Any) -> None:
    text = json.dumps(obj, indent=2, default=_json_default, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")


def _json_default(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        f = float(v)
        return f if math.isfinite(f) else None
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, (tuple, set)):
        return list(v)
    return str(v)
