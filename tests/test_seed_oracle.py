"""Nothing the package writes or returns holds a seed-only secret.

Without a key file a seed is the only secret of the noise, and seeds are
short: whoever holds a value that is a function of (seed, public query)
can test guessed seeds offline (the attacker's report found seed 42 in
43 guesses from a ledger file). The attacker computes what the package
computes: the release identity and the keyed data digest under
``secret_for(seed)`` (told to the charge hook before each release), the
secret itself, and the seed's literal. None of these may appear in a
report, a pickle, a repr, a ledger or a bundle.
"""

from __future__ import annotations

import pickle

import pytest
from keyfile import without_key
from plotnine import aes, geom_bar, ggplot

import plotnine_private as pp
from plotnine_private.mechanisms.release import engine
from plotnine_private.mechanisms.streams.keys import secret_for

#: a literal that appears nowhere else in these outputs, long enough
#: that no random hex or digits in them hold it by chance (90210, five
#: digits, turned up once in a figure's pickle of keyed hex digests:
#: about 1e-6 a position)
SEED = 9021073194
LEVELS = ["2seater", "compact", "midsize", "minivan", "pickup"]
LEVELS += ["subcompact", "suv"]


class _Recorder:
    """A charge hook that keeps what the engine charges, then tells the
    hook it replaced (the ledger)."""

    def __init__(self, previous):
        self.previous = previous
        self.charges: list = []

    def __call__(self, charges):
        self.charges.extend(charges)
        if self.previous is not None:
            self.previous(charges)


def _figures(mpg):
    counts = ggplot(mpg, aes("class")) + geom_bar(
        stat="count_dp", eps=1, seed=SEED, levels=LEVELS
    )
    # a private range (its own release) and the bins it makes
    bins = ggplot(mpg, aes("displ")) + geom_bar(
        stat="bin_dp", eps=1, seed=SEED + 1
    )
    return counts, bins


def _releases(mpg):
    """A seeded figure of each kind, a table and a PCA; their outputs."""
    counts, bins = _figures(mpg)
    counts.draw()
    with pytest.warns(pp.PrivacyWarning):
        bins.draw()
    table = pp.dp_table(mpg, "class", eps=1, seed=SEED, levels=LEVELS)
    pca = pp.dp_pca(
        mpg, ["displ", "cty", "hwy"], eps=4, delta=1e-4, seed=SEED + 2
    )
    report = pp.privacy_report([counts, bins])
    return {
        "report text": str(report),
        "report html": report._repr_html_(),
        "report pickle": pickle.dumps(report),
        "report table": report.table.to_csv(),
        "figure pickle": pickle.dumps(counts),
        "range figure pickle": pickle.dumps(bins),
        "table pickle": pickle.dumps(table),
        "table repr": repr(table) + repr(table.attrs),
        "pca pickle": pickle.dumps(pca),
        "pca repr": repr(pca) + str(pca.privacy),
    }


def _secrets(charges) -> list[bytes]:
    """What an attacker would test a guessed seed against."""
    wanted = [str(SEED).encode()]
    for seed in (SEED, SEED + 1, SEED + 2):
        value = secret_for(seed).value
        wanted += [value, value.hex().encode()]
    for c in charges:
        wanted += [c.identity.encode(), c.digest.encode()]
        # a PCA component's identity is the query's plus ":component"
        wanted.append(c.identity.partition(":")[0].encode())
    return wanted


def _leaks(outputs: dict, wanted: list[bytes]) -> dict[str, int]:
    found = {}
    for name, out in outputs.items():
        data = out if isinstance(out, bytes) else str(out).encode()
        hits = sum(w in data for w in wanted)
        if hits:
            found[name] = hits
    return found


def test_no_output_of_a_seed_only_release_holds_the_seed(mpg, tmp_path):
    recorder = _Recorder(None)
    previous = engine.set_charge_hook(recorder)
    recorder.previous = previous
    try:
        with without_key():
            outputs = _releases(mpg)
            # the bundle is refused before anything is written
            counts, _ = _figures(mpg)
            with pytest.raises(pp.PlotninePrivateError, match="create_key"):
                pp.save_release(counts, tmp_path / "bundle")
    finally:
        engine.set_charge_hook(previous)
    assert not (tmp_path / "bundle").exists()
    families = {c.family for c in recorder.charges}
    assert {"count", "range", "bin", "pca:directions"} <= families
    assert _leaks(outputs, _secrets(recorder.charges)) == {}


def test_the_check_finds_what_it_looks_for(mpg):
    """The search is not blind: the charges it looks for are the values
    an earlier version kept (the engine's own identity and digest)."""
    recorder = _Recorder(None)
    previous = engine.set_charge_hook(recorder)
    try:
        with without_key():
            pp.dp_table(mpg, "class", eps=1, seed=SEED, levels=LEVELS)
    finally:
        engine.set_charge_hook(previous)
    (c,) = recorder.charges
    planted = {
        "ledger row": f"{c.identity} {c.digest}",
        "code": f"seed={SEED}",
    }
    assert _leaks(planted, _secrets(recorder.charges)) == {
        "ledger row": 3,
        "code": 1,
    }


def _ledger_outputs(path) -> dict:
    book = pp.ledger(path)
    return {
        "ledger file": path.read_bytes(),
        "ledger table": book.table.to_csv(),
        "ledger repr": repr(book) + book._repr_html_(),
        "ledger pickle": pickle.dumps(book.table),
    }


def _attacker_targets(mpg) -> list[bytes]:
    recorder = _Recorder(None)
    previous = engine.set_charge_hook(recorder)
    try:
        with without_key():
            _releases(mpg)
    finally:
        engine.set_charge_hook(previous)
    return _secrets(recorder.charges)


def test_a_ledger_without_a_key_file_keeps_no_seed(mpg, tmp_path):
    """Under a seed-only secret the ledger refuses before drawing: it
    would otherwise keep what tests seed guesses (an identity and a
    digest keyed by the seed, or the seed in the statement)."""
    wanted = _attacker_targets(mpg)
    path = tmp_path / "l.sqlite"
    with without_key(), pp.use_ledger(path, dataset="mpg", cap_eps=20):
        counts, bins = _figures(mpg)
        for draw in (
            counts.draw,
            bins.draw,
            lambda: pp.dp_table(mpg, "class", eps=1, seed=SEED, levels=LEVELS),
        ):
            with pytest.raises(pp.PlotninePrivateError, match="create_key"):
                draw()
    assert pp.ledger(path).table.empty
    assert _leaks(_ledger_outputs(path), wanted) == {}


def test_a_ledger_under_a_key_file_keeps_no_seed(mpg, tmp_path, ledger_key):
    wanted = _attacker_targets(mpg)
    path = tmp_path / "l.sqlite"
    with pp.use_ledger(path, dataset="mpg", cap_eps=20, cap_delta=1e-3):
        outputs = _releases(mpg)
        again = _releases(mpg)  # the same releases: found, free
    table = pp.ledger(path).table
    assert len(table) == 7  # counts, range, bins, four PCA components
    assert {"count", "range", "bin"} <= set(table["family"])
    assert outputs["table repr"] == again["table repr"]
    assert _leaks({**outputs, **_ledger_outputs(path)}, wanted) == {}
    key = ledger_key.read_bytes()
    assert _leaks({"key file records": key[32:]}, wanted) == {}
