"""Key files for tests that save bundles (save_release refuses seeds
without a key file)."""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import plotnine_private as pp
from plotnine_private.mechanisms.session import (
    current_session,
    update_session,
)

# one key per test process: neighbouring builds must share their secret
_FOLDER = tempfile.TemporaryDirectory()
_SHARED: list[Path] = []


def shared_key_file() -> Path:
    """The test process's key file (created on first use)."""
    if not _SHARED:
        _SHARED.append(pp.create_key(Path(_FOLDER.name) / "shared.key"))
    return _SHARED[0]


def fixed_key_file(name: str) -> Path:
    """A key file whose 32 bytes are fixed by ``name`` (the BLAKE2b of
    it): the same noise in every run, as a fixed seed gives without a
    key, but no scrypt stretching of each seed (50-240 ms per seed and
    process). For statistical tests that draw under many seeds."""
    path = Path(_FOLDER.name) / f"fixed-{name}.key"
    if not path.exists():
        path.write_bytes(
            hashlib.blake2b(name.encode(), digest_size=32).digest()
        )
        path.chmod(0o600)
    return path


@contextlib.contextmanager
def using_key(path: Path | None = None) -> Iterator[Path]:
    """Use a key file (default: the shared one) inside the block; restore
    the key selection (including "not set") afterwards."""
    before = current_session().key
    path = shared_key_file() if path is None else path
    pp.use_key(path)
    try:
        yield path
    finally:
        update_session(key=before)


@contextlib.contextmanager
def without_key() -> Iterator[None]:
    """No key file inside the block (even if the environment names one)."""
    before = current_session().key
    pp.use_key(None)
    try:
        yield
    finally:
        update_session(key=before)
