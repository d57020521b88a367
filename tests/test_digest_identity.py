"""Fast paths of the release identity and the data digest give the same
bytes as the plain definitions (the noise streams depend on them)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from plotnine_private.mechanisms.release.cell_table import data_digest
from plotnine_private.mechanisms.release.query import Query, _public
from plotnine_private.mechanisms.streams.randomness import _canonical


def _reference_digest(*arrays):
    h = hashlib.blake2b(digest_size=16, person=b"pnp-data")
    for a in arrays:
        arr = np.ascontiguousarray(a)
        h.update(_canonical((str(arr.dtype), arr.shape)))
        h.update(arr.tobytes())
    return h.digest()


_RNG = np.random.default_rng(0)


def _normal(seed, size):
    return np.random.default_rng(seed).normal(size=size)


# factories, so that the 48 MB array is made when its test runs, not at
# collection in every worker (and freed after it)
@pytest.mark.parametrize(
    "make",
    [
        lambda: np.asfortranarray(_normal(0, (300_001, 20))),
        lambda: _normal(1, (1000, 3)),
        lambda: _normal(2, (7, 5))[:, ::2],
        lambda: np.arange(10)[::-1],
        lambda: np.zeros((0, 4)),
        lambda: np.array(3.0),
        lambda: np.array(["a", "bb"]),
        lambda: np.array([True, False]),
        lambda: [1, 2, 3],
    ],
    ids=range(9),
)
def test_data_digest_is_the_c_order_bytes(make):
    a = make()
    assert data_digest(a) == _reference_digest(a)
    assert data_digest(a, a) == _reference_digest(a, a)


def test_digest_still_tells_layouts_and_values_apart():
    x = _RNG.normal(size=(50, 4))
    assert data_digest(x) != data_digest(x.T)
    y = x.copy()
    y[49, 3] += 1e-12
    assert data_digest(np.asfortranarray(x)) != data_digest(y)


def _slow_public(value):
    if isinstance(value, np.ndarray):
        return tuple(_slow_public(v) for v in value.tolist())
    if isinstance(value, (list, tuple)):
        return tuple(_slow_public(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


@pytest.mark.parametrize(
    "value",
    [
        ["a", "b", 1, 2.5],
        np.array(["u", "v"], dtype=object),
        np.arange(4),
        [np.int64(3), "x"],
        [("a", 1), ("b", 2)],
        [True, 1],
    ],
    ids=range(6),
)
def test_public_fast_path_is_the_recursion(value):
    got = _public(value)
    want = _slow_public(value)
    assert got == want
    assert [type(v) for v in got] == [type(v) for v in want]


def test_identity_cached_equals_fresh():
    domain = tuple(f"c{i}" for i in range(1000))
    a = Query.make("count", "data", 5, x="k", domain=domain)
    b = Query.make("count", "data", 5, x="k", domain=domain)
    first = a.identity()
    assert a.identity() == first == b.identity()
    c = Query.make("count", "data", 5, x="k", domain=domain[:-1])
    assert c.identity() != first
