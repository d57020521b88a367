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
import pandas as pd
import pytest
from numpydoc.docscrape import NumpyDocString
from plotnine import aes, geom_bar, ggplot
from plotnine._utils.registry import Registry

import plotnine_private as pp
from plotnine_private import _version
from plotnine_private.door import layer_releases
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
    assert {
        "stat_count_dp",
        "stat_bin_ckm",
        "stat_binhex_dp",
        "stat_sum_ckm",
        "stat_dp_pca_score",
        "geom_hex",
    } <= set(CLASSES)
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

#: what a CKM stat needs besides its count p-table before it looks at it
CKM_REQUIRED = {
    "stat_summary_ckm": {
        "bounds": (0, 10),
        "num_ptable": pp.create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5]),
    },
}

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
        CLASSES[stat_name](ptable=value, **CKM_REQUIRED.get(stat_name, {}))
    text = str(err.value)
    assert text.startswith(f"{stat_name}(): ptable must be a PTable")
    _ptable_message_ok(text, got, extra)


def test_ckm_layer_and_table_refuse_a_dict_ptable(mpg):
    with pytest.raises(PlotninePrivateError, match=r"got dict \{'D': 2"):
        ggplot() + geom_bar(stat="count_ckm", ptable={"D": 2, "V": 1.05})
    keyed = pp.add_record_keys(mpg, rng_seed=1)
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
    fix = re.search(
        r"ptable=(create_cnt_ptable\(\*\*\{.*?\}\))", str(err.value)
    ).group(1)
    ptable = eval(fix, {"create_cnt_ptable": pp.create_cnt_ptable})
    assert ptable == pp.create_cnt_ptable(D=2, V=1.05)
    keyed = pp.add_record_keys(mpg, rng_seed=1)
    t = pp.ckm_table(keyed, "class", rkey="rkey", ptable=ptable)
    assert int(t["count"].sum()) > 0


# -- 6. the full command in save_release -------------------------------------


def test_save_release_records_a_multiline_call(mpg, tmp_path, key_file):
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_dp", eps=1, seed=5)
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
    # every line of the call, written back from its parse
    assert command == (
        "folder = pp.save_release(p, tmp_path / 'bundle', comments="
        "['multi-line call'], rules={'threshold': 5})"
    )


def test_statement_finder_cases():
    from plotnine_private.statements import statement_at as _statement_at

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


def test_statement_finder_parses_once_and_answers_as_a_fresh_parse():
    # the parse of a source is kept (the ledger and the bundle ask about
    # one file many times): every line of a real module gets the same
    # statement from the kept parse as from a parse made for it alone
    from plotnine_private import statements

    src = Path(statements.__file__).read_text()
    lines = range(1, src.count("\n") + 2)
    kept = [statements.statement_at(src, n) for n in lines]
    parses = statements._statements.cache_info().misses
    assert [statements.statement_at(src, n) for n in lines] == kept
    assert statements._statements.cache_info().misses == parses
    fresh = []
    for n in lines:
        statements._statements.cache_clear()
        fresh.append(statements.statement_at(src, n))
    assert fresh == kept
    assert sum(k is not None for k in kept) > 40
    # another source is another parse, not a stale answer
    assert statements.statement_at("x = 1\ny = 2\n", 2) == "y = 2"


def test_save_release_falls_back_to_the_line_without_source(
    mpg, tmp_path, monkeypatch, key_file
):
    from plotnine_private.bundle import saving as bundle

    monkeypatch.setattr(bundle, "statement_at", lambda src, line: None)
    p = ggplot(mpg, aes("class")) + geom_bar(stat="count_dp", eps=1, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pp.save_release(p, tmp_path / "b")  # one line
    meta = json.loads((tmp_path / "b" / "results.json").read_text())
    # the line, parsed: its comment dropped
    assert meta["results"]["output_0"]["command"] == (
        "pp.save_release(p, tmp_path / 'b')"
    )


# -- 4. frames the package cannot take, and polars ---------------------------

WRONG_FRAMES = [
    ([{"x": "a"}], "list", "pandas.DataFrame(rows)"),
    (np.array([["a"], ["b"]]), "numpy.ndarray", "columns=[...]"),
    ({"x": ["a", "b"]}, "dict", "pandas.DataFrame(data)"),
    (pd.Series(["a", "b"], name="x"), "pandas.Series", "to_frame()"),
]


def _lazy():
    pl = pytest.importorskip("polars")
    return pl.DataFrame({"x": ["a", "b"]}).lazy()


@pytest.mark.parametrize(("data", "got", "fix"), WRONG_FRAMES)
def test_tables_name_the_frame_type_and_fix(data, got, fix):
    ptable = pp.create_cnt_ptable(D=2, V=1.05)
    calls = {
        "dp_table": lambda: pp.dp_table(data, "x", eps=1, seed=1),
        "ckm_table": lambda: pp.ckm_table(data, "x", rkey="k", ptable=ptable),
        "add_record_keys": lambda: pp.add_record_keys(data, rng_seed=1),
    }
    for name, call in calls.items():
        with pytest.raises(ParameterError) as err:
            call()
        text = str(err.value)
        assert text.startswith(
            f"{name}(): data must be a pandas or polars DataFrame or a "
            f"source(...) table, got {got};"
        ), text
        assert fix in text


@pytest.mark.parametrize(("data", "got", "fix"), WRONG_FRAMES)
@pytest.mark.parametrize(
    "make",
    [
        lambda d: pp.stat_count_dp(aes("x"), d, eps=1),
        lambda d: pp.stat_bin_ckm(
            d, aes("x"), ptable=pp.create_cnt_ptable(D=2, V=1.05)
        ),
        lambda d: pp.stat_binhex_dp(aes("x", "y"), data=d, eps=1),
        lambda d: pp.stat_dp_pca_score(data=d, eps=1),
    ],
    ids=["count_dp", "bin_ckm (data first)", "binhex_dp", "dp_pca_score"],
)
def test_private_stats_name_the_frame_type_and_fix(make, data, got, fix):
    with pytest.raises(PlotninePrivateError) as err:
        make(data)
    text = str(err.value)
    assert "(): data must be a pandas or polars DataFrame" in text
    assert f"got {got};" in text and fix in text


def test_a_polars_lazy_frame_is_told_to_collect():
    lazy = _lazy()
    for call in (
        lambda: pp.dp_table(lazy, "x", eps=1, seed=1),
        lambda: pp.add_record_keys(lazy, rng_seed=1),
        lambda: pp.stat_count_dp(aes("x"), lazy, eps=1),
    ):
        with pytest.raises(
            ParameterError,
            match=r"got polars\.LazyFrame; "
            r"collect it first: data\.collect\(\)",
        ):
            call()


def test_polars_frames_are_accepted_and_keyed_like_pandas(mpg):
    pl = pytest.importorskip("polars")
    frame = mpg[["class", "drv"]]
    keyed_pd = pp.add_record_keys(frame, rng_seed=3)
    keyed_pl = pp.add_record_keys(pl.from_pandas(frame), seed=3)
    # a polars frame in, a polars frame out, with the very same keys
    assert isinstance(keyed_pl, pl.DataFrame)
    assert keyed_pl.columns == ["class", "drv", "rkey"]
    np.testing.assert_array_equal(
        keyed_pl["rkey"].to_numpy(), keyed_pd["rkey"].to_numpy()
    )
    ints = pp.add_record_keys(pl.from_pandas(frame), seed=3, integer_range=256)
    assert (
        ints["rkey"].to_list()
        == pp.add_record_keys(frame, rng_seed=3, integer_range=256)[
            "rkey"
        ].tolist()
    )
    with pytest.raises(ParameterError, match="already has a column 'rkey'"):
        pp.add_record_keys(keyed_pl, rng_seed=1)
    # tables and plots take the polars frame: the same numbers as pandas
    ptable = pp.create_cnt_ptable(D=2, V=1.05)
    from_pl = pp.ckm_table(keyed_pl, "class", rkey="rkey", ptable=ptable)
    from_pd = pp.ckm_table(keyed_pd, "class", rkey="rkey", ptable=ptable)
    pd.testing.assert_frame_equal(from_pl, from_pd)
    plot = ggplot(keyed_pl, aes("class", rkey="rkey")) + geom_bar(
        stat="count_ckm", ptable=ptable
    )
    drawn = pp.layer_data(plot)
    assert sorted(drawn["count"].tolist()) == sorted(from_pd["count"].tolist())
    dp = pp.dp_table(pl.from_pandas(frame), "class", eps=1, seed=4)
    assert dp.equals(pp.dp_table(frame, "class", eps=1, seed=4))


# -- 5. a p-table that cannot reach V ----------------------------------------


@pytest.mark.parametrize(
    ("build", "kwargs"),
    [
        (pp.create_cnt_ptable, {"D": 3, "V": 50}),
        (pp.create_cnt_ptable, {"D": 4, "V": 9, "js": 1}),
        (pp.create_num_ptable, {"D": 3, "V": 50, "icat": [1, 3]}),
        (pp.create_num_ptable, {"D": 2, "V": 8, "step": 4, "icat": [1, 2]}),
    ],
    ids=["cnt D=3 V=50", "cnt js=1", "num D=3 V=50", "num step=4"],
)
def test_unreachable_variance_warns_and_the_suggested_d_reaches_it(
    build, kwargs
):
    with pytest.warns(pp.PTableVarianceWarning) as record:
        pt = build(**kwargs)
    text = str(record[0].message)
    reached = pt.diagnostics["p_var"].iloc[-1]
    assert reached < kwargs["V"]
    # the message states the variance reached, the V asked and the fix
    assert f"V={kwargs['V']}" in text
    assert f"below V: {reached:.4g} in the last row" in text
    fix = int(re.search(r"use a larger D \(D >= (\d+)\)", text).group(1))
    assert fix > kwargs["D"]
    icat = kwargs.get("icat")
    better = {**kwargs, "D": fix}
    if icat is not None:
        better["icat"] = [1, fix]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ok = build(**better)
    assert ok.diagnostics["p_var"].iloc[-1] >= kwargs["V"] - 1e-6
    # and it is the smallest D that does
    if fix - 1 > kwargs["D"]:
        worse = {**better, "D": fix - 1}
        if icat is not None:
            worse["icat"] = [1, fix - 1]
        with pytest.warns(pp.PTableVarianceWarning):
            build(**worse)


# -- 7. the hint for public bins names parameters the stat takes ------------


@pytest.mark.parametrize(
    ("stat", "mapping", "takes_breaks"),
    [
        ("binhex_ckm", {"x": "displ", "y": "hwy"}, False),
        ("bin_hex_ckm", {"x": "displ", "y": "hwy"}, False),
        ("bin2d_ckm", {"x": "displ", "y": "hwy"}, True),
        ("bin_ckm", {"x": "displ"}, True),
    ],
)
def test_ckm_bins_hint_names_only_parameters_of_the_stat(
    mpg, stat, mapping, takes_breaks
):
    keyed = pp.add_record_keys(mpg, rng_seed=1)
    cls = getattr(pp, f"stat_{stat}")
    ptable = pp.create_cnt_ptable(D=2, V=1.05)
    plot = ggplot(keyed, aes(**mapping, rkey="rkey")) + cls(ptable=ptable)
    with pytest.raises(PlotninePrivateError) as err:
        pp.layer_data(plot)
    text = str(err.value)
    assert text.startswith(f"stat_{stat}(): needs public bins on x: give ")
    named = set(re.findall(r"(\w+)=", text))
    assert named <= set(cls.DEFAULT_PARAMS), named - set(cls.DEFAULT_PARAMS)
    assert ("breaks" in named) is takes_breaks
    assert {"limits", "bins", "binwidth"} <= named
    assert "xlim(lo, hi)" in text
    # following the hint works
    limits = (1, 7.5) if len(mapping) == 1 else ((1, 7.5), (10, 45))
    fixed = ggplot(keyed, aes(**mapping, rkey="rkey")) + cls(
        ptable=ptable, limits=limits, bins=10
    )
    assert pp.layer_data(fixed)["count"].sum() > 0


# -- 8. advice on a private range that is too narrow -------------------------

EDGE = "edge bins of the privately estimated range"


def _build_warnings(plot):
    from plotnine_private._compat import build

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        built = build(plot)
    edge = [
        w
        for w in record
        if issubclass(w.category, pp.PrivacyWarning) and EDGE in str(w.message)
    ]
    return built, edge


def _uniform(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"x": rng.uniform(0, 100, n), "y": rng.uniform(0, 100, n)}
    )


def test_edge_pile_of_a_private_range_is_advised_once():
    # n = 50 at eps = 1 is far below what the private range needs: it
    # comes out near 0 and every record is clamped into the upper edge bin
    # (so it did under stream version 2, the default when this was found)
    plot = ggplot(_uniform(50), aes("x")) + pp.stat_bin_dp(eps=1, seed=0)
    with pp.use_stream_version(2):
        built, edge = _build_warnings(plot)
    assert len(edge) == 1
    text = str(edge[0].message)
    data = built.layers[0].data
    lo, hi = data["xmin"].min(), data["xmax"].max()
    assert hi < 50  # the range really is too narrow
    in_edge = data.loc[
        (data["xmin"] <= lo) | (data["xmax"] >= hi), "count"
    ].sum()
    # most of the 50 records are in the edge bins (the rest is noise)
    assert in_edge > 0.8 * 50
    assert data["count"].sum() - in_edge < 30 * 2.5
    assert text.startswith("stat_bin_dp: nearly all released counts")
    assert re.search(r"\d+% along x \(range -?[\d.e+-]+ to [\d.e+-]+\)", text)
    assert "probably too narrow for this eps" in text
    assert "limits=(lo, hi) with bins=/binwidth=" in text


def test_edge_pile_in_hexagons_names_the_hex_fix():
    hits = 0
    for seed in range(3):
        plot = ggplot(_uniform(150), aes("x", "y")) + pp.stat_binhex_dp(
            eps=1, seed=seed
        )
        _, edge = _build_warnings(plot)
        assert len(edge) <= 1
        if edge:
            hits += 1
            text = str(edge[0].message)
            assert text.startswith("stat_binhex_dp: nearly all")
            assert "limits=((xlo, xhi), (ylo, yhi))" in text
            assert "breaks=" not in text
    assert hits >= 1


@pytest.mark.parametrize(
    "layer",
    [
        lambda: pp.stat_bin_dp(eps=1, seed=0, limits=(0, 100)),
        lambda: pp.stat_bin_dp(eps=1, seed=0, breaks=np.linspace(0, 100, 11)),
    ],
    ids=["limits", "breaks"],
)
def test_no_edge_advice_with_public_bins(layer):
    # the same records that pile up under a private range
    _, edge = _build_warnings(ggplot(_uniform(50), aes("x")) + layer())
    assert edge == []


@pytest.mark.parametrize(
    ("stat", "mapping"),
    [
        (pp.stat_bin_dp, aes("x")),
        (pp.stat_bin2d_dp, aes("x", "y")),
        (pp.stat_binhex_dp, aes("x", "y")),
    ],
)
def test_no_edge_advice_when_the_private_range_is_good(stat, mapping):
    for seed in range(3):
        plot = ggplot(_uniform(2000), mapping) + stat(eps=1, seed=seed)
        built, edge = _build_warnings(plot)
        assert edge == [], str(edge[0].message)
        # a private range was used (the advice had a chance to fire)
        releases = layer_releases(built.layers[0])
        assert any(r.family == "range" for r in releases)


def test_edge_advice_is_post_processing_of_released_values():
    from types import SimpleNamespace

    from plotnine_private.stats.domains import AxisBreaks, advise_edge_mass

    # a stat whose released histogram piles into its last bin, and the
    # same with the pile in the middle: only released values differ
    breaks = np.linspace(0.0, 1.0, 31)
    release = SimpleNamespace(
        formal=True, details={"scale": 2.5}, mechanism="discrete_laplace"
    )
    stat = SimpleNamespace(
        name="stat_bin_dp",
        params={"breaks": None, "limits": None},
        REQUIRED_AES={"x"},
        build=SimpleNamespace(
            axis_cache={"x": AxisBreaks(breaks, "private estimate", True)},
            door=SimpleNamespace(scales=None),
        ),
    )

    def advice(pile_at: int) -> list:
        count = np.zeros(30, dtype=int)
        count[pile_at] = 200
        count[[3, 11, 20]] = [2, 5, 1]  # noise
        frame = pd.DataFrame(
            {"xmin": breaks[:-1], "xmax": breaks[1:], "count": count}
        )
        released = SimpleNamespace(values=count, release=release)
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            advise_edge_mass(stat, frame, released)
        return [str(w.message) for w in record]

    assert len(advice(29)) == 1 and len(advice(0)) == 1
    assert advice(15) == []
    # a CKM release (no formal guarantee, no private range) gets none
    release.formal = False
    assert advice(29) == []
