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
applies them and returns the values with their typed record.

The parts live below this module, which re-exports them: the query and
its identity in :mod:`.query`, the cells and the data digest in
:mod:`.cell_table`, the count mechanisms in :mod:`.count_mechanisms` and
the source check in :mod:`.sources`.

This module imports numpy only (no plotnine, no pandas).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..session import (
    UNSET,
    current_session,
    package_charge_hook,
    update_session,
)
from ..streams.keys import Secret, kept_identity
from ..streams.randomness import derive_key
from .cell_table import CellTable, data_digest
from .count_mechanisms import CKMCounts, LaplaceCounts, Mechanism
from .query import Query, cells_name
from .records import MadeOnRead, Release, Released
from .sources import check_source

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


def stream_key(
    secret: Secret, identity: str, digest: bytes, *parts: Any
) -> bytes:
    """The key of one noise stream: secret, identity, data digest, and
    parts naming the stream within the release (``"lo"``, ``"hist"``...).
    """
    return derive_key(secret.value, "stream", identity, digest, *parts)


# -- charges: what a release costs, told before its noise is drawn -----------
def keyed_digest(secret: Secret, digest: bytes) -> str:
    """The data digest of a release keyed by the secret, as the ledger
    stores it: equal for the same data under the same secret, and it
    cannot be checked against guessed data without the secret."""
    h = hashlib.blake2b(key=secret.value, digest_size=16, person=b"pnp-led")
    h.update(digest)
    return h.hexdigest()


def _charge_cells(charge: Charge) -> str:
    return "" if charge.name_of is None else charge.name_of()


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
        :func:`cells_name` (``""`` if none), made when first read where
        ``name_of`` is given: a repeated release, found in the ledger,
        never reads it (naming a declared domain of 10**6 labels hashes
        some 12 MB).
    unit, bound
        The privacy unit and how many records one unit may have:
        ``"one row"`` and 1 until a query names them (parts
        ``privacy_unit`` and ``max_records``).
    dataset
        The data set the data came from (``pp.source(..., dataset=...)``;
        None: the ledger's own), from the session's tags.
    label
        The label of the figure or table (``""``: none), from the
        session's tags. Neither changes the identity or the noise.
    """

    identity: str
    digest: str
    family: str
    mechanism: str
    eps: float | None
    delta: float
    adjacency: str | None
    source: str
    cells: MadeOnRead = MadeOnRead(_charge_cells, "")
    unit: str = "one row"
    bound: int = 1
    dataset: str | None = None
    label: str = ""
    name_of: Callable[[], str] | None = field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.name_of is not None:  # made on first read
            object.__delattr__(self, "cells")

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
        query's parts, or one row; data set and label from the session's
        tags)."""
        tags = current_session().tags
        return cls(
            identity=identity,
            digest=digest,
            family=family or query.family,
            mechanism=mechanism,
            eps=None if eps is None else float(eps),
            delta=float(delta),
            adjacency=adjacency,
            source=query.source,
            name_of=functools.partial(cells_name, query),
            unit=str(query.part("privacy_unit", "one row")),
            bound=int(query.part("max_records", 1)),
            dataset=None if tags is None else tags.dataset,
            label="" if tags is None or tags.label is None else tags.label,
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
        totals' (:mod:`~plotnine_private.mechanisms.release.magnitudes`); its
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
