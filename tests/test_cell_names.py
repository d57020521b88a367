"""Cell names are injective (issue 18, item 2).

A cell's noise stream is named by the typed, length-prefixed encoding of
its content. Joined text named different cells alike: two panels whose
facet labels join to the same text, the float 4.0 and the string "4.0",
True and "True", the integers 2**53 and 2**53 + 1 (written as floats).
Cells named alike got the same noise, so their released difference was
the true one. Each test below builds two such cells with equal true
counts and checks that their noise differs for some of a few fixed seeds
(with one shared stream it is equal for every seed).
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
from plotnine import aes, facet_grid, geom_bar, ggplot

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.mechanisms.streams.randomness import (
    CellStreams,
    cell_words,
    derive_key,
    master_key,
    value_bytes,
)

#: a shared stream gives equal noise at every seed, so a few seeds
#: suffice; independent DLap(2) noise is equal 13% of the time (all four
#: alike: 3 in 10,000)
SEEDS = range(101, 105)


def _noisy(plot) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pp.layer_data(plot)


def _x_levels(levels: list) -> pd.DataFrame:
    # three records in each level: equal true counts
    values = [v for v in levels for _ in range(3)]
    return pd.DataFrame(
        {
            "v": pd.Categorical(
                values, categories=pd.Index(levels, dtype=object)
            )
        }
    )


def _bar(frame, seed):
    return ggplot(frame, aes("v")) + geom_bar(
        stat="count_dp", eps=1, seed=seed, drop=False
    )


def _x_collisions(levels) -> int:
    equal = 0
    for seed in SEEDS:
        data = _noisy(_bar(_x_levels(levels), seed))
        assert len(data) == len(levels)  # two cells, not one
        noisy = data["noisy_count"]
        equal += int(noisy.iloc[0] == noisy.iloc[1])
    return equal


def test_a_float_and_its_text_have_their_own_noise():
    assert _x_collisions([4.0, "4.0"]) < len(SEEDS)


def test_true_and_its_text_have_their_own_noise():
    assert _x_collisions([True, "True"]) < len(SEEDS)


def test_integers_beyond_float_precision_have_their_own_noise():
    assert _x_collisions([2**53, 2**53 + 1]) < len(SEEDS)


def test_panels_whose_labels_join_alike_have_their_own_noise():
    # panels (a="x|y", b="z") and (a="x", b="y|z") both joined to "x|y|z"
    a_levels, b_levels = ["x", "x|y"], ["y|z", "z"]
    rows = [("x|y", "z"), ("x", "y|z")]
    xs = ["p", "q", "r", "s"]
    records = [(a, b, x) for a, b in rows for x in xs for _ in range(2)]
    frame = pd.DataFrame(records, columns=["a", "b", "x"])
    frame["a"] = pd.Categorical(frame["a"], categories=a_levels)
    frame["b"] = pd.Categorical(frame["b"], categories=b_levels)
    frame["x"] = pd.Categorical(frame["x"], categories=xs)
    equal = 0
    for seed in SEEDS:
        plot = (
            ggplot(frame, aes("x"))
            + geom_bar(stat="count_dp", eps=1, seed=seed, drop=False)
            + facet_grid("a ~ b")
        )
        data, layout = _built(plot)
        assert len(layout) == 4  # every declared combination
        noise = []
        for a, b in rows:
            panel = layout.loc[
                (layout["a"] == a) & (layout["b"] == b), "PANEL"
            ].iloc[0]
            cells = data[data["PANEL"] == panel].sort_values("x")
            assert len(cells) == len(xs)
            noise.append(cells["noisy_count"].to_numpy())
        equal += bool(np.array_equal(*noise))
    assert equal < len(SEEDS)


def _built(plot) -> tuple[pd.DataFrame, pd.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = build(plot)
    layout = built.layout.layout.astype({"a": str, "b": str})
    return built.layers[0].data, layout


# -- the encoding itself ------------------------------------------------------
def _meaning(value):
    """What a value is, as a cell: numbers by their exact value (4 and
    4.0 are one level), bools, text and None each their own kind."""
    if value is None:
        return ("none",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    if isinstance(value, float) and math.isinf(value):
        return ("inf", value > 0)
    if isinstance(value, (int, float)):
        return ("number", Fraction(value))
    if isinstance(value, pd.Timestamp):
        return ("time", value.value)
    if isinstance(value, tuple):
        return ("tuple", tuple(map(_meaning, value)))
    return ("text", value)


_TRICKY = ["|", "x|y", "4.0", "4", "True", "None", "nan", "", "y|z"]


def _random_scalar(rng: np.random.Generator):
    kind = rng.integers(9)
    if kind == 0:
        return None
    if kind == 1:
        return bool(rng.integers(2))
    if kind == 2:
        return int(rng.integers(-5, 5))
    if kind == 3:  # around 2**53, where floats lose integers
        return 2**53 + int(rng.integers(-3, 4))
    if kind == 4:
        pick = rng.integers(6)
        special = [float("nan"), float("inf"), -0.0, 0.5, 2.0**53, 4.0]
        return special[pick] if rng.integers(2) else float(rng.normal())
    if kind == 5:
        return str(_TRICKY[rng.integers(len(_TRICKY))])
    if kind == 6:
        return "".join(rng.choice(list("ab|é4. "), rng.integers(0, 12)))
    if kind == 7:
        return pd.Timestamp(int(rng.integers(-(2**62), 2**62)))
    return 2**70 * int(rng.integers(-2, 3))  # beyond 64 bits


def _random_value(rng: np.random.Generator):
    if rng.integers(6) == 0:
        return (_random_scalar(rng), _random_scalar(rng))
    return _random_scalar(rng)


def test_distinct_cells_never_share_a_stream():
    # a property test with a fixed seed: 400 random tables of 2-12 cells
    # of two columns drawn from values that collided as text
    rng = np.random.default_rng(18)
    key = derive_key(master_key(1), "q")
    for _ in range(400):
        cells = [
            (_random_value(rng), _random_value(rng))
            for _ in range(rng.integers(2, 13))
        ]
        words = cell_words(*([c[j] for c in cells] for j in range(2)))
        draws = CellStreams(key, words).words()
        for i in range(len(cells)):
            for k in range(i):
                same = tuple(map(_meaning, cells[i])) == tuple(
                    map(_meaning, cells[k])
                )
                assert np.array_equal(words[i], words[k]) == same, cells
                assert (draws[i] == draws[k]) == same, cells


def test_numeric_columns_are_named_as_their_values_one_by_one():
    # the vectorised path for number arrays agrees with the value path
    rng = np.random.default_rng(7)
    values = [*rng.normal(size=50) * 1e3, *np.round(rng.normal(size=50))]
    values += [float("nan"), -0.0, 2.0**62, -(2.0**63), 1e300, float("inf")]
    assert np.array_equal(cell_words(np.array(values)), cell_words(values))
    ints = rng.integers(-(2**63), 2**63 - 1, size=50, dtype=np.int64)
    assert np.array_equal(cell_words(ints), cell_words(ints.tolist()))
    flags = np.array([True, False])
    assert np.array_equal(cell_words(flags), cell_words([True, False]))
    big = np.array([2**64 - 1, 3], dtype=np.uint64)
    assert np.array_equal(cell_words(big), cell_words([2**64 - 1, 3]))


def test_value_encodings_are_typed():
    assert value_bytes(4) == value_bytes(4.0) == value_bytes(np.int8(4))
    assert value_bytes(-0.0) == value_bytes(0)
    assert value_bytes(float("nan")) == value_bytes(np.float32("nan"))
    different = [
        4.0,
        "4.0",
        True,
        "True",
        1,
        2**53,
        2**53 + 1,
        None,
        "",
        (),
        ("",),
        pd.Timestamp("2020-01-01"),
        "2020-01-01 00:00:00",
        pd.Timestamp("2020-01-01", tz="UTC"),
    ]
    encoded = [value_bytes(v) for v in different]
    assert len(set(encoded)) == len(different)
