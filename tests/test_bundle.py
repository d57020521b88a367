"""save_release: the bundle an output checker receives
(modelled on ACRO's results.json)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess

import pandas as pd
import pytest
from keyfile import using_key, without_key
from plotnine import (
    aes,
    after_stat,
    facet_wrap,
    geom_bar,
    geom_point,
    geom_text,
    ggplot,
    position_stack,
)

import plotnine_private as pp
from plotnine_private.bundle.saving import redact_seeds, save_release
from plotnine_private.exceptions import (
    BudgetExceededError,
    PlotninePrivateError,
)
from plotnine_private.report import privacy_budget

SEED = 987654321
PTAB = pp.create_cnt_ptable(D=5, V=2.01, js=2)


@pytest.fixture(autouse=True, scope="module")
def _key_file():
    # save_release refuses seeds without a key file (tested below)
    with using_key() as path:
        yield path


@pytest.fixture
def cars(mpg_cat) -> pd.DataFrame:
    d = pp.add_record_keys(mpg_cat, rng_seed=11)
    d["year"] = pd.Categorical(d["year"])
    return d


def mixed_plot(cars):
    """DP bars + their labels + CKM points, faceted by year."""
    return (
        ggplot(cars, aes("class", fill="drv"))
        + geom_bar(stat="count_dp", eps=1, seed=SEED)
        + geom_text(
            aes(label=after_stat("count")),
            stat="count_dp",
            eps=1,
            seed=SEED,
            position=position_stack(vjust=0.5),
        )
        + geom_point(
            aes(y=after_stat("count"), rkey="rkey"),
            stat="count_ckm",
            ptable=PTAB,
        )
        + facet_wrap("year")
        + privacy_budget(eps=1)
    )


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from plotnine.data import mpg

    d = mpg.copy()
    d["class"] = pd.Categorical(
        d["class"], categories=[*sorted(d["class"].unique()), "zzz"]
    )
    d["drv"] = pd.Categorical(d["drv"], categories=["4", "f", "r"])
    cars = pp.add_record_keys(d, rng_seed=11)
    cars["year"] = pd.Categorical(cars["year"])
    p = mixed_plot(cars)
    folder = tmp_path_factory.mktemp("release") / "bundle"
    out = save_release(p, folder, comments=["for the annual report"], dpi=20)
    return p, out


def test_bundle_layout(bundle):
    _, out = bundle
    names = sorted(f.name for f in out.iterdir())
    assert names == [
        "checksums.sha256",
        "config.json",
        "figure.png",
        "layer_0_stat_count_dp.csv",
        "layer_1_stat_count_dp.csv",
        "layer_2_stat_count_ckm.csv",
        "results.json",
    ]
    assert (out / "figure.png").read_bytes()[:4] == b"\x89PNG"


def test_csvs_hold_exactly_the_released_values(bundle):
    p, out = bundle
    for i, value in [(0, "count"), (1, "count"), (2, "count")]:
        table = pd.read_csv(next(out.glob(f"layer_{i}_*.csv")))
        bad = [c for c in table.columns if re.search("noisy|raw", c)]
        assert not bad
        shown = pp.layer_data(p, i)
        assert list(table[value]) == list(shown[value])
        assert list(table["PANEL"]) == list(shown["PANEL"].astype(int))
        assert {"group", "year", "x"} <= set(table.columns)
    bars = pd.read_csv(out / "layer_0_stat_count_dp.csv")
    # checkers get the categories, not plotnine's mapped positions/colours
    assert set(bars["x_level"]) == {*p.data["class"].cat.categories}
    assert set(bars["fill_level"]) == {"4", "f", "r"}
    points = pd.read_csv(out / "layer_2_stat_count_ckm.csv")
    assert {"x_level", "count", "prop"} <= set(points.columns)


def test_results_json_follows_acro(bundle):
    _, out = bundle
    meta = json.loads((out / "results.json").read_text())
    assert {"version", "results", "plotnine_private"} <= set(meta)
    results = meta["results"]
    assert sorted(results) == ["output_0", "output_1", "output_2"]
    for rec in results.values():
        assert {
            "uid",
            "status",
            "type",
            "properties",
            "files",
            "outcome",
            "command",
            "summary",
            "timestamp",
            "comments",
            "exception",
        } <= set(rec)
        assert rec["status"] in {"pass", "review", "fail"}
        assert rec["comments"] == ["for the annual report"]
        assert {f["name"] for f in rec["files"]} >= {"figure.png"}
    dp, ckm = results["output_0"], results["output_2"]
    assert dp["status"] == "pass" and dp["properties"]["mitigation"] == "Noise"
    assert dp["type"] == "bar graph"
    assert "informational" in dp["summary"]
    assert dp["properties"]["releases"][0]["composition"] == (
        "sequential (parallel over declared facets)"
    )
    assert (
        results["output_1"]["properties"]["releases"][0]["composition"]
        == "duplicate of layer 0"
    )
    assert ckm["type"] == "bar graph"
    assert ckm["properties"]["mitigation"] == "CKM"
    release = ckm["properties"]["releases"][0]
    assert release["eps"] is None
    assert release["ptable_fingerprint"] == PTAB.fingerprint
    # per-cell flags on the released counts
    table = pd.read_csv(out / "layer_2_stat_count_ckm.csv")
    low = ((table["count"] > 0) & (table["count"] < 10)).sum()
    sdc = ckm["files"][0]["sdc"]
    assert sdc["summary"]["threshold"] == low
    assert len(ckm["outcome"]) == len(table)
    assert ckm["status"] == ("fail" if low else "review")
    extra = meta["plotnine_private"]
    assert set(extra["versions"]) == {
        "plotnine_private",
        "plotnine",
        "numpy",
        "pandas",
        "matplotlib",
        "python",
    }
    assert extra["privacy_report"]["total_eps"] == 1.0
    assert extra["budget"] == {"eps": 1.0, "delta": 0.0, "of": "figure"}
    assert extra["privacy_report"]["remaining"]["eps"] == 0.0
    assert extra["seed_policy"]["output_0"] == (
        "key file (seed is a public label)"
    )
    assert "save_release(p, folder" in dp["command"]
    config = json.loads((out / "config.json").read_text())
    assert config["rules"]["threshold"] == 10


def test_checksums_verify(bundle):
    _, out = bundle
    lines = (out / "checksums.sha256").read_text().splitlines()
    listed = {}
    for line in lines:
        digest, name = line.split("  ", 1)
        listed[name] = digest
    assert set(listed) == {
        f.name for f in out.iterdir() if f.name != "checksums.sha256"
    }
    for name, digest in listed.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest
    if shutil.which("sha256sum"):
        subprocess.run(
            ["sha256sum", "--quiet", "-c", "checksums.sha256"],
            cwd=out,
            check=True,
        )


def test_seed_is_nowhere_in_the_bundle(bundle):
    _, out = bundle
    for f in out.iterdir():
        assert str(SEED).encode() not in f.read_bytes(), f.name


def test_a_seed_without_a_key_file_is_refused(cars, tmp_path):
    # the seed would be the only secret: a bundle would be an offline
    # oracle for guessed seeds, so nothing is written
    p = ggplot(cars, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=SEED
    )
    with without_key():
        with pytest.raises(
            PlotninePrivateError,
            match=r"layer 0 \(stat_count_dp\).*create_key.*use_key",
        ):
            save_release(p, tmp_path / "out")
        assert not (tmp_path / "out").exists()
        # no seed: session entropy, nothing guessable; allowed
        q = ggplot(cars, aes("class")) + geom_bar(stat="count_dp", eps=1)
        save_release(q, tmp_path / "session", dpi=20)
        meta = json.loads((tmp_path / "session" / "results.json").read_text())
        assert meta["results"]["output_0"]["status"] == "pass"
    with using_key():
        save_release(p, tmp_path / "keyed", dpi=20)


def test_a_seeded_plot_in_a_composition_or_list_is_refused_too(cars, tmp_path):
    seeded = ggplot(cars, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=SEED
    )
    session = ggplot(cars, aes("drv")) + geom_bar(stat="count_dp", eps=1)
    with without_key():
        for several in (session | seeded, [session, seeded]):
            with pytest.raises(
                PlotninePrivateError, match=r"layer 0 \(stat_count_dp\)"
            ):
                save_release(several, tmp_path / "out")
            assert not (tmp_path / "out").exists()


def test_a_seed_only_identity_is_not_in_the_report(cars):
    p = ggplot(cars, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=4242
    )

    def identities():
        t = pp.privacy_report(p).table
        return t.loc[t["mechanism"] == "discrete_laplace", "identity"]

    with without_key():
        assert len(identities()) == 1 and identities().isna().all()
    with using_key():
        assert len(identities()) == 1 and identities().notna().all()


def test_code_is_recorded_with_seeds_redacted(cars, tmp_path):
    p = ggplot(cars, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=SEED
    )
    code = f"p = ggplot(cars, aes('class')) + geom_bar(eps=1, seed={SEED})"
    save_release(p, tmp_path, code=code, dpi=20)
    meta = json.loads((tmp_path / "results.json").read_text())
    cmd = meta["results"]["output_0"]["command"]
    assert cmd.endswith("seed=<seed>)") and str(SEED) not in cmd
    assert redact_seeds("f(seed = 12, eps=1)") == "f(seed=<seed>, eps=1)"


def test_over_budget_writes_nothing(cars, tmp_path):
    p = mixed_plot(cars) + privacy_budget(eps=0.5)
    with pytest.raises(BudgetExceededError):
        save_release(p, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_rules_are_configurable_and_checked(cars, tmp_path):
    p = ggplot(cars, aes("class", rkey="rkey")) + geom_bar(
        stat="count_ckm", ptable=PTAB
    )
    save_release(
        p,
        tmp_path / "a",
        rules={"threshold": 0, "zeros_are_disclosive": False},
        dpi=20,
    )
    meta = json.loads((tmp_path / "a" / "results.json").read_text())
    assert meta["results"]["output_0"]["status"] == "pass"
    save_release(p, tmp_path / "b", rules={"threshold": 1000}, dpi=20)
    meta = json.loads((tmp_path / "b" / "results.json").read_text())
    rec = meta["results"]["output_0"]
    assert rec["status"] == "fail"
    assert rec["files"][0]["sdc"]["summary"]["threshold"] > 0
    with pytest.raises(PlotninePrivateError, match="unknown rule"):
        save_release(p, tmp_path / "c", rules={"dominance": 0.5})
    with pytest.raises(PlotninePrivateError, match="threshold"):
        save_release(p, tmp_path / "c", rules={"threshold": -1})


def test_unprotected_layer_needs_review_and_exports_no_data(cars, tmp_path):
    p = (
        ggplot(cars, aes("class"))
        + geom_bar(stat="count_dp", eps=1, seed=1)
        + geom_point(aes("displ", "hwy"), inherit_aes=False)
    )
    save_release(p, tmp_path, dpi=20)
    assert [f.name for f in tmp_path.glob("*.csv")] == [
        "layer_0_stat_count_dp.csv"
    ]
    meta = json.loads((tmp_path / "results.json").read_text())
    assert meta["results"]["output_1"]["status"] == "review"


def test_refuses_a_non_empty_folder(cars, tmp_path):
    (tmp_path / "old.txt").write_text("x")
    p = ggplot(cars, aes("class")) + geom_bar(stat="count_dp", eps=1)
    with pytest.raises(PlotninePrivateError, match="not empty"):
        save_release(p, tmp_path, dpi=20)
    meta_dir = tmp_path / "fresh"
    save_release(p, meta_dir, dpi=20)
    meta = json.loads((meta_dir / "results.json").read_text())
    policy = meta["plotnine_private"]["seed_policy"]["output_0"]
    assert policy == "session entropy (not reproducible)"


@pytest.mark.parametrize(
    "code",
    [
        'kw = {"seed": 90210, "eps": 1}',
        "my_seed = 90210",
        "SEED=90210",
        "geom_bar(stat='count_dp', seed = 90210)",
        "dict(seed=90210)",
    ],
)
def test_every_form_of_seed_is_redacted(code):
    assert "90210" not in pp.bundle.saving.redact_seeds(code)
