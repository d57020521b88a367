"""docs/extending.md's worked example runs as written: its family is
declared, drawn, listed by ``pp.stats()`` and passes every check of the
conformance kit.

It runs in a fresh process: a new stat registers itself with plotnine
and with the package's registry for the life of the process, and the
other tests' registry must stay the package's own."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "extending.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


RUNNER = textwrap.dedent(
    """
    import ast, sys, tempfile, warnings
    from pathlib import Path

    sys.path.insert(0, {tests!r})
    namespace = {{}}
    for k, code in enumerate({blocks!r}):
        tree = ast.parse(code)
        last = tree.body[-1]
        body = tree.body[:-1] if isinstance(last, ast.Expr) else tree.body
        exec(compile(ast.Module(body, []), f"block {{k}}", "exec"), namespace)
        if isinstance(last, ast.Expr):
            expr = compile(ast.Expression(last.value), f"block {{k}}", "eval")
            namespace["_last"] = eval(expr, namespace)

    import conformance as kit
    import plotnine_private as pp
    from plotnine_private.declarations import declared
    from test_conformance import CHECKS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        drawn = pp.layer_data(namespace["_last"], 0)
    assert len(drawn) and "count" in drawn, drawn
    names = set(pp.stats()["name"])
    for name in ("round_dp", "round_ckm"):
        assert name in names, name
        entry = declared(name)
        for check in CHECKS:
            check(entry)
        kit.check_neighbours(entry, whole_person=True)
        kit.check_save_release(entry, Path(tempfile.mkdtemp()) / "bundle")
    print("ran", len(CHECKS) + 2, "checks on", len(drawn), "bars")
    """
)


def test_the_doc_holds_a_complete_family_and_its_use():
    blocks = python_blocks()
    assert any("class stat_round_dp" in b for b in blocks)
    assert any("stat_round_ckm" in b for b in blocks)
    assert any('stat="round_dp"' in b for b in blocks)


def test_the_worked_example_runs_and_passes_the_kit():
    code = RUNNER.format(tests=str(ROOT / "tests"), blocks=python_blocks())
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ran "), done.stdout
