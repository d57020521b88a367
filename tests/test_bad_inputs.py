"""Bad input, refused from public facts or handled by a documented rule.

Two kinds of cases:

* **Odd values** (one record with a value of another kind, a missing
  value, an infinity): no error and no warning may appear because of one
  record. Each case builds the same figure on a column of one dtype with
  and without the odd record, and the neighbour harness must find only
  noisy numbers apart (the undeclared levels' order and which are shown
  are released values, so only panels and groups are compared there).
* **Bad declarations** (a MultiIndex, limits past what an axis can draw,
  eps or delta out of range, a missing column): a clear error naming the
  parameter and the fix, raised before anything is charged: the ledger
  holds no new row, and it still reads.
"""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pandas as pd
import pytest
from neighbours import differences, snapshot
from plotnine import (
    aes,
    geom_bar,
    geom_boxplot,
    geom_density,
    geom_histogram,
    geom_pointrange,
    ggplot,
)

import plotnine_private as pp
from plotnine_private.exceptions import PlotninePrivateError

#: records a level holds are far above the threshold of an undeclared
#: domain, so which levels show does not hang on the noise
N = 900
RNG = np.random.default_rng(33)
STAMP = pd.Timestamp("2024-03-01")


def _object(values) -> pd.Series:
    out = pd.Series(list(values) * (N // len(values)), dtype=object)
    return out.iloc[:N].reset_index(drop=True)


#: an undeclared column of one dtype, and the same with one odd record
ODD_LEVELS = {
    "Timedelta among ints": (_object([1, 2, 3]), pd.Timedelta(1, "D")),
    "aware among naive": (
        _object([STAMP, STAMP + pd.Timedelta(1, "D")]),
        pd.Timestamp("2024-03-01", tz="UTC"),
    ),
    "date among Timestamps": (_object([STAMP]), datetime.date(2024, 3, 2)),
    "tuple among strings": (_object(["a", "b"]), (1, 2)),
    "list among strings": (_object(["a", "b"]), ["x"]),
    "dict among strings": (_object(["a", "b"]), {"k": 1}),
    "set among strings": (_object(["a", "b"]), {1}),
    "bytes among strings": (_object(["a", "b"]), b"a"),
    "Decimal among floats": (_object([1.5, 2.5]), decimal.Decimal("3.5")),
    "complex among ints": (_object([1, 2]), 3j),
    "None among strings": (_object(["a", "b"]), None),
    "NaN among strings": (_object(["a", "b"]), float("nan")),
    "NaT among Timestamps": (_object([STAMP]), pd.NaT),
    "string among ints": (_object([1, 2]), "3"),
    "None among booleans": (_object([True, False]), None),
    "NaN in floats": (pd.Series(np.arange(N) % 4 + 0.5), np.nan),
    "inf in floats": (pd.Series(np.arange(N) % 4 + 0.5), np.inf),
    "-inf in floats": (pd.Series(np.arange(N) % 4 + 0.5), -np.inf),
    "NA in Int64": (pd.Series(np.arange(N) % 4, dtype="Int64"), pd.NA),
    "NA in string": (pd.Series(["a", "b"] * (N // 2), dtype="string"), None),
    "NA in boolean": (
        pd.Series([True, False] * (N // 2), dtype="boolean"),
        pd.NA,
    ),
    "NaN in a category": (
        pd.Series(pd.Categorical(["a", "b"] * (N // 2))),
        np.nan,
    ),
    "NaT in datetime64": (
        pd.Series(pd.date_range("2024-01-01", periods=N)),
        pd.NaT,
    ),
    "NaT in timedelta64": (
        pd.Series(pd.to_timedelta(np.arange(N) % 3, unit="D")),
        pd.NaT,
    ),
}


def _with_odd(clean: pd.Series, odd) -> pd.Series:
    out = clean.copy()
    out.iloc[7] = odd  # one record, the column's dtype kept
    assert out.dtype == clean.dtype
    return out


def _count(column: pd.Series, seed: int):
    d = pd.DataFrame({"x": column, "w": RNG.normal(size=len(column))})
    return ggplot(d, aes("x")) + geom_bar(stat="count_dp", eps=1, seed=seed)


@pytest.mark.parametrize("case", list(ODD_LEVELS))
def test_one_odd_level_neither_raises_nor_warns(case):
    clean, odd = ODD_LEVELS[case]
    a = snapshot(_count(clean, 5), shown_by_noise=True)
    b = snapshot(_count(_with_odd(clean, odd), 5), shown_by_noise=True)
    assert "error" not in b, b.get("error")
    assert differences(a, b) == []
    # and as a table: no error, the same columns
    t = pp.dp_table(pd.DataFrame({"x": _with_odd(clean, odd)}), "x", eps=1)
    assert list(t.columns) == ["x", "count"]


X = pd.Series(RNG.uniform(1, 9, N))
G = pd.Series(pd.Categorical(RNG.choice(["a", "b"], N), ["a", "b"]))


def _continuous(stat: str):
    """A figure of a continuous variable with public limits."""
    dp = {"eps": 1, "seed": 4}
    return {
        "bin": lambda d: (
            ggplot(d, aes("v"))
            + geom_histogram(stat="bin_dp", limits=(0, 10), bins=5, **dp)
        ),
        "density": lambda d: (
            ggplot(d, aes("v"))
            + geom_density(stat="density_dp", limits=(0, 10), **dp)
        ),
        "boxplot": lambda d: (
            ggplot(d, aes("g", "v"))
            + geom_boxplot(stat="boxplot_dp", limits=(0, 10), **dp)
        ),
        "summary": lambda d: (
            ggplot(d, aes("g", "v"))
            + geom_pointrange(stat="summary_dp", bounds=(0, 10), **dp)
        ),
    }[stat]


@pytest.mark.parametrize("odd", [np.nan, np.inf, -np.inf, 1e308])
@pytest.mark.parametrize("stat", ["bin", "density", "boxplot", "summary"])
def test_one_odd_number_changes_only_noisy_numbers(stat, odd):
    """Missing and infinite values are left out (the documented rule of
    each stat); a value past the limits is clamped or left out, never an
    error."""
    make = _continuous(stat)
    a = snapshot(make(pd.DataFrame({"v": X, "g": G})))
    b = snapshot(make(pd.DataFrame({"v": _with_odd(X, odd), "g": G})))
    assert "error" not in a and "error" not in b, (a.get("error"), b)
    assert differences(a, b) == []


# -- refused before any charge ------------------------------------------------
DF = pd.DataFrame({"x": X, "g": G, "y": X * 2 + 1})
FLAT = DF.copy()
FLAT.columns = pd.MultiIndex.from_tuples([("a", "x"), ("a", "g"), ("b", "y")])

REFUSED = {
    "MultiIndex columns, plot": (
        lambda: (
            ggplot(FLAT, aes(("a", "g")))
            + geom_bar(stat="count_dp", eps=1, seed=1)
        ),
        "MultiIndex",
    ),
    "MultiIndex columns, table": (
        lambda: pp.dp_table(FLAT, ("a", "g"), eps=1, seed=1),
        "MultiIndex",
    ),
    "MultiIndex columns, PCA": (
        lambda: pp.dp_pca(
            FLAT[[("a", "x"), ("b", "y")]], eps=1, delta=1e-5, seed=1
        ),
        "MultiIndex",
    ),
    "MultiIndex columns, source": (
        lambda: pp.source(FLAT, unit=("a", "g"), max_records=2),
        "MultiIndex",
    ),
    "summary bounds past 1e150": (
        lambda: (
            ggplot(DF, aes("g", "y"))
            + geom_pointrange(stat="summary_dp", bounds=(0, 1e300), eps=1)
        ),
        "bounds must lie within",
    ),
    "density limits past 1e150": (
        lambda: (
            ggplot(DF, aes("x"))
            + geom_density(stat="density_dp", limits=(0, 1e300), eps=1)
        ),
        "limits must lie within",
    ),
    "bin limits past 1e150": (
        lambda: (
            ggplot(DF, aes("x"))
            + geom_histogram(stat="bin_dp", limits=(-1e300, 1e300), eps=1)
        ),
        "limits must lie within",
    ),
    "breaks past 1e150": (
        lambda: (
            ggplot(DF, aes("x"))
            + geom_histogram(stat="bin_dp", breaks=[0, 1, 1e300], eps=1)
        ),
        "breaks must lie within",
    ),
    "breaks with inf": (
        lambda: (
            ggplot(DF, aes("x"))
            + geom_histogram(stat="bin_dp", breaks=[0, 1, np.inf], eps=1)
        ),
        "breaks must be finite",
    ),
    "reversed limits": (
        lambda: (
            ggplot(DF, aes("x"))
            + geom_density(stat="density_dp", limits=(10, 0), eps=1)
        ),
        "low < high",
    ),
    "eps 0": (lambda: pp.dp_table(DF, "g", eps=0, seed=1), "eps"),
    "eps NaN": (lambda: pp.dp_table(DF, "g", eps=np.nan, seed=1), "eps"),
    "eps below 2**-20": (lambda: pp.dp_table(DF, "g", eps=1e-300), "eps"),
    "delta 1.5": (
        lambda: pp.dp_pca(DF[["x", "y"]], eps=1, delta=1.5, seed=1),
        "delta",
    ),
    "missing column, table": (
        lambda: pp.dp_table(DF, "nope", eps=1, seed=1),
        "'nope' is not",
    ),
    "missing unit column": (
        lambda: pp.source(DF, unit="person", max_records=2),
        "unit='person' is not a column",
    ),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_before_any_charge_with_the_fix(case, tmp_path, ledger_key):
    make, match = REFUSED[case]
    path = tmp_path / "ledger.sqlite"
    pp.use_ledger(path, dataset="bad inputs", cap_eps=100, cap_delta=0.5)
    try:
        pp.dp_table(DF, "g", eps=1, seed=99)  # one release before
        with pytest.raises(PlotninePrivateError, match=match):
            out = make()
            if hasattr(out, "draw"):
                out.draw()
        book = pp.ledger(path)
        assert len(book.table) == 1  # nothing charged for the refusal
    finally:
        pp.use_ledger(None)
