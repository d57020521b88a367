"""``pp.session(...)``: settings of the session for one block.

The session itself (what it holds, and which session a thread or an
asyncio task sees) is :mod:`plotnine_private.mechanisms.session`; this
module adds the block, which may also choose a ledger (an upper layer).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .exceptions import PlotninePrivateError
from .ledger.store import use_ledger
from .mechanisms.release.engine import Charge, set_charge_hook
from .mechanisms.session import Session, current_session, session_of
from .mechanisms.streams.keys import use_key
from .mechanisms.streams.versions import use_stream_version

__all__ = ["session"]


class _Keep:
    """A setting ``session()`` was not given: the current one stays."""

    def __repr__(self) -> str:
        return "KEEP"


_KEEP: Any = _Keep()


@contextmanager
def session(
    *,
    key: str | os.PathLike | None = _KEEP,
    ledger: str | os.PathLike | None = _KEEP,
    dataset: str | None = None,
    cap_eps: float | None = None,
    cap_delta: float | None = None,
    stream_version: int = _KEEP,
    charge_hook: Callable[[Sequence[Charge]], None] | None = _KEEP,
    fresh: bool = False,
) -> Iterator[Session]:
    """Settings of the session inside a ``with`` block, restored after it.

    ``with pp.session(key="pp.key", ledger="l.sqlite", dataset="mpg",
    stream_version=2): ...`` is ``use_key``, ``use_ledger`` and
    ``use_stream_version`` for the block only. After the block (also
    after an exception) the session is exactly what it was before it,
    whatever the block changed. A setting not given stays as it is.

    The session is the running thread's or asyncio task's: two threads
    or tasks each in their own block do not see each other's settings
    (:mod:`plotnine_private.mechanisms.session` says which session a new
    thread starts with).

    Parameters
    ----------
    key
        A key file (see :func:`~plotnine_private.use_key`), or ``None``
        for none.
    ledger, dataset, cap_eps, cap_delta
        The ledger and data set to charge (see
        :func:`~plotnine_private.use_ledger`), or ``ledger=None`` for
        none. ``dataset`` and the caps need ``ledger``.
    stream_version
        The noise streams' version (see
        :func:`~plotnine_private.use_stream_version`).
    charge_hook
        A function told of every release before its noise is drawn (see
        :func:`~plotnine_private.mechanisms.release.engine.set_charge_hook`).
    fresh
        Start a new record of the seeds used (the one-seed-per-release
        warning forgets earlier data frames) and of the releases charged.

    Yields
    ------
    Session
        The session inside the block.

    Examples
    --------
    >>> import plotnine_private as pp
    >>> with pp.session(stream_version=2) as s:
    ...     s.stream_version, pp.stream_version()
    (2, 2)
    >>> pp.stream_version()
    3
    """
    if ledger is _KEEP and (dataset, cap_eps, cap_delta) != (None,) * 3:
        raise PlotninePrivateError(
            "session(): dataset, cap_eps and cap_delta choose a ledger's "
            "data set; give the ledger too (ledger='ledger.sqlite')."
        )
    records: dict[str, Any] = {"sources": {}, "recent": {}} if fresh else {}
    with session_of(**records):
        if key is not _KEEP:
            use_key(key)
        if stream_version is not _KEEP:
            use_stream_version(stream_version)
        if charge_hook is not _KEEP:
            set_charge_hook(charge_hook)
        if ledger is not _KEEP:
            # after the key: a ledger is bound to the key in use
            use_ledger(
                ledger, dataset=dataset, cap_eps=cap_eps, cap_delta=cap_delta
            )
        yield current_session()
