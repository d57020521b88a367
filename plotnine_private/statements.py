"""The source statement behind a call, with its seeds hidden.

The bundle and the ledger record *which* statement made a release (the
call as the user wrote it, all its lines), never a seed: without a key
file a seed is the secret. Seeds are hidden by parsing the statement
(:func:`redact_seeds`), not by a text pattern: a seed reaches a call
through loops, comprehensions, sums and f-strings, which no pattern
follows.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap

__all__ = ["SEED_MARK", "redact_seed_words", "redact_seeds", "statement_at"]

#: what a hidden seed reads as
SEED_MARK = "<seed>"
#: what a statement that does not parse reads as (its text is not kept)
UNPARSED = "<statement not shown: it does not parse>"

# a compound statement's header (``for s in seeds:``) parses with a body
_BODY = "\n    pass"


def _is_seed_name(name: str | None) -> bool:
    return name is not None and "seed" in name.lower()


def _target_names(target: ast.AST) -> set[str]:
    """The names a target binds (``s``, ``(a, b)``, ``*rest``)."""
    return {
        n.id
        for n in ast.walk(target)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _names_seed(target: ast.AST) -> bool:
    """Whether an assignment target names a seed: ``seed``, ``my_seed``,
    ``cfg.seed``, ``kw["seed"]``."""
    for n in ast.walk(target):
        if isinstance(n, ast.Name) and _is_seed_name(n.id):
            return True
        if isinstance(n, ast.Attribute) and _is_seed_name(n.attr):
            return True
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.slice, ast.Constant)
            and isinstance(n.slice.value, str)
            and _is_seed_name(n.slice.value)
        ):
            return True
    return False


def _bindings(tree: ast.AST) -> list[tuple[ast.AST, ast.expr]]:
    """Every (target, value) pair of the tree: assignments, loops and
    comprehensions (the value of a loop is its iterable), parameters
    with defaults."""
    pairs: list[tuple[ast.AST, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs += [(t, node.value) for t in node.targets]
        elif isinstance(node, (ast.AugAssign, ast.NamedExpr, ast.AnnAssign)):
            if node.value is not None:
                pairs.append((node.target, node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            pairs.append((node.target, node.iter))
        elif isinstance(node, ast.arguments):
            positional = node.posonlyargs + node.args
            with_default = positional[len(positional) - len(node.defaults) :]
            pairs += [
                (ast.Name(a.arg, ast.Store()), d)
                for a, d in zip(with_default, node.defaults)
            ]
            pairs += [
                (ast.Name(a.arg, ast.Store()), d)
                for a, d in zip(node.kwonlyargs, node.kw_defaults)
                if d is not None
            ]
    return pairs


def _seed_values(tree: ast.AST) -> list[ast.expr]:
    """The expressions that give a seed: the value of every keyword or
    dict key naming a seed (``seed=``, ``{"seed": ...}``), of every
    assignment to a seed name, and, followed back through the statement,
    whatever binds a name those expressions use (a loop's or a
    comprehension's iterable, an assignment's value)."""
    found: dict[int, ast.expr] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and _is_seed_name(node.arg):
            found[id(node.value)] = node.value
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if (
                    isinstance(k, ast.Constant)
                    and isinstance(k.value, str)
                    and _is_seed_name(k.value)
                ):
                    found[id(v)] = v
    pairs = _bindings(tree)
    for target, value in pairs:
        if _names_seed(target):
            found[id(value)] = value
    while True:  # to a fixed point: names used by a seed are seeds
        used = {
            n.id
            for v in found.values()
            for n in ast.walk(v)
            if isinstance(n, ast.Name)
        }
        more = {
            id(value): value
            for target, value in pairs
            if id(value) not in found and _target_names(target) & used
        }
        if not more:
            return list(found.values())
        found.update(more)


class _Hide(ast.NodeTransformer):
    def __init__(self, hidden: set[int]):
        self.hidden = hidden

    def visit(self, node: ast.AST) -> ast.AST:
        if id(node) in self.hidden:
            return ast.Name(id=SEED_MARK, ctx=ast.Load())
        return super().visit(node)


def redact_seeds(code: str) -> str:
    """``code`` with every seed replaced by ``<seed>``, found by parsing
    it: the value of every ``seed=`` keyword and ``"seed"`` dict key, of
    every assignment to a name containing ``seed``, and whatever in the
    code binds a name those values use (a loop's or a comprehension's
    iterable, a walrus). Written back from the parse (``ast.unparse``),
    so comments are dropped too; code that does not parse is not kept
    (:data:`UNPARSED`).

    >>> redact_seeds("geom_bar(stat='count_dp', eps=1, seed=42)")
    "geom_bar(stat='count_dp', eps=1, seed=<seed>)"
    >>> redact_seeds("[pp.dp_table(d, 'x', eps=1, seed=s) for s in (4, 2)]")
    "[pp.dp_table(d, 'x', eps=1, seed=<seed>) for s in <seed>]"
    >>> redact_seeds('kw = {"seed": 90210}; my_seed = 7')
    "kw = {'seed': <seed>}\\nmy_seed = <seed>"
    """
    text = textwrap.dedent(code).strip()
    header = False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        try:  # a compound statement's header alone
            tree = ast.parse(text + _BODY)
            header = True
        except (SyntaxError, ValueError):
            return UNPARSED
    hidden = {id(v) for v in _seed_values(tree)}
    out = ast.unparse(ast.fix_missing_locations(_Hide(hidden).visit(tree)))
    if header and out.endswith(_BODY):
        out = out[: -len(_BODY)]
    return out


# any name or dict key containing "seed", assigned with = or :
_SEED_WORDS = re.compile(
    r"""(\w*seed\w*["']?\s*[=:]\s*)([^,;)\s}\]]+)""", re.IGNORECASE
)


def redact_seed_words(text: str) -> str:
    """Hide the value after every ``seed=`` or ``seed:`` in free text
    (a bundle's comments, which are prose, not code).

    >>> redact_seed_words("drawn with seed=42, eps 1")
    'drawn with seed=<seed>, eps 1'
    """
    return _SEED_WORDS.sub(r"\1" + SEED_MARK, text)


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
