"""The public size of a PCA under a privacy unit (mechanisms/pca/size.py):
slots, their statistics' sensitivity, and the private count of rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.pca.directions import (
    kendall_sensitivity,
    private_directions,
    spherical_kendall,
)
from plotnine_private.mechanisms.pca.scree import private_scree
from plotnine_private.mechanisms.pca.size import (
    RowCount,
    scree_pairs,
    slot_rows,
)

KEY = bytes(range(16))
RNG = np.random.default_rng(5)
X = RNG.normal(size=(120, 4)) * [4.0, 2.0, 1.0, 1.0]


def test_slots_hold_every_row_once_or_a_uniform_subset():
    rows, filled = slot_rows(X, 150, KEY)
    assert filled.sum() == 120 and (rows[~filled] == 0).all()
    got = {tuple(r) for r in rows[filled]}
    assert got == {tuple(r) for r in X}
    rows, filled = slot_rows(X, 50, KEY)
    assert filled.all() and len({tuple(r) for r in rows}) == 50
    assert {tuple(r) for r in rows} <= {tuple(r) for r in X}


@pytest.mark.parametrize("estimator", ["exact", "incomplete"])
def test_every_slot_filled_is_the_one_row_statistic(estimator):
    one = spherical_kendall(X, estimator=estimator, key=KEY, shifts=7)
    slots = spherical_kendall(
        X, estimator=estimator, key=KEY, shifts=7, size=len(X)
    )
    assert slots.sensitivity == one.sensitivity == kendall_sensitivity(120)
    if estimator == "incomplete":  # the same order, shifts and sums
        assert (slots.matrix == one.matrix).all()
    else:  # the same pairs, summed in another order
        np.testing.assert_allclose(slots.matrix, one.matrix, atol=1e-14)


@pytest.mark.parametrize("estimator", ["exact", "incomplete"])
def test_a_unit_of_other_size_moves_the_statistic_within_its_bound(
    estimator,
):
    """D' = D with its last unit (one row) replaced by a unit of 3 rows:
    with both below the size, the slots' order is the same, 3 slots
    differ, and the matrix moves by at most the bound of 3 rows of a
    public size, never of the rows kept (which changed)."""
    size, k = 160, 3
    d = X
    unit = np.array([[50.0, -40.0, 30.0, 1.0], [0, 9, 9, 9], [7, 7, -7, 0]])
    d2 = np.vstack([X[:-1], unit])
    assert len(d2) == len(d) + 2  # the rows kept changed in number
    a = spherical_kendall(d, estimator=estimator, key=KEY, shifts=9, size=size)
    b = spherical_kendall(
        d2, estimator=estimator, key=KEY, shifts=9, size=size
    )
    assert a.sensitivity == b.sensitivity == kendall_sensitivity(size)
    moved = np.linalg.norm(a.matrix - b.matrix)
    assert 0 < moved <= k * a.sensitivity


def test_private_directions_calibrate_on_the_size_alone():
    one = private_directions(X, 2.0, 1e-5, key=KEY, records=2, size=200)
    other = private_directions(X[:90], 2.0, 1e-5, key=KEY, records=2, size=200)
    assert one.sigma == other.sigma and one.size == other.size == 200
    assert one.sensitivity == 2 * kendall_sensitivity(200)
    # no row at all is a data set like any other under a public size
    none = private_directions(X[:0], 2.0, 1e-5, key=KEY, records=2, size=200)
    assert none.sigma == one.sigma
    with pytest.raises(ParameterError, match="size must be a whole number"):
        private_directions(X, 2.0, 1e-5, key=KEY, size=1)


def test_an_empty_slot_pairs_to_nothing_in_the_scree():
    rows, filled = slot_rows(X[:11], 20, KEY)
    paired = scree_pairs(rows, filled)
    d = paired[1::2] - paired[0::2]
    whole = filled[0::2] & filled[1::2]
    assert (d[~whole] == 0).all() and (d[whole] != 0).any()
    v = np.eye(4)[:, :2]
    got = private_scree(paired, v, 1e9, 1e-5, clip=100.0, key=KEY)
    full = private_scree(X[:20], v, 1e9, 1e-5, clip=100.0, key=KEY)
    # eleven rows in twenty slots: few whole pairs, a smaller mean
    assert got.values.sum() < full.values.sum()


def test_the_row_count_is_a_lower_bound_of_the_rows():
    mech = RowCount(0.5, records=3)
    assert mech.sensitivity == 3 and mech.privacy_map() == (0.5, 0.0)
    assert mech.margin == math.ceil(6 * math.log(100))
    below = 0
    for i in range(200):
        count, size = mech.perturb(X, bytes([i]) * 16)
        assert size == max(2, count - mech.margin)
        below += size <= len(X)
    assert below >= 190  # beta = 0.01: about 198 of 200 expected
    with pytest.raises(ParameterError, match="eps must be"):
        RowCount(0.0)
