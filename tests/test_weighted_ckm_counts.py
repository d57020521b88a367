"""Weighted CKM counts are shown unrounded: the Cell Key Method perturbs
a cell's count and scales it by the cell's mean weight (cellKey,
Tau-Argus), and plotnine shows weighted counts as they are (weights 1.5
and 1.6 count 3.1, not 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from neighbours import differences, snapshot
from plotnine import aes, geom_bar, geom_bin_2d, geom_histogram, ggplot

import plotnine_private as pp
from plotnine_private import layer_data

#: a p-table that almost never moves a count
QUIET = pp.create_cnt_ptable(D=1, V=0.0001)
PTAB = pp.create_cnt_ptable(D=3, V=1.5, js=1)


def _data(w_last: float = 2.25) -> pd.DataFrame:
    d = pd.DataFrame(
        {
            "x": pd.Categorical(list("aab"), categories=["a", "b", "c"]),
            "v": [1.0, 1.5, 4.0],
            "u": [1.0, 1.2, 3.9],
            "w": [1.5, 1.6, w_last],
        }
    )
    return pp.add_record_keys(d, name="rk", rng_seed=3)


def test_weighted_counts_are_the_weights_sums_at_a_quiet_ptable():
    d = _data()
    bars = layer_data(
        ggplot(d, aes("x", weight="w", rkey="rk"))
        + geom_bar(stat="count_ckm", ptable=QUIET)
    )
    assert bars["count"].tolist() == pytest.approx([3.1, 2.25, 0.0])
    hist = layer_data(
        ggplot(d, aes("v", weight="w", rkey="rk"))
        + geom_histogram(stat="bin_ckm", ptable=QUIET, bins=3, limits=(1, 4))
    )
    assert hist["count"].tolist() == pytest.approx([3.1, 0.0, 2.25])
    tiles = layer_data(
        ggplot(d, aes("v", "u", weight="w", rkey="rk"))
        + geom_bin_2d(
            stat="bin2d_ckm", ptable=QUIET, bins=2, limits=((1, 4), (1, 4))
        )
    )
    assert sorted(tiles["count"].tolist()) == pytest.approx([2.25, 3.1])


def test_unweighted_counts_stay_whole_numbers():
    out = layer_data(
        ggplot(_data(), aes("x", rkey="rk"))
        + geom_bar(stat="count_ckm", ptable=PTAB)
    )
    assert out["count"].dtype == np.int64


@pytest.mark.parametrize("w_last", [2.7, 0.3])
def test_a_changed_weight_changes_noisy_numbers_only(w_last):
    def make(d):
        return ggplot(d, aes("x", weight="w", rkey="rk")) + geom_bar(
            stat="count_ckm", ptable=PTAB
        )

    a = snapshot(make(_data()))
    b = snapshot(make(_data(w_last)))
    assert "error" not in a
    assert differences(a, b) == []
