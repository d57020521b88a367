"""Magnitude p-tables: R ptable 1.0.0 references, refusals, I/O, lookup.

Covers create_num_ptable and cellKey's magnitude lookup, described in
docs/ptables.md (case P13 is the magnitude reference case).
"""

from __future__ import annotations

import io
import pickle
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from plotnine_private.mechanisms.errors import (
    ParameterError,
    PTableVarianceWarning,
)
from plotnine_private.mechanisms.ptable import (
    PTable,
    create_cnt_ptable,
    create_num_ptable,
    magnitude_noise,
    read_ptable,
)

# copies of shared/reference/ptable (R ptable 1.0.0 output)
REFERENCE = Path(__file__).resolve().parent / "data" / "ptable_reference"
NUM_FILES = sorted(REFERENCE.glob("num_*.csv"))
SCALE = 10**8
COLUMNS = ["i", "j", "p", "v", "p_int_lb", "p_int_ub", "type"]


def keys(*values: float) -> np.ndarray:
    """Uniform cell keys as exact integers on the 1e-8 grid."""
    return np.rint(np.array(values) * SCALE).astype(np.int64)


def params_from_name(name: str) -> dict:
    m = re.fullmatch(r"num_D(\d+)_V([\d.]+)_step(\d+)_icat([\d-]+)\.csv", name)
    assert m, name
    return {
        "D": int(m[1]),
        "V": float(m[2]),
        "step": int(m[3]),
        "icat": [int(x) for x in m[4].split("-")],
    }


@pytest.fixture
def manual():
    """R's manual-page example: D=2, V=1, step=2, icat=(1, 2)."""
    return create_num_ptable(D=2, V=1, step=2, icat=[1, 2])


@pytest.fixture
def vignette():
    """R's vignette example: D=5, V=2, step=4, icat=(1, 3, 5)."""
    return create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5])


# -- construction: R references ---------------------------------------------


def test_reference_tables_are_present():
    assert [p.name for p in NUM_FILES] == [
        "num_D2_V1_step2_icat1-2.csv",
        "num_D5_V2_step4_icat1-3-5.csv",
    ]


@pytest.mark.parametrize("path", NUM_FILES, ids=lambda p: p.stem)
def test_matches_r_create_num_ptable(path):
    ref = pd.read_csv(path)
    tab = create_num_ptable(**params_from_name(path.name)).table
    assert list(tab.columns) == COLUMNS and len(tab) == len(ref)
    for col in ["i", "j", "v", "type"]:
        np.testing.assert_array_equal(tab[col], ref[col])
    for col in ["p", "p_int_lb", "p_int_ub"]:
        np.testing.assert_allclose(tab[col], ref[col], rtol=0, atol=1e-6)


def test_p13_pt_ex_nums():
    pt = create_num_ptable(D=10, V=3, step=2, optim=[4, 1, 1], icat=[1, 5, 10])
    tab = pt.table
    assert len(tab) == 96
    assert tab["p"].sum() == pytest.approx(4)
    assert (tab["j"].min(), tab["j"].max()) == (0, 20)
    assert sorted(set(tab["i"])) == [0, 1, 5, 10]
    # optim=4 on row 1 makes its variance an equality
    diag = pt.diagnostics.set_index("i")
    assert diag.loc[1, "p_var"] == pytest.approx(3, abs=1e-5)


def test_rows_are_zero_and_icat_with_step_grid():
    pt = create_num_ptable(D=3, V=1, step=3, icat=[3, 1, 1])
    tab = pt.table
    assert sorted(set(tab["i"])) == [0, 1, 3] and pt.icat == (1, 3)
    row1 = tab[tab["i"] == 1]
    # j = max(i-D, 0) .. i+D by 1/step, rounded to 4 decimals (as R)
    expected = np.round(np.arange(0, 13) / 3, 4)
    np.testing.assert_array_equal(row1["j"], expected)
    np.testing.assert_array_equal(row1["v"], np.round(expected - 1, 4))


def test_each_row_sums_to_one_with_mean_zero_and_variance_at_most_v(
    vignette,
):
    for _, row in vignette.table.groupby("i"):
        p, v = row["p"].to_numpy(), row["v"].to_numpy()
        assert p.sum() == pytest.approx(1, abs=1e-10)
        assert abs(p @ v) < 1e-6
        assert p @ v**2 <= 2 + 1e-6


def test_last_row_is_symmetric(vignette):
    last = vignette.table.query("i == 5")
    np.testing.assert_allclose(last["p"], last["p"].to_numpy()[::-1], 1e-6)
    assert vignette.max_i == 5 and vignette.max_noise == 5


def test_row_zero_keeps_zero(vignette):
    row0 = vignette.table.query("i == 0")
    assert row0[["j", "p", "v", "p_int_lb", "p_int_ub"]].values.tolist() == [
        [0, 1, 0, 0, 1]
    ]


def test_attributes_params_and_repr(manual):
    assert manual.kind == "magnitudes" and manual.type == "all"
    assert manual.key_kind == "uniform" and manual.icat == (1, 2)
    assert manual.params == {
        "D": 2, "V": 1.0, "pstay": None, "optim": 1, "mono": True,
        "step": 2, "icat": [1, 2], "type": "all", "ncat": 2,
        "source": "create_num_ptable",
    }  # fmt: skip
    text = repr(manual)
    assert "step=2, icat=[1, 2]" in text and "magnitudes table" in text


def test_cached_by_parameters(manual):
    assert create_num_ptable(D=2, V=1, step=2, icat=(2, 1, 2)) is manual


def test_type_column_and_fingerprint():
    even = create_num_ptable(D=2, V=1, icat=[1, 2], type="even")
    odd = create_num_ptable(D=2, V=1, icat=[1, 2], type="odd")
    assert (even.table["type"] == "even").all() and even.type == "even"
    assert even.fingerprint != odd.fingerprint
    pd.testing.assert_series_equal(even.table["p"], odd.table["p"])


def test_count_and_magnitude_tables_differ_in_fingerprint():
    num = create_num_ptable(D=2, V=0.9, step=1, icat=[1, 2])
    cnt = create_cnt_ptable(D=2, V=0.9)
    pd.testing.assert_frame_equal(num.table, cnt.table, check_dtype=False)
    assert num != cnt


# -- refusals (R pt_create_pParams) -----------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"icat": [2, 5]}, r"There must be 1 and 'D' in 'icat'.*icat=\[2, 5\]"
                           r".*use e\.g\. icat=\[1, 2, 5\]"),
        ({"icat": [1, 3]}, r"There must be 1 and 'D' in 'icat'.*D=5"),
        ({"icat": None}, r"icat must list the rows.*got None"),
        ({"icat": [1, 5, 7]}, r"largest entry of 'icat' can be 'D'.*7 > D=5"),
        ({"icat": [1, 7]}, r"There must be 1 and 'D'.*e\.g\. icat=\[1, 5\]"),
        ({"D": 60, "icat": [1, 60], "step": 1}, r"= 60\); use D < 50"),
        ({"icat": [1, 2.5, 5]}, r"icat must be a whole number >= 1.*2\.5"),
        ({"icat": [0, 1, 5]}, r"icat must be a whole number >= 1.*got 0"),
        ({"step": 0}, r"step must be a whole number >= 1, got 0"),
        ({"step": 1.5}, r"step must be a whole number"),
        ({"step": 10}, r"D \* step must be below 50.*D=5, step=10.*step <= 9"),
        ({"type": "both"}, r"type must be one of \('all', 'even', 'odd'\)"),
        ({"optim": [1, 1]}, r"optim has 2 values.*ncat=3.*i = 1, 3, 5"),
        ({"optim": 5}, r"optim must be 1, 2, 3 or 4"),
        ({"mono": [True] * 4}, r"mono has 4 values"),
        ({"mono": "no"}, r"mono must be True or False"),
        ({"V": 0}, r"V must be a positive"),
        ({"V": "2"}, r"V must be a positive number"),
        ({"D": 4.5}, r"D must be a whole number >= 1.*4\.5"),
        ({"pstay": 1.2}, r"pstay must lie strictly between 0 and 1"),
    ],
)  # fmt: skip
def test_refusals_name_parameter_value_and_fix(kwargs, match):
    args = {"D": 5, "V": 2, "step": 4, "icat": [1, 3, 5], **kwargs}
    with pytest.raises(ParameterError, match=match):
        create_num_ptable(**args)


def test_pstay_is_ignored_with_a_warning(vignette):
    with pytest.warns(UserWarning, match="pstay is ignored"):
        pt = create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5], pstay=0.5)
    assert pt is vignette


def test_variance_shortfall_warns_and_names_a_larger_d():
    with pytest.warns(PTableVarianceWarning, match=r"D >= 5"):
        pt = create_num_ptable(D=2, V=8, step=2, icat=[1, 2])
    assert pt.diagnostics["p_var"].iloc[-1] < 8


def test_r_examples_build_without_variance_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5])
        create_num_ptable(D=10, V=3, step=2, optim=[4, 1, 1], icat=[1, 5, 10])


# -- I/O --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "header"),
    [
        ("r", "i,j,p,v,p_int_lb,p_int_ub,type"),
        ("tau_argus", "i;j;p;v;p_int_ub;type"),
    ],
)
def test_round_trip_through_each_writer(tmp_path, vignette, fmt, header):
    path = tmp_path / f"num_{fmt}.csv"
    vignette.to_csv(path, format=fmt)
    lines = path.read_text().splitlines()
    assert lines[0] == header
    back = read_ptable(path)
    assert back.kind == "magnitudes" and back.params["format"] == fmt
    assert back == vignette
    pd.testing.assert_frame_equal(back.table, vignette.table)


def test_tau_argus_text_is_r_pt_export_like(manual):
    buf = io.StringIO()
    manual.to_csv(buf, format="tau_argus")
    assert buf.getvalue().splitlines()[1:3] == [
        "0;0;1.00000000;0;1.00000000;all",
        "1;0;0.22642983;-1;0.22642983;all",
    ]


def test_headerless_tau_argus_export_reads(manual):
    buf = io.StringIO()
    manual.to_csv(buf, format="tau_argus")
    body = "\n".join(buf.getvalue().splitlines()[1:])
    assert read_ptable(io.StringIO(body)) == manual


def test_even_odd_round_trip_keeps_type(tmp_path):
    odd = create_num_ptable(D=2, V=1, step=1, icat=[1, 2], type="odd")
    odd.to_csv(tmp_path / "odd.csv")
    back = read_ptable(tmp_path / "odd.csv")
    assert back == odd and back.kind == "magnitudes" and back.type == "odd"


def test_mixed_even_odd_export_is_refused(tmp_path):
    even = create_num_ptable(D=2, V=1, icat=[1, 2], type="even").table
    odd = create_num_ptable(D=2, V=1, icat=[1, 2], type="odd").table
    with pytest.raises(ParameterError, match=r"one type.*'even', 'odd'"):
        read_ptable(pd.concat([even, odd]))


def test_r_reference_reads_as_magnitude_table():
    path = REFERENCE / "num_D5_V2_step4_icat1-3-5.csv"
    pt = read_ptable(path)
    ref = pd.read_csv(path)
    assert pt.kind == "magnitudes" and pt.icat == (1, 3, 5)
    np.testing.assert_array_equal(pt.table["p_int_ub"], ref["p_int_ub"])
    np.testing.assert_array_equal(pt.table["j"], ref["j"])


def test_whole_target_magnitude_table_needs_kind(tmp_path):
    pt = create_num_ptable(D=3, V=1, step=1, icat=[1, 3])
    pt.to_csv(tmp_path / "t.csv")
    with pytest.raises(ParameterError, match=r"kind='magnitudes'"):
        read_ptable(tmp_path / "t.csv")
    assert read_ptable(tmp_path / "t.csv", kind="magnitudes") == pt
    with pytest.raises(ParameterError, match=r"kind must be one of"):
        read_ptable(tmp_path / "t.csv", kind="nums")


def test_ons_format_is_refused_for_magnitudes(tmp_path, manual):
    with pytest.raises(ParameterError, match=r"format='r' or .*tau_argus"):
        manual.to_csv(tmp_path / "x.csv", format="ons")
    with pytest.raises(ParameterError, match="whole deviations of counts"):
        manual.to_ons_frame()


def test_pickle_round_trip(vignette):
    back = pickle.loads(pickle.dumps(vignette))
    assert back == vignette and back.kind == "magnitudes"
    assert back.params == vignette.params


def test_reader_refuses_magnitude_table_without_rows_zero_and_one():
    frame = pd.DataFrame(
        {"i": [0, 2, 2], "j": [0, 1.5, 2.5], "p": [1, 0.5, 0.5]}
    )
    with pytest.raises(ParameterError, match=r"needs rows i = 0 and i = 1"):
        PTable.from_frame(frame)


def test_reader_refuses_targets_beyond_four_decimals():
    frame = pd.DataFrame(
        {"i": [0, 1, 1], "j": [0, 0.12345, 1.5], "p": [1, 0.5, 0.5]}
    )
    with pytest.raises(ParameterError, match=r"'j' must hold numbers with"):
        PTable.from_frame(frame, kind="magnitudes")


# -- cellKey's magnitude lookup (spec 2.2) ------------------------------------


def test_count_lookup_refuses_magnitude_table(manual):
    with pytest.raises(ParameterError, match=r"magnitude_noise"):
        manual.noise([1], [5])


def test_exact_rows_use_the_half_open_interval(vignette):
    tab = vignette.table.query("i > 0")
    lb = keys(*tab["p_int_lb"])
    ub = keys(*tab["p_int_ub"])
    a = tab["i"].to_numpy(float)
    first = tab["p_int_lb"].to_numpy() == 0
    got_lb = vignette.magnitude_noise(a, lb)
    # key 0 means "no contributors": no noise (cellKey)
    np.testing.assert_array_equal(got_lb, np.where(first, 0, tab["v"]))
    np.testing.assert_array_equal(
        vignette.magnitude_noise(a, ub - 1), tab["v"]
    )


def test_key_on_a_bound_takes_the_upper_interval(manual):
    # row 1: [0.22642983, 0.45285966) -> v = -0.5
    got = manual.magnitude_noise([1, 1], keys(0.22642982, 0.22642983))
    assert got.tolist() == [-1.0, -0.5]


def test_between_rows_interpolates_linearly(vignette):
    k = keys(0.9)
    v1 = vignette.magnitude_noise([1], k)[0]
    v3 = vignette.magnitude_noise([3], k)[0]
    got = vignette.magnitude_noise([1.5, 2, 2.5], np.repeat(k, 3))
    np.testing.assert_allclose(
        got, [0.75 * v1 + 0.25 * v3, (v1 + v3) / 2, 0.25 * v1 + 0.75 * v3]
    )


def test_below_row_one_interpolates_towards_row_zero(vignette):
    k = keys(0.95)
    v1 = vignette.magnitude_noise([1], k)[0]
    got = vignette.magnitude_noise([0, 0.25], np.repeat(k, 2))
    np.testing.assert_allclose(got, [0, 0.25 * v1])


def test_ratios_above_max_i_use_the_last_row(vignette):
    k = np.repeat(keys(0.3), 3)
    got = vignette.magnitude_noise([5, 7.5, 1e9], k)
    assert len(set(got.tolist())) == 1


def test_zero_cell_key_gives_no_noise(vignette):
    sums = np.array([0, 3 * SCALE, 0])
    assert vignette.magnitude_noise([2, 4, 5], sums).tolist() == [0, 0, 0]


def test_noise_is_bounded_by_d_and_vectorised(vignette):
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 8, size=(50, 40))
    sums = rng.integers(0, 9 * SCALE, size=(50, 40))
    v = vignette.magnitude_noise(a, sums)
    assert v.shape == a.shape and np.abs(v).max() <= 5


def test_count_tables_agree_with_count_lookup():
    pt = create_cnt_ptable(D=5, V=2.01, js=2)
    rng = np.random.default_rng(2)
    counts = rng.integers(1, 30, size=2000)
    sums = rng.integers(1, SCALE, size=2000)
    np.testing.assert_array_equal(
        pt.magnitude_noise(counts, sums), pt.noise(counts, sums)
    )


@pytest.mark.parametrize(
    ("ratios", "sums", "match"),
    [
        ([-1.0], [1], r"ratios must be finite numbers >= 0"),
        ([np.nan], [1], r"ratios must be finite"),
        (["x"], [1], r"ratios must be numbers"),
        ([1.0], [0.5], r"key_sums must be finite whole numbers"),
        ([1.0, 2.0], [1, 2, 3], r"same shape"),
    ],
)
def test_lookup_inputs_are_validated(manual, ratios, sums, match):
    with pytest.raises(ParameterError, match=match):
        manual.magnitude_noise(ratios, sums)


def test_lookup_by_category_picks_the_small_cells_table(manual, vignette):
    tables = {"all": manual, "small_cells": vignette}
    cat = np.array(["all", "small_cells", "all", "small_cells"])
    a = np.array([1.5, 4.0, 2.0, 1.0])
    k = keys(0.1, 0.2, 0.7, 0.99)
    got = magnitude_noise(tables, cat, a, k)
    expected = [
        manual.magnitude_noise([1.5], k[:1])[0],
        vignette.magnitude_noise([4.0], k[1:2])[0],
        manual.magnitude_noise([2.0], k[2:3])[0],
        vignette.magnitude_noise([1.0], k[3:])[0],
    ]
    np.testing.assert_array_equal(got, expected)
    # one category for every cell
    np.testing.assert_array_equal(
        magnitude_noise(tables, "all", a, k), manual.magnitude_noise(a, k)
    )


def test_lookup_by_category_refuses_unknown_category(manual):
    with pytest.raises(ParameterError, match=r"category 'even' has no"):
        magnitude_noise({"all": manual}, ["all", "even"], [1, 1], [1, 1])
    with pytest.raises(ParameterError, match=r"ptables\['all'\] must be"):
        magnitude_noise({"all": "table.csv"}, "all", [1], [1])


def test_ons_tables_have_no_magnitude_lookup(tmp_path):
    path = tmp_path / "ons.csv"
    create_cnt_ptable(D=2, V=0.9).to_csv(path, format="ons")
    with pytest.raises(ParameterError, match=r"uniform keys"):
        read_ptable(path).magnitude_noise([1], [1])


# -- plot ---------------------------------------------------------------------


def test_plot_magnitude_table(vignette):
    from plotnine import ggplot

    from plotnine_private import plot_ptable

    p = plot_ptable(vignette)
    assert isinstance(p, ggplot)
    data = p.data
    assert data.groupby("i")["p"].sum().round(8).eq(1).all()
    assert list(data["panel"].cat.categories) == [
        "ratio = 0", "ratio = 1", "ratio = 3", "ratio \u2265 5",
    ]  # fmt: skip
    assert "step = 4" in p.labels.get("subtitle", "")
    # 41 deviations per row: percent labels would overlap, so none
    assert (data["label"] == "").all()


def test_plot_coarse_magnitude_table_is_labelled(manual):
    from plotnine_private import plot_ptable

    data = plot_ptable(manual).data
    assert data.loc[data["i"] == 2, "label"].tolist()[4] == "18%"
