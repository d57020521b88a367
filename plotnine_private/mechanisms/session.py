"""The session: every setting and record a release reads besides its
arguments, in one object held in a :class:`~contextvars.ContextVar`.

A :class:`Session` holds the key file in use, the ledger in use and
whether it is suspended, the stream version, the charge hook, the seed
registry (which data frame each seed was released on) and the releases
charged so far. Writers (:func:`~.keys.use_key`,
:func:`~.streams.use_stream_version`,
:func:`~.release.set_charge_hook`, ``use_ledger``, ``pp.session``)
replace the current session by a changed copy; nothing else in the
package keeps state that changes a release.

Which session a thread or an asyncio task sees (the rules of
:mod:`contextvars`):

* the thread that imports the package starts with the first session;
* an asyncio task, and code run in ``contextvars.copy_context().run``,
  starts with the session of the code that made it: the same settings
  until it changes one (its changes stay its own), and the same seed
  registry and record of charged releases;
* any other new thread (``threading.Thread``, a thread pool) starts from
  the main thread's session as it is when the worker first reads it
  (inside a ``pp.session`` block of the main thread, that block's), so
  a ledger chosen in the main thread is never lost by moving work to a
  pool; what the worker then sets stays its own.

This module imports nothing but the standard library; the ledger's
fields are opaque to it.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "UNSET",
    "ReleaseTags",
    "Session",
    "current_session",
    "install_charge_hook",
    "package_charge_hook",
    "session_of",
    "tagged",
    "update_session",
]


class _Unset:
    """A setting not chosen in this session: its default applies (the
    environment for the key and the ledger, the package's charge hook)."""

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class ReleaseTags:
    """What the releases being made are charged as: the data set their
    data came from (``pp.source(..., dataset=...)``; None: the ledger's
    own data set) and the label of the figure or table (None: none).
    Neither is part of a release's identity or noise."""

    dataset: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class Session:
    """The state of one session (frozen: a writer makes a changed copy).

    Attributes
    ----------
    key
        The key file chosen with ``use_key`` (a path), ``None`` for no
        key, or :data:`UNSET`: the one ``PLOTNINE_PRIVATE_KEY_FILE``
        names.
    stream_version
        The version of the noise streams new releases draw from.
    charge_hook
        The function told of every release before its noise is drawn, or
        ``None``; :data:`UNSET` is the package's hook (the ledger).
    ledger
        The ledger in use (``ledger_store``'s record, opaque here),
        ``None`` for none, or :data:`UNSET`: the environment's.
    suspended
        How many ``suspended()`` blocks are open: none charges while > 0.
    sources
        The seed registry: for each (secret, identity), the data frame
        it was first released on (:mod:`.sources`).
    recent
        identity -> keyed digest of each release charged (or found) in
        the ledger in this session: the ledger rows a bundle copies.
    tags
        The :class:`ReleaseTags` of the layer or table releasing now
        (set for the length of its release by :func:`tagged`), or None.
    """

    key: Any = UNSET
    stream_version: int = 3
    charge_hook: Any = UNSET
    ledger: Any = UNSET
    suspended: int = 0
    sources: dict[tuple, Any] = field(default_factory=dict, repr=False)
    recent: dict[str, str] = field(default_factory=dict, repr=False)
    tags: ReleaseTags | None = None


_SESSION: contextvars.ContextVar[Session] = contextvars.ContextVar(
    "plotnine_private_session"
)


#: the main thread's current session, which a new thread starts from (a
#: mirror of the main thread's context variable, written only there)
_MAIN: list[Session] = []


def _set(session: Session) -> contextvars.Token:
    token = _SESSION.set(session)
    if threading.current_thread() is threading.main_thread():
        _MAIN[:] = [session]
    return token


def current_session() -> Session:
    """The session of the running thread or task (in a context that has
    none yet: the main thread's, or a new one in the main thread).

    >>> current_session().stream_version in (1, 2, 3, 4)
    True
    """
    try:
        return _SESSION.get()
    except LookupError:
        main = threading.current_thread() is threading.main_thread()
        session = _MAIN[0] if _MAIN and not main else Session()
        _set(session)
        return session


def update_session(**changes: Any) -> Session:
    """Replace the current session by a copy with ``changes``; returns
    the previous one. The change lasts until the next one in this thread
    or task (see :func:`session_of` for a block)."""
    previous = current_session()
    _set(replace(previous, **changes))
    return previous


@contextmanager
def session_of(**changes: Any) -> Iterator[Session]:
    """Inside the block, the current session with ``changes``; afterwards
    exactly the session before it (also after an exception, and whatever
    the block set)."""
    before = current_session()
    token = _set(replace(before, **changes))
    try:
        yield _SESSION.get()
    finally:
        _SESSION.reset(token)
        if threading.current_thread() is threading.main_thread():
            _MAIN[:] = [current_session()]


@contextmanager
def tagged(
    dataset: str | None = None, label: str | None = None
) -> Iterator[None]:
    """Inside the block, releases are charged as ``dataset`` with
    ``label`` (:class:`ReleaseTags`); afterwards the tags before it come
    back (and nothing else of the session changes)."""
    previous = update_session(tags=ReleaseTags(dataset, label)).tags
    try:
        yield
    finally:
        update_session(tags=previous)


# -- the package's charge hook ----------------------------------------------
# The package wires its ledger in here once, at import (as it wires the
# door into plotnine): every session whose charge_hook is UNSET calls it,
# so a new thread charges its ledger too. It is the same for every session
# and is not a setting (set_charge_hook changes a session's hook).
_PACKAGE_HOOK: list[Callable[[Sequence[Any]], None]] = []


def install_charge_hook(hook: Callable[[Sequence[Any]], None]) -> None:
    """Make ``hook`` the charge hook of every session that sets none
    (the package installs its ledger's at import)."""
    _PACKAGE_HOOK[:] = [hook]


def package_charge_hook() -> Callable[[Sequence[Any]], None] | None:
    """The hook :func:`install_charge_hook` installed, or ``None``."""
    return _PACKAGE_HOOK[0] if _PACKAGE_HOOK else None


# the importing thread's session now, so that the tasks and copied
# contexts it makes later share its seed registry
current_session()
