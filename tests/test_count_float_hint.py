"""A count stat on a float column (a dtype is public) names the binned
twin that draws its distribution; an integer column is not sent there."""

from __future__ import annotations

import warnings

import pytest
from plotnine import aes, geom_bar, geom_histogram, ggplot
from plotnine.data import mpg

import plotnine_private as pp

CARS = pp.add_record_keys(mpg, rng_seed=5)

KW = {
    "count_dp": {"eps": 1, "seed": 1},
    "count_ckm": {"ptable": pp.create_cnt_ptable(D=3, V=2.0, js=1)},
}


@pytest.mark.parametrize("geom", [geom_bar, geom_histogram])
@pytest.mark.parametrize(
    ("stat", "twin"), [("count_dp", "bin_dp"), ("count_ckm", "bin_ckm")]
)
def test_a_count_of_a_float_column_names_the_binned_twin(stat, twin, geom):
    # the column's dtype is public; an integer column is not pointed there
    with pytest.warns(pp.PrivacyWarning, match=rf"stat={twin!r}"):
        pp.layer_data(
            ggplot(CARS, aes("displ", rkey="rkey"))
            + geom(stat=stat, **KW[stat])
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pp.layer_data(
            ggplot(CARS, aes("cyl", rkey="rkey"))
            + geom_bar(stat=stat, **KW[stat])
        )
    assert not any(twin in str(w.message) for w in caught)
