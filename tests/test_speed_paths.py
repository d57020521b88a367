"""Faster computations give the results of the plain ones."""

from __future__ import annotations

import numpy as np
import pytest
from cellname_reference import words_by_definition

import plotnine_private.mechanisms.pca.directions as pca_mod
from plotnine_private.mechanisms.naming.cellnames import cell_words
from plotnine_private.mechanisms.pca.directions import spherical_kendall
from plotnine_private.mechanisms.streams.randomness import (
    derive_key,
    master_key,
    siphash24,
    siphash24_128,
)


def test_incomplete_kendall_does_not_depend_on_its_chunk(monkeypatch):
    x = np.random.default_rng(4).normal(size=(1001, 4))
    key = derive_key(master_key(1), "chunks")
    whole = spherical_kendall(x, estimator="incomplete", shifts=9, key=key)
    # 7 rows a pass: many chunks, and the wrap-around inside a chunk
    monkeypatch.setattr(pca_mod, "_PAIR_FLOATS", 28)
    small = spherical_kendall(x, estimator="incomplete", shifts=9, key=key)
    assert small.matrix == pytest.approx(whole.matrix, abs=1e-14)


@pytest.mark.parametrize("shared", [0, 1, 2, 3])
def test_words_shared_by_every_cell_are_hashed_once_exactly(shared):
    rng = np.random.default_rng(shared)
    msg = rng.integers(0, 2**63, size=(40, 3)).astype(np.uint64)
    msg[:, :shared] = msg[0, :shared]  # a common prefix of `shared` words
    k0, k1 = np.uint64(11), np.uint64(2**63 + 5)
    # one key per message: the plain path, no words hashed once
    k0s, k1s = np.full(40, k0), np.full(40, k1)
    for fn in (siphash24, siphash24_128):
        assert fn(k0, k1, msg).tolist() == fn(k0s, k1s, msg).tolist()


def test_the_reference_vectors_hold_on_the_plain_path_too():
    k = bytes(range(16))
    k0 = np.full(1, int.from_bytes(k[:8], "little"), dtype=np.uint64)
    k1 = np.full(1, int.from_bytes(k[8:], "little"), dtype=np.uint64)
    m16 = np.frombuffer(bytes(range(16)), "<u8")[None, :]
    assert int(siphash24(k0, k1, m16)[0]) == 0x3F2ACC7F57C29BDB


def test_a_tuple_of_labels_is_encoded_as_item_by_item():
    from plotnine_private.mechanisms.streams.randomness import _canonical

    labels = ["a", "", "é", "x" * 300] * 20  # long enough for one buffer
    want = b"t:" + b"".join(
        len(b"s:" + c.encode()).to_bytes(4, "little") + b"s:" + c.encode()
        for c in labels
    )
    assert _canonical(tuple(labels)) == want == _canonical(labels)
    mixed = ("a", 1)
    assert _canonical(mixed) == b"t:" + b"".join(
        len(c).to_bytes(4, "little") + c
        for c in (_canonical("a"), _canonical(1))
    )


def test_label_columns_are_named_as_value_by_value():
    labels = ["a", "", "é€", "exactly8", "a much longer label, 25 b", "x|y"]
    numbers = np.arange(len(labels)) * 1.5
    mixed = ["b", 4, None, "c", 2.5, True]
    for columns in (
        (labels,),
        (numbers, labels),
        (labels, numbers, labels[::-1]),
        (labels, mixed),
        (np.array(labels, dtype=object), numbers),
    ):
        got = cell_words(*columns)
        assert got.tolist() == words_by_definition(*columns).tolist()


def test_the_keyed_order_is_the_stable_sorts_with_and_without_ties():
    from plotnine_private.mechanisms.streams.randomness import (
        keyed_permutation,
        keyed_uniform,
        stable_argsort,
    )

    key = derive_key(master_key(3), "order")
    u = keyed_uniform(key, 100_000)
    want = np.argsort(u, kind="stable")
    assert (keyed_permutation(key, 100_000) == want).all()
    # ties: many equal values, whose order the unstable sort may change
    tied = np.random.default_rng(0).integers(0, 50, size=20_000) / 7.0
    assert (stable_argsort(tied) == np.argsort(tied, kind="stable")).all()
    assert stable_argsort(np.array([])).tolist() == []
    assert stable_argsort(np.array([1.5])).tolist() == [0]


@pytest.mark.parametrize("wide", [False, True])
def test_few_messages_hashed_on_integers_equal_the_array_path(
    wide, monkeypatch
):
    import plotnine_private.mechanisms.streams.siphash as sip

    rng = np.random.default_rng(7)
    fn = siphash24_128 if wide else siphash24
    # words over the whole 64-bit range, scalar and per-message keys
    for m in (0, 1, 2, 5):
        msg = rng.integers(0, 2**64, size=(sip._FEW, m), dtype=np.uint64)
        keys = [
            (np.uint64(2**64 - 3), np.uint64(2**63 + 1)),
            tuple(
                rng.integers(0, 2**64, size=sip._FEW, dtype=np.uint64)
                for _ in range(2)
            ),
        ]
        for k0, k1 in keys:
            few = fn(k0, k1, msg)
            monkeypatch.setattr(sip, "_FEW", 0)  # every message on arrays
            assert fn(k0, k1, msg).tolist() == few.tolist()
            monkeypatch.undo()
    # the array path alone still meets the reference vector
    monkeypatch.setattr(sip, "_FEW", 0)
    k = bytes(range(16))
    k0, k1 = (
        np.uint64(int.from_bytes(k[i : i + 8], "little")) for i in (0, 8)
    )
    m8 = np.frombuffer(bytes(range(8)), "<u8")[None, :]
    assert int(siphash24(k0, k1, m8)[0]) == 0x93F5F5799A932462
