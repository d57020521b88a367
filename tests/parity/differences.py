"""Every case whose private figure must differ from plotnine's, with the
reason: the one list of the suite. ``docs/parity.md`` shows each reason
word for word (``test_docs_list_every_difference`` holds them together).
"""

from __future__ import annotations

#: why a private twin differs (shown to users in docs/parity.md)
REASONS: dict[str, str] = {
    "dp-weights": (
        "The weight aesthetic is refused by DP stats: one record of "
        "unbounded weight has unbounded sensitivity. The CKM twins "
        "perturb weighted counts."
    ),
    "sum-discrete": (
        "geom_count with a discrete x or y is refused: stat_sum_dp and "
        "stat_sum_ckm count points on a public grid of continuous "
        "positions. Count categories with stat='count_dp' and a fill, or "
        "use stat='bin2d_dp' for two continuous positions."
    ),
}

#: (case id, aspect) -> key of REASONS; aspect "*" is every aspect
DIFFERENCES: dict[tuple[str, str], str] = {
    ("histogram-weights", "*"): "dp-weights",
    ("count-discrete-x", "*"): "sum-discrete",
    ("count-discrete-x-ckm", "*"): "sum-discrete",
}


def expected_failure(case_id: str, aspect: str) -> str | None:
    """The documented reason ``case_id`` differs in ``aspect``, if any."""
    key = DIFFERENCES.get((case_id, aspect)) or DIFFERENCES.get((case_id, "*"))
    return REASONS[key] if key else None
