"""The package's import contract: the layers of docs/architecture.md and
no import cycle.

Run: ``python tools/import_contract.py`` (exit status 1 and one line per
broken rule). It reads every module of ``plotnine_private`` with ``ast``
(every ``import``, also inside functions and under ``TYPE_CHECKING``) and
checks:

1. a module imports from its own part of the package (its top-level
   module or subpackage) or from a part in a *lower* layer, never from
   one in its own layer or above;
2. the mechanisms, the cells and the smoothing import no plotnine, and the
   mechanisms import no pandas (apart from the p-table, which is a table
   users print, save and load);
3. no module imports itself through other modules: the graph of imports
   between the package's modules has no cycle (:func:`cycles`; each one
   found is printed as a path, ``a.py:3 -> b.py:12 -> a.py``, the line
   of each import). Rule 1 cannot see a cycle inside one part.

What counts as an import of a module, for rule 3: every ``import`` and
``from ... import`` statement of the package's own modules, wherever it
stands. A deferred import (inside a function) runs later, but the two
modules still need each other: hiding the import is how a cycle goes
unseen. An import under ``TYPE_CHECKING`` never runs, but it is counted
too: a type that a module needs from a module importing it is a concept
in the wrong place. ``from a.b import c`` imports the module ``a.b.c``
when there is one, else ``a.b`` (as grimp, import-linter's graph, reads
it); importing ``a.b.c`` is not counted as importing the package ``a.b``
(Python runs ``a/b/__init__.py`` first, but a package that imports its
own modules is the usual layout, not a cycle).

Why a hand-written tool and not import-linter: its ``layers`` and
``forbidden`` contracts could state rules 1 and 2, but its rule against
cycles (``acyclic_siblings``) checks the children of each package it is
given, with their descendants squashed together, so a cycle among the
modules of the whole package needs one contract per subpackage, listed
by hand (a new subpackage goes unchecked until someone adds it), and it
reports cycles between siblings, not the module path and lines to fix.
The graph and a strongly-connected-components search are some sixty
lines of standard library here, run on a synthetic package by the tests,
against a compiled dependency (grimp) and a second statement of the
layers in a config file.
"""

from __future__ import annotations

import ast
import sys
from collections import deque
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "plotnine_private"

#: lowest first; a part is a top-level module or subpackage
LAYERS: list[tuple[str, ...]] = [
    ("mechanisms",),
    ("exceptions", "smoothing", "_version", "statements", "level_codes"),
    (
        "validation",
        "noise_bounds",
        "units",
        "identifiers",
        "declarations",
        "string_levels",
        "date_levels",
    ),
    ("cells",),
    ("families", "_panel_codes", "unit_cells"),
    ("_compat",),
    ("door",),
    ("pca",),
    ("stats",),
    ("geoms", "engines"),
    ("tables", "record_keys", "report", "plots"),
    ("ledger", "synopsis"),
    ("noise", "sessions"),
    ("planning",),
    ("compare",),
    ("bundle",),
    ("__init__", "__main__"),
]

#: parts that know nothing of plotnine (exceptions and validation use its
#: public error class and aes type)
NO_PLOTNINE = {
    "mechanisms",
    "smoothing",
    "level_codes",
    "string_levels",
    "date_levels",
    "cells",
    "unit_cells",
    "families",
}
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


def module_graph(package: Path = PACKAGE) -> dict[str, dict[str, str]]:
    """The imports between the package's modules: for each module, the
    modules it imports and where (``"path:line"`` of the first import),
    counting every import (module level, deferred, ``TYPE_CHECKING``)."""
    files = {module_name(p, package): p for p in package.rglob("*.py")}
    graph: dict[str, dict[str, str]] = {m: {} for m in files}
    for module, path in sorted(files.items()):
        where = path.relative_to(package.parent)
        for line, target in _imported_modules(path, package, files):
            if target != module and target in files:
                graph[module].setdefault(target, f"{where}:{line}")
    return graph


def _imported_modules(
    path: Path, package_dir: Path, modules: dict[str, Path]
) -> list[tuple[int, str]]:
    """(line, module) of each import of the package's own modules:
    ``from a import b`` is the module ``a.b`` if there is one, else
    ``a``."""
    root = package_dir.name
    module = module_name(path, package_dir)
    package = (
        module if path.name == "__init__.py" else module.rpartition(".")[0]
    )
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.extend(
                (node.lineno, a.name)
                for a in node.names
                if a.name.split(".")[0] == root
            )
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(
                    parts[: len(parts) - (node.level - 1)]
                    + ([node.module] if node.module else [])
                )
            else:
                base = node.module or ""
            if base.split(".")[0] != root:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                out.append((node.lineno, sub if sub in modules else base))
    return out


def _components(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), those of more
    than one module, each sorted; a cycle lies within one of them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _shortest_cycle(
    graph: dict[str, dict[str, str]], members: list[str]
) -> list[str]:
    """A shortest cycle through the first module of a component, as the
    list of its modules (breadth-first within the component)."""
    start, inside = members[0], set(members)
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in sorted(graph[node]):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return path[::-1]
            if target in inside and target not in previous:
                previous[target] = node
                queue.append(target)
    raise AssertionError("a strongly connected component has a cycle")


def cycles(package: Path = PACKAGE) -> list[str]:
    """One line per import cycle among the package's modules: each set of
    modules that import one another (a strongly connected component of
    :func:`module_graph`), shown as one of its shortest cycles: the file
    and line of each import, back to the first file, and the component's
    other modules (a component may hold several cycles: breaking the one
    shown shows the next). Empty when the imports form no cycle."""
    graph = module_graph(package)
    found = []
    for members in _components(graph):
        path = _shortest_cycle(graph, members)
        # each step: the file and line where a module imports the next
        steps = [graph[a][b] for a, b in zip(path, [*path[1:], path[0]])]
        others = sorted(set(members) - set(path))
        also = f" (with {', '.join(others)})" if others else ""
        back = steps[0].rpartition(":")[0]
        found.append(f"import cycle: {' -> '.join([*steps, back])}{also}")
    return found


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


def main(package: Path = PACKAGE) -> int:
    """Print every broken rule and a summary; 1 if any rule is broken."""
    found = violations(package)
    loops = cycles(package)
    for line in [*found, *loops]:
        print(line)
    print(
        f"import contract: {len(found)} violation(s), {len(loops)} import "
        f"cycle(s) in {len(list(package.rglob('*.py')))} modules"
    )
    return 1 if found or loops else 0


if __name__ == "__main__":
    sys.exit(main())
