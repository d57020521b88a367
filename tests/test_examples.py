"""The examples notebook runs, headless, cell by cell, and says what it
promises: a warning with its fix for the naive swaps, a comparison figure,
a noise caption, and the privacy report."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def executed():
    nb = nbformat.read(EXAMPLES / "naive_swap.ipynb", as_version=4)
    # kernel "python3" is ipykernel's native spec: this interpreter.
    # Figures as plain PNG: plotnine's default "retina" renders each at
    # twice the dpi, four times the pixels (a seventh of the kernel's
    # time); what is drawn, and that it draws, is the same
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(EXAMPLES)}},
        extra_arguments=["--InlineBackend.figure_format=png"],
    )
    client.execute()
    return nb


def _outputs(cell):
    return "".join(
        o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
        for o in cell.outputs
    )


def test_every_cell_runs_without_error(executed):
    errors = [
        o
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert errors == []
    drawn = sum(
        "image/png" in o.get("data", {})
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert drawn >= 15


def test_the_naive_swaps_warn_with_their_fix(executed):
    text = "\n".join(
        _outputs(c) for c in executed.cells if c.cell_type == "code"
    )
    assert "the domain of 'class' is not declared" in text
    assert "Declare the levels" in text
    assert "the range of x was estimated privately" in text
    assert "limits=" in text
    # no warning about a reused seed: one seed per figure
    assert "already used in this session" not in text


def test_noise_caption_comparison_and_report(executed):
    text = "\n".join(
        _outputs(c) for c in executed.cells if c.cell_type == "code"
    )
    assert "count_dp" in text and "Privacy report" in text
    sources = [c.source for c in executed.cells]
    assert any("pp.compare(" in s for s in sources)
    assert any("noise_caption(" in s for s in sources)
    assert any("pd.Timestamp(" in s for s in sources)
