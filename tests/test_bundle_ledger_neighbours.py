"""The ledger rows a bundle copies into ``results.json`` leave the secure
environment with it: on two data sets that differ in one whole person
they must be equal but for the time of the charge.

The ledger itself keeps a digest of the data each release perturbs
(keyed by the key file's secret), so that a re-draw on the same data is
found and not charged again. That digest is a function of the true
cells: copied into a bundle it told, between any two published
releases, whether their true cells were equal (a figure on a source and
on ``src.filter(age >= 18)`` with one digest: nobody under 18). The
bundle keeps every other column of the rows.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp

CLASSES = ["a", "b", "c"]


def _people() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    pid = np.repeat(np.arange(150), rng.integers(1, 6, 150))
    pid = np.r_[pid, np.full(30, 7)]  # person 7 has 30 more rows
    return pd.DataFrame(
        {
            "pid": pid,
            "class": pd.Categorical(rng.choice(CLASSES, len(pid)), CLASSES),
        }
    )


@pytest.mark.filterwarnings("ignore:seed . was already used")
def test_bundle_ledger_rows_are_the_same_when_a_whole_person_changes(
    tmp_path, ledger_key
):
    base = _people()
    other = base[base["pid"] != 7].reset_index(drop=True)  # removed
    rows = []
    for name, data in (("a", base), ("b", other)):
        # the same key in a file of its own: its ledger records are apart
        key = tmp_path / f"{name}.key"
        key.write_bytes(ledger_key.read_bytes()[:32])
        pp.use_key(key)
        pp.use_ledger(tmp_path / f"{name}.sqlite", dataset="p", cap_eps=5)
        src = pp.source(data, unit="pid", max_records=3)
        fig = ggplot(src, aes("class")) + geom_bar(
            stat="count_dp", eps=1, seed=3
        )
        folder = pp.save_release(fig, tmp_path / name, code="fig", dpi=20)
        meta = json.loads((folder / "results.json").read_text())
        rows.append(meta["plotnine_private"]["ledger"]["rows"])
    a, b = rows
    assert len(a) == len(b) == 1
    assert a[0]["family"] == "count" and a[0]["bound"] == 3
    for row in (a[0], b[0]):
        row.pop("at")
    assert a == b
    assert "digest" not in a[0]
