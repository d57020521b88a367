"""dp_pca's input matrix: no copy when none is needed, same values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from plotnine_private.pca.validation import numeric_matrix


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_finite_matrix_keeps_its_values_and_layout(order):
    a = np.random.default_rng(0).normal(size=(50, 3))
    df = pd.DataFrame(np.asarray(a, order=order), columns=list("abc"))
    x, cols = numeric_matrix("dp_pca", df, ["a", "b", "c"])
    assert cols == ["a", "b", "c"]
    assert np.array_equal(x, a)
    want = df.to_numpy(dtype=float)
    assert x.flags.c_contiguous == want.flags.c_contiguous


def test_missing_and_infinite_values_still_become_zero():
    df = pd.DataFrame(
        {"a": [1.0, np.nan, 3.0], "b": [np.inf, 2.0, -np.inf], "c": 1.0}
    )
    x, _ = numeric_matrix("dp_pca", df, ["a", "b", "c"])
    assert x.tolist() == [[1.0, 0.0, 1.0], [0.0, 2.0, 1.0], [3.0, 0.0, 1.0]]


def test_a_column_subset_not_in_one_block_is_copied_contiguous():
    a = np.random.default_rng(1).normal(size=(40, 5))
    df = pd.DataFrame(a, columns=list("abcde"))
    x, _ = numeric_matrix("dp_pca", df, ["a", "c", "e"])
    assert x.flags.forc
    assert np.array_equal(x, a[:, [0, 2, 4]])


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_the_kendall_design_gathers_the_rows_in_their_layout(layout):
    from plotnine_private.mechanisms.pca import _gather_rows

    a = np.random.default_rng(2).normal(size=(301, 7))
    if layout == "strided":
        a = np.random.default_rng(2).normal(size=(301, 14))[:, ::2]
    else:
        a = np.asarray(a, order=layout)
    order = np.random.default_rng(3).permutation(301)
    rows = _gather_rows(a, order)
    assert np.array_equal(rows, a[order])
    # a Fortran-ordered matrix (pandas' block) stays Fortran-ordered:
    # the shifted differences then copy whole columns
    assert rows.flags.f_contiguous == (layout == "F")
    assert rows.flags.c_contiguous == (layout != "F")
