"""dp_pca hashes its matrix once: the ledger's charge names the data by
the digest the directions' stream takes (issue 23)."""

from __future__ import annotations

import numpy as np
import pandas as pd

import plotnine_private.mechanisms.release.engine as engine
import plotnine_private.pca.fit as fit_mod
from plotnine_private.pca import dp_pca

RNG = np.random.default_rng(23)
# 600 rows: what is counted does not depend on n (3000 rows made three
# exact Kendall sums of 4.5e6 pairs)
X = pd.DataFrame(RNG.normal(size=(600, 4)), columns=list("abcd"))


def _run(data, monkeypatch):
    seen: list = []
    hashed: list = []
    real = fit_mod.data_digest

    def counting(*arrays):
        hashed.extend(
            np.shape(a) == data.shape and np.array_equal(a, data.to_numpy())
            for a in arrays
        )
        return real(*arrays)

    monkeypatch.setattr(fit_mod, "data_digest", counting)
    previous = engine.set_charge_hook(seen.extend)
    try:
        r = dp_pca(data, eps=2.0, delta=1e-6, seed=4)
    finally:
        engine.set_charge_hook(previous)
    return r, {c.digest for c in seen}, hashed


def test_the_matrix_is_hashed_once_and_names_the_charge(monkeypatch):
    r, digests, hashed = _run(X, monkeypatch)
    assert sum(hashed) == 1  # the data matrix (not the projected y)
    assert len(digests) == 1  # every component charged on one digest
    again, same, _ = _run(X.copy(), monkeypatch)
    assert same == digests
    np.testing.assert_array_equal(again.directions, r.directions)
    changed = X.copy()
    changed.iloc[7, 2] += 1.0  # one record changed
    other, moved, _ = _run(changed, monkeypatch)
    assert moved != digests
