"""The ledger follows the data, its rows carry labels, and a refusal
names what is short (issue "People with many rows, honestly", part 5).
"""

from __future__ import annotations

import pytest
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp

pytestmark = pytest.mark.usefixtures("ledger_key")

CLASSES = ["2seater", "compact", "midsize", "minivan", "pickup", "subcompact"]
PCA = dict(eps=1, delta=1e-5, seed=1, method="sparse")
COLS = ["displ", "cty", "hwy"]


def _table(data, seed=1, eps=1.0, **kw):
    return pp.dp_table(
        data, "class", eps=eps, seed=seed, levels=CLASSES + ["suv"], **kw
    )


# -- a refusal names the quantity that is short -----------------------------
def test_a_pca_under_a_pure_eps_cap_is_refused_for_its_delta(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10, cap_delta=0)
    with pytest.raises(pp.BudgetExceededError) as err:
        pp.dp_pca(mpg, COLS, **PCA)
    msg = str(err.value)
    assert "short of delta for this release" in msg
    assert "delta: this needs delta=1e-05 and delta=0 is left" in msg
    assert "cap delta=0 (spent 0)" in msg
    assert "eps:" not in msg  # eps fits: not named as short
    assert "a private PCA always spends delta" in msg
    assert "set_cap('mpg', eps=10, delta=1e-05)" in msg
    assert pp.ledger(path).table.empty


def test_an_eps_shortfall_names_eps_and_what_is_left(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=1.5)
    _table(mpg, seed=1)
    with pytest.raises(pp.BudgetExceededError) as err:
        _table(mpg, seed=2)
    msg = str(err.value)
    assert "short of eps for this release (count)" in msg
    assert "eps: this needs eps=1 and eps=0.5 is left of the cap eps=1.5" in (
        msg
    )
    assert "delta:" not in msg
    assert "lower the eps of this release to at most 0.5" in msg
    assert "set_cap('mpg', eps=2, delta=0)" in msg


def test_both_short_names_both(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=0.5, cap_delta=0)
    with pytest.raises(pp.BudgetExceededError) as err:
        pp.dp_pca(mpg, COLS, **PCA)
    msg = str(err.value)
    assert "short of eps and delta" in msg
    assert "eps: this needs eps=1 and" in msg
    assert "delta: this needs delta=1e-05" in msg
    assert "set_cap('mpg', eps=1, delta=1e-05)" in msg


def test_a_plot_budget_names_delta_when_delta_is_short(mpg):
    # an undeclared domain is thresholded: it spends delta=1e-6
    p = (
        ggplot(mpg, aes("manufacturer"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
        + pp.privacy_budget(eps=5)
    )
    with (
        pytest.warns(pp.PrivacyWarning),
        pytest.raises(pp.BudgetExceededError) as err,
    ):
        pp.layer_data(p)
    msg = str(err.value)
    assert "short of delta:" in msg
    assert "delta: this needs delta=1e-06 and delta=0 is left" in msg
    assert "declare the levels or breaks" in msg
    assert "privacy_budget(eps=5, delta=1e-06)" in msg
