"""The public description of a release: :class:`Query`, its identity and
the name of the cells it releases.

Whether two releases are the same (drawn once, counted once) depends on
the query only, never on the data's content: :meth:`Query.identity` is a
keyed hash of its public parts (keyed, so that a secret seed cannot be
guessed from it), and :func:`cells_name` names the cells a query releases
whatever its mechanism (a DP and a CKM release of the same counts share
it). The release engine (:mod:`.release`), the one-seed-per-release check
(:mod:`.sources`) and the PCA build their releases from it.

This module imports numpy only (no plotnine, no pandas).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..naming.cellnames import FloatLevels, IntLevels, StrLabels
from ..streams.keys import Secret, secret_for
from ..streams.randomness import _canonical_chunks
from ..streams.versions import stream_version

__all__ = ["Query", "cells_name"]

_PLAIN = {str, int, float}


def _public(value: Any) -> Any:
    """A canonical, hashable form of a public parameter."""
    if isinstance(value, (StrLabels, FloatLevels, IntLevels)):
        return value  # immutable, and encoded from its buffer
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        # a declared domain can hold 10**6 labels: plain items are their
        # own canonical form (same result as the item-wise recursion)
        if set(map(type, value)) <= _PLAIN:
            return tuple(value)
        return tuple(_public(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _public(v)) for k, v in value.items()))
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    return str(value)


@dataclass(frozen=True)
class Query:
    """The public description of a release.

    Parameters
    ----------
    family
        What is released: ``"count"``, ``"bin"``, ``"range"``, ``"pca"``...
    source
        Which data: ``"data"`` (the plot's or a table's data) or
        ``"layer 2 data"`` (a layer's own ``data=``).
    seed
        The seed (a label under a key file, the secret without one) or
        ``None`` (session entropy).
    parts
        Every other public parameter that changes the release, as
        ``(name, value)`` pairs; see :meth:`make`.
    """

    family: str
    source: str
    seed: int | str | None
    parts: tuple = ()

    @classmethod
    def make(
        cls, family: str, source: str, seed: int | str | None, **parts: Any
    ) -> Query:
        """A query with its parts in canonical order.

        >>> q = Query.make("count", "data", 1, x="class", eps=1.0)
        >>> q.parts
        (('eps', 1.0), ('x', 'class'))
        """
        canon = tuple(sorted((k, _public(v)) for k, v in parts.items()))
        return cls(family, source, seed, canon)

    def part(self, name: str, default: Any = None) -> Any:
        """The value of one part of the query, or ``default``.

        >>> Query.make("count", "data", 1, eps=1.0).part("eps")
        1.0
        """
        return dict(self.parts).get(name, default)

    def secret(self) -> Secret:
        """The secret of the query's seed under the current key policy
        (key file, seed only or session; see
        :mod:`plotnine_private.mechanisms.streams.keys`)."""
        return secret_for(self.seed)

    def identity(self, secret: Secret | None = None) -> str:
        """Keyed 24-hex-digit identity: equal for equal queries under the
        same secret and stream version, and nothing else.

        >>> a = Query.make("count", "data", 5, x="class")
        >>> b = Query.make("count", "data", 5, x="class")
        >>> a.identity() == b.identity()
        True
        >>> a.identity() == Query.make("count", "layer 1 data", 5,
        ...                            x="class").identity()
        False
        """
        secret = secret or self.secret()
        h = hashlib.blake2b(
            key=secret.value, digest_size=12, person=b"pnp-identity"
        )
        version = stream_version()
        chunks = (
            self._chunks_v4
            if version >= 4
            else self._chunks_v3
            if version == 3
            else self._canonical_chunks
        )
        for chunk in chunks:
            h.update(chunk)
        if version != 1:
            # two stream versions draw different noise for one query: two
            # releases (version-1 identities stay as they were)
            h.update(b"stream version " + str(version).encode())
        return h.hexdigest()

    @functools.cached_property
    def _canonical_chunks(self) -> tuple[bytes, ...]:
        # encoded once per query: a declared domain of 10**6 cells costs
        # 0.02 s to encode, and a release asks for its identity twice
        whole = (self.family, self.source, self.parts)
        return tuple(_canonical_chunks(whole))

    @functools.cached_property
    def _chunks_v3(self) -> tuple[bytes, ...]:
        # version 3 names a large domain of labels by its digest (one
        # pass over the buffer, shared with the cells' domain digest)
        whole = (self.family, self.source, self.parts)
        return tuple(_canonical_chunks(whole, digests=True))

    @functools.cached_property
    def _chunks_v4(self) -> tuple[bytes, ...]:
        # version 4 also names a large domain of floats by its digest
        whole = (self.family, self.source, self.parts)
        return tuple(_canonical_chunks(whole, digests=True, floats=True))

    @functools.cached_property
    def _cells_name(self) -> str:
        # a release and its charge both name the cells: encode once
        return _name_cells(self)


#: the public parts of a cell query that say which cells are released,
#: whatever the mechanism (a DP and a CKM layer on one variable share them)
_CELL_PARTS = ("aes", "groups", "facets", "panels", "domain", "scales")


def cells_name(query: Query) -> str:
    """Public name of the cells a query releases, without its mechanism.

    A DP and a CKM release of the same counts (same source, variables,
    groups, facets, domain and scales) get the same name; the CKM record
    key column is not part of it. ``""`` for a query that is not a cell
    release (a range, a PCA): those have no CKM counterpart.

    >>> dp = Query.make("count", "data", 1, aes=(("x", "class"),),
    ...                 domain="observed", eps=1.0)
    >>> ckm = Query.make("count", "data", None, aes=(("rkey", "rk"),
    ...                  ("x", "class")), domain="observed", ptable="ab")
    >>> cells_name(dp) == cells_name(ckm) != ""
    True
    """
    return query._cells_name


def _name_cells(query: Query) -> str:
    parts = dict(query.parts)
    if "aes" not in parts:
        return ""
    named = []
    for name in _CELL_PARTS:
        value = parts.get(name)
        if name == "aes":
            value = tuple(p for p in value or () if p[0] != "rkey")
        named.append((name, value))
    h = hashlib.blake2b(digest_size=12, person=b"pnp-cells")
    for chunk in _canonical_chunks((query.family, query.source, named)):
        h.update(chunk)
    return h.hexdigest()
