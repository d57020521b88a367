"""A unit's fate is its own: which records a privacy unit keeps depends on
that unit's records and the public declaration only, never on the values
other people have in the same columns.

Each neighbour below adds one person whose values once renamed everybody
(an id of -1 or 2.5 made every unit id a text hash; a NaN in an integer
column the plot does not use turned it into floats and changed every
record's content hash; a record id of -1 renamed every record): every
other person must keep exactly the records they kept before. The audit at
the end measures it at the claimed eps, with the old renaming as the
negative control.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from alpha import ALPHA
from neighbours import differences, snapshot
from plotnine import aes, geom_bar, ggplot
from scipy import stats

import plotnine_private as pp
from plotnine_private.door import bound_rows
from plotnine_private.identifiers import content_ids, id_codes, value_words
from plotnine_private.units import Unit

K = 2
CELLS = ["a", "b", "c", "z"]
#: far more than any noise: released counts are the bounded true counts
HUGE = 1e9


def _people(kind: str, seed: int = 11) -> pd.DataFrame:
    """120 people with 1 to 7 records in cells a-c (ids of ``kind``) and
    an integer column no plot uses."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 8, 120)
    ids = np.repeat(np.arange(120) * 7 + 3, sizes)
    n = len(ids)
    pid: object
    if kind == "int":
        pid = ids
    elif kind == "negative":
        pid = ids - 400  # negative and positive ids side by side
    elif kind == "float":
        pid = ids + np.where(ids % 2 == 0, 0.5, 0.0)  # whole and not
    elif kind == "text":
        pid = np.array([f"p{i}" for i in ids], dtype=object)
    elif kind == "mixed":
        pid = pd.Series(
            [f"p{i}" if i % 3 else i for i in ids], dtype=object
        ).to_numpy()
    elif kind == "nullable":
        pid = pd.array(ids, dtype="Int64")
    else:
        raise ValueError(kind)
    return pd.DataFrame(
        {
            "pid": pid,
            "rid": rng.permutation(n) * 5 + 2,
            "c": pd.Categorical(rng.choice(CELLS[:3], n), CELLS),
            "visits": rng.integers(0, 9, n),
            "x": rng.normal(0, 1, n),
        }
    )


def _added(d: pd.DataFrame, trigger: str) -> pd.DataFrame:
    """``d`` and one more person, with 6 records in cell z only."""
    new = pd.DataFrame(
        {
            "pid": [-1] * 6,
            "rid": np.arange(6) + 10**6,
            "c": pd.Categorical(["z"] * 6, CELLS),
            "visits": np.arange(6),
            "x": np.zeros(6),
        }
    )
    if trigger == "id 2.5":
        new["pid"] = 2.5
    elif trigger == "text id":
        new["pid"] = "somebody"
    elif trigger == "missing id":
        new["pid"] = None
    elif trigger == "NaN in an unused column":
        new["pid"] = 10**6
        new["visits"] = np.nan
    elif trigger == "record id -1":
        new["pid"] = 10**6
        new["rid"] = -1 - np.arange(6)
    return pd.concat([d, new], ignore_index=True)


TRIGGERS = [
    "id -1",
    "id 2.5",
    "text id",
    "missing id",
    "NaN in an unused column",
    "record id -1",
]
KINDS = ["int", "negative", "float", "text", "mixed", "nullable"]


def _unit(record_id: bool) -> Unit:
    return Unit("pid", K, record_id="rid" if record_id else None)


#: (trigger, whether records are named by record_id): a record id
#: trigger needs record_id=, every other is tried both ways
NAMINGS = [
    (t, rid)
    for t in TRIGGERS
    for rid in (False, True)
    if rid or t != "record id -1"
]


@pytest.mark.parametrize(
    ("trigger", "record_id"),
    NAMINGS,
    ids=[f"{t}-{'rid' if r else 'content'}" for t, r in NAMINGS],
)
@pytest.mark.parametrize("kind", KINDS)
def test_nobody_else_keeps_other_records(kind, trigger, record_id):
    """The exact property: every record of the first data set is kept in
    the second exactly when it was kept in the first."""
    d = _people(kind)
    d2 = _added(d, trigger)
    unit = _unit(record_id)
    cols = ["pid", "rid", "c", "visits", "x"]
    before = bound_rows("test", d[cols], unit)
    after = bound_rows("test", d2[cols], unit)
    assert before.sum() < len(d)  # the bound bites
    assert (after[: len(d)] == before).all()
    # the added person keeps at most K records, none when unnamed
    assert after[len(d) :].sum() == (0 if trigger == "missing id" else K)


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_released_counts_of_others_do_not_move(trigger):
    """Through the public API: a table and a plot of the bounded data, at
    an eps so large the noise is zero; the cells the added person does
    not reach are the same numbers (they moved by -41 to +14 before)."""
    d = _people("int")
    d2 = _added(d, trigger)
    rid = {"record_id": "rid"} if trigger == "record id -1" else {}

    def counts(frame):
        src = pp.source(frame, unit="pid", max_records=K, **rid)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = pp.dp_table(src, "c", eps=HUGE, seed=4)
            plot = ggplot(src, aes("c")) + geom_bar(
                stat="count_dp", eps=HUGE, seed=4
            )
            layer = pp.layer_data(plot, 0)
        return (
            table.set_index("c")["count"],
            layer.set_index("x")["count"].to_numpy(),
        )

    (t1, p1), (t2, p2) = counts(d), counts(d2)
    assert t1[["a", "b", "c"]].tolist() == t2[["a", "b", "c"]].tolist()
    assert (p1[:3] == p2[:3]).all()
    assert t2["z"] - t1["z"] == (0 if trigger == "missing id" else K)


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_only_noisy_numbers_differ(trigger):
    """The neighbour harness on a whole person added with a trigger:
    axes, legends, panels, warnings, the report and the bundle are
    equal, and no value raises."""
    rid = {"record_id": "rid"} if trigger == "record id -1" else {}

    def plot(frame):
        src = pp.source(frame, unit="pid", max_records=K, **rid)
        return ggplot(src, aes("c")) + geom_bar(stat="count_dp", eps=1, seed=9)

    d = _people("text")
    a = snapshot(plot(d))
    b = snapshot(plot(_added(d, trigger)))
    assert "error" not in a and "error" not in b, (a.get("error"), b)
    assert differences(a, b) == []


def test_a_value_has_one_name_whatever_its_column_holds():
    """The rule itself: numbers by value whatever their storage, whole
    ones as themselves (negative too), missing ones flagged."""
    ints, none = id_codes(pd.Series([3, -1, 7]))
    floats, nan = id_codes(pd.Series([3.0, -1.0, np.nan]))
    mixed, gone = id_codes(pd.Series([3, "-1", None], dtype=object))
    nullable, na = id_codes(pd.array([3, -1, None], dtype="Int64"))
    assert none is None and ints.tolist() == [3, -1, 7]
    assert floats[:2].tolist() == [3, -1] and nan.tolist() == [0, 0, 1]
    assert mixed[0] == 3 and mixed[1] != -1 and gone.tolist() == [0, 0, 1]
    assert nullable[:2].tolist() == [3, -1] and na.tolist() == [0, 0, 1]
    # 2.5 is not 2 or 3, and a text is not the number it spells
    half = id_codes(pd.Series([2.5, 2.0]))[0]
    assert half[1] == 2 and half[0] not in (2, 3)
    # the content words: 3 and 3.0, a date in a column of dates or of
    # objects, one word each
    stamp = pd.Timestamp("2024-05-01")
    words = [
        value_words(pd.Series([3, 1]))[0],
        value_words(pd.Series([3.0, np.nan]))[0],
        value_words(pd.Series([3, "x"], dtype=object))[0],
    ]
    assert len(set(words)) == 1
    dates = value_words(pd.Series([stamp, pd.NaT]))
    objects = value_words(pd.Series([stamp, "x"], dtype=object))
    assert dates[0] == objects[0]
    assert dates[1] == value_words(pd.Series([None, 1.5]))[0]
    frame = pd.DataFrame({"n": [1, 2], "s": ["a", "b"]})
    wider = pd.DataFrame({"n": [1.0, 2.0], "s": ["a", "b"]})
    assert (content_ids(frame) == content_ids(wider)).all()


# -- the audit ----------------------------------------------------------
EPS = 1.0
TRIALS = 3000
#: people in each trial, each with one record in its cell A and one in B
PEOPLE = 100
#: trials whose truth the renaming moved at least this far (the attacker
#: knows which: the naming is public)
FAR = 6


LEVELS = [f"{t}{s}" for t in range(TRIALS) for s in "AB"] + ["Z"]


def _trials() -> pd.DataFrame:
    """``TRIALS`` independent pairs of cells (A_i, B_i); each person of a
    trial has a record in both and keeps one (k = 1)."""
    n = TRIALS * PEOPLE
    pid = np.repeat(np.arange(n) + 1, 2)
    trial = pid // PEOPLE % TRIALS
    side = np.tile([0, 1], n)
    # cell "{trial}A" is code 2 * trial, "{trial}B" the next: the levels
    # of _released_a, and "Z" last
    cell = pd.Categorical.from_codes(2 * trial + side, categories=LEVELS)
    return pd.DataFrame({"pid": pid, "cell": cell})


def _released_a(frame: pd.DataFrame, seed: int) -> np.ndarray:
    levels = LEVELS
    src = pp.source(frame, unit="pid", max_records=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pp.dp_table(
            src,
            "cell",
            eps=EPS,
            seed=seed,
            levels=levels,
            adjacency="add_remove",
        )
    counts = out.set_index("cell")["count"]
    return counts[[f"{t}A" for t in range(TRIALS)]].to_numpy()


def _kept_a(frame: pd.DataFrame) -> np.ndarray:
    keep = bound_rows("audit", frame, Unit("pid", 1))
    code = pd.Categorical(frame["cell"], categories=LEVELS).codes[keep]
    a = code[(code % 2 == 0) & (code < 2 * TRIALS)]  # the cells "{t}A"
    return np.bincount(a // 2, minlength=TRIALS)


def _eps_lower_bound(
    d: np.ndarray, d2: np.ndarray, shift: np.ndarray
) -> float:
    """Clopper-Pearson lower confidence bound on eps from the event that
    a trial's released A (less its truth in D) moved at least as far as
    the renaming moved its truth, in that direction (trials it left
    alone are skipped)."""
    hit = np.abs(shift) >= FAR

    def rate(v: np.ndarray) -> tuple[int, int]:
        moved = v[hit] * np.sign(shift[hit]) >= np.abs(shift[hit])
        return int(moved.sum()), int(hit.sum())

    k2, n = rate(d2)
    k1, _ = rate(d)
    lo = stats.beta.ppf(ALPHA / 2, k2, n - k2 + 1) if k2 else 0.0
    hi = stats.beta.ppf(1 - ALPHA / 2, k1 + 1, n - k1) if k1 < n else 1.0
    return math.log(lo / hi) if lo > 0 else 0.0


def test_audit_with_a_negative_id_holds_the_claimed_eps():
    """Add/remove, k = 1, eps 1: D' adds one person with id -1 and one
    record in cell Z. The attacker's event per trial is that the released
    A moves the way the old naming moved the truth (every id hashed as
    text once one id was negative). With ids named by value the bound
    stays at or below the claim; under the old renaming (the negative
    control: the same D' with every other id renamed, which is what the
    old code did) it is several times the claim."""
    d = _trials()
    newcomer = pd.DataFrame(
        {"pid": [-1], "cell": pd.Categorical(["Z"], categories=LEVELS)}
    )
    d2 = pd.concat([d, newcomer], ignore_index=True)
    renamed = d2.assign(pid="id " + d2["pid"].astype(str))
    truth = _kept_a(d)
    moved = _kept_a(renamed) - truth
    assert (abs(moved) >= FAR).sum() > TRIALS // 4  # the renaming had power
    centred = _released_a(d, 1) - truth
    now = _eps_lower_bound(centred, _released_a(d2, 2) - truth, moved)
    old = _eps_lower_bound(centred, _released_a(renamed, 2) - truth, moved)
    assert now <= EPS
    assert old > 3 * EPS
