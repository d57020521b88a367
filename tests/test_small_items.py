"""Small items of a new user's first session: rendered docstrings, the
version, clear errors for a wrong ``ptable`` or frame type, p-table
variance warnings, the full command in ``save_release``, the hex hint and
the advice on a private range that is too narrow."""

from __future__ import annotations

import importlib.metadata
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from numpydoc.docscrape import NumpyDocString
from plotnine import aes, geom_bar, ggplot
from plotnine._utils.registry import Registry

import plotnine_private as pp
from plotnine_private import _version
from plotnine_private.exceptions import PlotninePrivateError
from plotnine_private.mechanisms.errors import ParameterError
from plotnine_private.stats.base import CKMMixin, PrivateCountStat

ROOT = Path(__file__).resolve().parents[1]


def _private_classes() -> dict[str, type]:
    """Every stat and geom this package registers with plotnine."""
    return {
        name: cls
        for name, cls in Registry.items()
        if cls.__module__.startswith("plotnine_private")
        and not name.startswith("_")
        and cls is not PrivateCountStat
    }


CLASSES = _private_classes()
CKM_STATS = sorted(
    name
    for name, cls in CLASSES.items()
    if isinstance(cls, type) and issubclass(cls, CKMMixin)
)


# -- 1. docstrings -----------------------------------------------------------


def test_every_private_stat_and_geom_is_checked():
    # the registry lists them all (a stat missing here escapes the check)
    assert {"stat_count_dp", "stat_bin_ckm", "stat_binhex_dp",
            "stat_sum_ckm", "stat_dp_pca_score", "geom_hex"} <= set(CLASSES)
    assert len(CKM_STATS) >= 7


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_docstring_is_rendered_with_single_braces(name):
    doc = CLASSES[name].__doc__
    assert doc
    assert "{{" not in doc and "}}" not in doc, name
    # plotnine's @document filled in its templates
    for template in ("{usage}", "{common_parameters}", "{aesthetics}"):
        assert template not in doc, (name, template)


def test_choice_parameters_read_as_numpydoc_sets():
    params = {
        p.name: p.type
        for p in NumpyDocString(pp.stat_count_dp.__doc__)["Parameters"]
    }
    assert params["adjacency"] == (
        '{"replace", "add_remove"}, default="replace"'
    )
    assert params["noise"].startswith('{"discrete_laplace", "laplace"}')
    pca = {
        p.name: p.type
        for p in NumpyDocString(pp.stat_dp_pca_score.__doc__)["Parameters"]
    }
    assert pca["output"].startswith('{"histogram", "synthetic"}')


# -- 2. __version__ ----------------------------------------------------------


def test_version_is_the_installed_distribution():
    assert pp.__version__ == importlib.metadata.version("plotnine-private")
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", pp.__version__)


def test_version_matches_pyproject():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pp.__version__ == project["project"]["version"]


def test_version_falls_back_without_metadata(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert _version.installed_version() == "0+unknown"


# -- 3. a wrong ptable type --------------------------------------------------

WRONG_PTABLES = [
    ({"D": 2, "V": 1.05}, "dict", "create_cnt_ptable(**{'D': 2, 'V': 1.05})"),
    ({"i": [0, 1], "j": [0, 1]}, "dict", "pandas.DataFrame(...)"),
    (3, "int", None),
    ([0.5, 0.5], "list", "pandas.DataFrame(...)"),
    (np.arange(3), "numpy.ndarray", None),
]


def _ptable_message_ok(text: str, got: str, extra: str | None) -> None:
    assert "ptable must be a PTable" in text
    assert f"got {got} " in text
    assert "create_cnt_ptable(D=..., V=...)" in text
    assert "read_ptable(path)" in text and "file path" in text
    if extra:
        assert extra in text


@pytest.mark.parametrize("stat_name", CKM_STATS)
@pytest.mark.parametrize(("value", "got", "extra"), WRONG_PTABLES)
def test_ckm_stat_names_ptable_type_and_fix(stat_name, value, got, extra):
    with pytest.raises(PlotninePrivateError) as err:
        CLASSES[stat_name](ptable=value)
    text = str(err.value)
    assert text.startswith(f"{stat_name}(): ptable must be a PTable")
    _ptable_message_ok(text, got, extra)


def test_ckm_layer_and_table_refuse_a_dict_ptable(mpg):
    with pytest.raises(PlotninePrivateError, match=r"got dict \{'D': 2"):
        geom_bar(stat="count_ckm", ptable={"D": 2, "V": 1.05})
    keyed = pp.add_record_keys(mpg, seed=1)
    with pytest.raises(PlotninePrivateError) as err:
        pp.ckm_table(keyed, "class", rkey="rkey", ptable={"D": 2, "V": 1})
    assert str(err.value).startswith("ckm_table(): ptable must be a PTable")
    _ptable_message_ok(str(err.value), "dict", "create_cnt_ptable(**")


@pytest.mark.parametrize(("value", "got", "extra"), WRONG_PTABLES)
def test_read_ptable_names_type_and_fix(value, got, extra):
    with pytest.raises(ParameterError) as err:
        pp.read_ptable(value)
    _ptable_message_ok(str(err.value), got, extra)


def test_the_suggested_ptable_works(mpg):
    # the fix the message gives, run as written, makes a table that works
    with pytest.raises(PlotninePrivateError) as err:
        pp.stat_count_ckm(ptable={"D": 2, "V": 1.05})
    fix = re.search(r"ptable=(create_cnt_ptable\(\*\*\{.*?\}\))",
                    str(err.value)).group(1)
    ptable = eval(fix, {"create_cnt_ptable": pp.create_cnt_ptable})
    assert ptable == pp.create_cnt_ptable(D=2, V=1.05)
    keyed = pp.add_record_keys(mpg, seed=1)
    t = pp.ckm_table(keyed, "class", rkey="rkey", ptable=ptable)
    assert int(t["count"].sum()) > 0


# -- 6. the full command in save_release -------------------------------------


def test_save_release_records_a_multiline_call(mpg, tmp_path):
    p = ggplot(mpg, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=5
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = pp.save_release(
            p,
            tmp_path / "bundle",
            comments=["multi-line call"],
            rules={"threshold": 5},
        )
    meta = json.loads((folder / "results.json").read_text())
    command = meta["results"]["output_0"]["command"]
    assert command == (
        "folder = pp.save_release(\n"
        "    p,\n"
        '    tmp_path / "bundle",\n'
        '    comments=["multi-line call"],\n'
        '    rules={"threshold": 5},\n'
        ")"
    )


def test_statement_finder_cases():
    from plotnine_private.bundle import _statement_at

    src = (
        "import x\n"
        "def f():\n"
        "    with open('a') as fh:\n"
        "        out = g(\n"
        "            1,\n"
        "            seed=2)\n"
        "    a = 1; b = h(3)\n"
        "    if k(\n"
        "        4):\n"
        "        pass\n"
    )
    full = "out = g(\n    1,\n    seed=2)"
    for line in (4, 5, 6):
        assert _statement_at(src, line) == full
    # a compound statement's header, not its body
    assert _statement_at(src, 9) == "if k(\n    4):"
    assert _statement_at(src, 1) == "import x"
    assert _statement_at("def broken(:\n", 1) is None


def test_save_release_falls_back_to_the_line_without_source(
    mpg, tmp_path, monkeypatch
):
    from plotnine_private import bundle

    monkeypatch.setattr(bundle, "_statement_at", lambda src, line: None)
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_dp", eps=1, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pp.save_release(p, tmp_path / "b")  # one line
    meta = json.loads((tmp_path / "b" / "results.json").read_text())
    assert meta["results"]["output_0"]["command"] == (
        'pp.save_release(p, tmp_path / "b")  # one line'
    )
