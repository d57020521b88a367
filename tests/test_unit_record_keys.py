"""Per-unit CKM record keys: ``add_record_keys(data, unit=...)`` gives every
record of a privacy unit the unit's key, the same in pandas, polars and an
engine; ``rng_seed=`` names the secret random seed (``seed=`` deprecated)."""

from __future__ import annotations

import warnings

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pytest

import plotnine_private as pp
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.ptable.ckm import RecordKeyWarning
from plotnine_private.units import UnitFrame

RNG = np.random.default_rng(20261201)
#: 300 people with 1 to 6 records each, in shuffled order
PEOPLE = pd.DataFrame(
    {
        "pid": RNG.permutation(
            np.repeat(np.arange(300), RNG.integers(1, 7, 300))
        )
    }
)
PEOPLE["x"] = RNG.normal(size=len(PEOPLE))


def _one_key_per_unit(frame: pd.DataFrame, unit: str = "pid") -> None:
    per_unit = frame.groupby(unit)["rkey"].nunique()
    assert (per_unit == 1).all()
    keys = frame.groupby(unit)["rkey"].first()
    # distinct units get distinct keys (8 digits: a clash among 300 keys
    # has probability about 4e-4, and the seed is fixed)
    assert keys.nunique() == len(keys)


def test_records_of_one_unit_share_its_key():
    keyed = pp.add_record_keys(PEOPLE, rng_seed=7, unit="pid")
    _one_key_per_unit(keyed)
    k = keyed["rkey"].to_numpy()
    assert ((k >= 0) & (k < 1)).all()
    # the unit's key does not depend on which rows the data hold
    part = pp.add_record_keys(PEOPLE.iloc[::3], rng_seed=7, unit="pid")
    np.testing.assert_array_equal(part["rkey"], keyed["rkey"].iloc[::3])
    # another secret, other keys
    other = pp.add_record_keys(PEOPLE, rng_seed=8, unit="pid")["rkey"]
    assert np.mean(other.to_numpy() == k) < 0.01


def test_unit_keys_equal_in_pandas_polars_and_duckdb():
    ref = pp.add_record_keys(PEOPLE, rng_seed=11, unit="pid")
    ref = ref.sort_values(["pid", "x"])["rkey"].to_numpy()
    pf = pp.add_record_keys(pl.from_pandas(PEOPLE), rng_seed=11, unit="pid")
    got = pf.sort(["pid", "x"])["rkey"].to_numpy()
    np.testing.assert_array_equal(got, ref)
    con = duckdb.connect()
    con.register("people", PEOPLE)
    src = pp.add_record_keys(pp.source(con, "people"), rng_seed=11, unit="pid")
    engine = src.frame.sort(["pid", "x"]).collect()["rkey"].to_numpy()
    np.testing.assert_array_equal(engine, ref)
    # integer keys for ONS p-tables too
    ints = pp.add_record_keys(
        PEOPLE, rng_seed=11, unit="pid", integer_range=256
    )
    _one_key_per_unit(ints.assign(rkey=ints["rkey"] * 1000 + ints["pid"]))


def test_negative_and_missing_units_are_keyed_alike_everywhere():
    """A negative unit id is keyed by its value and records without a unit
    share one key, in pandas, polars and DuckDB; a unit's key is the one
    it has among other people's ids of any kind."""
    d = PEOPLE.assign(pid=(PEOPLE["pid"] - 150).astype("Int64"))
    d.loc[[3, 8], "pid"] = pd.NA
    ref = pp.add_record_keys(d, rng_seed=11, unit="pid")["rkey"]
    assert ref[3] == ref[8]
    assert ref[~d["pid"].isna()].nunique() == d["pid"].nunique()
    alone = pp.add_record_keys(d.iloc[[0]], rng_seed=11, unit="pid")
    assert alone["rkey"].iloc[0] == ref.iloc[0]
    pf = pp.add_record_keys(pl.from_pandas(d), rng_seed=11, unit="pid")
    np.testing.assert_array_equal(pf["rkey"].to_numpy(), ref.to_numpy())
    con = duckdb.connect()
    con.register("people", d.assign(i=np.arange(len(d))))
    src = pp.add_record_keys(pp.source(con, "people"), rng_seed=11, unit="pid")
    engine = src.frame.sort("i").collect()["rkey"].to_numpy()
    np.testing.assert_array_equal(engine, ref.to_numpy())


def test_text_units_are_keyed_alike_in_pandas_and_polars():
    names = PEOPLE.assign(pid="person-" + PEOPLE["pid"].astype(str))
    a = pp.add_record_keys(names, rng_seed=3, unit="pid")
    b = pp.add_record_keys(pl.from_pandas(names), rng_seed=3, unit="pid")
    np.testing.assert_array_equal(a["rkey"].to_numpy(), b["rkey"].to_numpy())
    _one_key_per_unit(a)


def test_unit_keys_without_a_seed_are_drawn_once_per_unit():
    with pytest.warns(RecordKeyWarning, match="save the returned data"):
        keyed = pp.add_record_keys(PEOPLE, unit="pid")
    _one_key_per_unit(keyed)
    k = keyed.groupby("pid")["rkey"].first().to_numpy()
    # uniform in [0, 1): 10 bins of 30 expected units, chi2(9) at 99.9%
    counts = np.histogram(k, bins=10, range=(0, 1))[0]
    assert ((counts - 30) ** 2 / 30).sum() < 27.9


def test_a_declared_unit_keys_its_records_together():
    src = pp.source(PEOPLE, unit="pid", max_records=3)
    keyed = pp.add_record_keys(src, rng_seed=5)
    assert isinstance(keyed, UnitFrame) and keyed.unit == src.unit
    _one_key_per_unit(keyed.data)
    explicit = pp.add_record_keys(PEOPLE, rng_seed=5, unit="pid")
    pd.testing.assert_frame_equal(keyed.data, explicit)
    # row_id= keys each record even on a declared unit
    ids = pp.source(
        PEOPLE.assign(id=range(len(PEOPLE))), unit="pid", max_records=3
    )
    own = pp.add_record_keys(ids, rng_seed=5, row_id="id").data["rkey"]
    assert own.nunique() == len(PEOPLE)
    # a frame declared with one row as unit keys each row
    rows = pp.add_record_keys(pp.source(PEOPLE), rng_seed=5)
    assert rows.data["rkey"].nunique() == len(PEOPLE)


def test_unit_key_errors_name_the_fix():
    with pytest.raises(ParameterError, match="not both"):
        pp.add_record_keys(
            PEOPLE.assign(id=range(len(PEOPLE))),
            rng_seed=1,
            unit="pid",
            row_id="id",
        )
    with pytest.raises(ParameterError, match="unit 'person' is not a col"):
        pp.add_record_keys(PEOPLE, rng_seed=1, unit="person")
    con = duckdb.connect()
    con.register("people", PEOPLE.assign(pid=PEOPLE["pid"].astype(str)))
    with pytest.raises(ParameterError, match="whole numbers .it is.*number"):
        pp.add_record_keys(pp.source(con, "people"), rng_seed=1, unit="pid")
    with pytest.raises(ParameterError, match="unit= needs rng_seed="):
        pp.add_record_keys(pp.source(con, "people"), unit="pid")


def test_seed_is_a_deprecated_alias_of_rng_seed():
    with pytest.warns(DeprecationWarning, match="rng_seed"):
        old = pp.add_record_keys(PEOPLE, seed=4, unit="pid")
    new = pp.add_record_keys(PEOPLE, rng_seed=4, unit="pid")
    pd.testing.assert_frame_equal(old, new)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pp.add_record_keys(PEOPLE, rng_seed=4)
    with pytest.raises(ParameterError, match="rng_seed= only"):
        pp.add_record_keys(PEOPLE, rng_seed=4, seed=4)
