"""The import structure: no module of the package imports itself through
others (tools/import_contract.py, rule 3), deferred and ``TYPE_CHECKING``
imports included, and the cycle finder finds what it must."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "import_contract.py"


def _contract():
    spec = importlib.util.spec_from_file_location("import_contract", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _package(root: Path, files: dict[str, str]) -> Path:
    """A package ``plotnine_private`` under ``root`` with these files
    (paths relative to it); every folder gets an ``__init__.py``."""
    pkg = root / "plotnine_private"
    for name, text in files.items():
        path = pkg / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in [pkg, *(p for p in pkg.rglob("*") if p.is_dir())]:
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text("")
    return pkg


def test_the_package_has_no_import_cycle():
    assert _contract().cycles() == []


def test_the_contract_passes_as_ci_runs_it():
    done = subprocess.run(
        [sys.executable, str(TOOL)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert "0 violation(s), 0 import cycle(s)" in done.stdout


def test_a_deferred_import_cycle_is_reported(tmp_path, capsys):
    pkg = _package(
        tmp_path,
        {
            # intervals imports fine inside a function, fine imports
            # intervals at the top: the cycle the contract used to miss
            "stats/intervals.py": (
                "def replicate():\n"
                "    from .fine import FineHistogram\n"
                "    return FineHistogram\n"
            ),
            "stats/fine.py": (
                "from .intervals import replicate\nclass FineHistogram: ...\n"
            ),
        },
    )
    contract = _contract()
    found = contract.cycles(pkg)
    assert found == [
        "import cycle: plotnine_private/stats/fine.py:1 -> "
        "plotnine_private/stats/intervals.py:2 -> "
        "plotnine_private/stats/fine.py"
    ]
    assert contract.main(pkg) == 1
    assert found[0] in capsys.readouterr().out


def test_type_checking_and_package_imports_count_as_edges(tmp_path):
    pkg = _package(
        tmp_path,
        {
            # a TYPE_CHECKING import back, through `from . import name`
            "mechanisms/release.py": "from .sources import check\n",
            "mechanisms/sources.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from . import release\n"
                "def check(): ...\n"
            ),
            # an absolute import of the module through its package
            "report/budget.py": (
                "from plotnine_private.report import figures\n"
            ),
            "report/figures.py": (
                "def f():\n    import plotnine_private.report.budget\n"
            ),
        },
    )
    found = _contract().cycles(pkg)
    assert len(found) == 2
    assert any("mechanisms/sources.py:3" in line for line in found)
    assert any("report/figures.py:2" in line for line in found)


def test_one_line_per_set_of_modules_naming_the_others(tmp_path):
    # a -> b -> a and b -> c -> b: one component, one line
    pkg = _package(
        tmp_path,
        {
            "pca/a.py": "from . import b\n",
            "pca/b.py": "from . import a, c\n",
            "pca/c.py": "from .b import name\n",
        },
    )
    (line,) = _contract().cycles(pkg)
    assert line.startswith("import cycle: plotnine_private/pca/a.py:1 -> ")
    assert line.endswith("(with plotnine_private.pca.c)")


def test_layered_imports_and_a_package_importing_its_modules_pass(tmp_path):
    pkg = _package(
        tmp_path,
        {
            # the package's __init__ imports its modules, which import
            # each other one way only (and through the package's name)
            "stats/__init__.py": "from .count import c\nfrom .base import b\n",
            "stats/base.py": "from ..mechanisms import release\nb = 1\n",
            "stats/count.py": (
                "from plotnine_private.stats.base import b\n"
                "def c():\n    from . import base\n"
            ),
            "mechanisms/release.py": "import numpy\n",
        },
    )
    assert _contract().cycles(pkg) == []
