"""The run of a private PCA: directions, eigenvalues, frame, histograms.

One function per step, each releasing through one mechanism and
recording one engine
:class:`~plotnine_private.mechanisms.release.engine.Release`:

1. :func:`release_directions`: g-DPPCA (Gaussian noise on the spherical
   Kendall matrix), ``eps_loading, delta_loading``;
2. :func:`release_eigenvalues` (``dp_pca`` only): clipped pair variances,
   ``eps_scree, delta_scree``;
3. :func:`release_frame`: a square frame from three Durfee quantiles,
   ``0.35 eps_score`` (pure DP);
4. :func:`release_histogram`: one histogram of the scores over every
   (panel, group, grid cell), ``0.65 eps_score, delta_score``.

Identity and noise follow the release engine (``docs/privacy-model.md``,
"Release identity, keys and seeds"): the
:class:`~plotnine_private.mechanisms.release.engine.Query` of the whole PCA is
public (columns, budget, split, bins, method, axes, groups and their
declared levels, facets...); each component's identity is the query's
identity plus the component's name, and each component's noise stream is
keyed by that identity *and a digest of the data it perturbs*, so a
rerun on changed data never reuses noise.

Sizes (rule 10): nothing released depends on a panel's or a group's true
size. The directions and the frame are computed once from all the rows
(``n`` is public under replace-one adjacency); the histogram's noise and
its sparse threshold are in count units (no ``n``); synthetic point
counts come from the released histogram or from a public number. Under
a privacy unit the number of rows kept is private: the pair statistics
(directions, eigenvalues) and the frame's level use a public size, a
declared ``n`` or a lower bound of a private count of the rows
(:func:`release_size`, step 0, ``mechanisms/pca/size.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..mechanisms.errors import ParameterError
from ..mechanisms.pca.directions import PrivateEigenvalues, project
from ..mechanisms.pca.histogram import (
    ReleasedHistogram,
    ScoreGrid,
    grid_cells,
    score_grid,
)
from ..mechanisms.pca.parts import (
    ClippedScree,
    DurfeeFrame,
    KendallDirections,
    RowCount,
    histogram_mechanism,
)
from ..mechanisms.pca.quantile import FRAME_TAIL, PrivateFrame
from ..mechanisms.pca.size import scree_pairs, slot_rows
from ..mechanisms.release.engine import (
    Charge,
    Query,
    Release,
    charge,
    charging,
    check_source,
    data_digest,
    keyed_digest,
    stream_key,
)
from ..mechanisms.streams.keys import Secret, kept_identity
from ..mechanisms.streams.randomness import derive_key, keyed_permutation
from ..validation import fail
from .inputs import (
    FRAME_SHARE,
    HIST_SHARE,
    Budget,
    Partition,
    Settings,
    pca_query,
)

__all__ = [
    "FRAME_SHARE",
    "HIST_SHARE",
    "Budget",
    "Partition",
    "PCAFit",
    "Settings",
    "fit_pca",
    "pca_query",
]

FRAME_INFLATE = 0.2


# --------------------------------------------------------------------------
# recording
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Recorder:
    """Makes the engine records of one PCA's components."""

    identity: str
    secret: Secret
    source: str
    panels: str

    def __call__(self, component: str, **fields: Any) -> Release:
        details = dict(fields.pop("details", {}))
        if self.secret.key_id is not None:
            details["key_id"] = self.secret.key_id
        return Release(
            identity=f"{self.identity}:{component}",
            family=f"pca:{component}",
            adjacency="replace",
            policy=self.secret.policy,
            source=self.source,
            panels=self.panels,
            details=details,
            **fields,
        )

    def of(self, component: str, mech: Any, **fields: Any) -> Release:
        """The record of a part released by the mechanism ``mech`` (the
        release engine's protocol): its name, cost and sensitivity
        (``fields`` may give the sensitivity on the released scale)."""
        eps, delta = mech.privacy_map()
        fields.setdefault("sensitivity", mech.sensitivity)
        return self(
            component, mechanism=mech.name, eps=eps, delta=delta, **fields
        )


def _whole(partition: Partition) -> str:
    """Composition words of a component computed once from all rows."""
    if partition.shape[0] > 1:
        return "one release from all rows, shared by the panels"
    return "one release"


# --------------------------------------------------------------------------
# the steps
# --------------------------------------------------------------------------
def release_size(
    settings: Settings,
    x: np.ndarray,
    stream: Callable[..., bytes],
    record: _Recorder,
    partition: Partition,
    x_digest: bytes,
) -> tuple[int | None, Release | None]:
    """The public size of the pair statistics: ``None`` for rows (``n``
    public under replace-one adjacency), the declared ``n``, or, under a
    privacy unit without one, a lower bound of a private count of the
    rows kept (:class:`~..mechanisms.pca.size.RowCount`)."""
    if not settings.bounded:
        return None, None
    if settings.size is not None:
        return settings.size, None
    mech = RowCount(settings.budget.size, settings.records)
    count, size = mech.perturb(x, stream(x_digest, mech.stream))
    return size, record.of(
        "size",
        mech,
        domain="public",
        cells=1,
        composition=_whole(partition),
        details={
            "what": "rows kept (their number)",
            "count": count,
            "size": size,
            "scale": mech.scale,
            "margin": mech.margin,
            "beta": mech.beta,
        },
    )


def _size_details(settings: Settings, size: int | None) -> dict[str, Any]:
    """What a bounded release says of the public size it used."""
    if size is None:
        return {}
    how = "declared" if settings.size is not None else "private count"
    return {"size": size, "size_source": how}


def release_directions(
    settings: Settings,
    x: np.ndarray,
    stream: Callable[..., bytes],
    record: _Recorder,
    partition: Partition,
    x_digest: bytes | None = None,
    size: int | None = None,
) -> tuple[np.ndarray, Release | None, np.ndarray | None]:
    """Private directions from all rows, or the given ones (no cost).
    ``x_digest`` is ``data_digest(x)`` if already taken. The third item
    is the rows in the pair design's random order when the scree (v2)
    will pair them (else None); under a public ``size`` they are the
    slots, the second of a pair not filled on both sides made equal to
    the first (:func:`~..mechanisms.pca.size.scree_pairs`)."""
    if settings.directions is not None:
        return settings.directions, None, None
    eps, delta = settings.budget.loading
    mech = KendallDirections(
        eps,
        delta,
        size=len(x) if size is None else size,
        records=settings.records,
        slots=size is not None,
        calibration=settings.calibration,
        estimator=settings.estimator,
        keep_rows=_scree_v2(settings),
    )
    try:
        d = mech.perturb(x, stream(x_digest or data_digest(x), mech.stream))
    except ParameterError as err:
        raise fail(settings.fn, str(err)) from None
    p = x.shape[1]
    rows = d.rows
    if rows is not None and d.filled is not None:
        rows = scree_pairs(rows, d.filled)
    rel = record.of(
        "directions",
        mech,
        domain="public",
        cells=p * (p + 1) // 2,
        composition=_whole(partition),
        details={
            "what": "directions",
            "matrix": "spherical Kendall (g-DPPCA)",
            "sigma": d.sigma,
            "calibration": settings.calibration,
            "estimator": d.estimator,
            "shifts": d.shifts,
            **_size_details(settings, size),
        },
    )
    return d.vectors, rel, rows


def _scree_v2(settings: Settings) -> bool:
    """Whether this PCA releases a scree of version 2."""
    return settings.k is not None and settings.scree_version == "v2"


def _scree_v2_rows(
    x: np.ndarray,
    rows: np.ndarray | None,
    key: bytes,
    size: int | None = None,
) -> np.ndarray:
    """Scree v2's rows: the Kendall design's random order (or, with the
    exact estimator, an order of its own), whose consecutive rows pair;
    under a public ``size``, pairs of slots (an empty slot's pair adds
    0)."""
    if rows is None and size is not None:
        slots, filled = slot_rows(x, size, derive_key(key, "scree_order"))
        return scree_pairs(slots, filled)
    if rows is None:
        return x[keyed_permutation(derive_key(key, "scree_order"), len(x))]
    return rows


def release_eigenvalues(
    settings: Settings,
    x: np.ndarray,
    v: np.ndarray,
    stream: Callable[..., bytes],
    record: _Recorder,
    partition: Partition,
    rows: np.ndarray | None = None,
    x_digest: bytes = b"",
    size: int | None = None,
) -> tuple[PrivateEigenvalues | None, Release | None]:
    """Private eigenvalues (dppca's clipped scree) of all rows.

    Version 1 keys its stream by a digest of ``y = x V_k`` and pairs a
    random matching of its own; version 2 (the default) keys it by
    ``x``'s digest (``x_digest``, taken once) and the released ``V_k``,
    of which ``y`` is a function, and pairs consecutive ``rows`` (the
    Kendall design's order): one hash, order and gather fewer."""
    if settings.k is None:
        return None, None
    eps, delta = settings.budget.scree
    k = settings.k
    version = settings.scree_version
    mech = ClippedScree(
        eps,
        delta,
        size=x.shape[0] if size is None else size,
        k=k,
        records=settings.records,
        clip=settings.scree_clip,
        calibration=settings.calibration,
        version=version,
    )
    try:
        if version == "v2":
            named = np.frombuffer(x_digest or data_digest(x), np.uint8)
            key = stream(data_digest(named, v[:, :k]), mech.stream, version)
            table: Any = (_scree_v2_rows(x, rows, key, size), v[:, :k])
        else:
            table = project(x, v[:, :k])
            key = stream(data_digest(table), mech.stream)
        eigen = mech.perturb(table, key)
    except ParameterError as err:
        raise fail(settings.fn, str(err)) from None
    return eigen, record.of(
        "scree",
        mech,
        sensitivity=mech.sensitivity_at(eigen.clip),
        domain="public",
        cells=k,
        composition=_whole(partition),
        details={
            "what": "eigenvalues",
            "method": "clipped",
            "clip": eigen.clip,
            "clip_source": eigen.clip_source,
            "eps_clip_quantile": eigen.eps_clip,
            "clip_quantile": eigen.clip_quantile,
            "sigma": eigen.sigma,
            "version": version,
            **_size_details(settings, size),
        },
    )


def release_frame(
    settings: Settings,
    scores: np.ndarray,
    stream: Callable[..., bytes],
    record: _Recorder,
    partition: Partition,
    size: int | None = None,
) -> tuple[PrivateFrame, ScoreGrid, Release]:
    """The private square frame of all rows' scores, and its grid (the
    radius's level from the public ``size`` under a unit)."""
    mech = DurfeeFrame(
        settings.budget.frame,
        records=settings.records,
        inflate=FRAME_INFLATE,
        # v2 guards the radius's level against the search's tail
        tail=FRAME_TAIL if settings.frame_version == "v2" else None,
        size=size,
    )
    try:
        frame = mech.perturb(scores, stream(data_digest(scores), mech.stream))
        grid = score_grid(frame.xlim, frame.ylim, settings.bins)
    except ParameterError as err:
        raise fail(settings.fn, str(err)) from None
    return (
        frame,
        grid,
        record.of(
            "frame",
            mech,
            domain="public",
            cells=3,
            composition=_whole(partition),
            details={
                "what": "frame",
                "quantiles": "signed medians (eps/3 each), radial "
                f"{frame.level:.4g} quantile (eps/3)",
                "radius_quantile": frame.level,
                "version": settings.frame_version,
                "noise": "one-sided exponential; rate eps/12 per draw for the "
                "medians, eps/6 for the radius (eps = frame eps)",
                "beta": 1.01,
                "max_steps": 5000,
                "inflate": FRAME_INFLATE,
                "xlim": frame.xlim,
                "ylim": frame.ylim,
            },
        ),
    )


def partition_counts(
    scores: np.ndarray, grid: ScoreGrid, partition: Partition
) -> np.ndarray:
    """True counts, shape ``(panels, groups, cells)``; rows with code -1
    are counted nowhere."""
    npanel, ngroup = partition.shape
    cell = grid_cells(scores[:, 0], scores[:, 1], grid)
    ok = (partition.panel >= 0) & (partition.group >= 0)
    flat = (partition.panel[ok] * ngroup + partition.group[ok]) * (
        grid.size
    ) + cell[ok]
    counts = np.bincount(flat, minlength=npanel * ngroup * grid.size)
    return counts.astype(np.int64).reshape(npanel, ngroup, grid.size)


def _histogram_composition(partition: Partition) -> str:
    npanel, ngroup = partition.shape
    over = [
        w
        for w, many in (
            ("declared facets", npanel > 1),
            ("groups", ngroup > 1),
        )
        if many
    ]
    if not over:
        return "one histogram"
    return f"parallel over {' and '.join(over)}"


def release_histogram(
    settings: Settings,
    scores: np.ndarray,
    grid: ScoreGrid,
    stream: Callable[..., bytes],
    record: _Recorder,
    partition: Partition,
) -> tuple[ReleasedHistogram, Release]:
    """One private histogram over every (panel, group, grid cell).

    One record is in one cell of one panel and group: under replace-one
    the whole count array has L1 sensitivity 2 and L2 sensitivity
    ``sqrt(2)`` (``2k`` and ``k sqrt(2)`` for a privacy unit of ``k``
    rows), so it is released once with the full histogram budget,
    empty panels and groups included.
    """
    eps, delta = settings.budget.histogram
    counts = partition_counts(scores, grid, partition)
    try:
        mech = histogram_mechanism(
            settings.method,
            eps,
            delta,
            settings.records,
            settings.cells,
            settings.calibration,
        )
        key = stream(
            data_digest(counts, grid.x_breaks, grid.y_breaks), mech.stream
        )
        hist = mech.perturb(counts, key)
    except ParameterError as err:
        raise fail(settings.fn, str(err)) from None
    details: dict[str, Any] = {"what": "histogram", "bins": settings.bins}
    details.update(mech.noise_details(hist))
    if partition.grouped:
        details["groups"] = (
            [str(g) for g in partition.group_levels]
            if partition.groups_declared
            else "observed (thresholded)"
        )
    add = settings.method == "add"
    # cells released: the public size of the array; with groups seen in
    # the data that size would count them, so the cells shown instead
    cells = (
        counts.size
        if partition.groups_declared
        else np.count_nonzero(hist.counts)
    )
    return hist, record.of(
        "histogram",
        mech,
        domain="private estimate" if add else "thresholded",
        cells=int(cells),
        composition=_histogram_composition(partition),
        details=details,
    )


# --------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------
@dataclass
class PCAFit:
    """Everything one private PCA released (and its records)."""

    directions: np.ndarray
    eigen: PrivateEigenvalues | None
    frame: PrivateFrame
    grid: ScoreGrid
    histogram: ReleasedHistogram  # (panels, groups, cells)
    releases: list[Release]
    identity: str
    offset: tuple[float, float]
    sample_key: bytes = field(repr=False)
    scores: np.ndarray = field(repr=False)  # raw; for references only
    #: the public number of rows: ``n`` (replace-one adjacency), or the
    #: declared or privately counted size under a privacy unit
    n: int = 0

    def sample_key_for(self, *names: Any) -> bytes:
        """Sampling stream of one (panel, group)."""
        return derive_key(self.sample_key, *names)


def _charges(
    settings: Settings,
    x: np.ndarray,
    partition: Partition,
    query: Query,
    secret: Secret,
    identity: str,
    x_digest: bytes,
) -> list[Charge]:
    """What each component will cost, told to the ledger in one call
    before any of them draws noise (same identities as the records).
    The data are named by ``x_digest`` (``data_digest(x)``, which the
    directions' stream takes too: a 10**6 x 20 matrix is hashed once)
    with the panel and group codes."""
    x_named = np.frombuffer(x_digest, dtype=np.uint8)
    digest = keyed_digest(
        secret, data_digest(x_named, partition.panel, partition.group)
    )
    parts: list[tuple[str, str, float, float]] = []
    if settings.count_size:
        parts.append(("size", "discrete_laplace", settings.budget.size, 0.0))
    if settings.directions is None:
        parts.append(("directions", "gaussian", *settings.budget.loading))
    if settings.k is not None:
        parts.append(("scree", "gaussian", *settings.budget.scree))
    parts.append(("frame", "durfee_quantile", settings.budget.frame, 0.0))
    hist = "gaussian" if settings.method == "add" else "stability_histogram"
    parts.append(("histogram", hist, *settings.budget.histogram))
    return [
        Charge.of(
            query,
            f"{identity}:{component}",
            digest,
            mechanism,
            eps,
            delta,
            "replace",
            family=f"pca:{component}",
        )
        for component, mechanism, eps, delta in parts
    ]


def _sample_key(
    secret: Secret, stream: Callable[..., bytes], noisy: np.ndarray
) -> bytes:
    """The key of a result's synthetic samples, which the result keeps.

    Sampling is post-processing of the released counts: its stream is
    named by them, never by the data. Under a key file (or a session) it
    is also keyed by the secret. A key drawn from a seed-only secret
    would let whoever holds a pickled result test guessed seeds offline,
    so then the key is named by the released counts alone (public to
    whoever holds the result anyway).
    """
    if secret.policy == "seed-only":
        return derive_key(data_digest(noisy), "synthetic", "seed-only")
    return stream(data_digest(noisy), "synthetic")


def fit_pca(
    settings: Settings,
    x: np.ndarray,
    partition: Partition,
    query: Query,
    data_object: Any = None,
) -> PCAFit:
    """Release the directions, eigenvalues, frame and histogram."""
    if settings.method == "add" and not partition.groups_declared:
        raise fail(
            settings.fn,
            "the group levels are not declared, so which groups exist is "
            "a fact about the data; method='add' would show every group "
            "seen. Declare them (a pandas Categorical with explicit "
            "categories=[...], or a polars Enum) or use method='sparse', "
            "which shows only cells that clear a threshold.",
        )
    secret = query.secret()
    identity = query.identity(secret)
    check_source(query, secret, data_object)

    def stream(digest: bytes, *component: str) -> bytes:
        return stream_key(secret, identity, digest, *component)

    # hashed once for the ledger and the directions' stream (not at all
    # for given directions without a ledger)
    need = charging() or settings.directions is None or settings.count_size
    x_digest = data_digest(x) if need else b""
    if charging():
        charge(
            _charges(settings, x, partition, query, secret, identity, x_digest)
        )
    # what the records and the result keep (a seed-only identity blinded)
    kept = kept_identity(secret, identity)
    record = _Recorder(kept, secret, query.source, partition.panels)
    releases: list[Release] = []
    size, rel = release_size(settings, x, stream, record, partition, x_digest)
    releases += [rel] if rel is not None else []
    v, rel, rows = release_directions(
        settings, x, stream, record, partition, x_digest, size
    )
    releases += [rel] if rel is not None else []
    eigen, rel = release_eigenvalues(
        settings, x, v, stream, record, partition, rows, x_digest, size
    )
    del rows  # a copy of x in the design's order: not kept
    releases += [rel] if rel is not None else []
    a, b = settings.axes[0] - 1, settings.axes[1] - 1
    scores = project(x, v[:, [a, b]])
    frame, grid, rel = release_frame(
        settings, scores, stream, record, partition, size
    )
    releases.append(rel)
    hist, rel = release_histogram(
        settings, scores, grid, stream, record, partition
    )
    releases.append(rel)
    offset = frame.center if settings.center else (0.0, 0.0)
    return PCAFit(
        directions=v,
        eigen=eigen,
        frame=frame,
        grid=grid,
        histogram=hist,
        releases=releases,
        identity=kept,
        offset=(float(offset[0]), float(offset[1])),
        sample_key=_sample_key(secret, stream, hist.noisy),
        scores=scores,
        n=len(x) if size is None else size,
    )
