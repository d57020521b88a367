"""Key files for tests that save bundles (save_release refuses seeds
without a key file)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import plotnine_private as pp
from plotnine_private.mechanisms import keys

# one key per test process: neighbouring builds must share their secret
_FOLDER = tempfile.TemporaryDirectory()
_SHARED: list[Path] = []


def shared_key_file() -> Path:
    """The test process's key file (created on first use)."""
    if not _SHARED:
        _SHARED.append(pp.create_key(Path(_FOLDER.name) / "shared.key"))
    return _SHARED[0]


@contextlib.contextmanager
def using_key(path: Path | None = None) -> Iterator[Path]:
    """Use a key file (default: the shared one) inside the block; restore
    the key selection (including "not set") afterwards."""
    before = keys._selected
    path = shared_key_file() if path is None else path
    pp.use_key(path)
    try:
        yield path
    finally:
        keys._selected = before


@contextlib.contextmanager
def without_key() -> Iterator[None]:
    """No key file inside the block (even if the environment names one)."""
    before = keys._selected
    pp.use_key(None)
    try:
        yield
    finally:
        keys._selected = before
