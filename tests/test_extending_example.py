"""docs/extending.md's worked example runs as written: its family is
declared, drawn, listed by ``pp.stats()`` and passes every check of the
conformance kit.

A new stat registers itself with plotnine and with the package's
registry when its class is made: the fixture takes both out again, so
the other tests see the package's own registry."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import conformance as kit
import pytest
from test_conformance import CHECKS

import plotnine_private as pp
from plotnine_private._compat import unregister as plotnine_unregister
from plotnine_private.declarations import declared, unregister

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "extending.md"
NAMES = ("stat_round_dp", "stat_round_ckm")


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


@pytest.fixture(scope="module")
def example():
    """The doc's blocks run in order; the value of the last expression
    (the doc's plot) is returned."""
    namespace: dict = {}
    last_value = None
    try:
        for k, code in enumerate(python_blocks()):
            tree = ast.parse(code)
            last = tree.body[-1]
            expr = isinstance(last, ast.Expr)
            body = tree.body[:-1] if expr else tree.body
            exec(
                compile(ast.Module(body, []), f"block {k}", "exec"), namespace
            )
            if expr:
                value = ast.Expression(last.value)
                last_value = eval(
                    compile(value, f"block {k}", "eval"), namespace
                )
        yield last_value
    finally:
        for name in NAMES:
            unregister(name)
            plotnine_unregister(name)
        assert "round_dp" not in set(pp.stats()["name"])


def test_the_doc_holds_a_complete_family_and_its_use():
    blocks = python_blocks()
    assert any("class stat_round_dp" in b for b in blocks)
    assert any("stat_round_ckm" in b for b in blocks)
    assert any('stat="round_dp"' in b for b in blocks)


def test_the_worked_example_draws_and_is_listed(example):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        drawn = pp.layer_data(example, 0)
    assert len(drawn) and "count" in drawn
    assert {"round_dp", "round_ckm"} <= set(pp.stats()["name"])


@pytest.mark.parametrize("name", ["round_dp", "round_ckm"])
def test_the_worked_example_passes_the_kit(example, name, tmp_path):
    entry = declared(name)
    for check in CHECKS:
        check(entry)
    kit.check_neighbours(entry, whole_person=True)
    kit.check_save_release(entry, tmp_path / "bundle")
