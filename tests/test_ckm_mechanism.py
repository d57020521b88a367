"""Record keys and cell keys (spec cell-key-method.md sections 3 and 6.3)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.ptable import PTable, create_cnt_ptable
from plotnine_private.mechanisms.ptable.ckm import (
    RecordKeyWarning,
    cell_keys,
    perturb_counts,
    record_key_integers,
)
from plotnine_private.record_keys import add_record_keys

SCALE = 10**8


def test_cell_key_of_three_records_is_exact():
    ints = record_key_integers([0.7, 0.6, 0.9])
    assert ints.tolist() == [70_000_000, 60_000_000, 90_000_000]
    total = int(ints.sum())
    assert total % SCALE == 20_000_000
    assert cell_keys([total], SCALE).tolist() == [0.2]


def test_cell_key_is_order_independent():
    rng = np.random.default_rng(3)
    keys = rng.integers(0, SCALE, size=100_000) / SCALE
    ints = record_key_integers(keys)
    forward = int(ints.sum()) % SCALE
    backward = int(record_key_integers(keys[::-1]).sum()) % SCALE
    shuffled = int(record_key_integers(rng.permutation(keys)).sum()) % SCALE
    assert forward == backward == shuffled


def test_margin_key_is_mod_sum_of_children():
    rng = np.random.default_rng(4)
    ints = record_key_integers(rng.integers(0, SCALE, size=1000) / SCALE)
    groups = rng.integers(0, 7, size=1000)
    children = pd.Series(ints).groupby(groups).sum() % SCALE
    assert int(children.sum()) % SCALE == int(ints.sum()) % SCALE


def test_indicator_count_uses_only_contributing_records():
    ints = record_key_integers([0.1, 0.2, 0.4])
    indicator = np.array([1, 0, 1])
    assert int((ints * indicator).sum()) % SCALE == 50_000_000


def test_more_decimals_are_rounded_to_the_grid():
    ints = record_key_integers([0.123456784, 0.123456786, 0.999999999])
    assert ints.tolist() == [12345678, 12345679, 0]
    assert record_key_integers([0.25], digits=2).tolist() == [25]


@pytest.mark.parametrize(
    ("keys", "match"),
    [
        ([0.1, np.nan], r"rkey aesthetic .* 1 missing \(NaN\)"),
        ([0.1, 1.0], r"rkey aesthetic .* \[0, 1\)"),
        ([-0.1], r"rkey aesthetic .* \[0, 1\)"),
        ([np.inf], r"rkey aesthetic .* infinite"),
        (["a"], r"rkey aesthetic .* numeric"),
    ],
)
def test_uniform_key_validation(keys, match):
    with pytest.raises(ParameterError, match=match):
        record_key_integers(keys)


def test_integer_keys():
    got = record_key_integers([0, 17, 255.0], kind="integer", modulus=256)
    assert got.dtype == np.int64 and got.tolist() == [0, 17, 255]
    with pytest.raises(ParameterError, match="below the key range 256"):
        record_key_integers([256], kind="integer", modulus=256)
    with pytest.raises(ParameterError, match="whole numbers"):
        record_key_integers([1.5], kind="integer")
    with pytest.raises(ParameterError, match="kind must be"):
        record_key_integers([1], kind="ons")


def test_add_record_keys_copy_seeded_and_rounded():
    df = pd.DataFrame({"x": list("abcab")})
    a = add_record_keys(df, rng_seed=11)
    b = add_record_keys(df, rng_seed=11)
    assert "rkey" not in df.columns and list(a.columns) == ["x", "rkey"]
    pd.testing.assert_frame_equal(a, b)
    k = a["rkey"].to_numpy()
    assert ((k >= 0) & (k < 1)).all()
    np.testing.assert_array_equal(k, np.round(k, 8))
    ints = record_key_integers(k)
    np.testing.assert_array_equal(ints / SCALE, k)
    assert not add_record_keys(df, rng_seed=12)["rkey"].equals(a["rkey"])


def test_add_record_keys_integer_range_and_errors():
    df = pd.DataFrame({"x": range(2000)})
    keyed = add_record_keys(df, name="k", rng_seed=1, integer_range=256)
    assert keyed["k"].between(0, 255).all() and keyed["k"].nunique() == 256
    with pytest.raises(ParameterError, match="already has a column 'k'"):
        add_record_keys(keyed, name="k", rng_seed=1)
    with pytest.raises(ParameterError, match="integer_range"):
        add_record_keys(df, rng_seed=1, integer_range=0)


def test_add_record_keys_without_seed_warns():
    df = pd.DataFrame({"x": [1, 2]})
    with pytest.warns(RecordKeyWarning, match="save the returned data"):
        add_record_keys(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        add_record_keys(df, rng_seed=0)


def test_end_to_end_same_cell_same_noise():
    """Cells with the same records get the same noise in any output."""
    pt = create_cnt_ptable(D=5, V=2.01, js=2)
    df = add_record_keys(
        pd.DataFrame({"g": np.repeat(list("abcd"), [1, 3, 40, 7])}),
        rng_seed=5,
    )
    df["k"] = record_key_integers(df["rkey"])
    agg = df.groupby("g")["k"].agg(["size", "sum"])
    first = perturb_counts(agg["size"], agg["sum"], pt)
    again = perturb_counts(agg["size"][::-1], agg["sum"][::-1], pt)[::-1]
    np.testing.assert_array_equal(first, again)
    assert not np.isin(first, [1, 2]).any() and (first >= 0).all()
    assert (np.abs(first - agg["size"]) <= 5).all()


def test_perturb_counts_zero_and_type_errors():
    pt = create_cnt_ptable(D=2, V=0.9)
    assert perturb_counts([0, 0], [5, 99], pt).tolist() == [0, 0]
    with pytest.raises(ParameterError, match="ptable must be a PTable"):
        perturb_counts([1], [1], pt.table)


def test_ons_style_keys_and_table():
    pcv = np.repeat(np.arange(1, 11), 4)
    frame = pd.DataFrame(
        {"pcv": pcv, "ckey": np.tile(np.arange(4), 10), "pvalue": 0}
    )
    frame.loc[frame["ckey"] == 3, "pvalue"] = 1
    pt = PTable.from_frame(frame)
    ints = record_key_integers([1, 2, 3, 1], kind="integer", modulus=4)
    # cell keys: 1+2 = 3 -> +1; 3+1 = 4 = 0 mod 4 -> 0
    got = perturb_counts([2, 2], [ints[:2].sum(), ints[2:].sum()], pt)
    assert got.tolist() == [3, 2]
    assert cell_keys([3, 4], 4).tolist() == [0.75, 0.0]
