"""The secret behind every noise stream: a key file, a seed, or the session.

Three policies, decided from public facts only (is a key in use, was a seed
given):

``"key"``
    A key file (32 random bytes, :func:`create_key`) is in use, selected by
    :func:`use_key` or the environment variable
    ``PLOTNINE_PRIVATE_KEY_FILE``. A ``seed`` is then a public *label* of a
    release: code that says ``seed=3`` can be published, and the same key,
    seed and data give the same figure on any machine. The secret of a
    seed is ``BLAKE2b(key=K, "seed" || label)``.
``"seed-only"``
    No key, but a seed: the seed itself is the secret. It is stretched with
    scrypt (RFC 7914, ``N=2**14, r=8, p=1``), which makes guessing small
    seeds slower but not impossible: anyone who has the code (and so the
    seed) can remove the noise. Reports and bundles say so.
``"session"``
    Neither: 32 bytes of OS entropy drawn once per Python process. Within a
    session the same release is drawn once; another session draws other
    noise, and nobody can reproduce it.

A key file may also carry, after its 32 bytes, the record of the ledgers
it was used with (:func:`key_records`, :func:`update_key_records`): the
ledger binds each data set to one ledger file through the key, so that a
deleted, renamed, copied or truncated ledger is noticed (see
``docs/privacy-unit-and-budget.md``). The key bytes themselves never
change.

This module imports nothing from plotnine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat as _stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

try:  # POSIX; elsewhere the record is written without a lock
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from ..errors import ParameterError
from ..session import UNSET, current_session, update_session

__all__ = [
    "KEY_ENV",
    "Secret",
    "create_key",
    "current_key_id",
    "current_key_path",
    "kept_identity",
    "key_records",
    "secret_for",
    "update_key_records",
    "use_key",
]

#: environment variable naming a key file
KEY_ENV = "PLOTNINE_PRIVATE_KEY_FILE"
KEY_BYTES = 32

_SESSION = os.urandom(32)
# blinds what a release record keeps of a seed-only secret (see
# kept_identity): drawn once per process, never stored
_BLIND = hashlib.blake2b(
    _SESSION, digest_size=32, person=b"pnp-blind"
).digest()


@dataclass(frozen=True)
class Secret:
    """The secret of one seed under the current key policy.

    Attributes
    ----------
    value
        32 secret bytes (never printed or saved).
    policy
        ``"key"``, ``"seed-only"`` or ``"session"`` (module docstring).
    key_id
        Public 16-hex-digit fingerprint of the key file (``None`` without
        one): tells a checker which key made a release, reveals nothing.
    label
        The public name of the secret: ``"seed 3"``, ``"session"``. Two
        releases share a secret exactly when they share ``(key_id, label)``.
    """

    value: bytes
    policy: str
    key_id: str | None
    label: str

    def __repr__(self) -> str:  # never show the value
        return f"Secret(policy={self.policy!r}, label={self.label!r})"


def create_key(path: str | os.PathLike) -> Path:
    """Write a new random key file (32 bytes, readable by its owner only).

    Keep the file apart from the code (not in the repository); with it,
    ``seed=`` values are public labels.

    Parameters
    ----------
    path
        Where to write the key. An existing file is never overwritten.

    Returns
    -------
    Path
        The path written.

    Examples
    --------
    >>> import tempfile, os
    >>> p = create_key(os.path.join(tempfile.mkdtemp(), "pp.key"))
    >>> p.stat().st_size, oct(p.stat().st_mode & 0o777)
    (32, '0o600')
    """
    p = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    try:
        fd = os.open(p, flags, 0o600)
    except FileExistsError:
        raise ParameterError(
            f"create_key(): {str(p)!r} exists already; a key is never "
            "overwritten (noise made with it could no longer be "
            "reproduced). Choose another path or delete the file yourself."
        ) from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(os.urandom(KEY_BYTES))
    os.chmod(p, 0o600)  # whatever the umask said
    return p


# what follows the key when the key file records its ledgers
_RECORDS = b"\npnp-ledgers 1\n"


def _split(data: bytes, path: str) -> tuple[bytes, dict[str, Any]]:
    """The key and the records of a key file's bytes."""
    rest = data[KEY_BYTES:]
    if len(data) < KEY_BYTES or (rest and not rest.startswith(_RECORDS)):
        raise ParameterError(
            f"key file {path!r} holds {len(data)} bytes, not {KEY_BYTES} "
            "(and no ledger record after them): it is not a "
            "plotnine_private key. Make one with create_key(path)."
        )
    if not rest:
        return data, {}
    try:
        records = json.loads(rest[len(_RECORDS) :].decode("utf-8"))
        if not isinstance(records, dict):
            raise ValueError(records)
    except ValueError:
        raise ParameterError(
            f"key file {path!r}: the ledger record after its key is "
            "damaged (the key itself, its first 32 bytes, is intact). "
            "Restore the file from a backup; or keep only the key, "
            "truncating the file to 32 bytes, and select each ledger again "
            "(its data sets are then bound afresh)."
        ) from None
    return data[:KEY_BYTES], records


# a memo of a file's key by path and modification time (a replaced file
# is read again); which key a session uses is its own (session.key)
@functools.lru_cache(maxsize=16)
def _read_key(path: str, mtime_ns: int) -> bytes:
    return _split(Path(path).read_bytes(), path)[0]


def _load(path: str | os.PathLike, who: str) -> bytes:
    p = Path(path)
    try:
        info = p.stat()
    except OSError as err:
        raise ParameterError(
            f"{who}: cannot read the key file {str(p)!r} ({err.strerror}). "
            "Make one with create_key(path)."
        ) from None
    if not _stat.S_ISREG(info.st_mode):
        raise ParameterError(f"{who}: {str(p)!r} is not a file.")
    return _read_key(str(p.resolve()), info.st_mtime_ns)


def use_key(path: str | os.PathLike | None) -> None:
    """Select the key file for this session (``None``: no key, even if
    ``PLOTNINE_PRIVATE_KEY_FILE`` is set).

    The session is the running thread's or asyncio task's
    (:mod:`.session`). The file is read (and checked) now and on every
    release, so a replaced file is noticed.
    """
    if path is not None:
        _load(path, "use_key()")
    update_session(key=None if path is None else Path(path))


def _key() -> bytes | None:
    selected = current_session().key
    if selected is None:
        return None
    if selected is not UNSET:
        return _load(selected, "use_key()")
    env = os.environ.get(KEY_ENV)
    if env:
        return _load(env, KEY_ENV)
    return None


def current_key_path() -> Path | None:
    """The key file in use (checked as for a release), or ``None``."""
    if _key() is None:
        return None
    selected = current_session().key
    if selected is not UNSET:
        return Path(selected).resolve()
    return Path(os.environ[KEY_ENV]).resolve()


@contextmanager
def _locked(path: Path, mode: str, lock: int) -> Iterator[IO[bytes]]:
    try:
        fh = open(path, mode)  # noqa: SIM115 - closed below, after unlock
    except OSError as err:
        raise ParameterError(
            f"cannot {'write' if '+' in mode else 'read'} the key file "
            f"{str(path)!r} ({err.strerror}): a ledger records in the key "
            "file which ledger each data set uses. Make the file readable "
            f"and writable by its owner (chmod 600 {str(path)!r})."
        ) from None
    with fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), lock)
        yield fh


def key_records(path: Path) -> dict[str, Any]:
    """The records a key file carries after its key (``{}`` if none)."""
    shared = fcntl.LOCK_SH if fcntl is not None else 0
    with _locked(path, "rb", shared) as fh:
        return _split(fh.read(), str(path))[1]


def update_key_records(
    path: Path, change: Callable[[dict[str, Any]], dict[str, Any]]
) -> dict[str, Any]:
    """Replace a key file's records by ``change(records)``, under an
    exclusive lock (processes sharing a key queue). The key's 32 bytes
    are never rewritten: only what follows them."""
    exclusive = fcntl.LOCK_EX if fcntl is not None else 0
    with _locked(path, "r+b", exclusive) as fh:
        records = change(_split(fh.read(), str(path))[1])
        fh.seek(KEY_BYTES)
        fh.write(_RECORDS + json.dumps(records, sort_keys=True).encode())
        fh.truncate()
        fh.flush()
        os.fsync(fh.fileno())
    return records


def _key_id(key: bytes) -> str:
    return hashlib.blake2b(
        b"key id", key=key, digest_size=8, person=b"pnp-keyid"
    ).hexdigest()


def current_key_id() -> str | None:
    """Public fingerprint of the key in use, or ``None``."""
    key = _key()
    return None if key is None else _key_id(key)


@functools.lru_cache(maxsize=64)
def _stretched(label: str) -> bytes:
    # scrypt cost: N=2**14, r=8 -> 16 MiB and some 50 ms, once per seed and
    # process (cached); hashlib's scrypt is OpenSSL's
    return hashlib.scrypt(
        label.encode("utf-8"),
        salt=b"plotnine_private/seed-only/v1",
        n=2**14,
        r=8,
        p=1,
        dklen=32,
    )


def seed_label(seed: int | str | None) -> str:
    """The public name of a seed: ``'seed 3'``, ``"seed 'fig-2'"``,
    ``'session'``.

    >>> seed_label(3), seed_label("fig-2"), seed_label(None)
    ('seed 3', "seed 'fig-2'", 'session')
    """
    if seed is None:
        return "session"
    if isinstance(seed, str):
        return f"seed {seed!r}"
    return f"seed {int(seed)}"


def secret_for(seed: int | str | None) -> Secret:
    """The secret of ``seed`` under the current policy (module docstring).

    >>> use_key(None)
    >>> s = secret_for(7)
    >>> s.policy, s.label, s == secret_for(7)
    ('seed-only', 'seed 7', True)
    >>> secret_for(None).policy
    'session'
    """
    label = seed_label(seed)
    key = _key()
    if seed is None:
        value = hashlib.blake2b(
            _SESSION, digest_size=32, person=b"pnp-session"
        ).digest()
        return Secret(value, "session", None, label)
    if key is None:
        return Secret(_stretched(label), "seed-only", None, label)
    value = hashlib.blake2b(
        label.encode("utf-8"), key=key, digest_size=32, person=b"pnp-seed"
    ).digest()
    return Secret(value, "key", _key_id(key), label)


def kept_identity(secret: Secret, identity: str) -> str:
    """The identity a release record keeps (reports, pickles, reprs).

    A key file's or a session's identity is kept as it is. A seed-only
    identity is keyed by the seed alone, so anyone holding it could test
    guessed seeds offline (recompute the identity of the public query
    under each guess); the record keeps it blinded by a per-process
    secret instead. It is equal for equal releases within a session
    (the report still counts a shared release once) and tells nothing
    outside it.

    >>> use_key(None)
    >>> s = secret_for(7)
    >>> kept_identity(s, "abc") == kept_identity(s, "abc") != "abc"
    True
    >>> kept_identity(secret_for(None), "abc")
    'abc'
    """
    if secret.policy != "seed-only":
        return identity
    return hashlib.blake2b(
        identity.encode("utf-8"),
        key=_BLIND,
        digest_size=12,
        person=b"pnp-kept",
    ).hexdigest()
