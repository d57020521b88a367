"""The differential test harness: build one plot on two neighbouring data
sets (one record changed) with one seed, in two fresh sessions, and list
everything a person or an output checker sees that is not a noisy number:
axis ranges, breaks and labels of every non-count axis, legend entries of
discrete scales, panels, group ids and cell positions, warnings of every
category (pandas and numpy deprecations included), the error if the build
raises, the report's rows and the bundle's metadata. Privacy demands the
two lists be equal.
"""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from keyfile import using_key
from matplotlib.colors import is_color_like, to_hex
from plotnine import ggplot
from plotnine.scales.scale_discrete import scale_discrete

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.declarations import registered
from plotnine_private.mechanisms.session import current_session
from plotnine_private.report import report_from_built

#: columns plotnine fills from a private layer's computed variables (the
#: stat's default mapping: y, a label, a point size, ymin/ymax); the
#: computed variables that carry released numbers are each stat's own
#: declaration (``DECLARATION.noisy``, :func:`layer_noisy`)
NOISY = {"y", "ymin", "ymax", "label", "size", "value", "signal", "alpha"}
#: whether a mark is signal or noise is read from released values
#: (``stats/marks.py``): its ``signal`` variable, and the alpha its fading
#: multiplies, are noisy; its colour is compared without the faded alpha
#: report columns that are functions of released values
NOISY_REPORT = {"cells", "parameters"}


def _plain(v: Any) -> Any:
    if isinstance(v, float) and np.isnan(v):
        return "nan"
    if isinstance(v, (np.floating, float)):
        return round(float(v), 9)
    if isinstance(v, np.integer):
        return int(v)
    return v


def _opaque(v: Any) -> Any:
    """A colour as opaque hex: without the alpha a noise mark's fading
    baked in ("black" and its faded "#0000004d" are both "#000000")."""
    if isinstance(v, str) and is_color_like(v) and v.lower() != "none":
        return to_hex(v)
    return v


def _column(frame: pd.DataFrame, col: str) -> list:
    if col in ("color", "colour"):
        return [_plain(_opaque(v)) for v in frame[col].tolist()]
    return [_plain(v) for v in frame[col].tolist()]


def _axis(panel_params, name: str) -> dict:
    view = getattr(panel_params, name)
    return {
        "range": [_plain(v) for v in view.range],
        "breaks": [_plain(v) for v in view.breaks],
        "labels": [str(v) for v in view.labels],
    }


def layer_noisy(stat) -> set[str]:
    """The columns of a layer that may differ between neighbours: its
    stat's declared noisy variables, or, for a layer that is not a private
    stat (an identity layer of a released table), every private count's
    (x positions apart: only the private PCA releases them)."""
    decl = getattr(stat, "DECLARATION", None)
    if decl is not None:
        return NOISY | decl.noisy
    every = set().union(*(e.declaration.noisy for e in registered()))
    return NOISY | (every - {"x", "xmin", "xmax"})


def snapshot(
    plot,
    count_axes: tuple[str, ...] = ("y",),
    shown_by_noise: bool = False,
    noisy_report: frozenset[str] = frozenset(),
) -> dict:
    """Everything but the noisy numbers, from a fresh session.

    ``count_axes``: position axes that show released counts (their range
    is a function of the noise, so it is left out). ``shown_by_noise``:
    the layer hides cells by their released value (``drop``, zero points,
    a CKM threshold), so which cells are drawn is itself post-processing
    of noisy numbers: only the set of panels and groups is compared.
    ``noisy_report``: report columns that are released values here too
    (a PCA's sensitivity under a unit: scaled by a released size).
    """
    current_session().sources.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            built = build(plot)
            # the report of this very build: privacy_report(plot) is
            # report_from_built of a second, equal build (same seed, same
            # data), so one build serves both
            report = report_from_built(built)
        except Exception as err:  # an error is a release too: compared
            error = f"{type(err).__name__}: {err}"
        else:
            error = None
    # warnings of every category (library deprecations included)
    # (SignalWarning is computed from released values, like the noisy
    # numbers, so it is left out of the comparison)
    seen = sorted(
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if not issubclass(w.category, pp.SignalWarning)
    )
    if error is not None:
        return {"error": error, "warnings": seen}
    out: dict[str, Any] = {
        "warnings": seen,
        "panels": built.layout.layout.astype(str).to_dict("list"),
    }
    # colours, sizes... mapped from released counts by continuous scales
    mapped = {
        ae
        for sc in built.scales
        if not isinstance(sc, scale_discrete)
        for ae in sc.aesthetics
        if ae not in ("x", "y")
    }
    if "colour" in mapped:
        mapped.add("color")  # plotnine's data column for the colour aes
    for i, lyr in enumerate(built.layers):
        data = lyr.data
        if "group" in data.columns and len(data):
            # which cells exist, where and in which group
            keep = [
                c
                for c in data.columns
                if c not in layer_noisy(lyr.stat) | mapped
                # interval variables: functions of released values
                and not c.endswith(("_low", "_high"))
            ]
            if shown_by_noise:
                keep = [c for c in ("PANEL", "group") if c in keep]
                out[f"layer {i}"] = {
                    c: sorted(set(_column(data, c))) for c in keep
                }
            else:
                out[f"layer {i}"] = {c: _column(data, c) for c in sorted(keep)}
        else:
            out[f"layer {i}"] = {"rows": len(data)}
    for k, params in enumerate(built.layout.panel_params):
        for ax in ("x", "y"):
            if ax not in count_axes:
                out[f"panel {k} {ax}"] = _axis(params, ax)
    for sc in built.scales:
        aes = sc.aesthetics[0]
        if aes in ("x", "y"):
            continue
        if isinstance(sc, scale_discrete):
            out[f"legend {aes}"] = [str(v) for v in sc.final_limits]
    table = report.table
    out["report"] = [
        {
            k: _plain(v)
            for k, v in row.items()
            if k not in NOISY_REPORT | noisy_report
        }
        for row in table.to_dict("records")
    ]
    # how many marks are within noise is post-processing of released
    # values (stats/marks.py), like the noisy numbers
    out["notes"] = [
        n
        for n in report.notes
        if "estimate [" not in n and "within noise" not in n
    ]
    return out


@contextlib.contextmanager
def _built_not_rendered() -> Iterator[None]:
    """Inside the block, ``ggplot.draw`` sets the plot up and builds it
    as ``draw`` does (the one build that releases), and renders nothing:
    the figure stays empty.

    The layers, panels and scales a bundle's results.json is made of come
    from that build; rendering reads only the built (released) data, so
    whatever it shows or raises is post-processing of released values,
    and the neighbour property cannot depend on it. Rendering was about
    three quarters of a bundle's time (plotnine's geoms, then the PNG).
    """
    draw = ggplot.draw

    def build_only(self, *, show: bool = False):
        figure = self._setup()
        self._build()
        return figure

    ggplot.draw = build_only
    try:
        yield
    finally:
        ggplot.draw = draw


def bundle_metadata(plot) -> dict:
    """The bundle's results.json without released values (the figure
    file is written and named, its pixels are not drawn: see
    :func:`_built_not_rendered`)."""
    current_session().sources.clear()
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = Path(tmp) / "bundle"
        # a bundle needs a key file when seeds are used
        with using_key(), _built_not_rendered():
            pp.save_release(plot, folder, code="plot", dpi=20)
        results = json.loads((folder / "results.json").read_text())
    out = {}
    for uid, rec in results.get("results", {}).items():
        props = dict(rec["properties"])
        props["releases"] = [
            {k: v for k, v in r.items() if k not in NOISY_REPORT}
            for r in props.get("releases", [])
        ]
        out[uid] = {
            "type": rec["type"],
            "properties": props,
            "files": sorted(f["name"] for f in rec["files"]),
        }
    return out


def differences(a: dict, b: dict) -> list[str]:
    """Keys of two snapshots whose values differ."""
    return [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def without_marks(text: str) -> str:
    """A caption without its count of marks within noise (released)."""
    return re.sub(r"\n[^\n]*? within noise \([^)]*\)", "", text)


def compare_snapshot(
    plot, count_axes: tuple[str, ...] = ("y",), **compare_args: Any
) -> dict:
    """What leaves the secure environment from :func:`compare`: each
    private panel (as :func:`snapshot` sees a plot), their captions and
    notes, and the shared limits of the axes that show no noisy numbers.
    The unperturbed panel never leaves, so only its presence is listed."""
    current_session().sources.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = pp.compare(plot, **compare_args)
    out: dict[str, Any] = {
        "warnings": sorted(
            f"{w.category.__name__}: {w.message}" for w in caught
        ),
        "panels": list(c.plots),
        # the widest interval of a curve, box or summary is a released
        # value (post-processing); the words around it are not
        "captions": {
            k: without_marks(re.sub(r"within ±\S+", "within ±#", v))
            for k, v in c.captions.items()
            if k in c.intervals
        },
        "notes": list(c.notes),
    }
    for ax in ("x", "y"):
        if ax not in count_axes and ax in c.limits:
            out[f"limits {ax}"] = [_plain(v) for v in c.limits[ax]]
    for k, q in c.plots.items():
        if k != "unperturbed":
            for part, value in snapshot(q, count_axes).items():
                out[f"{k}: {part}"] = value
    return out


def mixed_ids(pid: np.ndarray, keep: int) -> np.ndarray:
    """Person ids of every kind among the other people (as they come in
    real data): whole, negative, non-whole, text, and one missing (whose
    records are left out); person ``keep`` keeps its plain integer id."""
    ids = np.array(pid, dtype=object)
    kind = pid % 5
    ids[kind == 1] = -pid[kind == 1]
    ids[kind == 2] = pid[kind == 2] + 0.5
    ids[kind == 3] = [f"p{p}" for p in pid[kind == 3]]
    ids[pid == keep] = keep
    ids[pid == pid[pid != keep].max()] = None
    return ids
