"""The persistent ledger of a data set: one row per release, re-draws free,
a cap checked and charged in one transaction across processes."""

from __future__ import annotations

import multiprocessing
import os
import runpy
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from neighbours import mixed_ids
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp
from plotnine_private.__main__ import main as cli
from plotnine_private.ledger import store as ledger_module
from plotnine_private.mechanisms.release.engine import LaplaceCounts
from plotnine_private.mechanisms.session import UNSET, update_session

# a ledger needs a key file; each test has its own (the key records the
# ledger each data set is charged to)
pytestmark = pytest.mark.usefixtures("ledger_key")

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ["2seater", "compact", "midsize", "minivan", "pickup", "subcompact"]


def _table(data, seed=1, eps=1.0, x="class"):
    levels = CLASSES + ["suv"] if x == "class" else None
    return pp.dp_table(data, x, eps=eps, seed=seed, levels=levels)


def _rows(path) -> pd.DataFrame:
    return pp.ledger(path).table


# --------------------------------------------------------------------------
# one process
# --------------------------------------------------------------------------
def test_redraw_is_free_new_query_or_changed_data_charged(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10)
    a = _table(mpg)
    b = _table(mpg)  # the same release: same noise, no charge
    pd.testing.assert_frame_equal(a, b)
    assert len(_rows(path)) == 1
    changed = mpg.copy()
    changed.loc[0, "class"] = "suv"
    _table(changed)  # same query, changed data: a new release
    _table(mpg, seed=2)  # a new query (another seed)
    _table(mpg, eps=0.5)  # a new query (another eps)
    t = _rows(path)
    assert len(t) == 4
    assert t["eps"].tolist() == [1.0, 1.0, 1.0, 0.5]
    assert t["identity"].iloc[0] == t["identity"].iloc[1]
    assert t["digest"].iloc[0] != t["digest"].iloc[1]
    assert pp.ledger(path).total["eps"].tolist() == [3.5]
    assert pp.ledger(path).total["remaining_eps"].tolist() == [6.5]


def test_a_redraw_never_names_its_cells(tmp_path, mpg, monkeypatch):
    """The ledger keeps the cells' name of a release it records; a
    re-draw found in it never makes that name again (a declared domain
    of 10**6 labels takes some 0.08 s to name: a repeat stays under a
    few ms)."""
    from plotnine_private.mechanisms.release import query as query_module

    named = []
    original = query_module._name_cells
    monkeypatch.setattr(
        query_module,
        "_name_cells",
        lambda q: named.append(q.family) or original(q),
    )
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10)
    _table(mpg)
    assert named == ["count"]  # the new release's row names its cells
    assert len(_rows(path)["cells"].iloc[0]) == 24  # 12 bytes, in hex
    _table(mpg)  # a re-draw: free, found by its identity and digest
    assert named == ["count"]
    assert len(_rows(path)) == 1


def test_rows_carry_unit_bound_mechanism_and_the_statement(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=10, cap_delta=1e-3)
    p = ggplot(mpg, aes("drv")) + geom_bar(stat="count_dp", eps=0.5, seed=7)
    with pytest.warns(pp.PrivacyWarning):
        p.draw()
    row = _rows(path).iloc[0]
    assert (row["unit"], row["bound"]) == ("one row", 1)
    assert (row["family"], row["mechanism"]) == ("count", "discrete_laplace")
    assert (row["eps"], row["delta"]) == (0.5, 1e-6)  # thresholded
    assert row["adjacency"] == "replace"
    assert row["what"] == "p.draw()"
    # the statement is recorded with its seed hidden
    pp.dp_table(mpg, "year", eps=1, seed=12345, levels=[1999, 2008])
    assert _rows(path)["what"].iloc[1] == (
        "pp.dp_table(mpg, 'year', eps=1, seed=<seed>, levels=[1999, 2008])"
    )


def test_refused_release_draws_nothing_and_writes_nothing(
    tmp_path, mpg, monkeypatch
):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=1.5)
    _table(mpg, seed=1)
    drawn = []
    original = LaplaceCounts.perturb

    def spy(self, table, key):
        drawn.append(key)
        return original(self, table, key)

    monkeypatch.setattr(LaplaceCounts, "perturb", spy)
    p = ggplot(mpg, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=2, levels=CLASSES + ["suv"]
    )
    with pytest.raises(
        pp.BudgetExceededError, match=r"'mpg' is short of eps.*\(spent 1\)"
    ):
        p.save(tmp_path / "fig.png", verbose=False)
    with pytest.raises(pp.BudgetExceededError):
        pp.save_release(p, tmp_path / "bundle")
    assert drawn == []
    assert not (tmp_path / "fig.png").exists()
    assert not (tmp_path / "bundle").exists()
    assert len(_rows(path)) == 1
    # a release that fits is still possible, and then it is drawn
    _table(mpg, seed=3, eps=0.5)
    assert len(drawn) == 1 and len(_rows(path)) == 2


def test_delta_cap_and_records_without_cap(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="open")  # no cap: records, never refuses
    for s in range(3):
        _table(mpg, seed=s, eps=5)
    assert pp.ledger(path).total["eps"].tolist() == [15.0]
    pp.use_ledger(path, dataset="strict", cap_eps=10)  # cap_delta 0
    with pytest.raises(pp.BudgetExceededError, match="delta=1e-06"):
        pp.dp_table(mpg, "manufacturer", eps=1, seed=1)  # thresholded
    assert pp.ledger(path, "strict").table.empty


def test_cap_belongs_to_the_data_set(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=2)
    pp.use_ledger(path, dataset="mpg")  # the recorded cap applies
    _table(mpg, seed=1, eps=2)
    with pytest.raises(pp.BudgetExceededError):
        _table(mpg, seed=2, eps=0.1)
    with pytest.raises(pp.PlotninePrivateError, match="records cap_eps=2"):
        pp.use_ledger(path, dataset="mpg", cap_eps=3)
    book = pp.ledger(path).set_cap("mpg", eps=3)
    assert book.caps == {"mpg": (3.0, 0.0)}
    _table(mpg, seed=2, eps=1)
    assert pp.ledger(path).total["eps"].tolist() == [3.0]
    with pytest.raises(pp.PlotninePrivateError, match="no data set 'x'"):
        book.set_cap("x", eps=1)
    # a ledger file removed behind our back is refused, not made again
    path.unlink()
    with pytest.raises(pp.PlotninePrivateError, match="rebind_ledger"):
        _table(mpg, seed=4, eps=2)
    assert not path.exists()
    # rebound on purpose: its cap and its spending come back
    pp.rebind_ledger(path, "mpg")
    assert pp.ledger(path).caps == {"mpg": (3.0, 0.0)}
    with pytest.raises(
        pp.BudgetExceededError, match=r"short of eps.*\(spent 3\)"
    ):
        _table(mpg, seed=4, eps=0.5)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "dataset must name the data set"),
        ({"dataset": " "}, "dataset must name"),
        ({"dataset": "d", "cap_eps": -1}, "cap_eps must be a finite"),
        ({"dataset": "d", "cap_eps": float("inf")}, "cap_eps must be"),
        ({"dataset": "d", "cap_eps": 1, "cap_delta": 1.0}, "below 1"),
        ({"dataset": "d", "cap_eps": True}, "cap_eps must be"),
    ],
)
def test_use_ledger_errors(tmp_path, kwargs, match):
    with pytest.raises(pp.PlotninePrivateError, match=match):
        pp.use_ledger(tmp_path / "l.sqlite", **kwargs)
    with pytest.raises(pp.PlotninePrivateError, match="is a folder"):
        pp.use_ledger(tmp_path, dataset="d")
    with pytest.raises(pp.PlotninePrivateError, match="no ledger file"):
        pp.ledger(tmp_path / "missing.sqlite")


def test_context_manager_and_off(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    with pp.use_ledger(path, dataset="mpg", cap_eps=5):
        _table(mpg, seed=1)
    _table(mpg, seed=2)  # no ledger any more
    pp.use_ledger(path, dataset="mpg")
    pp.use_ledger(None)
    _table(mpg, seed=3)
    assert len(_rows(path)) == 1


def test_environment_variable(tmp_path, mpg, monkeypatch):
    path = tmp_path / "env.sqlite"
    monkeypatch.setenv(
        ledger_module.LEDGER_ENV, f"{path}?dataset=mpg&cap_eps=1.5"
    )
    update_session(ledger=UNSET)  # the environment decides
    _table(mpg, seed=1)
    with pytest.raises(pp.BudgetExceededError):
        _table(mpg, seed=2)
    assert pp.ledger(path).caps == {"mpg": (1.5, 0.0)}
    for bad, match in [
        (f"{path}?cap_eps=1", "dataset must name"),
        (f"{path}?dataset=a&cap=1", "unknown field"),
        (f"{path}?dataset=a&cap_eps=x", "cap_eps must be a number"),
    ]:
        monkeypatch.setenv(ledger_module.LEDGER_ENV, bad)
        update_session(ledger=UNSET)  # the environment decides
        with pytest.raises(pp.PlotninePrivateError, match=match):
            _table(mpg, seed=1)


def test_private_range_and_pca_are_charged(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=20, cap_delta=1e-3)
    p = ggplot(mpg, aes("displ")) + geom_bar(stat="bin_dp", eps=1, seed=1)
    with pytest.warns(pp.PrivacyWarning):
        p.draw()
    t = _rows(path)
    assert t["family"].tolist() == ["range", "bin"]
    assert np.isclose(t["eps"].sum(), 1.0)  # the range is paid from eps
    pca = dict(eps=4, delta=1e-4, seed=1, method="sparse")
    cols = ["displ", "cty", "hwy"]
    pp.dp_pca(mpg, cols, **pca)
    pp.dp_pca(mpg, cols, **pca)  # the same release
    t = _rows(path)
    comps = t[t["family"].str.startswith("pca:")]
    assert comps["family"].tolist() == [
        "pca:directions",
        "pca:scree",
        "pca:frame",
        "pca:histogram",
    ]
    assert np.isclose(comps["eps"].sum(), 4.0)
    assert np.isclose(comps["delta"].sum(), 1e-4)
    # a PCA that does not fit is refused whole: no component recorded
    pp.ledger(path).set_cap("mpg", eps=t["eps"].sum() + 1, delta=1e-3)
    with pytest.raises(pp.BudgetExceededError, match="pca:directions"):
        pp.dp_pca(mpg, cols, **{**pca, "seed": 2})
    assert len(_rows(path)) == len(t)


def test_cli_and_html(tmp_path, mpg, capsys, monkeypatch):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=3)
    _table(mpg, seed=1)
    assert cli(["ledger", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Privacy ledger l.sqlite" in out
    assert "data set 'mpg': 1 release(s), spent eps=1" in out
    assert "cap eps=3, delta=0" in out
    assert cli(["ledger", str(tmp_path / "none.sqlite")]) == 2
    assert cli(["ledger", str(path), "--dataset", "other"]) == 0
    assert "(empty)" in capsys.readouterr().out
    html = pp.ledger(path)._repr_html_()
    assert "<table" in html and "discrete_laplace" in html
    # the command also runs as a module (python -m plotnine_private)
    monkeypatch.setattr(sys, "argv", ["plotnine_private", "ledger", str(path)])
    with pytest.raises(SystemExit) as done:
        runpy.run_module("plotnine_private", run_name="__main__")
    assert done.value.code == 0
    assert "spent eps=1" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:seed . was already used")
def test_ledger_content_is_the_same_on_neighbours(tmp_path, mpg, ledger_key):
    """Everything in the ledger but the keyed digest (and the time) is
    the same on neighbouring data sets (one record changed)."""
    other = mpg.copy()
    other.loc[3, "class"] = "2seater"
    other.loc[3, "displ"] = 6.5
    tables = []
    for name, data in (("a", mpg), ("b", other)):
        path = tmp_path / f"{name}.sqlite"
        # the same key in a file of its own: its records are apart
        key = tmp_path / f"{name}.key"
        key.write_bytes(ledger_key.read_bytes()[:32])
        pp.use_key(key)
        pp.use_ledger(path, dataset="mpg", cap_eps=50, cap_delta=1e-2)
        _table(data, seed=1)
        pp.dp_table(data, "manufacturer", eps=1, seed=2)
        # public bins: after a private range the bins' query names the
        # released range (a released value, so it may differ)
        (
            ggplot(data, aes("displ"))
            + geom_bar(stat="bin_dp", eps=1, seed=3, limits=(1, 7), bins=6)
        ).draw()
        pp.dp_pca(data, ["displ", "cty"], eps=2, delta=1e-4, seed=4)
        tables.append(_rows(path))
    a, b = tables
    # two tables, bins, four PCA components
    assert a["family"].tolist() == [
        "count",
        "count",
        "bin",
        "pca:directions",
        "pca:scree",
        "pca:frame",
        "pca:histogram",
    ]
    # the digest changes where the changed record is counted (not in the
    # manufacturer table: its manufacturer is unchanged)
    assert (a["digest"] != b["digest"]).tolist() == [
        True,
        False,
        *[True] * 5,
    ]
    keep = [c for c in a.columns if c not in ("digest", "at")]
    pd.testing.assert_frame_equal(a[keep], b[keep])


@pytest.mark.filterwarnings("ignore:seed . was already used")
def test_ledger_rows_are_the_same_when_a_whole_person_changes(
    tmp_path, ledger_key
):
    """A bounded source whose people have ids of every kind (negative,
    non-whole, text, one missing): one whole person's 30 rows moved to
    another class and place change only the keyed digests."""
    rng = np.random.default_rng(5)
    pid = np.repeat(np.arange(150), rng.integers(1, 6, 150))
    pid = np.r_[pid, np.full(30, 7)]
    base = pd.DataFrame(
        {
            "pid": mixed_ids(pid, 7),
            "class": pd.Categorical(rng.choice(CLASSES, len(pid)), CLASSES),
            "displ": rng.uniform(1, 7, len(pid)),
        }
    )
    other = base.copy()
    mine = other["pid"] == 7
    other.loc[mine, "class"] = CLASSES[0]
    other.loc[mine, "displ"] = 6.9
    tables = []
    for name, data in (("a", base), ("b", other)):
        key = tmp_path / f"{name}.key"
        key.write_bytes(ledger_key.read_bytes()[:32])
        pp.use_key(key)
        path = tmp_path / f"{name}.sqlite"
        pp.use_ledger(path, dataset="people", cap_eps=50)
        src = pp.source(data, unit="pid", max_records=3)
        pp.dp_table(src, "class", eps=1, seed=1)
        (
            ggplot(src, aes("displ"))
            + geom_bar(stat="bin_dp", eps=1, seed=3, limits=(1, 7), bins=6)
        ).draw()
        tables.append(_rows(path))
    a, b = tables
    assert a["family"].tolist() == ["count", "bin"]
    assert (a["digest"] != b["digest"]).all()
    keep = [c for c in a.columns if c not in ("digest", "at")]
    pd.testing.assert_frame_equal(a[keep], b[keep])


# --------------------------------------------------------------------------
# several processes
# --------------------------------------------------------------------------
_FIGURE = textwrap.dedent(
    """
    import plotnine_private as pp
    from plotnine import ggplot, aes, geom_bar
    from plotnine.data import mpg
    levels = sorted(mpg["class"].unique())
    p = ggplot(mpg, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=3, levels=levels)
    p.draw()
    """
)


def test_two_processes_redrawing_one_figure_charge_it_once(
    tmp_path, ledger_key
):
    """This process draws the figure, then a fresh Python process draws it
    again: one row, and the cap (which fits it once) does not refuse."""
    path = tmp_path / "l.sqlite"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MPLBACKEND": "Agg",
        ledger_module.LEDGER_ENV: f"{path}?dataset=mpg&cap_eps=1",
    }
    env["PLOTNINE_PRIVATE_KEY_FILE"] = str(ledger_key)
    scope: dict = {}
    with pp.use_ledger(path, dataset="mpg", cap_eps=1):
        exec(_FIGURE, scope)
    assert len(_rows(path)) == 1
    run = subprocess.run(
        [sys.executable, "-c", _FIGURE], env=env, capture_output=True
    )
    assert run.returncode == 0, run.stderr.decode()
    t = _rows(path)
    assert len(t) == 1 and t["eps"].tolist() == [1.0]


def _racer(path, seed, barrier, results):
    """A child: wait for the others, then try one release of eps 1."""
    pp.use_ledger(path, dataset="mpg")
    now = ledger_module._now

    def slow_now():
        # widen the window between reading the total and writing the
        # charge, so that the children really overlap there
        time.sleep(0.15)
        return now()

    ledger_module._now = slow_now
    data = pd.DataFrame({"class": ["a", "b", "b", "c"] * 10})
    barrier.wait()
    try:
        pp.dp_table(data, "class", eps=1, seed=seed, levels=["a", "b", "c"])
    except pp.BudgetExceededError:
        results.put("refused")
    except Exception as err:  # noqa: BLE001 - reported to the parent
        results.put(f"error: {err!r}")
    else:
        results.put("released")


def test_eight_processes_racing_for_a_cap_of_five(tmp_path):
    path = tmp_path / "race.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=5)  # records the cap
    # forked children share the imported package (no 3 s import each)
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(8)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_racer, args=(path, s, barrier, results))
        for s in range(8)
    ]
    for proc in procs:
        proc.start()
    outcome = sorted(results.get(timeout=120) for _ in procs)
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert outcome == ["refused"] * 3 + ["released"] * 5
    t = _rows(path)
    assert len(t) == 5 and t["eps"].sum() == 5.0
    assert len(set(t["identity"])) == 5
    with sqlite3.connect(path) as con:  # the file is consistent
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


_CALL = "pp.dp_table(mpg, 'class', eps=0.1, levels=LEVELS, "
_SEED_PATHS = {
    "loop": "for s in (90210, 90211):\n    {call}seed=s)",
    "one-line loop": "for s in [90210]: {call}seed=s)",
    "comprehension": "[{call}seed=s) for s in (90210, 90211)]",
    "sum": (
        "total = sum({call}seed=s)['count'].sum() "
        "for s in range(90210, 90212))"
    ),
    "f-string": "{call}seed=f'fig-{{90210}}')",
    "walrus": "{call}seed=(s := 90210) + 1)",
    "dict": "{call}**{{'seed': 90210}})",
    "comment": "s = 90210\n{call}seed=s)  # 90210 looked best",
}


@pytest.mark.parametrize("how", sorted(_SEED_PATHS))
def test_what_hides_a_seed_however_it_reaches_the_call(tmp_path, mpg, how):
    """The statement is parsed, not matched by a pattern: a seed given
    through a loop, a comprehension, a sum, an f-string, a walrus or a
    dict is hidden, and comments are dropped."""
    script = tmp_path / "report_script.py"
    script.write_text(
        "import plotnine_private as pp\n"
        + _SEED_PATHS[how].format(call=_CALL)
        + "\n"
    )
    pp.use_ledger(tmp_path / "l.sqlite", dataset="mpg")
    runpy.run_path(
        str(script), init_globals={"mpg": mpg, "LEVELS": CLASSES + ["suv"]}
    )
    what = _rows(tmp_path / "l.sqlite")["what"]
    assert len(what) >= 1
    for text in what:
        assert "<seed>" in text and "9021" not in text, text
        assert "pp.dp_table(mpg, 'class', eps=0.1" in text


# --------------------------------------------------------------------------
# the ledger bound to the key file
# --------------------------------------------------------------------------
def _spend(path, mpg, seed=1, eps=1.0, dataset="mpg"):
    pp.use_ledger(path, dataset=dataset)
    return _table(mpg, seed=seed, eps=eps)


def _refused(mpg, match, seed=9):
    drawn = []
    original = LaplaceCounts.perturb

    def spy(self, table, key):
        drawn.append(key)
        return original(self, table, key)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(LaplaceCounts, "perturb", spy)
        with pytest.raises(pp.PlotninePrivateError, match=match):
            _table(mpg, seed=seed)
    assert drawn == []  # refused before any noise


def test_a_ledger_needs_a_key_file(tmp_path, mpg):
    pp.use_key(None)
    pp.use_ledger(tmp_path / "l.sqlite", dataset="mpg", cap_eps=3)
    _refused(mpg, r"needs a key file.*pp\.create_key")
    assert _rows(tmp_path / "l.sqlite").empty


def test_a_deleted_ledger_is_refused_not_made_again(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=2)
    _spend(path, mpg)
    path.unlink()
    _refused(mpg, r"that file is missing.*pp\.rebind_ledger")
    assert not path.exists()
    # use_ledger makes a new file there: another ledger, also refused
    pp.use_ledger(path, dataset="mpg")
    _refused(mpg, "deleted, replaced or truncated")


def test_a_renamed_ledger_is_refused_until_rebound(tmp_path, mpg):
    path, moved = tmp_path / "l.sqlite", tmp_path / "moved.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=2)
    _spend(path, mpg)
    path.rename(moved)
    pp.use_ledger(moved, dataset="mpg")
    _refused(mpg, r"moved or renamed.*rebind_ledger")
    pp.rebind_ledger(moved, "mpg")  # the move, recorded on purpose
    assert len(_rows(moved)) == 1  # it lacked nothing: no carried row
    _table(mpg, seed=1)  # the same release: free
    _table(mpg, seed=2)
    with pytest.raises(pp.BudgetExceededError):
        _table(mpg, seed=3)


def test_a_copied_ledger_is_refused(tmp_path, mpg):
    path, copy = tmp_path / "l.sqlite", tmp_path / "copy.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=2)
    _spend(path, mpg)
    copy.write_bytes(path.read_bytes())
    pp.use_ledger(copy, dataset="mpg")
    _refused(mpg, r"is a copy of it.*pp\.use_ledger\(")
    # another, fresh ledger for the same data set is refused too
    pp.use_ledger(tmp_path / "other.sqlite", dataset="mpg")
    _refused(mpg, "not to .*other.sqlite")


def test_a_truncated_ledger_is_refused(tmp_path, mpg):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="mpg", cap_eps=3)
    _spend(path, mpg, seed=1)
    backup = path.read_bytes()  # one release
    _spend(path, mpg, seed=2)
    # an older copy put back: it has spent less than the key recorded
    path.write_bytes(backup)
    _refused(mpg, r"held 2 release\(s\), eps=2.*now holds 1 release")
    # rows removed by hand
    with sqlite3.connect(path) as con:
        con.execute("DELETE FROM releases")
    _refused(mpg, "rows were removed")
    # cut in half: not a ledger any more
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    _refused(mpg, "cannot be read as a ledger")
    # emptied: SQLite reads an empty database, another ledger
    path.write_bytes(b"")
    _refused(mpg, "deleted, replaced or truncated")
    # lost for good: rebound, the spending is carried, never forgotten
    book = pp.rebind_ledger(path, "mpg")
    assert book.table["family"].tolist() == ["carried"]
    assert book.table["eps"].tolist() == [2.0]
    assert book.caps == {"mpg": (3.0, 0.0)}
    _table(mpg, seed=3)
    with pytest.raises(
        pp.BudgetExceededError, match=r"short of eps.*\(spent 3\)"
    ):
        _table(mpg, seed=4)


def test_data_set_names_ignore_case_and_spaces_and_near_names_are_refused(
    tmp_path, mpg
):
    path = tmp_path / "l.sqlite"
    pp.use_ledger(path, dataset="Hospital  Episodes", cap_eps=1)
    _table(mpg, seed=1)
    pp.use_ledger(path, dataset=" hospital episodes")  # the same data set
    with pytest.raises(pp.BudgetExceededError, match="'Hospital Episodes'"):
        _table(mpg, seed=2)
    for near in (
        "hospital-episodes",
        "hospital_episodes",
        "Hospital.Episodes",
    ):
        with pytest.raises(pp.PlotninePrivateError, match="punctuation"):
            pp.use_ledger(path, dataset=near)
    assert list(pp.ledger(path).caps) == ["Hospital Episodes"]
    # the key binds the normalised name: another ledger file is refused
    pp.use_ledger(tmp_path / "b.sqlite", dataset="HOSPITAL episodes")
    _refused(mpg, "binds it to the ledger")


def test_a_ledger_of_version_1_is_migrated(tmp_path, mpg):
    """Rows written before version 2 keep their cost; their identity and
    digest (keyed by a seed's scrypt without a key file) and their
    statement's seeds are gone from the file."""
    path = tmp_path / "old.sqlite"
    old_identity, old_digest = "d" * 24, "e" * 32
    with sqlite3.connect(path) as con:
        con.executescript(
            ledger_module._SCHEMA.split("CREATE TABLE IF NOT EXISTS datasets")[
                0
            ].replace(
                "CREATE TABLE IF NOT EXISTS ledger", "CREATE TEMP TABLE x"
            )
            + "CREATE TABLE IF NOT EXISTS datasets"
            + ledger_module._SCHEMA.split(
                "CREATE TABLE IF NOT EXISTS datasets"
            )[1]
        )
        con.execute("INSERT INTO datasets VALUES ('mpg', 2, 0, 'then')")
        con.execute(
            "INSERT INTO releases (dataset, identity, digest, unit, bound, "
            "family, mechanism, eps, delta, adjacency, source, cells, at, "
            "what) VALUES ('mpg', ?, ?, 'one row', 1, 'count', "
            "'discrete_laplace', 1.5, 0, 'replace', 'data', '', 'then', ?)",
            (old_identity, old_digest, "for s in (90210,): f(seed=<secret>)"),
        )
    pp.use_ledger(path, dataset="mpg")
    t = _rows(path)
    assert t["eps"].tolist() == [1.5]
    assert t["identity"].iloc[0].startswith("v1 ") and t["digest"][0] == ""
    assert t["what"][0] == "<written before version 2: statement not kept>"
    raw = path.read_bytes()
    for gone in (old_identity, old_digest, "90210"):
        assert gone.encode() not in raw
    _table(mpg, seed=1, eps=0.5)  # the cap counts the old row
    with pytest.raises(
        pp.BudgetExceededError, match=r"short of eps.*\(spent 2\)"
    ):
        _table(mpg, seed=2, eps=0.5)
