"""The release engine: one place decides the identity, noise and cost of a
release.

A *release* is what a mechanism outputs together with its record
(:class:`Release`: mechanism, eps, delta, identity). Stats, tables, the PCA
and the report never decide these themselves:

**Identity is public.** Whether two releases are the same (drawn once,
counted once) depends on the :class:`Query` only: the stat family, the
counted variables, group and facet variables, the domain declaration,
breaks and limits, eps, delta, adjacency, noise, the data *source* (the
plot's data, a table's data, or a layer's own ``data=``) and the secret's
public name (key fingerprint and seed label). Never on the data's content.
:meth:`Query.identity` is a keyed hash of those (keyed, so that a secret
seed cannot be guessed from it).

**The data enter the noise.** Each stream key is derived from the secret,
the identity and a digest of the data the release perturbs
(:func:`stream_key`, :func:`data_digest`): rerunning the same code on
changed data never reuses noise. As equal outputs would then reveal equal
data, a seed names one release: releasing the same query under the same
seed on another data frame *object* (decided by object identity, never by
content) gives a :class:`PrivacyWarning` (:func:`check_source`).

**Each mechanism owns its privacy map.** :class:`LaplaceCounts` and
:class:`CKMCounts` say what a release costs from their parameters,
adjacency and the public shape of the release (public or thresholded
domain, how many cells one record can reach); :func:`release_cells`
applies them and returns the values with their typed record. (The count
mechanisms live in :mod:`.count_mechanisms`, the source check in
:mod:`.sources`; this module re-exports them.)

This module imports numpy only (no plotnine, no pandas).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cellnames import StrLabels
from .count_mechanisms import CKMCounts, LaplaceCounts, Mechanism
from .keys import Secret, kept_identity, secret_for
from .place_streams import PlaceDomain, place_digest
from .randomness import _canonical, _canonical_chunks, derive_key
from .records import Release, Released
from .row_order import row_order
from .session import (
    UNSET,
    current_session,
    package_charge_hook,
    update_session,
)
from .sources import check_source
from .streams import stream_version

__all__ = [
    "CKMCounts",
    "CellTable",
    "Charge",
    "LaplaceCounts",
    "Query",
    "Release",
    "Released",
    "cells_name",
    "charge",
    "charging",
    "check_source",
    "data_digest",
    "keyed_digest",
    "release_cells",
    "set_charge_hook",
    "stream_key",
]


# -- identity ----------------------------------------------------------------
_PLAIN = {str, int, float}


def _public(value: Any) -> Any:
    """A canonical, hashable form of a public parameter."""
    if isinstance(value, StrLabels):
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
        :mod:`plotnine_private.mechanisms.keys`)."""
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
        chunks = self._chunks_v3 if version >= 3 else self._canonical_chunks
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
    def _cells_name(self) -> str:
        # a release and its charge both name the cells: encode once
        return _name_cells(self)


def data_digest(*arrays: Any) -> bytes:
    """16-byte digest of the data a release perturbs (dtype, shape, bytes).

    >>> data_digest(np.arange(3)) == data_digest(np.arange(3))
    True
    >>> data_digest(np.arange(3)) == data_digest(np.arange(1, 4))
    False
    """
    h = hashlib.blake2b(digest_size=16, person=b"pnp-data")
    for a in arrays:
        arr = np.asarray(a)
        if arr.ndim == 0:
            arr = arr.reshape(1)  # as ascontiguousarray did
        h.update(_canonical((str(arr.dtype), arr.shape)))
        if arr.size == 0 or arr.dtype.hasobject:
            h.update(arr.tobytes())
            continue
        if arr.flags.c_contiguous:
            h.update(arr.data)
            continue
        # the C-order bytes a block of rows at a time: the same digest
        # without two full copies of a (10**6, 20) matrix
        rows = max(1, _DIGEST_BLOCK // max(1, arr[:1].nbytes))
        for start in range(0, arr.shape[0], rows):
            part = np.ascontiguousarray(arr[start : start + rows])
            h.update(part.data)
    return h.digest()


_DIGEST_BLOCK = 1 << 22  # bytes hashed per copied block


def stream_key(
    secret: Secret, identity: str, digest: bytes, *parts: Any
) -> bytes:
    """The key of one noise stream: secret, identity, data digest, and
    parts naming the stream within the release (``"lo"``, ``"hist"``...).
    """
    return derive_key(secret.value, "stream", identity, digest, *parts)


# -- charges: what a release costs, told before its noise is drawn -----------
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


def keyed_digest(secret: Secret, digest: bytes) -> str:
    """The data digest of a release keyed by the secret, as the ledger
    stores it: equal for the same data under the same secret, and it
    cannot be checked against guessed data without the secret."""
    h = hashlib.blake2b(key=secret.value, digest_size=16, person=b"pnp-led")
    h.update(digest)
    return h.hexdigest()


@dataclass(frozen=True)
class Charge:
    """What one release will cost, told to the charge hook (the ledger)
    before its noise is drawn.

    Attributes
    ----------
    identity
        The release's public identity (:meth:`Query.identity`).
    digest
        :func:`keyed_digest` of the data it perturbs: the same query on
        changed data is another release.
    family, mechanism, eps, delta, adjacency, source
        As in :class:`Release` (``eps`` is ``None`` for CKM).
    cells
        :func:`cells_name` (``""`` if none).
    unit, bound
        The privacy unit and how many records one unit may have:
        ``"one row"`` and 1 until a query names them (parts
        ``privacy_unit`` and ``max_records``).
    """

    identity: str
    digest: str
    family: str
    mechanism: str
    eps: float | None
    delta: float
    adjacency: str | None
    source: str
    cells: str = ""
    unit: str = "one row"
    bound: int = 1

    @classmethod
    def of(
        cls,
        query: Query,
        identity: str,
        digest: str,
        mechanism: str,
        eps: float | None,
        delta: float,
        adjacency: str | None,
        family: str | None = None,
    ) -> Charge:
        """The charge of a release of ``query`` (unit and bound from the
        query's parts, or one row)."""
        return cls(
            identity=identity,
            digest=digest,
            family=family or query.family,
            mechanism=mechanism,
            eps=None if eps is None else float(eps),
            delta=float(delta),
            adjacency=adjacency,
            source=query.source,
            cells=cells_name(query),
            unit=str(query.part("privacy_unit", "one row")),
            bound=int(query.part("max_records", 1)),
        )


def _charge_hook() -> Callable[[Sequence[Charge]], None] | None:
    """The current session's hook: one it set, or the package's (its
    ledger, installed at import); the core only calls it."""
    hook = current_session().charge_hook
    return package_charge_hook() if hook is UNSET else hook


def set_charge_hook(
    hook: Callable[[Sequence[Charge]], None] | None,
) -> Callable[[Sequence[Charge]], None] | None:
    """Set the function told of every release of the current session
    (:mod:`.session`) before its noise is drawn; returns the previous
    one. The hook may raise to refuse the release (the ledger raises
    ``BudgetExceededError``): then nothing is drawn."""
    previous = _charge_hook()
    update_session(charge_hook=hook)
    return previous


def charging() -> bool:
    """Whether a charge hook is set and listening (callers skip
    computing digests and names otherwise). A hook with a
    ``listening()`` method says by it whether it records anything now
    (the ledger: only while one is active)."""
    hook = _charge_hook()
    listening = getattr(hook, "listening", None)
    return hook is not None and (listening is None or bool(listening()))


def charge(charges: Sequence[Charge]) -> None:
    """Tell the hook of releases about to be drawn (all or none: a PCA's
    components are charged in one call)."""
    hook = _charge_hook()
    if hook is not None and charges:
        hook(tuple(charges))


# -- records (Release, Released: .records) ---------------------------------
@dataclass
class CellTable:
    """Cells of one release, before perturbation (numpy only).

    Attributes
    ----------
    words
        ``(cells, k)`` uint64 content of each cell (panel, groups, domain
        cell), from :func:`~plotnine_private.mechanisms.randomness.cell_words`;
        each cell's noise stream is named by its words (by its place under
        stream version 3, see ``places``: then made only if read).
    n
        True record counts (int64).
    weighted
        Weighted counts (float64); equal to ``n`` without weights.
    key_sum
        Exact integer sums of the CKM record keys per cell, or ``None``.
    public
        Whether the cells were fixed without looking at the data. If not,
        only non-empty cells are in the table (thresholded release).
    multiplicity
        How many cells one record can be counted in (1; more with facet
        margins, which repeat every record in the margin panels).
    places
        The whole public domain whose cell ``p`` is row ``p``, when the
        table lists one (set by :meth:`named_by`, never copied by
        ``dataclasses.replace``, whose rows may be other cells): stream
        version 3 names these cells by place (:mod:`.place_streams`).
    """

    words: np.ndarray | None
    n: np.ndarray
    weighted: np.ndarray | None = None
    key_sum: np.ndarray | None = None
    public: bool = True
    multiplicity: int = 1
    places: PlaceDomain | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def named_by(self, places: PlaceDomain) -> CellTable:
        """This table with its cells named by their place in ``places``
        (row ``p`` is place ``p``); words not given (``None``) are made
        only if read."""
        self.places = places
        if self.__dict__.get("words") is None:
            del self.words  # made by __getattr__ if ever read
        return self

    def __getattr__(self, name: str) -> Any:
        # only called for a missing attribute: the words of a
        # place-named table, which version 3 never needs
        places = self.__dict__.get("places")
        if name != "words" or places is None:
            raise AttributeError(name)
        self.words = places.cell_words()
        return self.words

    def by_place(self) -> bool:
        """Whether the cells are named by their place (a whole public
        domain, under stream version 3)."""
        return (
            self.places is not None and self.public and stream_version() >= 3
        )

    def digest(self) -> bytes:
        """Digest of the cells and their true counts, independent of the
        order the cells are listed in (a table and a plot list them in
        different orders and must draw the same noise). Under stream
        version 3, a whole public domain's: its domain digest and its
        counts in place order (:func:`.place_streams.place_digest`)."""
        if self.places is not None and self.by_place():
            return place_digest(self.places.digest(), self.n, self.key_sum)
        words = np.asarray(self.words, dtype=np.uint64)
        if words.ndim == 1:  # one word per cell
            words = words[:, None]
        order = row_order(words)
        # np.take gathers whole rows (indexing copies them word by word)
        parts = [
            np.take(words, order, axis=0),
            np.take(np.asarray(self.n, dtype=np.int64), order),
        ]
        if self.key_sum is not None:
            parts.append(np.take(np.asarray(self.key_sum, np.int64), order))
        return data_digest(*parts)


# -- the engine --------------------------------------------------------------
def release_cells(
    query: Query,
    table: CellTable,
    mechanism: Mechanism,
    *,
    domain: str,
    panels: str = "single panel",
    data_object: Any = None,
    details: Mapping[str, Any] | None = None,
) -> Released:
    """Perturb a cell table and record the release.

    Parameters
    ----------
    query
        The public query (its parts must include the mechanism's
        parameters; see :meth:`LaplaceCounts.parameters`).
    table
        The cells with their true aggregates.
    mechanism
        Any :class:`~.count_mechanisms.Mechanism`: the counts' and the
        totals' (:mod:`~plotnine_private.mechanisms.magnitudes`); its
        ``formal`` says whether noise is drawn from a keyed stream (its
        ``stream``) and charged with an eps.
    domain
        Words for the report: where the cells came from.
    panels
        Words for the report: how the panels were made.
    data_object
        The data frame object released from, for the one-seed-per-release
        warning (:func:`check_source`); ``None`` skips the check.
    details
        Extra words for the report.
    """
    is_dp = mechanism.formal
    secret = query.secret() if is_dp else None
    digest: bytes | None = None  # of the cells: taken once, if needed
    if secret is not None:  # is_dp
        identity = query.identity(secret)
        check_source(query, secret, data_object, identity)
        digest = table.digest()
        key = stream_key(
            secret,
            identity,
            digest,
            mechanism.stream,
        )
    else:
        # CKM draws nothing: its identity is for the report only (the same
        # record keys give the same noise whatever the seed policy)
        h = hashlib.blake2b(digest_size=12, person=b"pnp-ckm-id")
        for chunk in query._canonical_chunks:
            h.update(chunk)
        identity = h.hexdigest()
        key = None
    eps, delta = mechanism.privacy_map(table.public, table.multiplicity)
    mech_name = mechanism.name
    if charging():  # the digest and the cells' name cost a pass each
        charge_secret = secret if secret is not None else query.secret()
        charge(
            [
                Charge.of(
                    query,
                    identity,
                    keyed_digest(charge_secret, digest or table.digest()),
                    mech_name,
                    eps,
                    delta,
                    mechanism.adjacency,
                )
            ]
        )
    values, noisy, keep, mech_details = mechanism.perturb(table, key)
    if is_dp:
        kind = "thresholded" if not table.public else domain
        if table.multiplicity > 1:
            composition = (
                f"one record in up to {table.multiplicity} panels (margins)"
            )
        elif panels.startswith("public: declared facets"):
            # the panels partition the records: one histogram over all of
            # them, each record in one cell (parallel composition)
            composition = "parallel over declared facets"
        else:
            composition = "one histogram"
    else:
        kind = domain if table.public else "observed"
        composition = "no formal guarantee (CKM)"
    release = Release(
        # a seed-only identity is kept blinded (kept_identity)
        identity=identity
        if secret is None
        else kept_identity(secret, identity),
        family=query.family,
        mechanism=mech_name,
        eps=eps,
        delta=delta,
        adjacency=mechanism.adjacency,
        sensitivity=None
        if mechanism.sensitivity is None
        else float(mechanism.sensitivity),
        domain=kind,
        cells=int(keep.sum()),
        policy=secret.policy if secret is not None else "record keys",
        source=query.source,
        panels=panels,
        composition=composition,
        details={
            **mech_details,
            **(details or {}),
            **({"key_id": secret.key_id} if secret is not None else {}),
        },
        name_of=functools.partial(cells_name, query),
    )
    return Released(values, noisy, keep, release)
