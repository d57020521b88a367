"""Empirical privacy checks of the wired-up mechanism.

For neighbouring data sets D (count c) and D' (count c + Δ) of one cell,
the event S = {released >= c + 1} has P_D'(S) / P_D(S) = e^ε for Laplace
noise: the ratio attains the full budget. Clopper-Pearson bounds give a
lower confidence bound on ε; it must stay below the claimed ε, and exceed
it for a deliberately under-noised control (so the test has power).
After the empirical audits of Jagielski et al. (2020) and Nasr et al. (2021).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from plotnine_private import dp_table
from plotnine_private.mechanisms.samplers import laplace as lap

ALPHA = 1e-6
DRAWS = 50000


def _cp_lower(k, n):
    return stats.beta.ppf(ALPHA / 2, k, n - k + 1) if k > 0 else 0.0


def _cp_upper(k, n):
    return stats.beta.ppf(1 - ALPHA / 2, k + 1, n - k) if k < n else 1.0


def _epsilon_lower_bound(noisy_d, noisy_d2, c):
    hit_d = int((noisy_d >= c + 1).sum())
    hit_d2 = int((noisy_d2 >= c + 1).sum())
    return math.log(_cp_lower(hit_d2, DRAWS) / _cp_upper(hit_d, DRAWS))


def _released(count, seed, adjacency, eps):
    """DRAWS independent releases of one cell holding `count` records,
    through dp_table (each level is an independent cell)."""
    levels = [f"c{i}" for i in range(DRAWS)]
    x = pd.Categorical(np.repeat(levels, count), categories=levels)
    t = dp_table(
        pd.DataFrame({"x": x}),
        "x",
        eps=eps,
        seed=seed,
        adjacency=adjacency,
    )
    return t["count"].to_numpy()


@pytest.mark.parametrize(
    ("adjacency", "shift"), [("add_remove", 1), ("replace", 2)]
)
def test_epsilon_audit_passes_for_the_right_noise(adjacency, shift):
    eps, c = 1.0, 3
    d = _released(c, 1, adjacency, eps)
    d2 = _released(c + shift, 2, adjacency, eps)
    lb = _epsilon_lower_bound(d, d2, c + shift - 1)
    assert lb <= eps
    assert lb > 0.5 * eps  # the event is informative: the bound is tight


def test_epsilon_audit_catches_halved_noise(monkeypatch):
    # negative control: a mechanism that uses half the required scale
    monkeypatch.setitem(lap.ADJACENCY_SENSITIVITY, "add_remove", 0.5)
    monkeypatch.setattr(
        lap,
        "rational_scale",
        lambda s, e: (1, 2),  # b = 0.5 / eps
    )
    d = _released(3, 1, "add_remove", 1.0)
    d2 = _released(4, 2, "add_remove", 1.0)
    assert _epsilon_lower_bound(d, d2, 3) > 1.0
