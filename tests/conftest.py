"""Shared fixtures: a headless backend and plotnine's example data."""

from __future__ import annotations

import gc
import os

# One BLAS thread per test process, set before numpy loads (matplotlib
# loads it): pytest-xdist already runs one worker per core, and
# OpenBLAS's threads spin while they wait, so two per worker only burn
# the other worker's core (the PCA tests: 27 s user with two threads,
# 18 s with one). A value the caller set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from plotnine.data import mpg as _mpg  # noqa: E402

from plotnine_private.mechanisms.session import session_of  # noqa: E402


def pytest_collection_finish(session):
    """The modules, data and test items made during collection live to the
    end: frozen, the cyclic collector no longer walks them at every full
    collection, and a larger first generation makes collections rarer.
    (The collector took about 4% of a neighbour test file's CPU time;
    about 1% after this. No test depends on when cycles are freed: the
    seed-reuse check warns whether an earlier frame is alive or gone.)"""
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 1000)


@pytest.fixture(autouse=True)
def _own_session():
    """Each test runs in its own session, restored afterwards (the key,
    stream version and charge hook a test selects end with it).

    No test charges a ledger unless it selects one (a developer's
    PLOTNINE_PRIVATE_LEDGER is never written by the suite). The seed
    registry is empty: otherwise a frame another test released under the
    same seed (now freed, or a copy) makes this test warn, depending on
    which tests ran before it in the worker."""
    with session_of(ledger=None, sources={}, recent={}):
        yield


@pytest.fixture
def mpg() -> pd.DataFrame:
    return _mpg.copy()


@pytest.fixture
def mpg_cat() -> pd.DataFrame:
    """mpg with declared (public) categories, plus one empty class."""
    d = _mpg.copy()
    d["class"] = pd.Categorical(
        d["class"], categories=[*sorted(d["class"].unique()), "zzz"]
    )
    d["drv"] = pd.Categorical(d["drv"], categories=["4", "f", "r"])
    d["year"] = pd.Categorical(d["year"], categories=[1999, 2008])
    return d


@pytest.fixture
def ledger_key(tmp_path):
    """A key file of this test alone: a ledger needs a key, and the key
    records which ledger each data set is charged to (tests must not
    share those records)."""
    from keyfile import using_key

    from plotnine_private import create_key

    with using_key(create_key(tmp_path / "ledger.key")) as path:
        yield path


@pytest.fixture
def key_file():
    """A key file in use for the test (save_release refuses seeds without
    one)."""
    from keyfile import using_key

    with using_key() as path:
        yield path


@pytest.fixture(scope="session")
def spark():
    """One local Spark session for the engine tests (slow to start)."""
    import shutil

    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark local mode needs Java")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[1]")
        .appName("plotnine_private tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        # a few hundred rows a query: compiling each plan to Java costs
        # more than interpreting it
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        # the tests' queries are small and few: the JVM's optimising JIT
        # (C2) and parallel GC threads only burn CPU that the other xdist
        # worker needs (C1 with the serial GC halves the JVM's CPU time
        # over the suite's Spark checks, and its wall time). Spark's own
        # jars, installed by pip, need no bytecode verification: skipping
        # it for the thousands of classes Spark loads to start and answer
        # its first query saves about 2 s of that JVM's 13 s of CPU
        .config(
            "spark.driver.extraJavaOptions",
            "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData "
            "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote",
        )
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
