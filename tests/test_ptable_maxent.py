"""The dual Newton solver of p-table rows against scipy's SLSQP."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from plotnine_private.mechanisms.ptable import build, create_cnt_ptable, maxent

CASES = [
    (5, 2.01, 2, None, 1, True),
    (5, 3, 2, 0.5, 1, True),
    (10, 6, 3, 0.3, 1, True),
    (3, 50, 0, None, 1, True),
    (8, 4, 0, None, 4, True),
    (8, 4, 0, None, 1, False),
    (4, 1.5, 0, 0.6, 1, True),
    (6, 1.5, 1, None, 1, True),
]


def _rows(D, V, js, pstay, optim, mono):
    spec = build._count_spec(D, V, js, pstay, optim, mono)
    for r, i in enumerate(spec.rows):
        j = build._support(i, spec)
        v = (j - i).astype(float)
        at = np.flatnonzero(j == i)
        zero = int(at[0]) if len(at) else -1
        lower = np.full(len(v), build.EPSILON)
        if zero >= 0:
            lower[zero] = max(spec.pstay[r], build.EPSILON)
        yield v, lower, zero, spec.mono[r], spec.optim[r]


def _slsqp(v, V, lower, zero, mono, optim):
    res = minimize(
        build._entropy,
        np.full(len(v), 1.0 / len(v)),
        jac=build._entropy_gradient,
        method="SLSQP",
        bounds=[(lo, 1.0) for lo in lower],
        constraints=build._constraints(v, V, zero, mono, optim),
        options={"ftol": 1e-15, "maxiter": 10000},
    )
    return res.x


@pytest.mark.parametrize("case", CASES)
def test_newton_is_the_optimum_slsqp_approaches(case):
    V = case[1]
    for v, lower, zero, mono, optim in _rows(*case):
        p = maxent.solve_row(v, V, lower, zero, mono, optim)
        assert p is not None
        q = _slsqp(v, V, lower, zero, mono, optim)
        # feasible to rounding, never less optimal than SLSQP's answer
        assert build._violation(p, v, V, lower, optim) < 1e-12
        assert abs(p.sum() - 1) < 1e-12
        if mono and zero > 0:
            assert np.all(np.diff(p[: zero + 1]) >= -1e-15)
        assert build._entropy(p) <= build._entropy(q) + 1e-11
        np.testing.assert_allclose(p, q, rtol=0, atol=1e-7)


def test_mono_pooling_binds_and_is_exact():
    # row i=1 of D=2, V=0.9: the monotone chain pools p(v=-1), p(v=0)
    case = (2, 0.9, 0, None, 1, True)
    v, lower, zero, mono, optim = next(iter(_rows(*case)))
    p = maxent.solve_row(v, 0.9, lower, zero, mono, optim)
    q = _slsqp(v, 0.9, lower, zero, mono, optim)
    np.testing.assert_allclose(p, q, atol=1e-7)
    assert build._entropy(p) <= build._entropy(q) + 1e-12


def test_fallback_to_slsqp_builds_the_same_table(monkeypatch):
    fast = create_cnt_ptable(D=6, V=2, js=1).table
    build._create_cached.cache_clear()
    monkeypatch.setattr(maxent, "solve_row", lambda *a: None)
    slow = create_cnt_ptable(D=6, V=2, js=1).table
    build._create_cached.cache_clear()
    np.testing.assert_array_equal(fast["j"], slow["j"])
    # tables are published rounded to 1e-8
    np.testing.assert_allclose(fast["p"], slow["p"], atol=1e-7)


def test_d20_builds_fast_and_symmetric():
    import time

    build._create_cached.cache_clear()
    start = time.process_time()
    tab = create_cnt_ptable(D=20, V=2).table
    assert time.process_time() - start < 5  # SLSQP took ~16 s
    last = tab[tab["i"] == 20]["p"].to_numpy()
    np.testing.assert_allclose(last, last[::-1], atol=1e-8)
    var = ((np.arange(-20, 21)) ** 2 * last).sum()
    assert var == pytest.approx(2, abs=1e-6)
