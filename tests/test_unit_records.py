"""Which records a unit keeps depends on that unit's records only.

Without ``record_id`` a record is named by a hash of its content: a row's
position would shift when another unit's rows are removed, and the unit
would keep other records (the bounded data sets of two neighbours would
then differ in more than one unit's records).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl

from plotnine_private.door import bound_rows
from plotnine_private.identifiers import content_ids
from plotnine_private.units import Unit, UnitFrame

UNIT = Unit("pid", max_records=2)


def _people(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 600
    return pd.DataFrame(
        {
            "pid": rng.integers(0, 60, n),
            "x": rng.normal(size=n).round(3),
            "g": pd.Categorical(rng.choice(list("abc"), n)),
        }
    )


def _kept(frame: pd.DataFrame) -> set[tuple]:
    keep = bound_rows("t", frame, UNIT)
    return set(map(tuple, frame[keep].itertuples(index=False)))


def test_removing_another_unit_keeps_the_same_records():
    frame = _people()
    kept = _kept(frame)
    # remove unit 0 (its rows are spread through the frame, so every later
    # row's position shifts); every other unit keeps exactly what it kept
    smaller = frame[frame["pid"] != 0].reset_index(drop=True)
    kept_smaller = _kept(smaller)
    assert kept_smaller == {r for r in kept if r[0] != 0}
    # reordering the rows changes nothing either
    shuffled = frame.sample(frac=1, random_state=1).reset_index(drop=True)
    assert _kept(shuffled) == kept


def test_position_ids_would_not_be_stable():
    # the control: naming records by position changes other units' choice
    from plotnine_private.mechanisms.release.bounding import bounded_mask

    frame = _people()
    smaller = frame[frame["pid"] != 0].reset_index(drop=True)

    def by_position(f):
        m = bounded_mask(f["pid"].to_numpy(), np.arange(len(f)), 2)
        return set(map(tuple, f[m].itertuples(index=False)))

    assert by_position(smaller) != {r for r in by_position(frame) if r[0]}


def test_content_ids_hash_categories_by_value():
    a = pd.DataFrame({"g": pd.Categorical(["b"], categories=["a", "b"])})
    b = pd.DataFrame({"g": pd.Categorical(["b"], categories=["b", "z"])})
    assert content_ids(a)[0] == content_ids(b)[0]
    assert content_ids(a)[0] >= 0


def test_polars_unit_frame_enums_are_unordered():
    frame = pl.DataFrame(
        {"pid": [1, 2], "g": pl.Series(["a", "b"], dtype=pl.Enum(["a", "b"]))}
    )
    out = UnitFrame(frame, UNIT).to_pandas()
    assert isinstance(out["g"].dtype, pd.CategoricalDtype)
    assert not out["g"].cat.ordered
