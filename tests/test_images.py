"""What only a picture shows: stacked private bars with their labels in
the middle of each segment, and a labelled private histogram."""

from __future__ import annotations

import pytest
from imagetest import assert_image_matches
from plotnine import (
    aes,
    after_stat,
    geom_bar,
    geom_histogram,
    geom_text,
    ggplot,
    position_stack,
)

import plotnine_private as pp

PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)


@pytest.fixture
def keyed(mpg_cat):
    return pp.add_record_keys(mpg_cat, name="rk", rng_seed=2024)


def test_ckm_stacked_bars_with_labels(keyed):
    p = (
        # drop=True: plotnine's look, no "0" label for an empty stack part
        ggplot(keyed, aes("class", fill="drv", rkey="rk"))
        + geom_bar(stat="count_ckm", ptable=PTAB, drop=True)
        + geom_text(
            aes(label=after_stat("count")),
            stat="count_ckm",
            ptable=PTAB,
            drop=True,
            position=position_stack(vjust=0.5),
            size=8,
        )
    )
    assert_image_matches(p, "ckm_stacked_bars")


def test_ckm_histogram_with_labels(keyed):
    breaks = [10, 15, 20, 25, 30, 35, 45]
    p = (
        ggplot(keyed, aes("hwy", rkey="rk"))
        + geom_histogram(
            stat="bin_ckm",
            breaks=breaks,
            ptable=PTAB,
            fill="white",
            color="black",
        )
        + geom_text(
            aes(label=after_stat("count")),
            stat="bin_ckm",
            breaks=breaks,
            ptable=PTAB,
            va="bottom",
        )
    )
    assert_image_matches(p, "ckm_histogram")


def test_dp_bars_with_an_empty_declared_level(mpg_cat):
    # 'zzz' has no records: it keeps its place on the axis and gets a
    # noisy count like every level (here clipped to 0), so neither the
    # axis nor a missing bar reveals that it is empty (the baseline's
    # noise is stream version 2's, the default when it was drawn)
    p = (
        ggplot(mpg_cat, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=42)
        + geom_text(
            aes(label=after_stat("count")),
            stat="count_dp",
            eps=1,
            seed=42,
            va="bottom",
        )
    )
    with pp.use_stream_version(2):
        assert_image_matches(p, "dp_bars_declared_levels")
