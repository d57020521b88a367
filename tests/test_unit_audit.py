"""Empirical privacy audit at the level of a person (the privacy unit).

Neighbouring data sets D and D' differ in one whole person who has
``ROWS = 50`` records (add/remove adjacency: the person is absent from D,
present in D'). Each of ``DRAWS`` cells is an independent trial: in D it
holds ``C`` records of other people (one each); in D' one more person
with 50 records in it (a different person per cell, so the cells'
releases are independent draws of one person's effect, as in
``test_privacy_audit.py``).

With ``pp.source(data, unit="person", max_records=K)`` the person keeps
``K`` records and the noise scale is ``K / eps``: for the event S =
{released >= C + K}, P_D'(S) / P_D(S) = e^eps exactly (discrete Laplace),
so a Clopper-Pearson lower confidence bound on eps (at ``ALPHA``, as the
other audits) must stay at or below the claimed eps, and be informative
(above half of it). Without a unit (each row its own unit, the package's
default) the same test on the same people shows the loss: the person
moves the count by 50 while the noise is calibrated for one row, and the
lower bound exceeds the claimed eps several times over (the negative
control: the test has power).

Count (``dp_table``: the release engine and the table's bounding), bin
(a histogram plot: the door's bounding and the stat's mechanism), sum
(clamped totals, :class:`LaplaceSums` with ``records=K``, through the
release engine directly) and a synopsis (two marginals at eps / 2 each,
audited on its consistent counts: lower bound 0.75 with the unit, 3.7
without).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from alpha import ALPHA
from plotnine import aes, geom_histogram, ggplot
from scipy import stats

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.mechanisms.naming.cellnames import cell_words
from plotnine_private.mechanisms.release.bounding import bounded_mask
from plotnine_private.mechanisms.release.engine import Query, release_cells
from plotnine_private.mechanisms.release.magnitudes import (
    LaplaceSums,
    SumTable,
)

EPS = 1.0
K = 5  # records one person keeps
ROWS = 50  # records the changed person has
C = 3  # records of other people in each cell
DRAWS = 8000


def _cp_lower(k: int, n: int) -> float:
    return stats.beta.ppf(ALPHA / 2, k, n - k + 1) if k > 0 else 0.0


def _cp_upper(k: int, n: int) -> float:
    return stats.beta.ppf(1 - ALPHA / 2, k + 1, n - k) if k < n else 1.0


def eps_lower_bound(released_d, released_d2, threshold) -> float:
    """Lower confidence bound on eps from the event {released >=
    threshold}, seen in D (without the person) and D' (with)."""
    n = len(released_d)
    hit_d = int((np.asarray(released_d) >= threshold).sum())
    hit_d2 = int((np.asarray(released_d2) >= threshold).sum())
    return math.log(_cp_lower(hit_d2, n) / _cp_upper(hit_d, n))


def assert_audit(releases, threshold) -> None:
    """With the unit declared the lower bound is informative and at most
    the claimed eps; without it (one row as the unit) the same person
    shows the loss: more than 3 times the claim.

    ``releases(with_person, bounded, seed)`` gives the released values
    of the ``DRAWS`` cells; D and D' use seeds 1 and 2."""
    lb = eps_lower_bound(
        releases(False, True, 1), releases(True, True, 2), threshold
    )
    assert 0.5 * EPS < lb <= EPS
    control = eps_lower_bound(
        releases(False, False, 1), releases(True, False, 2), threshold
    )
    assert control > 3 * EPS


def people(with_person: bool, draws: int = DRAWS) -> pd.DataFrame:
    """Each cell ``i`` (0 .. draws-1): ``C`` people with one record, and
    (in D') one person with ``ROWS`` records. Persons are numbered so that
    a cell's people are its own."""
    cell = np.repeat(np.arange(draws), C)
    person = np.arange(draws * C)
    if with_person:
        cell = np.r_[cell, np.repeat(np.arange(draws), ROWS)]
        person = np.r_[person, np.repeat(draws * C + np.arange(draws), ROWS)]
    return pd.DataFrame({"person": person, "cell": cell})


def _source(frame: pd.DataFrame, bounded: bool):
    if bounded:
        return pp.source(frame, unit="person", max_records=K)
    return frame


# -- count -------------------------------------------------------------------
def count_releases(with_person: bool, bounded: bool, seed: int):
    frame = people(with_person)
    levels = [f"c{i}" for i in range(DRAWS)]
    frame["x"] = pd.Categorical.from_codes(frame["cell"], categories=levels)
    t = pp.dp_table(
        _source(frame, bounded),
        "x",
        eps=EPS,
        seed=seed,
        adjacency="add_remove",
    )
    return t["count"].to_numpy()


def test_count_audit_holds_with_a_unit_and_shows_the_loss_without():
    assert_audit(count_releases, C + K)


# -- bin ---------------------------------------------------------------------
BIN_DRAWS = 4000


def bin_releases(with_person: bool, bounded: bool, seed: int):
    frame = people(with_person, BIN_DRAWS)
    frame["value"] = frame["cell"] + 0.5  # the centre of bin `cell`
    plot = ggplot(_source(frame, bounded), aes("value")) + geom_histogram(
        stat="bin_dp",
        position="identity",  # stacking 4000 bins one by one is slow
        breaks=np.arange(BIN_DRAWS + 1, dtype=float),
        eps=EPS,
        seed=seed,
        adjacency="add_remove",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = build(plot).layers[0].data
    return data["count"].to_numpy()


def test_bin_audit_holds_with_a_unit_and_shows_the_loss_without():
    assert_audit(bin_releases, C + K)


# -- sum ---------------------------------------------------------------------
BOUND = 4  # the largest grid value one record contributes


def sum_releases(with_person: bool, bounded: bool, seed: int):
    """Clamped totals per cell: other people contribute 1 each, the
    changed person ``BOUND`` per kept record (the largest allowed)."""
    frame = people(with_person)
    value = np.where(frame["person"] >= DRAWS * C, BOUND, 1)
    keep = np.ones(len(frame), dtype=bool)
    if bounded:
        keep = bounded_mask(
            frame["person"].to_numpy(), np.arange(len(frame)), K
        )
    cells = frame["cell"].to_numpy()[keep]
    total = np.bincount(cells, weights=value[keep], minlength=DRAWS)
    table = SumTable(
        words=cell_words(np.arange(DRAWS, dtype=np.int64)),
        n=np.bincount(cells, minlength=DRAWS).astype(np.int64),
        total=total.astype(np.int64),
    )
    mech = LaplaceSums(
        EPS, BOUND, 1.0, "add_remove", records=K if bounded else 1
    )
    query = Query.make("sum", "data", seed, audit="unit", **mech.parameters())
    return release_cells(query, table, mech, domain="public").values


def test_sum_audit_holds_with_a_unit_and_shows_the_loss_without():
    # other people's total is C; the person adds K * BOUND after bounding
    assert_audit(sum_releases, C + K * BOUND)


# -- synopsis ----------------------------------------------------------------
SYN_DRAWS = 4000


def synopsis_releases(with_person: bool, bounded: bool, seed: int):
    """A synopsis of two marginals (each cell, and each cell by a flag
    that every record has as "a"): the person's kept records enter both,
    each at eps / 2. The audited value is the consistent count of each
    cell, post-processing of both tables."""
    frame = people(with_person, SYN_DRAWS)
    levels = [f"c{i}" for i in range(SYN_DRAWS)]
    frame["x"] = pd.Categorical.from_codes(frame["cell"], categories=levels)
    frame["flag"] = "a"
    kw = {"unit": "person", "max_records": K} if bounded else {}
    syn = pp.synopsis(
        frame,
        {"x": levels, "flag": ["a", "b"]},
        eps=EPS,
        seed=seed,
        workload=[("x",), ("x", "flag")],
        adjacency="add_remove",
        **kw,
    )
    return syn.counts("x")


def test_synopsis_audit_holds_with_a_unit_and_shows_the_loss_without():
    assert_audit(synopsis_releases, C + K)
