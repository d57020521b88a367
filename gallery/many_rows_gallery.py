"""Gallery: people with many rows, bounded honestly.

``render(outdir)`` writes ``many_rows.png``. The data are generated here
(fixed seed): 3,000 patients with a heavy-tailed number of episodes
(Lomax, tail index 1.5, 1 to 2,000 episodes) in four declared wards;
patients with more than 20 episodes spend four in five of theirs in ward
D, so the episodes a bound removes come mostly from one bar (as one
carrier's flights do in nycflights13).

Four panels on one scale: the unbounded truth and the truth at the
bound ``max_records="auto"`` chose (both unperturbed, not for release),
the DP figure at that bound with its 95% noise intervals and the share
of episodes kept (released from the histogram of episodes per patient),
and the patients per ward (``count="units"``), DP.

Run: ``python gallery/many_rows_gallery.py [outdir]``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

WARDS = ["A", "B", "C", "D"]
PATIENTS = 3000
#: the 95% noise interval of a released count
BAND = ["count_low", "count_high"]


def episodes(seed: int = 5) -> pd.DataFrame:
    """One row per episode: ``patient``, ``episode`` (an id) and
    ``ward`` (declared levels)."""
    rng = np.random.default_rng(seed)
    n = np.minimum(np.floor(rng.pareto(1.5, PATIENTS) * 2 + 1), 2000)
    n = n.astype(np.int64)
    patient = np.repeat(np.arange(PATIENTS), n)
    heavy = np.repeat(n > 20, n)
    ward = rng.choice(len(WARDS), len(patient))
    ward[heavy & (rng.random(len(patient)) < 0.8)] = len(WARDS) - 1
    return pd.DataFrame(
        {
            "patient": patient,
            "episode": np.arange(len(patient)),
            "ward": pd.Categorical(np.array(WARDS)[ward], WARDS),
        }
    )


def _panels(data: pd.DataFrame):
    """The four panels' bars (one frame), the bound and the captions."""
    from plotnine import aes, geom_bar, ggplot

    import plotnine_private as pp
    from plotnine_private.door import bound_rows

    people = pp.source(
        data,
        unit="patient",
        record_id="episode",
        max_records="auto",
        auto_eps=0.5,
        auto_seed=7,
        auto_plot_eps=1,
        auto_cells=len(WARDS),
    )
    k = people.unit.max_records
    dp = ggplot(people, aes("ward")) + geom_bar(
        stat="count_dp", eps=1, seed=2026
    )
    units = ggplot(people, aes("ward")) + geom_bar(
        stat="count_dp", eps=1, seed=2026, count="units"
    )
    released = pp.layer_data(dp)
    patients = pp.layer_data(units)
    kept = data[bound_rows("gallery", data, people.unit)]
    truth = data["ward"].value_counts().reindex(WARDS)
    bounded = kept["ward"].value_counts().reindex(WARDS)
    true_share = len(kept) / len(data)
    names = [
        "episodes, all (truth)",
        f"episodes, at most {k} per patient (truth: {true_share:.0%} kept)",
        f"episodes, at most {k} per patient (DP)",
        "patients (DP, count='units')",
    ]
    rows = [
        pd.DataFrame({"ward": WARDS, "count": truth.to_numpy()}),
        pd.DataFrame({"ward": WARDS, "count": bounded.to_numpy()}),
        released.assign(ward=WARDS)[["ward", "count", *BAND]],
        patients.assign(ward=WARDS)[["ward", "count", *BAND]],
    ]
    for name, frame in zip(names, rows):
        frame["panel"] = name
    bars = pd.concat(rows, ignore_index=True)
    bars["panel"] = pd.Categorical(bars["panel"], names)
    share = people.unit.kept()
    return bars, k, share, pp.noise_caption(dp), pp.noise_caption(units)


def figure(data: pd.DataFrame | None = None):
    """The gallery figure (a ggplot of released and true numbers)."""
    from plotnine import (
        aes,
        element_text,
        facet_wrap,
        geom_col,
        geom_errorbar,
        ggplot,
        labs,
        theme,
        theme_bw,
    )

    data = episodes() if data is None else data
    bars, k, share, caption, units_caption = _panels(data)
    truth = bars["panel"].cat.categories[:2]
    bars["kind"] = np.where(
        bars["panel"].isin(truth), "unperturbed: not for release", "DP"
    )
    noisy = bars.dropna(subset=BAND)
    return (
        ggplot(bars, aes("ward", "count", fill="kind"))
        + geom_col(width=0.7)
        + geom_errorbar(
            aes("ward", ymin=BAND[0], ymax=BAND[1]),
            data=noisy,
            width=0.3,
            inherit_aes=False,
        )
        + facet_wrap("panel", nrow=1)
        + labs(
            title=(
                f"3,000 patients, {len(data):,} episodes: max_records='auto' "
                f"chose k = {k}; kept {share.share_words()}"
            ),
            subtitle=(
                "The bias (heavy patients' episodes, mostly in ward D) is "
                "in no error bar; the share kept states it. count='units': "
                f"each patient once per ward, noise of {len(WARDS)} cells, "
                f"not {k} episodes."
            ),
            caption=(
                f"episodes: {caption}\n"
                f"patients: {units_caption.split('; kept')[0]}"
            ),
            x="ward",
            y="count",
            fill="",
        )
        + theme_bw()
        + theme(
            figure_size=(15, 4.8),
            legend_position="bottom",
            plot_caption=element_text(size=8),
        )
    )


def render(outdir: str | Path) -> list[Path]:
    """Write the PNG into ``outdir``; return its path."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / "many_rows.png"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figure().save(target, dpi=90, verbose=False)
    return [target]


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else here / "images"
    for path in render(target):
        print(path)
