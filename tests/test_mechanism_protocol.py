"""One mechanism protocol: the release engine and the stats read what a
mechanism says of itself (``formal``, ``stream``, ``name``,
``adjacency``, ``sensitivity``, its privacy map), never its class."""

from __future__ import annotations

import ast
import importlib
import inspect
import math
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import plotnine_private as pp
import plotnine_private.mechanisms as mechanisms_package
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.mechanisms.pca import parts
from plotnine_private.mechanisms.pca.directions import (
    kendall_sensitivity,
    private_directions,
    private_scree,
)
from plotnine_private.mechanisms.pca.histogram import (
    private_histogram,
    sparse_threshold,
)
from plotnine_private.mechanisms.pca.quantile import private_frame
from plotnine_private.mechanisms.release.count_mechanisms import (
    BlockLaplaceCounts,
    CKMCounts,
    LaplaceCounts,
    Mechanism,
)
from plotnine_private.mechanisms.release.magnitudes import (
    CKMMagnitudes,
    LaplaceSums,
)

PACKAGE = Path(pp.__file__).parent


def _mechanism_classes() -> dict[str, type]:
    """Every class defined in a module of ``mechanisms/`` that has a
    privacy map (the protocols themselves apart)."""
    found = {}
    for info in pkgutil.walk_packages(
        mechanisms_package.__path__, mechanisms_package.__name__ + "."
    ):
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                cls.__module__ == module.__name__
                and hasattr(cls, "privacy_map")
                and not getattr(cls, "_is_protocol", False)
            ):
                found[name] = cls
    return found


FOUND = _mechanism_classes()
CLASSES = set(FOUND)
PTABLE = pp.create_cnt_ptable(D=3, V=2.0, js=1)
MECHANISMS = [
    LaplaceCounts(1.0),
    BlockLaplaceCounts(1.0, (1.0,), (4,)),
    CKMCounts(PTABLE),
    LaplaceSums(1.0, bound=3, unit=1.0),
    CKMMagnitudes(
        pp.create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5]), unit=1.0
    ),
    # the private PCA's parts
    parts.RowCount(0.2, records=3),
    parts.KendallDirections(1.0, 1e-6, size=300, records=2),
    parts.ClippedScree(1.0, 1e-6, size=300, k=3, clip=4.0),
    parts.DurfeeFrame(0.7, records=2, tail=0.01),
    parts.DiscreteGaussianHistogram(1.3, 1e-6, records=2),
    parts.SparseHistogram(1.3, 1e-6, records=2),
]


def test_no_isinstance_on_a_mechanism_class_outside_the_mechanisms():
    assert {"LaplaceCounts", "CKMCounts", "LaplaceSums"} <= CLASSES
    found = []
    for path in PACKAGE.rglob("*.py"):
        if "mechanisms" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "isinstance"
                and len(node.args) == 2
            ):
                names = {
                    n.id
                    for n in ast.walk(node.args[1])
                    if isinstance(n, ast.Name)
                } | {
                    n.attr
                    for n in ast.walk(node.args[1])
                    if isinstance(n, ast.Attribute)
                }
                if names & CLASSES:
                    found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_every_mechanism_class_is_checked_here():
    """Every class of ``mechanisms/`` with a privacy map has an instance
    below: a new mechanism cannot skip the protocol's checks."""
    assert {type(m).__name__ for m in MECHANISMS} == CLASSES
    assert {
        "KendallDirections",
        "ClippedScree",
        "DurfeeFrame",
        "DiscreteGaussianHistogram",
        "SparseHistogram",
        "RowCount",
    } <= CLASSES


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
def test_every_mechanism_says_what_the_engine_reads(mech):
    assert isinstance(mech, Mechanism)
    eps, delta = mech.privacy_map(True)
    assert mech.formal == (eps is not None)
    assert isinstance(mech.stream, str) and isinstance(mech.name, str)
    assert isinstance(mech.input_domain, str) and mech.input_domain
    assert (mech.adjacency is None) == (not mech.formal)
    assert (mech.sensitivity is None) == (not mech.formal)
    if mech.formal:
        assert mech.sensitivity > 0 and eps > 0 and 0 <= delta < 1
        # composing m copies costs m times (one record in m releases)
        assert mech.privacy_map(True, 3) == pytest.approx((3 * eps, 3 * delta))
    assert isinstance(mech.parameters(), dict)


def test_count_mechanisms_bound_spend_and_split():
    dp = LaplaceCounts(1.5, adjacency="add_remove")
    part, rest = dp.split(0.2)
    assert part.eps + rest.eps == pytest.approx(1.5)
    assert part.eps == pytest.approx(0.3)
    assert dp.after_spending(0.5).eps == pytest.approx(1.0)
    assert dp.after_spending(0) is dp
    assert dp.bounded(4, 2).sensitivity == 4 * dp.sensitivity
    ckm = CKMCounts(PTABLE)
    assert ckm.bounded(4, 2) is ckm and ckm.after_spending(1) is ckm
    assert ckm.split(0.2) == (ckm, ckm)


# --- the private PCA's parts ------------------------------------------------

KEY = bytes(range(16))
X = np.random.default_rng(4).normal(size=(300, 4)) * [3.0, 2.0, 1.0, 1.0]


def test_the_pca_parts_state_their_sensitivities():
    d = parts.KendallDirections(1.0, 1e-6, size=300, records=2)
    assert d.sensitivity == 2 * kendall_sensitivity(300)
    s = parts.ClippedScree(1.0, 1e-6, size=300, k=3, records=2)
    assert s.sensitivity == 2 * math.sqrt(3) / 150
    assert s.sensitivity_at(4.0) == 2 * math.sqrt(3) * 4.0 / 150
    assert parts.DurfeeFrame(0.7, records=2).sensitivity == 2
    assert parts.DurfeeFrame(0.7).privacy_map() == (0.7, 0.0)
    g = parts.DiscreteGaussianHistogram(1.3, 1e-6, records=2)
    assert g.sensitivity == 2 * math.sqrt(2)
    h = parts.SparseHistogram(1.3, 1e-6, records=2)
    assert h.sensitivity == 4 and h.scale == 4 / 1.3
    assert h.threshold == sparse_threshold(1.3, 1e-6, 2, None)
    assert parts.RowCount(0.2, records=3).sensitivity == 3
    with pytest.raises(ParameterError, match="method must be"):
        parts.histogram_mechanism("none", 1.0, 1e-6)


def test_the_pca_parts_release_what_their_functions_release():
    """``perturb`` is the part's function with the same arguments: the
    same numbers (the pinned releases rest on it)."""
    d = parts.KendallDirections(1.0, 1e-6, size=300).perturb(X, KEY)
    assert (
        d.vectors == private_directions(X, 1.0, 1e-6, key=KEY).vectors
    ).all()
    v = d.vectors[:, :2]
    s = parts.ClippedScree(1.0, 1e-6, size=300, k=2).perturb((X, v), KEY)
    assert (s.values == private_scree(X, v, 1.0, 1e-6, key=KEY).values).all()
    scores = X[:, :2]
    f = parts.DurfeeFrame(0.7, tail=0.01).perturb(scores, KEY)
    assert f == private_frame(scores, 0.7, key=KEY, tail=0.01)
    counts = np.array([5, 0, 40, 3])
    for mech, method in (
        (parts.DiscreteGaussianHistogram(1.3, 1e-6), "add"),
        (parts.SparseHistogram(1.3, 1e-6), "sparse"),
    ):
        got = mech.perturb(counts, KEY)
        want = private_histogram(counts, method, 1.3, 1e-6, key=KEY)
        assert (got.noisy == want.noisy).all()


def test_a_pca_records_what_its_parts_say():
    """Each release of dp_pca is its part's name, cost and sensitivity."""
    r = pp.dp_pca(X, eps=3, delta=1e-5, seed=1, method="add", scree_clip=10.0)
    rec = {x.family: x for x in r.releases}
    d = parts.KendallDirections(1.0, 1e-5 / 3, size=300)
    g = parts.DiscreteGaussianHistogram(0.65, 1e-5 / 3)
    for family, mech in (("pca:directions", d), ("pca:histogram", g)):
        got = rec[family]
        assert (got.mechanism, got.sensitivity) == (
            mech.name,
            mech.sensitivity,
        )
        assert (got.eps, got.delta) == pytest.approx(mech.privacy_map())
    scree = parts.ClippedScree(1.0, 1e-5 / 3, size=300, k=4, clip=10.0)
    assert rec["pca:scree"].sensitivity == pytest.approx(
        scree.sensitivity_at(10.0)
    )
    assert rec["pca:frame"].mechanism == "durfee_quantile"
    assert rec["pca:histogram"].details["sigma"] == pytest.approx(g.sigma)
