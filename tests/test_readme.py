"""The README's quick start runs as written, and its claims hold."""

from __future__ import annotations

import re
from pathlib import Path

import plotnine_private as pp

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_quick_start_runs_and_table_equals_plot(tmp_path):
    scope: dict = {}
    exec(compile(_python_blocks()[0], "README", "exec"), scope)
    bars = pp.layer_data(scope["p"], 0)
    table = pp.dp_table(scope["mpg"], "class", eps=1, seed=42)
    assert list(bars["count"]) == list(table["count"])
    ckm_bars = pp.layer_data(scope["q"], 0)
    ckm = pp.ckm_table(scope["cars"], "class", rkey="rk",
                       ptable=scope["ptab"])
    assert list(ckm_bars["count"]) == list(ckm["count"])
    scope["p"].save(tmp_path / "p.png", verbose=False)


def test_first_code_block_has_exactly_two_commands():
    first = re.search(r"```\n(.*?)```", README.read_text(), re.S).group(1)
    lines = [ln for ln in first.splitlines() if ln.strip()]
    assert len(lines) == 2
    assert "gallery/render.py" in lines[0]
    assert "pytest" in lines[1]
