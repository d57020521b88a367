"""Blocked record-key conversion gives the plain formula's integers and
the same errors, in the same order."""

from __future__ import annotations

import numpy as np
import pytest

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.ptable.ckm import record_key_integers

_RNG = np.random.default_rng(7)


@pytest.mark.parametrize("digits", [1, 3, 8, 15])
@pytest.mark.parametrize(
    "keys",
    [
        np.round(_RNG.random(200_003), 8),  # several blocks and a tail
        _RNG.random(999),
        np.array([0.0, 0.99999999995, 1 - 1e-16, 0.5, 0.05]),
        np.array([]),
    ],
    ids=["blocks", "raw", "edges", "empty"],
)
def test_uniform_keys_equal_the_plain_formula(keys, digits):
    want = np.rint(keys * 10**digits).astype(np.int64) % 10**digits
    got = record_key_integers(keys, digits=digits)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_nan_reported_before_range_and_inf():
    keys = np.array([1.5, np.inf, np.nan, 0.2])
    with pytest.raises(ParameterError, match="1 missing"):
        record_key_integers(keys)
    with pytest.raises(ParameterError, match="infinite"):
        record_key_integers(np.array([0.1, -np.inf]))


def test_first_out_of_range_key_is_named():
    keys = np.concatenate([_RNG.random(70_000), [1.25, -0.5]])
    with pytest.raises(ParameterError, match=r"found 1\.25"):
        record_key_integers(keys)
