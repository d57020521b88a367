"""The README's quick start runs as written, and its claims hold."""

from __future__ import annotations

import re
from pathlib import Path

import plotnine_private as pp

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_quick_start_runs_and_table_equals_plot(tmp_path, monkeypatch):
    import plotnine.data

    # the quick start edits mpg in place: give it a copy of its own
    monkeypatch.setattr(plotnine.data, "mpg", plotnine.data.mpg.copy())
    scope: dict = {}
    exec(compile(_python_blocks()[0], "README", "exec"), scope)
    bars = pp.layer_data(scope["p"], 0)
    table = pp.dp_table(scope["mpg"], "class", eps=1, seed=42)
    assert list(bars["count"]) == list(table["count"])
    ckm_bars = pp.layer_data(scope["q"], 0)
    ckm = pp.ckm_table(scope["cars"], "class", rkey="rk", ptable=scope["ptab"])
    assert list(ckm_bars["count"]) == list(ckm["count"])
    scope["p"].save(tmp_path / "p.png", verbose=False, dpi=20)


def test_first_code_block_has_exactly_two_commands():
    first = re.search(r"```\n(.*?)```", README.read_text(), re.S).group(1)
    lines = [ln for ln in first.splitlines() if ln.strip()]
    assert len(lines) == 2
    assert "gallery/render.py" in lines[0]
    assert "pytest" in lines[1]


def test_output_checking_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # the example selects a key file: the test's session (conftest)
    # restores the selection afterwards
    blocks = _python_blocks()
    assert len(blocks) == 5
    scope: dict = {}
    exec(compile(blocks[1] + "\n" + blocks[2], "README", "exec"), scope)
    report = pp.privacy_report(scope["p"])
    assert report.total_eps == 1
    bundle = tmp_path / "release" / "cars_by_class"
    assert (bundle / "results.json").is_file()
    assert (bundle / "checksums.sha256").is_file()


def test_ledger_example_runs_and_charges_what_it_says(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(_python_blocks()[3], "README", "exec"), scope)
    assert "ledger budget exceeded" in capsys.readouterr().out
    book = pp.ledger(tmp_path / "ledger.sqlite")
    assert book.table["eps"].tolist() == [1.0, 1.0]
    assert book.caps == {"mpg extract 2024": (2.0, 0.0)}
    assert (tmp_path / "fig1_again.png").is_file()


def test_planning_numbers_in_the_readme():
    text = README.read_text()
    assert 'pp.accuracy("count_dp", eps=1)` gives the ±6' in text
    assert pp.accuracy("count_dp", eps=1) == 6
    assert "(about 1.66)" in text
    assert round(pp.eps_for("count_dp", error=3), 2) == 1.66


def test_unit_example_bounds_each_person_and_names_them(capsys):
    scope: dict = {}
    exec(compile(_python_blocks()[4], "README", "exec"), scope)
    line = (
        "privacy unit: person, at most 5 records each; records without an "
        "id left out"
    )
    assert capsys.readouterr().out.strip() == line
    release = scope["report"].table.iloc[0]
    assert release["sensitivity"] == 10  # replace: 2 x 5 records
    bars = pp.layer_data(scope["fig"], 0)
    kept = scope["visits"].groupby("person").size().clip(upper=5).sum()
    # the released counts add up to the bounded records, give or take
    # the noise of three bars (scale 10 each)
    assert abs(bars["count"].sum() - kept) < 3 * 10 * 8
    assert kept < len(scope["visits"])


def test_tables_of_stats_are_generated_from_the_declarations():
    """The README's table of stats and the planning table of
    docs/choosing-eps.md are the declarations' (tools/doc_tables.py):
    every registered family has its row."""
    import importlib.util

    path = README.parent / "tools" / "doc_tables.py"
    spec = importlib.util.spec_from_file_location("doc_tables", path)
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    for doc, name, make in tables.TABLES:
        text = (README.parent / doc).read_text()
        assert tables.updated(text, name, make()) == text, (
            f"{doc} is behind the declarations: run python tools/doc_tables.py"
        )
    families = {e.declaration.family for e in pp.declarations.registered()}
    table = tables.stat_table()
    for family in families:
        entry = pp.declarations.twin(family, "dp")
        assert f"`{entry.name}`" in table, family
