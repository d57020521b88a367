"""The documented differences and the suite's list are the same list."""

from __future__ import annotations

from pathlib import Path

from .differences import DIFFERENCES, REASONS, VERSION_DIFFERENCES
from .table import CASES

DOC = Path(__file__).resolve().parents[2] / "docs" / "parity.md"


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_docs_list_every_difference():
    doc = _flat(DOC.read_text())
    for key, reason in REASONS.items():
        assert f"`{key}`" in doc, key
        assert _flat(reason) in doc, key


def test_every_listed_difference_names_a_case_and_a_reason():
    cases = {c.id: c for c in CASES}
    listed = [DIFFERENCES, *VERSION_DIFFERENCES.values()]
    for table in listed:
        for (case_id, aspect), key in table.items():
            assert case_id in cases, case_id
            assert aspect != "image" or cases[case_id].image, case_id
            assert key in REASONS, key
    assert set(REASONS) == {k for t in listed for k in t.values()}
