"""The parity suite leaves out the interval columns of count, box-plot,
density and ECDF stats (``tests/parity/conftest.py``), which plotnine
never draws. That is only sound while those columns change nothing in
the figure: this checks it, drawing one parity case of each family (DP
and CKM) with its intervals and without them, and comparing everything
parity compares (statistical columns, panel ranges and breaks, legends,
texts, pixels)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from parity.conftest import UNDRAWN_INTERVALS, _no_intervals
from parity.harness import draw
from parity.table import CASES


def _cases():
    """The first drawn case whose private stat is each family's, per
    mechanism."""
    picked = {}
    for case in CASES:
        if not case.image or case.family not in FAMILIES:
            continue
        try:
            stat = case.plot(private=True).layers[0].stat
        except Exception:  # a case whose twin is refused on purpose
            continue
        for cls in UNDRAWN_INTERVALS:
            if isinstance(stat, cls):
                picked.setdefault((cls.__name__, case.mech), case)
    return sorted(picked.items())


#: the parity families whose stats compute intervals
FAMILIES = ("count", "bin", "bin_2d", "boxplot", "density", "ecdf")
CHOSEN = _cases()


def test_every_family_and_mechanism_has_a_case():
    families = {name for (name, _), _ in CHOSEN}
    assert families == {cls.__name__ for cls in UNDRAWN_INTERVALS}
    assert {mech for (_, mech), _ in CHOSEN} == {"dp", "ckm"}


@pytest.mark.parametrize(
    "case", [c for _, c in CHOSEN], ids=[f"{n}-{m}" for (n, m), _ in CHOSEN]
)
def test_interval_columns_change_nothing_parity_compares(case, monkeypatch):
    with_intervals = draw(case.plot(private=True))
    for cls in UNDRAWN_INTERVALS:
        monkeypatch.setattr(cls, "add_intervals", _no_intervals)
    without = draw(case.plot(private=True))

    assert with_intervals.ranges == without.ranges
    assert with_intervals.breaks == without.breaks
    assert with_intervals.legends == without.legends
    assert with_intervals.texts == without.texts
    assert np.array_equal(with_intervals.image, without.image)
    added = 0
    for a, b in zip(with_intervals.data, without.data, strict=True):
        extra = [c for c in a.columns if c not in b.columns]
        added += len(extra)
        # ``signal`` is read from the intervals (stats/marks.py), and a
        # noise mark's alpha is faded: at eps=1e9 the noise marks are the
        # empty cells, which draw nothing faded or not (the images above
        # are equal); the signal marks keep their alpha
        marks = {"signal", "alpha"}
        keep = [c for c in a.columns if c not in extra and c not in marks]
        pd.testing.assert_frame_equal(
            a[keep], b[[c for c in b.columns if c not in marks]]
        )
        if "signal" in a and "alpha" in a:
            shown = a["signal"].to_numpy(bool)
            assert np.allclose(a.loc[shown, "alpha"], b.loc[shown, "alpha"])
    # the case does compute intervals: otherwise this checks nothing
    assert added > 0
