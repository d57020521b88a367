"""Gaussian calibration (dp-mechanisms spec, section 4)."""

from __future__ import annotations

import itertools

import pytest

from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.samplers.gaussian import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_delta,
    gaussian_sigma,
)

# (eps, delta, sigma_AGM, sigma_classical) with sensitivity 1, spec table
TABLE = [
    (0.1, 1e-5, 30.75, 48.45),
    (0.5, 1e-5, 7.03, 9.69),
    (1.0, 1e-5, 3.73, 4.84),
    (2.0, 1e-6, 2.23, 2.65),
    (5.0, 1e-6, 0.98, 1.06),
    (10.0, 1e-9, 0.6502, 0.6472),
]


@pytest.mark.parametrize(("eps", "delta", "agm", "classic"), TABLE)
def test_sigma_matches_spec_table(eps, delta, agm, classic):
    digits = 4 if agm < 1 else 2
    assert round(analytic_gaussian_sigma(eps, delta), digits) == agm
    assert round(classic_gaussian_sigma(eps, delta, warn=False), 2) == (
        round(classic, 2)
    )


def test_classic_under_noises_at_large_eps():
    assert classic_gaussian_sigma(10, 1e-9, warn=False) < (
        analytic_gaussian_sigma(10, 1e-9)
    )
    s = classic_gaussian_sigma(10, 1e-9, warn=False)
    assert gaussian_delta(s, 10, 1) > 1e-9


@pytest.mark.parametrize(
    ("eps", "delta", "sens"),
    list(
        itertools.product(
            [1e-3, 0.05, 0.3, 1, 2.7, 8, 30],
            [1e-12, 1e-9, 1e-5, 1e-3, 0.2],
            [0.01, 1.0, 2**0.5, 250.0],
        )
    ),
)
def test_delta_of_sigma_never_exceeds_target(eps, delta, sens):
    s = analytic_gaussian_sigma(eps, delta, sens)
    assert gaussian_delta(s, eps, sens) <= delta
    # and it is tight: 0.1% less noise violates the target
    assert gaussian_delta(s * 0.999, eps, sens) > delta


def test_sigma_scales_with_sensitivity():
    s1 = analytic_gaussian_sigma(1, 1e-6, 1)
    s3 = analytic_gaussian_sigma(1, 1e-6, 3)
    assert s3 == pytest.approx(3 * s1, rel=1e-9)


def test_classic_warns_for_eps_at_least_one():
    with pytest.warns(UserWarning, match="eps < 1"):
        classic_gaussian_sigma(1.0, 1e-5)


@pytest.mark.parametrize(
    ("eps", "delta", "sens", "match"),
    [
        (0, 1e-5, 1, "eps"),
        (-1, 1e-5, 1, "eps"),
        (float("inf"), 1e-5, 1, "eps"),
        (1, 0, 1, "delta"),
        (1, 1, 1, "delta"),
        (1, 1e-5, 0, "sensitivity"),
    ],
)
def test_bad_parameters_raise(eps, delta, sens, match):
    with pytest.raises(ParameterError, match=match):
        analytic_gaussian_sigma(eps, delta, sens)


def test_unknown_calibration():
    with pytest.raises(ParameterError, match="calibration"):
        gaussian_sigma(1, 1e-5, 1, "smart")
