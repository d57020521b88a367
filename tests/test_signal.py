"""Signal against noise, said out loud: the issue's cases (msleep box
plot by diet, penguin densities by species, wine PCA) warn with the
number and the fix at the eps and n the issue used, and stay silent
where the released values do support the layer. penguins and wine do
not ship with plotnine: synthetic data of the same sizes and spreads."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from neighbours import differences
from plotnine import (
    aes,
    geom_boxplot,
    geom_density,
    geom_point,
    geom_tile,
    ggplot,
)
from plotnine.data import msleep

import plotnine_private as pp

DIETS = ["carni", "herbi", "insecti", "omni"]


def signals(plot) -> list[str]:
    return signals_and_data(plot)[0]


def signals_and_data(plot) -> tuple[list[str], pd.DataFrame]:
    """The signal warnings of one build, and its layer's data."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        data = pp.layer_data(plot)
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, pp.SignalWarning)
    ], data


def sleep_boxes(data, eps):
    return ggplot(data, aes("vore", "sleep_total")) + geom_boxplot(
        stat="boxplot_dp", limits=(0, 24), bins=48, eps=eps, seed=2
    )


def msleep_declared():
    d = msleep.copy()
    d["vore"] = pd.Categorical(d["vore"], categories=DIETS)
    return d


def test_msleep_boxes_at_eps_1_warn_with_the_number_and_the_fix():
    (msg,) = signals(sleep_boxes(msleep_declared(), 1))
    assert "interval of a quartile spans up to" in msg
    assert "of the limits (0, 24)" in msg
    assert "pp.eps_for('boxplot_dp'" in msg and "fewer fine bins" in msg


def test_boxes_of_many_records_are_silent():
    rng = np.random.default_rng(0)
    big = pd.DataFrame(
        {
            "vore": pd.Categorical(rng.choice(DIETS, 4000), categories=DIETS),
            "sleep_total": np.clip(rng.normal(11, 4, 4000), 0, 24),
        }
    )
    assert signals(sleep_boxes(big, 1)) == []


def penguins(scale: int = 1) -> pd.DataFrame:
    """Body mass (g) of 152 Adelie, 68 Chinstrap and 124 Gentoo, with
    the species' means and standard deviations (palmerpenguins)."""
    rng = np.random.default_rng(1)
    sp = np.repeat(
        ["Adelie", "Chinstrap", "Gentoo"],
        [152 * scale, 68 * scale, 124 * scale],
    )
    stats = {
        "Adelie": (3700, 459),
        "Chinstrap": (3733, 384),
        "Gentoo": (5076, 504),
    }
    mu = np.array([stats[s][0] for s in sp])
    sd = np.array([stats[s][1] for s in sp])
    return pd.DataFrame(
        {"species": pd.Categorical(sp), "mass": rng.normal(mu, sd)}
    )


def densities(data, eps, seed=3):
    return ggplot(data, aes("mass", fill="species")) + geom_density(
        stat="density_dp", limits=(2500, 6500), eps=eps, seed=seed
    )


def test_penguin_densities_at_eps_1_warn():
    # the warning is computed from released values: at this n and eps it
    # appears for some seeds or all (it depends on the band's calibration),
    # so up to eight seeds are tried (until two have warned) and every
    # warning must say what to change; the tests below show it does not
    # appear where n and eps suffice
    warned: list[str] = []
    for seed in range(1, 9):
        warned += signals(densities(penguins(), 1, seed=seed))
        if len(warned) >= 2:
            break
    assert len(warned) >= 2
    for msg in warned:
        assert "group(s) includes 0 over" in msg
        assert "more eps" in msg and "adjust=2" in msg


@pytest.mark.parametrize(("scale", "eps"), [(1, 10), (20, 1)])
def test_penguin_densities_with_eps_or_records_are_silent(scale, eps):
    assert signals(densities(penguins(scale), eps)) == []


def wine(n: int) -> pd.DataFrame:
    """13 standardised features in 3 cultivars of 59/71/48 shares."""
    rng = np.random.default_rng(0)
    cls = rng.choice(3, n, p=[59 / 178, 71 / 178, 48 / 178])
    means = np.random.default_rng(9).normal(0, 1.5, (3, 13))
    x = means[cls] + rng.normal(0, 1, (n, 13))
    return pd.DataFrame(x, columns=[f"f{i}" for i in range(13)])


def scores(data, eps):
    return ggplot(data) + geom_tile(
        stat="dp_pca_score",
        columns=list(data.columns),
        eps=eps,
        delta=1e-5,
        seed=1,
    )


def test_wine_pca_at_n_178_eps_4_warns():
    (msg,) = signals(scores(wine(178), 4))
    assert "the released tiles hold 0 of the layer's 178 rows" in msg
    assert "coarser bins" in msg


def test_a_pca_of_many_records_is_silent():
    assert signals(scores(wine(5000), 4)) == []


def test_summary_cells_near_zero_are_drawn_as_noise():
    d = msleep_declared()
    # insectivores: 5 animals; at eps=5 their count is noise (its
    # interval holds 0, so the mean's spans the bounds), the other diets'
    # (19 to 32) are not
    p = ggplot(d, aes("vore", "sleep_total")) + geom_point(
        stat="summary_dp", bounds=(0, 24), levels=DIETS, eps=5, seed=4
    )
    (msg,), out = signals_and_data(p)
    assert "1 of 4 cell(s) have a mean whose 95% interval spans" in msg
    assert "drawn faded (noise_marks='fade')" in msg
    assert "pp.eps_for('summary_dp'" in msg
    # every cell keeps its row and its mean; the noise one is faded
    assert len(out) == 4 and out["y"].notna().all()
    assert out["signal"].tolist() == [True, True, False, True]
    assert out["alpha"].tolist() == [1.0, 1.0, 0.3, 1.0]
    assert out.loc[2, "y_high"] - out.loc[2, "y_low"] > 0.25 * 24
    q = ggplot(d, aes("vore", "sleep_total")) + geom_point(
        stat="summary_dp", bounds=(0, 24), levels=DIETS, eps=20, seed=4
    )
    quiet, out = signals_and_data(q)
    assert quiet == [] and out["signal"].all()


def test_signal_warnings_come_from_released_values_only(monkeypatch):
    # neighbouring data: the harness leaves SignalWarnings out (they are
    # post-processing, like the numbers) and all else agrees
    import neighbours
    from fine_common import FINE_NOISY

    monkeypatch.setattr(neighbours, "NOISY", neighbours.NOISY | FINE_NOISY)
    d = msleep_declared()
    other = d.copy()
    other.loc[0, "sleep_total"] = 23.9
    a = neighbours.snapshot(sleep_boxes(d, 1), ("y",))
    b = neighbours.snapshot(sleep_boxes(other, 1), ("y",))
    assert differences(a, b) == []


def test_a_bounded_pca_warns_from_released_tiles_only():
    """With a privacy unit, how many rows the units kept is private: the
    warning counts the tiles shown, and one person with more rows leaves
    it as it was."""
    d = wine(178).assign(pid=np.arange(178) // 2)
    more = pd.concat([d, d[d["pid"] == 0].assign(f0=9.0)], ignore_index=True)

    def warned(data):
        src = pp.source(data, unit="pid", max_records=2)
        return signals(
            ggplot(src)
            + geom_tile(
                stat="dp_pca_score",
                columns=[f"f{i}" for i in range(13)],
                eps=4,
                delta=1e-5,
                seed=1,
            )
        )

    (msg,) = warned(d)
    assert "the released tiles are 2 of the 20x20 frame's 400" in msg
    assert "178" not in msg and "rows" not in msg
    assert warned(more) == [msg]
