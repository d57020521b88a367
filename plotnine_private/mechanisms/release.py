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

This module imports numpy only (no plotnine, no pandas).
"""

from __future__ import annotations

import hashlib
import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import laplace as lap
from .errors import ParameterError, PrivacyWarning
from .keys import Secret, secret_for
from .randomness import CellStreams, _canonical, derive_key

__all__ = [
    "CKMCounts",
    "CellTable",
    "LaplaceCounts",
    "Query",
    "Release",
    "Released",
    "check_source",
    "data_digest",
    "release_cells",
    "stream_key",
]


# --------------------------------------------------------------------------
# identity
# --------------------------------------------------------------------------
def _public(value: Any) -> Any:
    """A canonical, hashable form of a public parameter."""
    if isinstance(value, np.ndarray):
        return tuple(_public(v) for v in value.tolist())
    if isinstance(value, (list, tuple)):
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

    def derive(self, family: str, **more: Any) -> Query:
        """A sub-query (e.g. the range estimate of a histogram)."""
        return Query.make(
            family, self.source, self.seed, **dict(self.parts), **more
        )

    def secret(self) -> Secret:
        """The secret of the query's seed under the current key policy
        (key file, seed only or session; see
        :mod:`plotnine_private.mechanisms.keys`)."""
        return secret_for(self.seed)

    def identity(self, secret: Secret | None = None) -> str:
        """Keyed 24-hex-digit identity: equal for equal queries under the
        same secret, and nothing else.

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
        h.update(_canonical((self.family, self.source, self.parts)))
        return h.hexdigest()


def data_digest(*arrays: Any) -> bytes:
    """16-byte digest of the data a release perturbs (dtype, shape, bytes).

    >>> data_digest(np.arange(3)) == data_digest(np.arange(3))
    True
    >>> data_digest(np.arange(3)) == data_digest(np.arange(1, 4))
    False
    """
    h = hashlib.blake2b(digest_size=16, person=b"pnp-data")
    for a in arrays:
        arr = np.ascontiguousarray(a)
        h.update(_canonical((str(arr.dtype), arr.shape)))
        h.update(arr.tobytes())
    return h.digest()


def stream_key(
    secret: Secret, identity: str, digest: bytes, *parts: Any
) -> bytes:
    """The key of one noise stream: secret, identity, data digest, and
    parts naming the stream within the release (``"lo"``, ``"hist"``...).
    """
    return derive_key(secret.value, "stream", identity, digest, *parts)


# a seed names one release: the data object each (secret, identity) was
# first released on, by object identity (weak, so frames can be freed)
_SOURCES: dict[tuple, Any] = {}


def _ref(obj: Any):
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda o=obj: o  # keep it alive: still object identity


def check_source(query: Query, secret: Secret, data_object: Any) -> None:
    """Warn when a seed is reused for the same query on another data frame
    object in this session (object identity, never content).

    Equal noise on changed data would make equal outputs reveal equal data;
    because the data enter the noise that cannot happen, but two releases
    of one query under one seed are two releases: one seed per figure.
    """
    if data_object is None:
        return
    slot = (secret.policy, secret.key_id, secret.label, query.identity(secret))
    known = _SOURCES.get(slot)
    if known is None or known() is None:
        # first sight, or the earlier frame is gone: that frame is the
        # source of this release from now on
        if known is not None and known() is None:
            _warn_reuse(query, secret)
        _SOURCES[slot] = _ref(data_object)
        return
    if known() is not data_object:
        _SOURCES[slot] = _ref(data_object)
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


# --------------------------------------------------------------------------
# records
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Release:
    """The record of one release: what the report composes.

    Attributes
    ----------
    identity
        Public identity (:meth:`Query.identity`): releases with equal
        identity are one release and are charged once.
    family
        The query family (``"count"``, ``"range"``, ``"pca:directions"``).
    mechanism
        ``"discrete_laplace"``, ``"laplace"``, ``"gaussian"``, ``"ckm"``,
        ``"durfee_quantile"``...
    eps, delta
        What the release costs by its mechanism's privacy map (``None``
        eps for CKM, which has no formal guarantee).
    adjacency
        ``"replace"`` or ``"add_remove"`` (``None`` for CKM).
    sensitivity
        Sensitivity used to calibrate the noise.
    domain
        Where the cells came from, in words (``"public: levels"``,
        ``"thresholded"``, ``"observed"``, ``"private estimate"``).
    cells
        Number of cells released (shown).
    policy
        Key policy of the noise: ``"key"``, ``"seed-only"``,
        ``"session"``, or ``"record keys"`` (CKM).
    source
        The data source of the query (``"data"``, ``"layer 2 data"``).
    panels
        How panels (facets) were made: ``"single panel"``, ``"public:
        declared facets (drv)"``, ``"observed values of drv"``.
    composition
        How ``eps`` follows from the mechanism's parameters: ``"one
        histogram"``, ``"parallel over declared facets"``, ...
    details
        Mechanism parameters for the report (scale, threshold, p-table).
    """

    identity: str
    family: str
    mechanism: str
    eps: float | None
    delta: float
    adjacency: str | None
    sensitivity: float | None
    domain: str
    cells: int
    policy: str
    source: str = "data"
    panels: str = "single panel"
    composition: str = "one release"
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def formal(self) -> bool:
        """Whether the release has a formal (DP) guarantee."""
        return self.eps is not None


@dataclass
class CellTable:
    """Cells of one release, before perturbation (numpy only).

    Attributes
    ----------
    words
        ``(cells, k)`` uint64 content of each cell (panel, groups, domain
        cell), from :func:`~plotnine_private.mechanisms.randomness.cell_words`;
        each cell's noise stream is named by its words.
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
    """

    words: np.ndarray
    n: np.ndarray
    weighted: np.ndarray | None = None
    key_sum: np.ndarray | None = None
    public: bool = True
    multiplicity: int = 1

    def digest(self) -> bytes:
        """Digest of the cells and their true counts, independent of the
        order the cells are listed in (a table and a plot list them in
        different orders and must draw the same noise)."""
        words = np.asarray(self.words, dtype=np.uint64)
        # no cell at all (an empty frame on an observed domain): 0 x 0
        width = words.size // len(self.n) if len(self.n) else 0
        words = words.reshape(len(self.n), width)
        order = np.lexsort(words.T[::-1]) if len(words) else np.arange(0)
        parts = [words[order], np.asarray(self.n, dtype=np.int64)[order]]
        if self.key_sum is not None:
            parts.append(np.asarray(self.key_sum, dtype=np.int64)[order])
        return data_digest(*parts)


@dataclass
class Released:
    """Released values of a :class:`CellTable`, aligned with its cells."""

    values: np.ndarray  # released counts (>= 0, 0 where not shown)
    noisy: np.ndarray  # unclipped noisy counts (DP); = values for CKM
    keep: np.ndarray  # bool: shown
    release: Release


# --------------------------------------------------------------------------
# count mechanisms and their privacy maps
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class LaplaceCounts:
    """Laplace-type noise on counts: exact discrete Laplace (default) or
    continuous Laplace rounded (DPpack replication).

    Privacy map (Dwork, McSherry, Nissim & Smith 2006; discrete form by
    Canonne, Kamath & Steinke 2020): a count histogram has L1 sensitivity
    ``Δ = 1`` under add/remove and ``Δ = 2`` under replace-one (one cell
    loses a record, another gains it); noise of scale ``Δ/ε`` on every cell
    of a public domain is ``ε``-DP. On a domain observed in the data only
    non-empty cells are candidates and a cell is shown iff its noisy count
    reaches the threshold of
    :func:`~plotnine_private.mechanisms.laplace.threshold_for`: ``(ε,
    δ)``-DP (Karwa & Vadhan 2018). When one record is counted in ``m``
    cells (facet margins), the cost is ``m`` times that (group privacy).
    """

    eps: float
    delta: float = 1e-6
    adjacency: str = "replace"
    noise: str = "discrete_laplace"

    def __post_init__(self):
        if self.adjacency not in lap.ADJACENCY_SENSITIVITY:
            raise ParameterError(
                f"adjacency must be 'replace' or 'add_remove', got "
                f"{self.adjacency!r}."
            )
        if self.noise not in ("discrete_laplace", "laplace"):
            raise ParameterError(
                f"noise must be 'discrete_laplace' or 'laplace', got "
                f"{self.noise!r}."
            )

    @property
    def sensitivity(self) -> int:
        """L1 sensitivity of a count vector: 2 (replace), 1 (add/remove)."""
        return lap.ADJACENCY_SENSITIVITY[self.adjacency]

    @property
    def scale(self) -> float:
        """Noise scale ``sensitivity / eps``, with ``eps`` as the exact
        rational the sampler uses."""
        return self.sensitivity / float(lap.exact_epsilon(self.eps))

    @property
    def threshold(self) -> float:
        """Display threshold of a thresholded release."""
        return lap.threshold_for(
            self.eps, self.delta, self.adjacency, self.noise
        )

    def privacy_map(
        self, public: bool, multiplicity: int = 1
    ) -> tuple[float, float]:
        """``(eps, delta)`` of one release.

        >>> m = LaplaceCounts(eps=1.0, delta=1e-6)
        >>> m.privacy_map(public=True), m.privacy_map(public=False)
        ((1.0, 0.0), (1.0, 1e-06))
        >>> m.privacy_map(public=True, multiplicity=3)
        (3.0, 0.0)
        """
        eps = float(self.eps) * multiplicity
        delta = 0.0 if public else float(self.delta) * multiplicity
        return eps, delta

    def with_eps(self, eps: float) -> LaplaceCounts:
        """The same mechanism with another ``eps`` (what is left of a
        layer's budget after a private range estimate)."""
        return LaplaceCounts(eps, self.delta, self.adjacency, self.noise)

    def parameters(self) -> dict[str, Any]:
        """Public parameters that belong to a query."""
        return {
            "eps": float(self.eps),
            "delta": float(self.delta),
            "adjacency": self.adjacency,
            "noise": self.noise,
        }

    def perturb(self, table: CellTable, key: bytes):
        """Add noise to the cells of ``table``.

        Every cell of a public table gets noise; otherwise only non-empty
        cells are candidates and a cell is kept iff its noisy count reaches
        :attr:`threshold`. Each cell's noise comes from its own stream,
        named by its words under ``key``.

        Parameters
        ----------
        table
            The cells and their true counts.
        key
            The release's stream key (:func:`stream_key`).

        Returns
        -------
        values : numpy.ndarray
            Released counts: clipped at 0, 0 where not shown.
        noisy : numpy.ndarray
            Unclipped noisy counts (NaN for cells that were never
            candidates).
        keep : numpy.ndarray
            Whether each cell is shown.
        details : dict
            Report words: the scale, and the threshold if any.
        """
        n = np.asarray(table.n, dtype=np.int64)
        streams = CellStreams(key, table.words)
        cells = np.arange(len(n))
        if not table.public:
            cells = cells[n > 0]  # empty cells are never candidates
        raw = np.full(len(n), np.nan)
        if self.noise == "discrete_laplace":
            scale = lap.rational_scale(self.sensitivity, self.eps)
            raw[cells] = n[cells] + lap.discrete_laplace(streams, scale, cells)
        else:
            raw[cells] = n[cells] + lap.laplace(streams, self.scale, cells)
        keep = np.zeros(len(n), dtype=bool)
        keep[cells] = True
        details: dict[str, Any] = {"scale": self.scale}
        if not table.public:
            tau = self.threshold
            # compare the unrounded value: rounding first would lower the
            # effective cut below tau for continuous noise
            keep &= np.nan_to_num(raw, nan=-np.inf) >= tau
            details["threshold"] = tau
        noisy = raw if self.noise == "discrete_laplace" else np.round(raw)
        values = np.where(keep, np.clip(np.nan_to_num(noisy), 0, None), 0.0)
        return values, noisy, keep, details


@dataclass(frozen=True)
class CKMCounts:
    """Cell Key Method: each cell's noise is read from a p-table at its
    cell key (the sum of its records' keys, mod 1).

    No formal privacy guarantee and so no privacy map: deterministic given
    the record keys and the p-table; zero cells stay zero; weighted counts
    are the perturbed unweighted count times the cell's mean weight
    (cellKey, Tau-Argus).
    """

    ptable: Any
    threshold: float | None = None

    def privacy_map(self, public: bool, multiplicity: int = 1):
        """``(None, 0.0)``: the Cell Key Method has no formal guarantee,
        so no eps; it adds nothing to a report's total."""
        return None, 0.0

    def parameters(self) -> dict[str, Any]:
        """Public parameters that belong to a query: the p-table's
        fingerprint and the threshold."""
        return {
            "ptable": self.ptable.fingerprint,
            "threshold": self.threshold,
        }

    def perturb(self, table: CellTable, key: bytes | None = None):
        """Read each cell's deviation from the p-table at its cell key.

        Parameters
        ----------
        table
            The cells with their true counts and exact record-key sums.
        key
            Unused: CKM draws nothing (its noise is fixed by the keys).

        Returns
        -------
        values : numpy.ndarray
            Perturbed counts (times the mean weight for weighted counts);
            0 where suppressed by ``threshold``.
        noisy : numpy.ndarray
            A copy of ``values``.
        keep : numpy.ndarray
            Whether each cell is shown.
        details : dict
            Report words: the p-table, its fingerprint, the threshold.
        """
        n = np.asarray(table.n, dtype=np.int64)
        if table.key_sum is None:
            raise ParameterError("CKM needs the record-key sums of the cells.")
        pert = n + self.ptable.noise(n, table.key_sum)
        weighted = n if table.weighted is None else table.weighted
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_w = np.where(n > 0, weighted / np.where(n > 0, n, 1), 0.0)
        values = pert * mean_w
        keep = np.ones(len(values), dtype=bool)
        if not table.public:
            keep &= n > 0
        if self.threshold is not None:
            keep &= ~(values < self.threshold)
        values = np.where(keep, values, 0.0).astype(float)
        details = {
            "ptable": dict(self.ptable.params),
            "ptable_fingerprint": self.ptable.fingerprint,
            "threshold": self.threshold,
        }
        return values, values.copy(), keep, details


# --------------------------------------------------------------------------
# the engine
# --------------------------------------------------------------------------
def release_cells(
    query: Query,
    table: CellTable,
    mechanism: Any,
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
        :class:`LaplaceCounts` or :class:`CKMCounts`, or a mechanism with
        the same methods (``privacy_map``, ``parameters``, ``perturb``):
        the magnitude mechanisms of
        :mod:`~plotnine_private.mechanisms.magnitudes` set ``DP = True``
        (a formal guarantee, keyed noise) and their own ``STREAM`` name.
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
    is_dp = isinstance(mechanism, LaplaceCounts) or bool(
        getattr(mechanism, "DP", False)
    )
    secret = query.secret() if is_dp else None
    if secret is not None:  # is_dp
        identity = query.identity(secret)
        check_source(query, secret, data_object)
        key = stream_key(
            secret,
            identity,
            table.digest(),
            getattr(mechanism, "STREAM", "counts"),
        )
    else:
        # CKM draws nothing: its identity is for the report only (the same
        # record keys give the same noise whatever the seed policy)
        h = hashlib.blake2b(digest_size=12, person=b"pnp-ckm-id")
        h.update(_canonical((query.family, query.source, query.parts)))
        identity = h.hexdigest()
        key = None
    values, noisy, keep, mech_details = mechanism.perturb(table, key)
    eps, delta = mechanism.privacy_map(table.public, table.multiplicity)
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
        identity=identity,
        family=query.family,
        mechanism=mechanism.noise if is_dp else "ckm",
        eps=eps,
        delta=delta,
        adjacency=mechanism.adjacency if is_dp else None,
        sensitivity=float(mechanism.sensitivity) if is_dp else None,
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
    )
    return Released(values, noisy, keep, release)
