"""Sphinx configuration of the plotnine_private documentation.

Build (warning-free is a gate in ``.ci/run``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The API pages are generated from the numpydoc docstrings (autosummary +
numpydoc), the example gallery from ``docs/examples/plot_*.py``
(sphinx-gallery), and the prose pages are Markdown (myst-parser).
"""

from __future__ import annotations

import os
import re
import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import plotnine_private  # noqa: E402

project = "plotnine_private"
author = "plotnine_private developers"
copyright = "plotnine_private developers, MIT licence"
release = version = "0.1.0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "examples/README.rst",
    "gallery/*.ipynb",
    "gallery/*.py",
    "gallery/*.zip",
    "gallery/*.json",
    "gallery/*.md5",
]
templates_path = ["_templates"]

# -- API reference -----------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# plotnine's stat docstrings carry its own "See Also" and usage blocks
numpydoc_validation_checks: set[str] = set()

# -- Markdown ----------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# -- Gallery -----------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["gallery"],
    "filename_pattern": r"/plot_",
    "image_scrapers": ("matplotlib",),
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_memory": False,
    "plot_gallery": "True",
}

# the examples print PrivacyWarnings on purpose (undeclared domains)
warnings.filterwarnings("ignore", category=plotnine_private.PrivacyWarning)
os.environ.setdefault("MPLBACKEND", "Agg")

# single backticks, as in plotnine's docstrings, are code
default_role = "literal"


# -- plotnine's docstring dialect -> reST ------------------------------------
# plotnine's ``@document`` fills stat and geom docstrings with its usage
# block and common parameters, written for quartodoc (pandoc Markdown):
# "`None`{.py}", "[aes](:class:`...`)", pipe-less tables. Rewrite those
# few forms into reST before numpydoc reads the docstring.
_PY_CODE = re.compile(r"`([^`]+)`\{\.py\}")
_EMPTY_LINK = re.compile(r"\[\]\(:(\w+):`([^`]+)`\)")
_LINK = re.compile(r"\[([^\]]+)\]\(:(\w+):`([^`]+)`\)")
_RULE = re.compile(r"^(\s*)-{3,}(\s+-{3,})+\s*$")


def _inline(line: str) -> str:
    line = _PY_CODE.sub(r"``\1``", line)
    line = _EMPTY_LINK.sub(r":\1:`\2`", line)
    return _LINK.sub(r":\2:`\1 <\3>`", line)


def _table(header: str, rows: list[str], indent: str) -> list[str]:
    cells = [re.split(r"\s{2,}", r.strip()) for r in [header, *rows]]
    ncol = max(len(c) for c in cells)
    cells = [c + [""] * (ncol - len(c)) for c in cells]
    widths = [max(len(c[k]) for c in cells) for k in range(ncol)]
    rule = indent + "  ".join("=" * w for w in widths)

    def fmt(c):
        text = "  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True))
        return indent + text.rstrip()

    return [rule, fmt(cells[0]), rule, *map(fmt, cells[1:]), rule]


def plotnine_to_rest(app, what, name, obj, options, lines):
    """Rewrite plotnine's quartodoc docstring forms into reST, in place."""
    src = [_inline(line) for line in lines]
    out: list[str] = []
    i = 0
    while i < len(src):
        line = src[i]
        if line.strip() == "**Usage**":
            out += ["**Usage**", "", ".. code-block:: python"]
            i += 1
            continue
        rule = _RULE.match(src[i + 1]) if i + 1 < len(src) else None
        if rule and line.strip():
            j = i + 2
            while j < len(src) and src[j].strip():
                j += 1
            out += _table(line, src[i + 2 : j], rule.group(1))
            i = j
            continue
        out.append(line)
        i += 1
    lines[:] = out


def setup(app):
    # before numpydoc (priority 500) parses the sections
    app.connect("autodoc-process-docstring", plotnine_to_rest, priority=100)


# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = "plotnine_private"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []
