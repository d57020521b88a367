"""dp_pca's faster paths give the plain paths' numbers, to the bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import plotnine_private.mechanisms.pca as pca_mod
from plotnine_private.mechanisms.pca import _unit_outer_sum, spherical_kendall
from plotnine_private.mechanisms.randomness import (
    derive_key,
    keyed_permutation,
    master_key,
)
from plotnine_private.pca.validation import numeric_matrix


def shift_by_shift(x, shifts, key, chunk):
    """The plain incomplete Kendall sum: shift after shift, chunk after
    chunk, every pair's difference written out with np.roll."""
    n, p = x.shape
    key = derive_key(key, "kendall_design")
    xp = x[keyed_permutation(key, n)]
    offsets = pca_mod._distinct_shifts(n, shifts, derive_key(key, "shifts"))
    total = np.zeros((p, p))
    for s in offsets.tolist():
        d = np.roll(xp, -s, axis=0) - xp
        for c0 in range(0, n, chunk):
            total += _unit_outer_sum(d[c0 : c0 + chunk])
    return total / (shifts * n)


@pytest.mark.parametrize(
    ("n", "p", "shifts", "parts"),
    [
        (1001, 4, 9, 1_000_000),  # every shift in one group
        (1001, 4, 9, 16),  # one shift a group (one chunk of 4x4)
        (2500, 3, 40, 9 * 7),  # groups of 7 shifts, the last short
        (8003, 20, 5, 1_000_000),  # one chunk of 8000 rows and a tail
    ],
)
def test_chunk_major_kendall_is_the_shift_by_shift_sum_to_the_bit(
    monkeypatch, n, p, shifts, parts
):
    rng = np.random.default_rng(n)
    x = rng.standard_t(4, size=(n, p)) * np.linspace(3, 1, p)
    x[5] = x[6]  # a duplicate pair: its term is 0
    key = derive_key(master_key(n), "chunk_major")
    monkeypatch.setattr(pca_mod, "_PARTS_FLOATS", parts)
    got = spherical_kendall(x, estimator="incomplete", shifts=shifts, key=key)
    chunk = max(1, pca_mod._PAIR_FLOATS // p)
    want = shift_by_shift(x, shifts, key, chunk)
    assert np.array_equal(got.matrix, want)
    # a column-major input (a DataFrame's) gives the same bits
    fortran = spherical_kendall(
        np.asfortranarray(x), estimator="incomplete", shifts=shifts, key=key
    )
    assert np.array_equal(fortran.matrix, want)


def test_a_wrong_sum_order_would_be_seen():
    # the bitwise test above can fail: summing the same terms in another
    # order moves the low bits on these data
    x = np.random.default_rng(3).standard_t(4, size=(2500, 3))
    key = derive_key(master_key(2500), "chunk_major")
    chunk = max(1, pca_mod._PAIR_FLOATS // 3)
    want = shift_by_shift(x, 40, key, chunk)
    other = shift_by_shift(x, 40, key, 97)
    assert not np.array_equal(want, other)
    assert other == pytest.approx(want, abs=1e-14)


@pytest.mark.parametrize("order", ["C", "F"])
def test_a_finite_matrix_is_used_as_given_and_values_as_before(order):
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
