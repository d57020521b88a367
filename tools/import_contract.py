"""The package's import contract: the layers of docs/architecture.md.

Run: ``python tools/import_contract.py`` (exit status 1 and one line per
broken rule). It reads every module of ``plotnine_private`` with ``ast``
(every ``import``, also inside functions and under ``TYPE_CHECKING``) and
checks:

1. a module imports from its own part of the package (its top-level
   module or subpackage) or from a part in a *lower* layer, never from
   one in its own layer or above;
2. the mechanisms, the cells and the smoothing import no plotnine, and the
   mechanisms import no pandas (apart from the p-table, which is a table
   users print, save and load).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "plotnine_private"

#: lowest first; a part is a top-level module or subpackage
LAYERS: list[tuple[str, ...]] = [
    ("mechanisms",),
    ("exceptions", "smoothing", "_version", "statements"),
    (
        "validation",
        "noise_bounds",
        "units",
        "identifiers",
        "declarations",
    ),
    ("cells",),
    ("families", "_panel_codes", "unit_cells"),
    ("_compat",),
    ("door",),
    ("pca",),
    ("stats",),
    ("geoms", "engines"),
    ("tables", "record_keys", "report", "plots"),
    ("ledger_binding",),
    ("ledger_store",),
    ("ledger_book", "noise", "sessions"),
    ("planning",),
    ("compare", "bundle_tables", "bundle_checks"),
    ("bundle",),
    ("__init__", "__main__"),
]

#: parts that know nothing of plotnine (exceptions and validation use its
#: public error class and aes type)
NO_PLOTNINE = {"mechanisms", "smoothing", "cells", "unit_cells", "families"}
#: modules of the mechanisms allowed to use pandas (the p-table object)
PANDAS_IN_MECHANISMS = ("mechanisms.ptable",)


def part_of(module: str) -> str:
    """``plotnine_private.stats.base`` -> ``stats``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(part: str) -> int:
    for k, parts in enumerate(LAYERS):
        if part in parts:
            return k
    raise KeyError(part)


def module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(
    path: Path, package_dir: Path = PACKAGE
) -> list[tuple[int, str, bool]]:
    """(line, imported module, whether inside the package) of a file."""
    module = module_name(path, package_dir)
    package = (
        module if path.name == "__init__.py" else module.rpartition(".")[0]
    )
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                if node.module:
                    out.append(
                        (node.lineno, ".".join([*base, node.module]), True)
                    )
                else:  # from . import a, b: the modules a and b
                    out.extend(
                        (node.lineno, ".".join([*base, a.name]), True)
                        for a in node.names
                    )
            else:
                name = node.module or ""
                out.append(
                    (node.lineno, name, name.startswith("plotnine_private"))
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.append(
                    (
                        node.lineno,
                        alias.name,
                        alias.name.startswith("plotnine_private"),
                    )
                )
    return out


def violations(package: Path = PACKAGE) -> list[str]:
    """One line per broken rule in the package at ``package``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        module = module_name(path, package)
        part = part_of(module)
        try:
            level = layer_of(part)
        except KeyError:
            found.append(f"{module}: not in any layer of LAYERS")
            continue
        where = path.relative_to(package.parent)
        for line, target, inside in imports(path, package):
            if inside:
                other = part_of(target)
                if (
                    other == part
                    or other == "__init__"
                    and target == ("plotnine_private")
                ):
                    if other == "__init__" and part != "__init__":
                        found.append(
                            f"{where}:{line}: imports the package's top level"
                        )
                    continue
                if layer_of(other) >= level:
                    found.append(
                        f"{where}:{line}: {part} (layer {level}) imports "
                        f"{target} (layer {layer_of(other)}): upward or "
                        "sideways"
                    )
                continue
            top = target.split(".")[0]
            if top == "plotnine" and part in NO_PLOTNINE:
                found.append(f"{where}:{line}: {part} imports plotnine")
            if (
                top == "pandas"
                and part == "mechanisms"
                and not module.removeprefix("plotnine_private.").startswith(
                    PANDAS_IN_MECHANISMS
                )
            ):
                found.append(f"{where}:{line}: a mechanism imports pandas")
    return found


def main() -> int:
    found = violations()
    for line in found:
        print(line)
    print(
        f"import contract: {len(found)} violation(s) in "
        f"{len(list(PACKAGE.rglob('*.py')))} modules"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
