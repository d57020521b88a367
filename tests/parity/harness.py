"""Build a case twice, with plotnine's stat and with its private twin,
and keep what the assertions compare (one build each, shared; plotnine's
figure once for all cases of one plotnine plot, such as a DP case and
its CKM twin).

Each plot is drawn once, small (2 x 2 in at 40 dpi): drawing builds it,
so the layer data, panel ranges, breaks, legends, texts and the pixels
all come from the same build. Pixels are compared in memory with
matplotlib's image comparison (``calculate_rms``); PNGs are written only
for a failing case, to ``tests/result_images/parity``.

The picture is drawn without its texts (tick labels, titles, legend and
strip texts) and without tick marks: laying out and rendering text was a
fifth of every draw, and at 40 dpi a wrong word moved the RMS by less
than the tolerance. The texts are compared as strings instead, exactly
(:attr:`Built.texts`), which a wrong word cannot pass.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from plotnine import element_blank, ggplot, theme
from plotnine.scales.scale_discrete import scale_discrete

import plotnine_private as pp  # noqa: F401  (registers the stats)
from plotnine_private._compat import built_parts
from plotnine_private.door import LAYOUT_COLUMNS

from .cases import Case

SIZE_IN, DPI = 2.0, 40
_BLANK = element_blank()
_THEME = theme(
    figure_size=(SIZE_IN, SIZE_IN),
    dpi=DPI,
    axis_text=_BLANK,
    axis_ticks=_BLANK,
    axis_title=_BLANK,
    legend_text=_BLANK,
    legend_title=_BLANK,
    strip_text=_BLANK,
)
RESULT_DIR = Path(__file__).resolve().parents[1] / "result_images" / "parity"


@dataclass
class Built:
    """What one build of a plot shows (``image``: RGB pixels;
    ``texts``: the words the figure shows, see :func:`_texts`)."""

    data: list[pd.DataFrame]
    ranges: list[tuple]
    breaks: list[tuple]
    legends: dict
    image: np.ndarray
    texts: dict


def _panel_facts(plot: Any):
    ranges, breaks = [], []
    for params in plot.layout.panel_params:
        ranges.append((tuple(params.x.range), tuple(params.y.range)))
        breaks.append(
            (
                tuple(np.asarray(params.x.breaks, dtype=object)),
                tuple(np.asarray(params.y.breaks, dtype=object)),
            )
        )
    return ranges, breaks


def _legends(plot: Any) -> dict:
    out = {}
    for sc in plot.scales:
        if any(ae in ("x", "y") for ae in sc.aesthetics):
            continue
        limits = sc.final_limits
        if isinstance(sc, scale_discrete):
            out[sc.aesthetics[0]] = tuple(str(v) for v in limits)
        else:
            out[sc.aesthetics[0]] = tuple(
                np.round(np.asarray(limits, dtype=float), 6)
            )
    return out


def _texts(plot: Any) -> dict:
    """Every text a drawn figure shows, as strings: axis and legend
    titles, each panel's tick labels, each panel's strip (its facet
    values) and each legend's labels."""
    labels = plot.labels
    titles = {k: str(v) for k, v in vars(labels).items() if v is not None}
    ticks = [
        (
            tuple(str(v) for v in params.x.labels),
            tuple(str(v) for v in params.y.labels),
        )
        for params in plot.layout.panel_params
    ]
    frame = plot.layout.layout
    facets = [c for c in frame.columns if c not in LAYOUT_COLUMNS]
    strips = [
        tuple(str(v) for v in row)
        for row in frame[facets].itertuples(index=False)
    ]
    legend = {
        sc.aesthetics[0]: tuple(str(v) for v in sc.get_labels())
        for sc in plot.scales
        if not any(ae in ("x", "y") for ae in sc.aesthetics)
    }
    return {
        "titles": titles,
        "ticks": ticks,
        "strips": strips,
        "legend labels": legend,
    }


def draw(plot: ggplot) -> Built:
    """Draw ``plot`` once and keep its data, axes, legends and pixels.

    The theme is added in place (``+`` would deep-copy the plot): every
    case makes a fresh plot."""
    plot += _THEME
    before = set(plt.get_fignums())
    with mpl.rc_context(), warnings.catch_warnings():
        mpl.rcdefaults()
        warnings.simplefilter("ignore")
        try:
            fig = plot.draw()
            canvas = FigureCanvasAgg(fig)
            canvas.draw()
            image = np.asarray(canvas.buffer_rgba())[..., :3].copy()
        finally:
            for num in set(plt.get_fignums()) - before:
                plt.close(num)
    return _facts(plot, image, drawn=True)


def build_only(plot: ggplot) -> Built:
    """Build ``plot`` without drawing (no pixels): for cases whose image
    another case already compares. Each layer's data then loses the rows
    its geom would not draw, as drawing does, so a built figure compares
    with a drawn one (a CKM twin with its DP case's plotnine figure).

    The plot is built in place: every case makes a fresh one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plot._build()
        for lyr in built_parts(plot).layers:
            lyr.data = lyr.geom.handle_na(lyr.data)
    return _facts(plot, np.zeros((1, 1, 3)))


def _facts(plot: ggplot, image: np.ndarray, drawn: bool = False) -> Built:
    # plotnine 0.15 keeps the built parts on the plot, 0.16 on plot.built
    parts = built_parts(plot)
    ranges, breaks = _panel_facts(parts)
    data = [lyr.data.copy() for lyr in parts.layers]
    # texts of a drawn figure only: a build alone skips the titles'
    # defaults that drawing sets (and a built case compares no pixels)
    texts = _texts(parts) if drawn else {}
    return Built(data, ranges, breaks, _legends(parts), image, texts)


def reference_key(case: Case) -> str:
    """What plotnine's side of ``case`` is made of: cases with one key
    (a DP case and its CKM twin, two declarations of one plotnine plot)
    share plotnine's figure."""
    layers = [
        (lyr.geom, lyr.mapping, lyr.params, lyr.stat) for lyr in case.layers
    ]
    return repr((case.family, case.data, case.mapping, layers, case.extras))


def build_pair(case: Case, references: dict) -> tuple[Built, Built]:
    """plotnine's figure and the private twin's, made in this run;
    plotnine's is made once per :func:`reference_key` in ``references``
    (drawn if any case of the key compares pixels)."""
    key = reference_key(case)
    pn = references.get(key)
    if pn is None or (case.image and pn.image.size == 3):  # not drawn
        make = draw if case.image else build_only
        pn = references[key] = make(case.plot(private=False))
    pr = (draw if case.image else build_only)(case.plot(private=True))
    return pn, pr


def save_images(case: Case, pn: Built, pr: Built) -> Path:
    """Write both images (for a failing case) and return the folder."""
    from PIL import Image

    RESULT_DIR.mkdir(parents=True, exist_ok=True)
    for side, built in (("plotnine", pn), ("private", pr)):
        Image.fromarray(built.image).save(RESULT_DIR / f"{case.id}-{side}.png")
    return RESULT_DIR
