"""The plotnine adapter: one package (``_compat``) touches plotnine's
internals, it checks them at import, and what it reads is read right
(transforms)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import plotnine
import pytest
from plotnine import (
    aes,
    geom_histogram,
    ggplot,
    scale_x_continuous,
    scale_x_log10,
    scale_x_sqrt,
)

import plotnine_private as pp
from plotnine_private import _compat
from plotnine_private._compat import build
from plotnine_private._compat.selfcheck import _takes
from plotnine_private.door import layer_releases

PACKAGE = Path(pp.__file__).parent
ADAPTER = PACKAGE / "_compat"

# plotnine's private API, as it may appear in source text
PRIVATE_TEXT = [
    r"\._build\b",
    r"\._data\b",
    r"\._starting\b",
    r"\._trans\b",
    r"\._kwargs\b",
    r"\._raw_kwargs\b",
    r"\.from_geom\b",
    r"plotnine\._utils",
    r"plotnine\.facets\.layout",
    r"\bRegistry\b",
]


def _package_files():
    return sorted(p for p in PACKAGE.rglob("*.py") if ADAPTER not in p.parents)


@functools.cache
def _package_trees() -> tuple[tuple[Path, ast.Module], ...]:
    """Each module outside the adapter, parsed once for the AST checks."""
    return tuple((p, ast.parse(p.read_text())) for p in _package_files())


def test_plotnine_private_names_appear_only_in_the_adapter():
    found = []
    for path in _package_files():
        text = path.read_text()
        for pattern in PRIVATE_TEXT:
            for m in re.finditer(pattern, text):
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{path.relative_to(PACKAGE)}:{line} {m[0]}")
    assert found == []


def _plotnine_names(tree: ast.AST) -> set[str]:
    """Names a module imports from plotnine."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "plotnine"
        ):
            names |= {a.asname or a.name for a in node.names}
    return names


def test_no_attribute_of_plotnine_is_assigned_outside_the_adapter():
    # a patch is an assignment to an attribute of something imported from
    # plotnine (``layer.compute_aesthetics = ...``, ``setattr(Layout,``)
    found = []
    for path, tree in _package_trees():
        imported = _plotnine_names(tree)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = (
                    node.targets if isinstance(node, ast.Assign) else []
                ) + ([node.target] if isinstance(node, ast.AugAssign) else [])
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr")
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in imported
            ):
                found.append(f"{path.name}:{node.lineno} {node.func.id}")
            for t in targets:
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id in imported
                ):
                    found.append(f"{path.name}:{node.lineno} {t.value.id}")
    assert found == []


def test_no_stat_overrides_compute_layer():
    # plotnine: "stats should not override this method"; a released layer
    # is skipped by the adapter's hook instead
    found = []
    for path, tree in _package_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and (
                node.name == "compute_layer"
            ):
                found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_self_check_passes_on_this_plotnine():
    _compat.self_check()


def test_self_check_names_the_version_and_the_hook():
    def gone():
        raise AttributeError("no such hook")

    checks = [
        ("layer.compute_aesthetics(self, plot)", lambda: True),
        ("Layout.setup(self, layers, plot)", gone),
    ]
    with pytest.raises(_compat.PlotnineAdapterError) as err:
        _compat.self_check(checks)
    message = str(err.value)
    assert f"plotnine {plotnine.__version__}" in message
    assert "Layout.setup(self, layers, plot)" in message
    assert "compute_aesthetics" not in message


def test_the_checks_fail_for_a_hook_of_another_shape():
    def setup(self, plot):  # one parameter too few
        return None

    assert _takes(plotnine.layer.layer.compute_aesthetics, "self")
    assert not _takes(setup, "self", "layers", "plot")


# --------------------------------------------------------------------------
# transforms: identity from the transform object
# --------------------------------------------------------------------------
RNG = np.random.default_rng(5)
POS = pd.DataFrame({"v": RNG.uniform(1.0, 100.0, 300)})


def _hist_release(scale):
    p = (
        ggplot(POS, aes("v"))
        + geom_histogram(stat="bin_dp", eps=1, seed=4, bins=5)
        + scale
    )
    return layer_releases(build(p).layers[0])


def test_transform_identity_comes_from_the_transform_object():
    assert _compat.scale_transform(scale_x_log10()) == (
        "log10",
        ("base", "10"),
    )
    assert _compat.scale_transform(scale_x_sqrt()) == ("sqrt",)
    assert (
        _compat.scale_transform(scale_x_continuous(trans="identity")) is None
    )
    assert _compat.scale_transform(scale_x_continuous()) is None


def test_two_transforms_of_one_variable_are_two_releases():
    log = _hist_release(scale_x_continuous(trans="log10", limits=(1, 100)))
    sqrt = _hist_release(scale_x_continuous(trans="sqrt", limits=(1, 100)))
    log2 = _hist_release(scale_x_continuous(trans="log2", limits=(1, 100)))
    ids = {r[-1].identity for r in (log, sqrt, log2)}
    assert len(ids) == 3
    again = _hist_release(scale_x_log10(limits=(1, 100)))
    assert again[-1].identity == log[-1].identity


def test_the_identity_transform_is_no_transform():
    plain = _hist_release(scale_x_continuous(limits=(1, 100)))
    named = _hist_release(
        scale_x_continuous(trans="identity", limits=(1, 100))
    )
    assert named[-1].identity == plain[-1].identity


def test_a_source_plot_with_the_identity_transform_is_released():
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    con = duckdb.connect()
    con.register("pos", POS)
    src = pp.source(con.table("pos"))
    plot = (
        ggplot(src, aes("v"))
        + geom_histogram(stat="bin_dp", eps=1, seed=1, limits=(0, 100))
        + scale_x_continuous(trans="identity")
    )
    out = pp.layer_data(plot)
    assert len(out) == 30  # plotnine's default of 30 bins, every one
    plot = plot + scale_x_log10()
    with pytest.raises(pp.PlotninePrivateError, match=r"\(log10\)"):
        pp.layer_data(plot)


# --------------------------------------------------------------------------
# the import contract (tools/import_contract.py, also run by CI)
# --------------------------------------------------------------------------
def _contract():
    import importlib.util

    path = PACKAGE.parent / "tools" / "import_contract.py"
    spec = importlib.util.spec_from_file_location("import_contract", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_package_keeps_its_layers():
    assert _contract().violations() == []


def test_the_contract_finds_upward_imports_and_plotnine_in_the_core(
    tmp_path,
):
    pkg = tmp_path / "plotnine_private"
    for sub in ("mechanisms", "stats"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .stats import base\n")
    (pkg / "mechanisms" / "bad.py").write_text(
        "import numpy\nimport pandas\nimport plotnine\n"
        "from ..stats import base\nfrom . import other\n"
    )
    (pkg / "mechanisms" / "other.py").write_text("import scipy\n")
    (pkg / "stats" / "base.py").write_text("from ..mechanisms import bad\n")
    found = _contract().violations(pkg)
    assert len(found) == 3
    assert any("imports plotnine" in f for f in found)
    assert any("imports pandas" in f for f in found)
    assert any("mechanisms (layer 0) imports" in f for f in found)


def test_the_architecture_page_lists_the_layers_of_the_contract():
    # docs/architecture.md states the layers the import contract enforces
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    text = (root / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| (\d+) \| (.+?) \|", text, flags=re.M)
    contract = _contract()
    assert len(rows) == len(contract.LAYERS)
    for (k, cell), parts in zip(rows, contract.LAYERS):
        names = {
            n.strip("`/").removesuffix(".py")
            for n in re.findall(r"`[^`]+`", cell)
        }
        assert int(k) == contract.LAYERS.index(parts)
        assert names == set(parts), (k, names, parts)
