"""One session object: every setting a release reads besides its
arguments lives in the session (a ContextVar), so threads and asyncio
tasks each have their own, and ``pp.session`` restores it after a block.
"""

from __future__ import annotations

import ast
import asyncio
import contextvars
import threading
from pathlib import Path

import pandas as pd
import pytest

import plotnine_private as pp
from plotnine_private.mechanisms.release import engine
from plotnine_private.mechanisms.session import current_session
from plotnine_private.mechanisms.streams.keys import (
    KEY_ENV,
    current_key_id,
    current_key_path,
)

PACKAGE = Path(pp.__file__).resolve().parent

#: the modules that hold the session (its state is theirs to keep)
SESSION_MODULES = {"mechanisms/session.py"}

#: module-level state that stays module-level, and why: each is the same
#: for every session and cannot change a release
ALLOWED_STATE = {
    # plotnine's patched methods call the door's hooks, installed once at
    # import (wiring, not a setting)
    ("_compat/__init__.py", "_INSTALLED"),
    # memo: a rotation's shift counts as arrays, per (dtype, bits)
    ("mechanisms/streams/siphash.py", "_SHIFTS"),
    # memo: the mask bounding a source frame's units (held weakly), a
    # function of the units, their records and the unit's public salt;
    # no key or other session setting enters it (door.bound_rows)
    ("door.py", "_MASKS"),
    # memo: the last draws @ design product, for the same draws object
    # and a design of equal content (simulated_noise.product_through)
    ("stats/simulated_noise.py", "_KEPT"),
    # the registry of stat declarations, filled as each stat class is
    # made (at import: wiring, like plotnine's own registry)
    ("declarations.py", "_REGISTRY"),
    # memo: the plotnine counterpart class made once per family from its
    # declaration (compare.families.plain_stat)
    ("compare/families.py", "_PLAIN"),
    # memo: the float digest of a read-only float array that owns its
    # data (held weakly), a function of its content alone
    # (cellnames.float_digest: a release digests its levels twice)
    ("mechanisms/naming/cellnames.py", "_FLOAT_DIGESTS"),
}

#: module-level functools caches, and why each cannot change a result:
#: every one is a function of its arguments alone
ALLOWED_CACHES = {
    # plotnine's installed mean_se, probed once per process
    ("_compat/__init__.py", "mean_se_uses_sample_variance"),
    # plotnine's installed group numbering of a missing category, once
    ("_compat/__init__.py", "missing_group_first"),
    # the inversion table of a discrete Laplace scale
    ("mechanisms/samplers/dlap_inversion.py", "inversion_table"),
    # a key file's bytes, by resolved path and modification time
    ("mechanisms/streams/keys.py", "_read_key"),
    # the scrypt stretch of a seed label
    ("mechanisms/streams/keys.py", "_stretched"),
    # p-tables and their variance search, from their parameters
    ("mechanisms/ptable/build.py", "_create_cached"),
    ("mechanisms/ptable/build.py", "_variance_shortfall"),
    # encodings of a tuple of labels
    ("mechanisms/streams/randomness.py", "_prefixed_labels"),
    ("mechanisms/streams/randomness.py", "_labels_digest"),
    # the parsed statements of a source text
    ("statements.py", "_statements"),
    # public simulations under a fixed public seed
    ("stats/noise_bands.py", "linear_draws"),
    ("stats/whiskers.py", "run_thresholds"),
    # a synopsis's errors simulated from its public shape and scale
    ("synopsis/draw.py", "_simulated"),
}

_MUTATORS = {
    "append",
    "extend",
    "insert",
    "pop",
    "popitem",
    "clear",
    "update",
    "add",
    "discard",
    "remove",
    "setdefault",
    "sort",
    "reverse",
}
_CONTAINERS = {
    "dict",
    "list",
    "set",
    "defaultdict",
    "OrderedDict",
    "deque",
    "Counter",
    "WeakKeyDictionary",
    "WeakValueDictionary",
    "WeakSet",
}


def _mutable(value: ast.expr) -> bool:
    """A dict/list/set (literal, comprehension or constructor) or None."""
    if isinstance(
        value,
        (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp),
    ):
        return True
    if isinstance(value, ast.Constant):
        return value.value is None
    if isinstance(value, ast.Call):
        f = value.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name in _CONTAINERS
    return False


def _changed_in_functions(tree: ast.Module) -> set[str]:
    """Names a function rebinds with ``global`` or mutates in place."""
    names: set[str] = set()
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for fn in ast.walk(tree):
        if not isinstance(fn, functions):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                names.update(node.names)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.attr in _MUTATORS
            ):
                names.add(node.func.value.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = (
                    [node.target]
                    if isinstance(node, ast.AugAssign)
                    else node.targets
                )
                names.update(
                    t.value.id
                    for t in targets
                    if isinstance(t, (ast.Subscript, ast.Attribute))
                    and isinstance(t.value, ast.Name)
                )
    return names


def _rebound(tree: ast.Module) -> set[str]:
    return {
        name
        for node in ast.walk(tree)
        if isinstance(node, ast.Global)
        for name in node.names
    }


def module_state(path: Path) -> set[str]:
    """Module-level names of ``path`` that hold state: assigned at module
    level (to a dict, list, set or None, or anything a function rebinds
    with ``global``) and changed by a function."""
    tree = ast.parse(path.read_text())
    assigned: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    assigned[t.id] = node.value
        elif (
            isinstance(node, ast.AnnAssign)
            and node.value is not None
            and isinstance(node.target, ast.Name)
        ):
            assigned[node.target.id] = node.value
    changed = _changed_in_functions(tree)
    rebound = _rebound(tree)
    return {
        name
        for name, value in assigned.items()
        if name in rebound or (name in changed and _mutable(value))
    }


def module_caches(path: Path) -> set[str]:
    """Module-level functions decorated with a functools cache."""
    tree = ast.parse(path.read_text())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("cache" in ast.unparse(d) for d in node.decorator_list)
    }


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path


def test_the_scan_finds_state_it_should():
    tree = (
        "_A = {}\n_B = []\n_C = None\n_D = 0\n_E = {}\n"
        "def f():\n    global _C, _D\n    _C = 1\n    _D += 1\n"
        "    _A[1] = 2\n    _B.append(1)\n    return _E.get(1)\n"
    )
    path = Path(__file__).parent / "_scan_probe.py"
    try:
        path.write_text(tree)
        assert module_state(path) == {"_A", "_B", "_C", "_D"}
    finally:
        path.unlink()


def test_no_module_level_state_outside_the_session():
    found = {
        (name, var)
        for name, path in _modules()
        if name not in SESSION_MODULES
        for var in module_state(path)
    }
    assert found - ALLOWED_STATE == set(), (
        "module-level state outside the session: keep it in "
        "mechanisms/session.py, or (a pure cache) allow it here with a "
        "reason"
    )
    assert ALLOWED_STATE - found == set()  # the allow-list is current


def test_every_cache_is_listed_with_its_reason():
    found = {
        (name, fn) for name, path in _modules() for fn in module_caches(path)
    }
    assert found == ALLOWED_CACHES


# -- threads and tasks --------------------------------------------------------
FRAME = pd.DataFrame({"g": list("aab") * 20})


def _release() -> dict:
    """Release a table in the current session; what it saw."""
    charges: list = []
    ledger_hook = engine._charge_hook()  # the package's: the ledger

    def hook(c) -> None:
        charges.extend(c)
        ledger_hook(c)  # type: ignore[misc]

    engine.set_charge_hook(hook)
    return {
        "version": pp.stream_version(),
        "key": current_key_path(),
        "key_id": current_key_id(),
        "table": pp.dp_table(FRAME, "g", eps=1, seed=1, levels=["a", "b"]),
        "charges": charges,
    }


def _setup(tmp_path: Path, i: int) -> tuple[Path, Path, int]:
    """Thread or task ``i``'s key file, ledger and stream version."""
    key = pp.create_key(tmp_path / f"{i}.key")
    return key.resolve(), (tmp_path / f"ledger{i}.sqlite").resolve(), i + 1


def _check(paths: list, seen: dict) -> None:
    for i, (key, ledger, version) in enumerate(paths):
        s = seen[i]
        assert (s["key"], s["version"]) == (key, version)
        assert s["seen_after_barrier"] == (key, version, ledger)
        assert len(s["charges"]) == 1
        # each ledger holds its own session's release, and only that
        book = pp.ledger(ledger).table
        assert book["identity"].tolist() == [s["charges"][0].identity]
    assert seen[0]["key_id"] != seen[1]["key_id"]


def _what_is_seen() -> tuple:
    from plotnine_private.ledger.store import _current

    active = _current()
    return (
        current_key_path(),
        pp.stream_version(),
        None if active is None else active.path,
    )


def test_two_threads_keep_their_own_key_ledger_and_stream_version(tmp_path):
    paths = [_setup(tmp_path, i) for i in (0, 1)]
    barrier = threading.Barrier(2, timeout=60)
    seen: dict = {}
    errors: list = []

    def work(i: int) -> None:
        key, ledger, version = paths[i]
        try:
            with pp.session(
                key=key, ledger=ledger, dataset="d", stream_version=version
            ):
                barrier.wait()  # both sessions are set now
                out = _release()
                barrier.wait()  # both released
                out["seen_after_barrier"] = _what_is_seen()
            seen[i] = out
        except BaseException as err:  # reported in the main thread
            barrier.abort()
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    _check(paths, seen)


def test_two_asyncio_tasks_keep_their_own_key_ledger_and_stream_version(
    tmp_path,
):
    paths = [_setup(tmp_path, i) for i in (0, 1)]

    async def work(i: int, barrier: asyncio.Barrier) -> dict:
        key, ledger, version = paths[i]
        with pp.session(
            key=key, ledger=ledger, dataset="d", stream_version=version
        ):
            await barrier.wait()  # both sessions are set now
            out = _release()
            await barrier.wait()  # both released
            out["seen_after_barrier"] = _what_is_seen()
            return out

    async def main() -> dict:
        barrier = asyncio.Barrier(2)
        a, b = await asyncio.gather(work(0, barrier), work(1, barrier))
        return {0: a, 1: b}

    _check(paths, asyncio.run(main()))


def test_a_new_thread_starts_from_the_main_threads_session(
    tmp_path, monkeypatch
):
    monkeypatch.delenv(KEY_ENV, raising=False)
    key = pp.create_key(tmp_path / "k.key")
    seen: list = []

    def look() -> None:
        seen.append((current_key_path(), pp.stream_version()))

    with pp.session(key=key, stream_version=1):
        plain = threading.Thread(target=look)
        plain.start()
        plain.join()
        copied = threading.Thread(
            target=contextvars.copy_context().run, args=(look,)
        )
        copied.start()
        copied.join()
    # a plain thread and a thread run in a copy of the context: the
    # session of the main thread (a ledger is never lost to a pool)
    assert seen == [(key.resolve(), 1), (key.resolve(), 1)]

    def set_and_look() -> None:
        pp.use_stream_version(2)  # the worker's own from now on
        look()

    worker = threading.Thread(target=set_and_look)
    worker.start()
    worker.join()
    assert seen[-1][1] == 2 and pp.stream_version() == 3


def test_use_stream_version_in_one_thread_is_not_seen_in_another():
    barrier = threading.Barrier(2, timeout=60)
    seen: dict = {}

    def work(version: int) -> None:
        pp.use_stream_version(version)  # the plain form: until changed
        barrier.wait()
        seen[version] = pp.stream_version()

    threads = [threading.Thread(target=work, args=(v,)) for v in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {1: 1, 2: 2}
    assert pp.stream_version() == 3


# -- pp.session restores ------------------------------------------------------
@pytest.mark.parametrize("fails", [False, True])
def test_session_restores_everything_after_the_block(tmp_path, fails):
    outer_key = pp.create_key(tmp_path / "outer.key")
    inner_key = pp.create_key(tmp_path / "inner.key")
    pp.use_key(outer_key)
    pp.use_ledger(tmp_path / "outer.sqlite", dataset="d")
    pp.use_stream_version(2)
    before = current_session()
    seen: list = []

    class Boom(Exception):
        pass

    try:
        with pp.session(
            key=inner_key,
            ledger=tmp_path / "inner.sqlite",
            dataset="e",
            stream_version=1,
            charge_hook=seen.extend,
            fresh=True,
        ) as inside:
            assert inside.sources is not before.sources
            assert current_key_path() == inner_key.resolve()
            assert pp.stream_version() == 1
            pp.use_key(None)  # a writer inside the block ends with it
            pp.use_stream_version(3)
            if fails:
                raise Boom
    except Boom:
        assert fails
    assert current_session() is before
    assert current_key_path() == outer_key.resolve()
    assert pp.stream_version() == 2
    assert engine._charge_hook() is not seen.extend
    assert _what_is_seen()[2] == (tmp_path / "outer.sqlite").resolve()


def test_session_refuses_a_data_set_without_a_ledger():
    before = current_session()
    refused = pytest.raises(pp.PlotninePrivateError, match="give the ledger")
    with refused, pp.session(dataset="d"):
        pass  # pragma: no cover
    assert current_session() is before


def test_a_bad_setting_leaves_the_session_as_it_was(tmp_path):
    before = current_session()
    missing = tmp_path / "missing.key"
    refused = pytest.raises(ValueError, match="cannot read the key file")
    with refused, pp.session(stream_version=2, key=missing):
        pass  # pragma: no cover
    assert current_session() is before
