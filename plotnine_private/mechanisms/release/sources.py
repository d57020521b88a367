"""One seed per release: the data-source check of the release engine.

Releasing the same query under the same seed on another data frame
*object* (object identity, never content) gives a :class:`PrivacyWarning`.
Split out of :mod:`.release`, which re-exports these names.
"""

from __future__ import annotations

import warnings
import weakref
from typing import Any

from ..errors import PrivacyWarning
from ..session import current_session
from ..streams.keys import Secret
from .query import Query

__all__ = ["check_source"]


def _ref(obj: Any):
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda o=obj: o  # keep it alive: still object identity


def check_source(
    query: Query,
    secret: Secret,
    data_object: Any,
    identity: str | None = None,
) -> None:
    """Warn when a seed is reused for the same query on another data frame
    object in this session (:mod:`.session`; object identity, never
    content). ``identity``
    is ``query.identity(secret)`` if the caller has it (a large declared
    domain takes a while to hash).

    Equal noise on changed data would make equal outputs reveal equal data;
    because the data enter the noise that cannot happen, but two releases
    of one query under one seed are two releases: one seed per figure.
    """
    if data_object is None:
        return
    if identity is None:
        identity = query.identity(secret)
    # a seed names one release: the session's registry keeps the data
    # object each (secret, identity) was first released on, by object
    # identity (weak, so frames can be freed)
    sources = current_session().sources
    slot = (secret.policy, secret.key_id, secret.label, identity)
    known = sources.get(slot)
    if known is None or known() is None:
        # first sight, or the earlier frame is gone: that frame is the
        # source of this release from now on
        if known is not None and known() is None:
            _warn_reuse(query, secret)
        sources[slot] = _ref(data_object)
        return
    if known() is not data_object:
        sources[slot] = _ref(data_object)
        _warn_reuse(query, secret)


def _warn_reuse(query: Query, secret: Secret) -> None:
    what = secret.label if secret.policy != "session" else "no seed"
    warnings.warn(
        f"{what} was already used in this session for the same "
        f"{query.family} release on another data frame: this is a second "
        "release, with its own noise and its own cost. Use one seed per "
        "figure (a new seed for new or changed data).",
        PrivacyWarning,
        stacklevel=4,
    )
