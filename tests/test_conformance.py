"""Every registered private stat passes the conformance kit
(``tests/conformance.py``), read from its declaration; a stat with a
missing or wrong declaration fails it."""

from __future__ import annotations

import dataclasses

import conformance as kit
import pytest

import plotnine_private as pp
from plotnine_private._compat import unregister as plotnine_unregister
from plotnine_private.declarations import declared, registered, unregister
from plotnine_private.stats.count import stat_count_dp
from plotnine_private.stats.mixins import DPMixin

STATS = [e.name for e in registered(aliases=False)]
CHECKS = [
    kit.check_builds,
    kit.check_rows_untouched,
    kit.check_neighbours,
    kit.check_report_charges,
    kit.check_geom_noise,
    kit.check_compare,
    kit.check_planning,
    kit.check_engine,
    kit.check_interval_coverage,
    kit.check_bad_parameter,
    kit.check_docstring,
]


def test_every_stat_is_in_the_table():
    table = pp.stats()
    assert set(STATS) <= set(table["name"])
    assert {"dp", "ckm"} == set(table["mechanism"])


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", STATS)
def test_conformance(name, check):
    check(declared(name))


@pytest.mark.parametrize("name", STATS)
def test_whole_person_neighbours(name):
    kit.check_neighbours(declared(name), whole_person=True)


@pytest.mark.parametrize("name", STATS)
def test_save_release(name, tmp_path):
    kit.check_save_release(declared(name), tmp_path / "bundle")


def test_a_stat_without_a_declaration_is_refused_when_created():
    from plotnine_private.stats.base import PrivateCountStat

    with pytest.raises(TypeError, match="must declare its family"):

        class stat_undeclared_dp(DPMixin, PrivateCountStat):
            pass


@pytest.fixture
def wrong_stat():
    """A count stat whose declaration forgets that count is noisy."""
    decl = dataclasses.replace(
        stat_count_dp.DECLARATION,
        noisy=frozenset({"prop", "noisy_count"}),
    )

    class stat_wrongly_declared_dp(stat_count_dp):
        DECLARATION = decl

    yield declared(stat_wrongly_declared_dp)
    unregister("stat_wrongly_declared_dp")
    plotnine_unregister("stat_wrongly_declared_dp")


def test_a_wrong_declaration_fails_the_kit(wrong_stat):
    assert wrong_stat is not None and wrong_stat.alias_of is None
    with pytest.raises(AssertionError, match="count"):
        kit.check_neighbours(wrong_stat)


def test_the_row_spy_sees_plotnine_grouping_rows():
    """The spy of ``check_rows_untouched`` can fail: plotnine's own
    count groups the raw rows and assigns their columns."""
    from plotnine import aes, geom_bar, ggplot

    data = kit.frame()
    p = ggplot(data, aes("cat", fill="cat")) + geom_bar()
    touched = kit.rows_touched(lambda: pp.layer_data(p, 0), len(data))
    assert "add_group" in touched and "ninteraction" in touched
    assert "group" in touched
