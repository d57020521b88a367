"""What makes ``import plotnine_private`` slow stays out (untimed checks;
``benchmarks/import_time.py`` measures the time itself).

plotnine's ``document`` decorator, which our stats use, looks for section
headers with the regular expression ``\\n((\\w+\\s\\w+)+)\\s*\\n-{3,}``
(``doctools.SECTIONS_PATTERN``) in the dedented docstring. On a line that
starts with a long run of words separated by single spaces (or line
breaks) and no punctuation, the repeated group can split the run in
exponentially many ways, and Python's regex engine tries each before it
fails: one such line in ``stat_ecdf_dp`` once cost 2.4 s at import.
"""

from __future__ import annotations

import inspect
import re
from textwrap import dedent

import pytest
from plotnine.doctools import SECTIONS_PATTERN
from plotnine.geoms.geom import geom
from plotnine.stats.stat import stat

import plotnine_private as pp

# group matches the engine may try from one line start; the slowest line
# left tries ~8e4 (tens of ms), the one that cost 2.4 s tried ~1.4e7
MAX_TRIES = 200_000


def tries_from(text: str) -> list[int]:
    """For each position of ``text``: how many matches of the group
    ``(\\w+\\s\\w+)`` the engine tries when ``(\\w+\\s\\w+)+`` is
    matched there and fails (every way to split the run of words there
    into groups of one separator each)."""
    n = len(text)
    word = [c.isalnum() or c == "_" for c in text]
    out = [0] * (n + 1)
    # right to left: a group ends inside a later word, where the count
    # of what follows is known already
    for a in range(n - 1, -1, -1):
        if not word[a]:
            continue
        i = a
        while i < n and word[i]:
            i += 1
        if i >= n or not text[i].isspace():
            continue
        j = i + 1
        while j < n and word[j]:
            j += 1
            out[a] += 1 + out[j]
    return out


def regex_tries(text: str, start: int) -> int:
    """:func:`tries_from` at one position."""
    return tries_from(text)[start]


def test_regex_tries_counts_the_splits_of_a_run_of_words():
    # "ab cd": the group is "ab c" or "ab cd" -> 2 tries
    assert regex_tries("\nab cd", 1) == 2
    # a comma ends the run: nothing to split after it
    assert regex_tries("\nab, cd", 1) == 0
    # more words, many more splits
    short = regex_tries("\n" + " ".join(["word"] * 4), 1)
    long = regex_tries("\n" + " ".join(["word"] * 12), 1)
    assert long > 100 * short


def test_the_count_agrees_with_the_regex_engine_on_a_small_case():
    # a line the pattern must reject: its cost grows with the count
    text = "\n" + " ".join(["abc"] * 6) + " end\nno underline\n"
    assert SECTIONS_PATTERN.search(text) is None
    assert regex_tries(text, 1) > 0


def _documented_classes():
    seen = {}
    for value in vars(pp).values():
        if (
            inspect.isclass(value)
            and issubclass(value, (stat, geom))
            and value.__module__.startswith("plotnine_private")
            and value.__doc__
        ):
            seen[value.__name__] = value
    return sorted(seen.items())


@pytest.mark.parametrize("name", [n for n, _ in _documented_classes()])
def test_no_docstring_line_makes_plotnine_backtrack(name):
    doc = dedent(dict(_documented_classes())[name].__doc__)
    tries = tries_from(doc)
    worst = max(
        (
            (tries[m.end()], doc[m.end() : m.end() + 60])
            for m in re.finditer("\n", doc)
        ),
        default=(0, ""),
    )
    assert worst[0] <= MAX_TRIES, (
        f"{name}: the docstring line starting {worst[1]!r} makes plotnine's "
        "section regex try "
        f"{worst[0]} splits at import; put punctuation (a comma, "
        "parentheses) into its run of words"
    )


def test_every_private_stat_is_checked():
    names = {n for n, _ in _documented_classes()}
    assert {"stat_ecdf_dp", "stat_boxplot_dp", "stat_density_dp"} <= names


#: imported only inside the functions that need them: plotnine's import
#: loads none of them, and scipy.special alone (~0.3 s) was the package's
#: whole import budget of 0.5 s
HEAVY = ("scipy", "statsmodels", "duckdb", "polars", "pyspark", "narwhals")


def test_no_module_imports_a_heavy_library_at_import_time():
    import ast
    from pathlib import Path

    root = Path(pp.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only; functions import late
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            found += [
                f"{path.relative_to(root)}: {n}"
                for n in names
                if n.split(".")[0] in HEAVY
            ]
    assert not found, f"import these inside the functions using them: {found}"
