"""docs/exploring.md runs as written and says what its figures show:
sixteen figures from one saved synopsis, one release in the report,
shared totals that agree."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import plotnine_private as pp

PAGE = Path(__file__).resolve().parents[1] / "docs" / "exploring.md"


@pytest.fixture(scope="module")
def page(
    tmp_path_factory,
):
    code = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert len(code) == 1
    space: dict = {}
    folder = tmp_path_factory.mktemp("exploring")
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the notes on faded marks
        mp.chdir(folder)
        exec(compile(code[0], str(PAGE), "exec"), space)
    return space


def test_sixteen_figures_from_one_release(page):
    assert len(page["figures"]) == 16
    assert page["report"].total_eps == pytest.approx(1.0)
    assert len(page["report"].table) - 1 == 16  # a row a layer, and total


def test_shared_totals_agree(page):
    names = (
        "cuts",
        "cuts by colour",
        "price, $500 bins",
        "price, $1,000 bins",
    )
    layers = {k: pp.layer_data(page["figures"][k]) for k in names}
    layers["carat by price"] = pp.layer_data(page["figures"]["carat by price"])
    by_cut = layers["cuts"].set_index("x")["count"]
    split = layers["cuts by colour"].groupby("x")["count"].sum()
    np.testing.assert_allclose(split.loc[by_cut.index], by_cut, atol=1e-6)
    fine = layers["price, $500 bins"]["count"].sum()
    coarse = layers["price, $1,000 bins"]["count"].sum()
    assert fine == pytest.approx(coarse, abs=1e-6)
    assert fine == pytest.approx(by_cut.sum(), abs=1e-6)
    assert all(
        {"count_low", "count_high"} <= set(layers[k].columns)
        for k in ("cuts", "price, $500 bins", "carat by price")
    )
