"""One mechanism protocol: the release engine and the stats read what a
mechanism says of itself (``formal``, ``stream``, ``name``,
``adjacency``, ``sensitivity``, its privacy map), never its class."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import plotnine_private as pp
from plotnine_private.mechanisms.release import count_mechanisms, magnitudes
from plotnine_private.mechanisms.release.count_mechanisms import (
    CKMCounts,
    LaplaceCounts,
)
from plotnine_private.mechanisms.release.magnitudes import (
    CKMMagnitudes,
    LaplaceSums,
)

PACKAGE = Path(pp.__file__).parent
CLASSES = {
    name
    for module in (count_mechanisms, magnitudes)
    for name in dir(module)
    if isinstance(getattr(module, name), type)
    and hasattr(getattr(module, name), "privacy_map")
}
PTABLE = pp.create_cnt_ptable(D=3, V=2.0, js=1)
MECHANISMS = [
    LaplaceCounts(1.0),
    CKMCounts(PTABLE),
    LaplaceSums(1.0, bound=3, unit=1.0),
    CKMMagnitudes(
        pp.create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5]), unit=1.0
    ),
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


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
def test_every_mechanism_says_what_the_engine_reads(mech):
    eps, delta = mech.privacy_map(True)
    assert mech.formal == (eps is not None)
    assert isinstance(mech.stream, str) and isinstance(mech.name, str)
    assert (mech.adjacency is None) == (not mech.formal)
    assert (mech.sensitivity is None) == (not mech.formal)
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
