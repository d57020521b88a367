"""Data shared by the tests of dp_pca's versions (scree and frame): the
500-row Gaussian reference set and a 20000-row spiked set, large enough
for the incomplete Kendall estimator. Both test files pin numbers
released on these data, so they must stay exactly as they are."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).parent / "data" / "gau_g_500.csv.gz"
COLS = [f"V{i}" for i in range(1, 21)]


def gaussian_500() -> pd.DataFrame:
    return pd.read_csv(DATA)


def spiked_20000() -> pd.DataFrame:
    """Gaussian rows with two leading components (sd 3 and 2), seed 3:
    the data the pinned v1 numbers were released on."""
    rng = np.random.default_rng(3)
    scale = np.ones(6)
    scale[:2] = [3.0, 2.0]
    return pd.DataFrame(
        rng.normal(size=(20000, 6)) * scale, columns=list("abcdef")
    )


def charged(make, *args, **kw) -> tuple[object, list[str]]:
    """``make(*args, **kw)`` and the identities its releases were charged
    under (a result keeps a seed-only identity blinded by the session;
    the charge hook is told the query's own)."""
    from plotnine_private.mechanisms.release import engine

    seen: list = []
    previous = engine.set_charge_hook(seen.extend)
    try:
        out = make(*args, **kw)
    finally:
        engine.set_charge_hook(previous)
    return out, [c.identity for c in seen]


def query_identity(identities: list[str]) -> str:
    """The query's identity: the first charge's, less its component."""
    return identities[0].rpartition(":")[0]
