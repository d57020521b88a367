"""An argument no stat, layer or geom takes is refused with the closest
parameter named, whether the stat is made alone or by a geom (plotnine
would drop it silently: ``esp=1`` would read "eps is required", and a
misspelt ``max_record=5`` would draw the layer without it)."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from plotnine import aes, geom_bar, geom_boxplot, geom_histogram, ggplot
from plotnine.data import mpg
from plotnine.exceptions import PlotnineError

import plotnine_private as pp
from plotnine_private._compat import PLOTNINE_VERSION
from plotnine_private.declarations import registered

STATS = [e for e in registered(aliases=False)]


@pytest.mark.parametrize("entry", STATS, ids=lambda e: e.name)
def test_every_stat_names_the_parameter_a_typo_meant(entry):
    # each stat's first parameter in alphabetical order, misspelt by one
    # letter dropped: difflib finds it among the stat's parameters
    param = sorted(p for p in entry.cls.DEFAULT_PARAMS if len(p) > 4)[0]
    typo = param[:-1] + "q"
    with pytest.raises(pp.PlotninePrivateError) as err:
        entry.cls(**{typo: 1})
    assert f"unknown parameter {typo}=1" in str(err.value)
    assert f"did you mean {param}=1?" in str(err.value)


#: plotnine 0.15 drops a geom's arguments its stat does not declare (the
#: private stat reads them from the geom); 0.16 makes the stat from the
#: declared ones only and refuses the rest itself, when the layer is made
GEOM_ARGUMENTS_SEEN = tuple(
    int(x) for x in re.findall(r"\d+", PLOTNINE_VERSION)[:2]
) < (0, 16)


def test_a_geoms_argument_reaches_the_check():
    if GEOM_ARGUMENTS_SEEN:
        with pytest.raises(pp.PlotninePrivateError, match="did you mean eps"):
            ggplot() + geom_bar(stat="count_dp", esp=1, seed=1)
    else:  # plotnine refuses esp itself, when the layer is made (eps may
        # be left out at construction: a figure drawn from a synopsis)
        with pytest.raises(PlotnineError, match="esp"):
            ggplot() + geom_bar(stat="count_dp", esp=1, seed=1)


def test_an_argument_far_from_every_parameter_lists_them():
    def layer():
        return geom_histogram(stat="bin_dp", zzz_unrelated=3, eps=1)

    if not GEOM_ARGUMENTS_SEEN:
        with pytest.raises(PlotnineError, match="zzz_unrelated"):
            ggplot() + layer()
        return
    with pytest.raises(pp.PlotninePrivateError) as err:
        ggplot() + layer()
    assert "unknown parameter zzz_unrelated=3" in str(err.value)
    assert "its parameters are" in str(err.value)
    assert "breaks" in str(err.value)


def test_geom_parameters_and_aesthetics_stay_allowed():
    # constants of aesthetics, geom parameters and layer arguments
    p = ggplot(mpg, aes("class")) + geom_bar(
        stat="count_dp",
        eps=1,
        seed=1,
        levels=sorted(mpg["class"].unique()),
        color="black",
        fill="grey",
        alpha=0.5,
        width=0.6,
        show_legend=False,
        inherit_aes=True,
    )
    assert len(pp.layer_data(p)) == 7
    drv = mpg.assign(
        drv=pd.Categorical(mpg["drv"], categories=["4", "f", "r"])
    )
    q = ggplot(drv, aes("drv", "hwy")) + geom_boxplot(
        stat="boxplot_dp",
        eps=1,
        seed=1,
        limits=(10, 45),
        outlier_alpha=0.1,
        notch=False,
        linetype="dashed",
    )
    assert len(pp.layer_data(q)) == 3
