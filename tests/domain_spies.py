"""Spies on how a private count stat learns its domain, for the tests of
domains declared from public parameters only (tests/test_engines.py,
tests/test_family_domains.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from plotnine_private.door import LayerBuild
from plotnine_private.families import Levels, Observed
from plotnine_private.stats.base import PrivateCountStat
from plotnine_private.stats.domains import RowsNeeded


def spy_domains(monkeypatch) -> list:
    """Record, for each ``family_cells`` the door runs, the domain a fresh
    copy of the stat declares without rows, the cells the door used and
    the rows."""
    seen: list = []
    original = PrivateCountStat.family_cells

    def spy(self, data, scales):
        twin = self.for_build(LayerBuild(door=self.build.door))
        try:
            declared = twin.declare_domain(scales)
        except RowsNeeded as err:
            declared = err
        used = original(self, data, scales)
        seen.append((type(self).__name__, declared, used, data))
        return used

    monkeypatch.setattr(PrivateCountStat, "family_cells", spy)
    return seen


def guard_rows(monkeypatch) -> list:
    """Make every stat's ``domain`` and ``family_cells`` fail on zero
    rows; return the number of rows of each call."""
    calls: list = []

    def guarded(fn, rows_at):
        def run(self, *args, **kwargs):
            rows = kwargs.get("rows", kwargs.get("data"))
            if rows is None and len(args) > rows_at:
                rows = args[rows_at]
            if rows is not None:
                calls.append(len(rows))
                if len(rows) == 0:
                    raise AssertionError(
                        f"{type(self).__name__}.{fn.__name__} on no rows"
                    )
            return fn(self, *args, **kwargs)

        return run

    todo = [PrivateCountStat]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        for attr, rows_at in (("domain", 1), ("family_cells", 0)):
            if attr in vars(cls):
                fn = vars(cls)[attr]
                monkeypatch.setattr(cls, attr, guarded(fn, rows_at))
    return calls


def same_domain(declared, used, data) -> None:
    """A domain declared without rows is the one the door used."""
    assert declared.code is None
    assert type(declared.family) is type(used.family)
    assert declared.public == used.public
    assert declared.source == used.source
    if not used.public:
        # observed: the cells are the values seen, none declared
        assert len(declared.frame) == 0
        assert isinstance(declared.family, (Levels, Observed))
        return
    assert declared.describe == used.describe
    pd.testing.assert_frame_equal(declared.frame, used.frame)
    assert len(declared.content) == len(used.content)
    for a, b in zip(declared.content, used.content):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(
        declared.coded(data).code, np.asarray(used.code)
    )
