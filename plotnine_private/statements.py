"""The source statement behind a call, with its seeds hidden.

The bundle and the ledger record *which* statement made a release (the
call as the user wrote it, all its lines), never a seed: without a key
file a seed is the secret.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap

__all__ = ["redact_seeds", "statement_at"]


# any name or dict key containing "seed", assigned with = or :
_SEED_ASSIGNMENT = re.compile(
    r"""(\w*seed\w*["']?\s*[=:]\s*)([^,;)\s}\]]+)""", re.IGNORECASE
)


def redact_seeds(code: str) -> str:
    """Hide the value of every ``seed=...`` in a piece of code.

    >>> redact_seeds("geom_bar(stat='count_dp', eps=1, seed=42)")
    "geom_bar(stat='count_dp', eps=1, seed=<secret>)"
    >>> redact_seeds('kw = {"seed": 90210}; my_seed = 7')
    'kw = {"seed": <secret>}; my_seed = <secret>'
    """
    return _SEED_ASSIGNMENT.sub(r"\1<secret>", code)


def statement_at(source: str, lineno: int) -> str | None:
    """The whole statement of ``source`` that contains line ``lineno``
    (a call spread over several lines), dedented; the header only of a
    compound statement (``with ...:``) when the line is in its header."""
    statements = _statements(source)
    if statements is None:
        return None
    around = [
        node
        for node in statements
        if node.lineno <= lineno <= (node.end_lineno or node.lineno)
    ]
    if not around:
        return None
    # the innermost: starts last, and of those ends first
    best = max(around, key=lambda n: (n.lineno, -(n.end_lineno or n.lineno)))
    body = getattr(best, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
        # a compound statement whose header holds the call: its header
        lines = source.splitlines()[best.lineno - 1 : body[0].lineno - 1]
        text = "\n".join(lines).rstrip()
        return textwrap.dedent(text) or None
    segment = ast.get_source_segment(source, best, padded=True)
    return textwrap.dedent(segment).strip() if segment else None


@functools.lru_cache(maxsize=8)
def _statements(source: str) -> tuple[ast.stmt, ...] | None:
    """Every statement node of ``source`` (None if it does not parse),
    parsed once: a figure's releases and its bundle ask about the same
    file again and again, and parsing a long module took tens of
    milliseconds each time. The nodes are only read."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    return tuple(n for n in ast.walk(tree) if isinstance(n, ast.stmt))
