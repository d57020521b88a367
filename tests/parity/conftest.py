"""The parity cases compare what plotnine draws, and plotnine has no
interval variables: the private twins' curve and count intervals (a
simulation per density, ECDF and box plot, tested in test_intervals and
test_interval_calibration) are not computed here. Summaries whose bars
*are* their intervals (quantile summaries) keep theirs."""

from __future__ import annotations

import pytest

from plotnine_private.stats.base import PrivateCountStat
from plotnine_private.stats.boxplot import _BoxplotFamily
from plotnine_private.stats.density import _DensityFamily
from plotnine_private.stats.ecdf import _EcdfFamily

#: stats whose interval columns nothing in a parity case reads
UNDRAWN_INTERVALS = (
    PrivateCountStat,
    _BoxplotFamily,
    _DensityFamily,
    _EcdfFamily,
)


def _no_intervals(self, out, released) -> None:
    return None


@pytest.fixture(autouse=True, scope="package")
def without_interval_columns():
    with pytest.MonkeyPatch.context() as mp:
        for cls in UNDRAWN_INTERVALS:
            mp.setattr(cls, "add_intervals", _no_intervals)
        yield
