"""Person-level empirical privacy audit of summaries and fine-histogram
curves (density, ECDF).

Neighbouring data sets D and D' differ by one whole person with 50 rows
(add/remove adjacency). Each layer is built on both through the real door
(bounding to ``max_records = k`` rows per person) and the real stat; the
mechanism and the true cell table of each release are captured, and the
cell the person is in is released ``DRAWS`` times (independent streams) by
that mechanism. For the event ``S = {noisy >= true_D' + Δ}`` (``Δ`` the
bounded difference) the ratio ``P_D(S) / P_D'(S)`` is ``e^eps`` exactly
for discrete Laplace noise of the right scale, so the Clopper-Pearson lower
bound on eps (``ALPHA`` two-sided per probability, as in
``test_privacy_audit.py``) must stay at or below the claimed eps, and be
informative (above half of it). Negative control: without a declared
unit the person's 50 rows all count against noise for one row, and the
same event shows about ``k`` times the claim.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import plotnine as p9
import pytest
from scipy import stats

import plotnine_private as pp
from plotnine_private._compat import build
from plotnine_private.mechanisms.release.magnitudes import SumTable
from plotnine_private.mechanisms.streams.randomness import cell_words
from plotnine_private.stats import base as stat_base
from plotnine_private.stats.summary import release as summary_release

ALPHA = 1e-6
DRAWS = 50000
K = 3  # max_records
EPS = 1.0

RNG = np.random.default_rng(611)
#: 300 other people, one row each; the audited person has 50 rows
OTHERS = pd.DataFrame(
    {
        "pid": np.arange(1, 301),
        "x": RNG.uniform(0, 1, 300),
        "g": pd.Categorical(RNG.choice(["a", "b"], 300), ["a", "b"]),
        "y": RNG.uniform(0, 10, 300),
    }
)
PERSON = pd.DataFrame(
    {
        "pid": np.zeros(50, dtype=int),
        "x": np.full(50, 0.1),
        "g": pd.Categorical(["a"] * 50, ["a", "b"]),
        "y": np.full(50, 10.0),
    }
)
WITH = pd.concat([PERSON, OTHERS], ignore_index=True)
WITHOUT = OTHERS


def _cp_lower(k: int, n: int) -> float:
    return stats.beta.ppf(ALPHA / 2, k, n - k + 1) if k > 0 else 0.0


def _cp_upper(k: int, n: int) -> float:
    return stats.beta.ppf(1 - ALPHA / 2, k + 1, n - k) if k < n else 1.0


def _captured(plot, monkeypatch) -> list:
    """(family, table, mechanism, claimed eps) of each release of the
    plot's layer, as the stat hands them to the release engine."""
    seen = []
    for module in (stat_base, summary_release):
        original = module.release_cells

        def spy(query, table, mechanism, *a, _original=original, **kw):
            out = _original(query, table, mechanism, *a, **kw)
            seen.append((query.family, table, mechanism, out.release.eps))
            return out

        monkeypatch.setattr(module, "release_cells", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build(plot)
    monkeypatch.undo()
    return seen


def _truth(table) -> np.ndarray:
    """Each cell's true value in the mechanism's integer units."""
    if isinstance(table, SumTable):
        return np.asarray(table.total, dtype=np.int64)
    return np.asarray(table.n, dtype=np.int64)


def _repeated(table, cell: int):
    """``DRAWS`` copies of one cell (distinct words: independent noise)."""
    common = {
        "words": cell_words(np.arange(DRAWS)),
        "n": np.full(DRAWS, table.n[cell], dtype=np.int64),
        "key_sum": None,
        "public": True,
    }
    if isinstance(table, SumTable):
        common["total"] = np.full(DRAWS, table.total[cell], dtype=np.int64)
        common["top"] = None
    return dataclasses.replace(table, **common)


def _noisy_units(mechanism, table, key: bytes) -> np.ndarray:
    _, noisy, _, _ = mechanism.perturb(table, key)
    unit = float(getattr(mechanism, "unit", 1.0))
    return np.rint(np.asarray(noisy, dtype=float) / unit)


def _lower_bounds(make, monkeypatch, shift: int | None = None) -> list:
    """``(family, claimed eps, empirical lower bound)`` per release."""
    on_d = _captured(make(WITH), monkeypatch)
    on_d2 = _captured(make(WITHOUT), monkeypatch)
    assert [r[0] for r in on_d] == [r[0] for r in on_d2]
    out = []
    for (family, t, mech, claim), (_, t2, mech2, _) in zip(on_d, on_d2):
        assert mech == mech2  # the noise is a public choice
        np.testing.assert_array_equal(t.words, t2.words)
        diff = _truth(t) - _truth(t2)
        cell = int(np.argmax(diff))
        delta = (
            int(diff[cell])
            if shift is None
            else shift * (int(diff[cell]) // 50)
        )
        assert delta > 0
        base = int(_truth(t2)[cell])
        d = _noisy_units(mech, _repeated(t, cell), bytes(range(16)))
        d2 = _noisy_units(mech, _repeated(t2, cell), bytes(range(1, 17)))
        hit = int((d >= base + delta).sum())
        hit2 = int((d2 >= base + delta).sum())
        lb = math.log(_cp_lower(hit, DRAWS) / _cp_upper(hit2, DRAWS))
        out.append((family, claim, lb))
    return out


def _curve(stat: str):
    def make(frame, unit=True):
        data = pp.source(frame, unit="pid", max_records=K) if unit else frame
        return p9.ggplot(data, p9.aes("x")) + p9.geom_line(
            stat=stat,
            limits=(0, 1),
            bins=8,
            eps=EPS,
            seed=4,
            adjacency="add_remove",
        )

    return make


def _summary(frame, unit=True):
    data = pp.source(frame, unit="pid", max_records=K) if unit else frame
    return p9.ggplot(data, p9.aes("g", "y")) + p9.geom_point(
        stat="summary_dp",
        bounds=(0, 10),
        eps=EPS,
        seed=4,
        adjacency="add_remove",
    )


MAKERS = {
    "density": _curve("density_dp"),
    "ecdf": _curve("ecdf_dp"),
    "summary": _summary,
}


@pytest.mark.parametrize("what", sorted(MAKERS))
def test_person_level_loss_stays_within_the_claim(what, monkeypatch):
    bounds = _lower_bounds(MAKERS[what], monkeypatch)
    assert len(bounds) == (2 if what == "summary" else 1)
    for family, claim, lb in bounds:
        assert lb <= claim, (family, claim, lb)
        assert lb > 0.5 * claim, (family, claim, lb)  # informative event


@pytest.mark.parametrize("what", sorted(MAKERS))
def test_without_a_unit_the_person_costs_k_times_the_claim(what, monkeypatch):
    # the same event (a shift of k rows of the person) on data without a
    # declared unit: all 50 rows count, the noise is for one row
    def unbounded(frame):
        return MAKERS[what](frame, unit=False)

    for family, claim, lb in _lower_bounds(unbounded, monkeypatch, K):
        assert lb > 2 * claim, (family, claim, lb)
