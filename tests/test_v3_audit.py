"""Stream version 3 audited: a domain's digest follows its cells' names
(equal names, equal digest; other names, another digest), whatever
form the levels come in; what names cells by place is a whole domain
of public dimensions only."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from plotnine_private import dp_table
from plotnine_private.cells import categorical_dimension, cell_table
from plotnine_private.mechanisms import release as engine
from plotnine_private.mechanisms.cellnames import StrLabels, cell_words
from plotnine_private.mechanisms.place_streams import column_digest


def _words(column) -> bytes:
    values = column if isinstance(column, np.ndarray) else list(column)
    if not isinstance(values, np.ndarray):
        values = np.array(values + [None], dtype=object)[:-1]
    return cell_words(values).tobytes()


LABELS = [f"L{i}" for i in range(5)] + ["é", "", "a\0b"]
#: columns of the same values in the forms levels arrive in (a numpy
#: array's items are np.str_, a subclass of str)
SAME_STRINGS = {
    "list": LABELS,
    "buffer": StrLabels.of(LABELS),
    "unicode array": np.array(LABELS),
    "np.str_ objects": np.array([np.str_(v) for v in LABELS] + [None])[:-1],
    "np.str_ list": [np.str_(v) for v in LABELS],
    "object array": np.array(LABELS + [None], dtype=object)[:-1],
}


@pytest.mark.parametrize("form", sorted(SAME_STRINGS))
def test_every_form_of_the_same_strings_has_one_digest(form):
    column = SAME_STRINGS[form]
    assert _words(column) == _words(LABELS)  # the same cells' names
    assert column_digest(column) == column_digest(LABELS)


#: columns whose values name other cells than each other's
DISTINCT = {
    "ints": np.array([1, 0]),
    "bools": np.array([True, False]),
    "strings": ["1", "0"],
    "words": ["True", "False"],
    "floats": [1.5, 0.0],
    "none": [None, None],
    "nan": [np.nan, np.nan],
    "nat": [pd.NaT, pd.NaT],
    "dates": [dt.date(2020, 1, 1), dt.date(2020, 1, 2)],
    "times": np.array(["2020-01-01", "2020-01-02"], dtype="datetime64[ns]"),
    "tuples": [("1",), ("0",)],
    "bytes": [b"1", b"0"],
    "mixed": ["1", 0],
    "mixed swapped": [1, "0"],
    "nul": ["1\0", "0"],
    "one": ["10"],
    "none at all": [],
}


def test_columns_of_other_cells_have_other_digests():
    words = {k: _words(v) for k, v in DISTINCT.items()}
    assert len(set(words.values())) == len(words)  # distinct names...
    digests = {k: column_digest(v) for k, v in DISTINCT.items()}
    assert len(set(digests.values())) == len(digests)  # ...and digests


def test_levels_given_as_a_numpy_array_draw_what_a_list_draws():
    # a numpy array of labels (np.str_ items) names the same cells as
    # the list: one release, the same noise (it was drawn afresh, with
    # the same identity, when the domain digest read np.str_ as objects)
    rng = np.random.default_rng(1)
    cats = [f"L{i}" for i in range(100)]
    x = np.array(cats, dtype=object)[rng.integers(0, 100, 500)]
    frame = pd.DataFrame({"x": x})
    out = []
    for levels in (cats, np.array(cats)):
        engine._SOURCES.clear()
        seen: list = []
        previous = engine.set_charge_hook(seen.extend)
        try:
            table = dp_table(frame, "x", eps=1, seed=3, levels=levels)
        finally:
            engine.set_charge_hook(previous)
        out.append((table["count"].tolist(), seen[0]))
    (a, charge_a), (b, charge_b) = out
    assert charge_a.identity == charge_b.identity
    assert charge_a.digest == charge_b.digest
    assert a == b


def test_only_a_domain_of_public_dimensions_is_named_by_place():
    # the fine bins of the groups a release showed are flagged public
    # (each gets noise) over observed group levels: named by words
    seen = categorical_dimension("g", pd.Series(["b", "a", "b"]), None)
    bins = categorical_dimension("x", pd.Series(["p", "q"]), ["p", "q"])
    cells = np.arange(4)
    n = np.ones(4, dtype=np.int64)
    observed, _ = cell_table([seen, bins], cells, n, None, None, True)
    assert observed.places is None and not observed.by_place()
    assert "words" in vars(observed)
    group = categorical_dimension("g", pd.Series(["b"]), ["a", "b"])
    declared, _ = cell_table([group, bins], cells, n, None, None, True)
    assert declared.by_place()
    assert declared.words.tolist() == observed.words.tolist()
