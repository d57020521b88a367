"""``dp_pca`` and ``dp_score``: a private PCA of a data frame."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..door import bound_rows, level_label
from ..mechanisms.pca.quantile import FRAME_VERSIONS
from ..mechanisms.pca.scree import SCREE_VERSIONS
from ..mechanisms.session import tagged
from ..units import (
    ONE_ROW,
    Unit,
    UnitFrame,
    dataset_of,
    unit_of,
    with_unit,
)
from ..validation import fail, is_integer, renamed, validate_seed
from .display import released_cells, shown_groups
from .fit import Partition, Settings, fit_pca, pca_query
from .result import DPPCAResult, ordinary_pca
from .validation import (
    as_frame,
    check_axes,
    check_bins,
    check_budget,
    check_choices,
    check_directions,
    check_k,
    check_scale,
    check_shares,
    feature_columns,
    group_labels,
    numeric_matrix,
)

__all__ = ["dp_pca", "dp_score"]


def dp_pca(
    data: Any,
    columns: Sequence[str] | None = None,
    *,
    eps: float,
    delta: float,
    shares: Mapping[str, float] | None = None,
    bins: int | tuple[int, int] = (20, 20),
    method: str = "sparse",
    axes: tuple[int, int] = (1, 2),
    group: Any = None,
    center: bool = True,
    seed: int | str | None = None,
    reference: bool = False,
    k: int | None = None,
    scale: Sequence[float] | None = None,
    scree_clip: float | None = None,
    calibration: str = "analytic",
    estimator: str = "auto",
    split: Mapping[str, float] | None = None,
    scree_version: str = "v2",
    frame_version: str = "v2",
    n: int | None = None,
) -> DPPCAResult:
    """Private PCA: directions, eigenvalues and a score histogram.

    Parameters
    ----------
    data
        DataFrame (or 2-D array) with one row per person, or
        ``pp.source(frame, unit="person_id", max_records=k)`` when a
        person has several rows: each person then keeps at most ``k``
        rows (the same rows a plot's layer keeps) and every component's
        sensitivity is ``k`` times that of one row. How many rows were
        kept is then private: the directions and eigenvalues are
        calibrated on a public size, ``n`` or a private count (below).
    columns
        Numeric feature columns; default all numeric columns except
        ``group``.
    eps, delta
        Total budget (``eps > 0``, ``0 < delta < 1``).
    shares
        Shares of ``eps`` and ``delta`` for ``loading`` (directions),
        ``scree`` (eigenvalues) and ``score`` (frame + histogram); default
        thirds. The score part is split 0.35 frame / 0.65 histogram (all
        score delta to the histogram).
    bins
        ``(m_x, m_y)`` cells of the score histogram.
    method
        ``"sparse"`` (Karwa-Vadhan, only cells that clear a threshold
        appear) or ``"add"`` (discrete Gaussian noise on every cell).
    axes
        Two distinct components to plot, in ``1..k``.
    group
        Column name or labels: group-wise histograms on one shared frame.
        Declared levels (a pandas Categorical) are public and kept in
        their order, every one of them released; undeclared labels are
        observed, which only ``method="sparse"`` may release (a group
        shows only if one of its cells clears the threshold). The groups
        partition the rows: one histogram over all of them (parallel
        composition). No group size is used or shown.
    center
        Display centring by the private frame centre (post-processing).
        No data-dependent preprocessing is ever applied.
    seed
        Seed of the release (a label under a key file, the secret without
        one); ``None`` uses session entropy.
    reference
        Also compute ordinary, **non-private** PCA for comparison.
    k
        Number of private eigenvalues (default ``p``).
    scale
        Public positive column scales to divide by (never sample SDs).
    scree_clip
        Public clipping constant for the eigenvalues; default ``None``
        spends a quarter of the scree budget on a private one.
    calibration
        Gaussian calibration, ``"analytic"`` (valid for all eps) or
        ``"classic"`` (dppca's formula).
    estimator
        Kendall matrix estimator (``"auto"``, ``"exact"``,
        ``"incomplete"``).
    split
        Deprecated: the old name of ``shares``.
    scree_version
        Version of the eigenvalue release: ``"v2"`` (the default) pairs
        the rows of the Kendall design's random order (faster, other
        numbers, the same clip level); ``"v1"`` keeps the method (and
        the identity) of releases made before v2. Same privacy map; the
        release records its version, and the two versions of one query
        are two releases.
    frame_version
        Version of the score frame: ``"v2"`` (the default) searches the
        radius at a level lowered from 0.99 when the frame budget is
        small for ``n`` (a public level), so that its noisy target passes
        every distance in at most 1% of releases (with v1 at n = 500 a
        radius 10x the largest distance or more came in about 2 of 1000);
        ``"v1"`` keeps the method (and the identity) of the frames of
        releases made before v2. Same privacy map, two releases.
    n
        Only with a privacy unit (``pp.source(..., unit=...)``): a
        declared public number of rows, on which the directions and
        eigenvalues are calibrated instead of the private number of rows
        kept. If more rows are kept, a keyed random ``n`` of them enter
        the directions and eigenvalues (all of them the frame and the
        histogram); if fewer, the missing ones count as empty slots that
        add nothing, which shrinks the eigenvalues by about the squared
        share of rows present and makes the directions noisier. Default
        ``None``: 5% of ``eps`` releases a private count of the rows
        kept and its lower 99% bound is used (shown as ``result.n``).

    Returns
    -------
    DPPCAResult
    """
    fn = "dp_pca"
    eps, delta = check_budget(fn, eps, delta)
    given = renamed(fn, "split", "shares", split, shares)
    return _release(
        fn,
        data,
        columns,
        eps=eps,
        delta=delta,
        shares=check_shares(fn, given, ("loading", "scree", "score")),
        bins=bins,
        method=method,
        axes=axes,
        group=group,
        center=center,
        seed=seed,
        reference=reference,
        k=k,
        scale=scale,
        scree_clip=scree_clip,
        calibration=calibration,
        estimator=estimator,
        directions=None,
        scree_version=scree_version,
        frame_version=frame_version,
        n=n,
    )


def dp_score(
    data: Any,
    columns: Sequence[str] | None = None,
    *,
    eps: float,
    delta: float,
    shares: Mapping[str, float] | None = None,
    bins: int | tuple[int, int] = (20, 20),
    method: str = "sparse",
    axes: tuple[int, int] = (1, 2),
    group: Any = None,
    center: bool = True,
    seed: int | str | None = None,
    reference: bool = False,
    directions: Any = None,
    scale: Sequence[float] | None = None,
    calibration: str = "analytic",
    estimator: str = "auto",
    split: Mapping[str, float] | None = None,
    frame_version: str = "v2",
    n: int | None = None,
) -> DPPCAResult:
    """Private score histogram alone (no eigenvalues).

    Without ``directions``: ``shares`` divides ``eps``/``delta`` between
    ``loading`` and ``score`` (default halves). With ``directions`` (a
    ``p x p`` orthonormal matrix released privately before, e.g.
    ``dp_pca(...).directions``), no loading budget is spent: all of
    ``eps``/``delta`` go to the score, and ``shares`` must be ``None``.
    Other parameters as in :func:`dp_pca` (``split``: the deprecated old
    name of ``shares``; ``frame_version``: ``"v1"`` keeps the method of the
    frames of releases made before v2; ``n``: the public size under a
    privacy unit).
    """
    fn = "dp_score"
    eps, delta = check_budget(fn, eps, delta)
    given = renamed(fn, "split", "shares", split, shares)
    return _release(
        fn,
        data,
        columns,
        eps=eps,
        delta=delta,
        shares=score_shares(fn, given, directions),
        bins=bins,
        method=method,
        axes=axes,
        group=group,
        center=center,
        seed=seed,
        reference=reference,
        k=None,
        scale=scale,
        scree_clip=None,
        calibration=calibration,
        estimator=estimator,
        directions=directions,
        frame_version=frame_version,
        n=n,
    )


def score_shares(fn: str, shares: Any, directions: Any) -> dict[str, float]:
    """Loading/score shares of a score release (none to loading when the
    directions are given)."""
    if directions is None:
        return check_shares(fn, shares, ("loading", "score"))
    if shares is not None:
        raise fail(
            fn,
            "shares must be None when directions are given: no loading "
            "budget is spent and eps/delta all go to the score.",
        )
    return {"loading": 0.0, "score": 1.0}


def make_settings(
    fn: str,
    columns: list[str],
    *,
    eps: float,
    delta: float,
    shares: dict[str, float],
    bins: Any,
    method: Any,
    axes: Any,
    center: Any,
    seed: Any,
    k: Any,
    scale: Any,
    scree_clip: Any,
    calibration: Any,
    estimator: Any,
    directions: Any,
    unit: Unit = ONE_ROW,
    scree_version: Any = "v2",
    frame_version: Any = "v2",
    n: Any = None,
) -> Settings:
    """Validate every public parameter of a release, in one place
    (``unit``: the data's privacy unit, already checked by
    :func:`~plotnine_private.source`)."""
    p = len(columns)
    bins = check_bins(fn, bins)
    check_choices(fn, method, calibration, estimator)
    seed = validate_seed(fn, seed)
    want_scree = "scree" in shares
    k = check_k(fn, k, p) if want_scree else None
    axes = check_axes(fn, axes, k if want_scree else p)
    v = (
        None
        if directions is None
        else check_directions(fn, directions, columns)
    )
    return Settings(
        fn=fn,
        eps=eps,
        delta=delta,
        shares=shares,
        bins=bins,
        method=method,
        axes=axes,
        center=bool(center),
        seed=seed,
        k=k,
        scale=check_scale(fn, scale, p),
        scree_clip=scree_clip,
        calibration=calibration,
        estimator=estimator,
        directions=v,
        records=unit.max_records,
        # the score grid's cells are not limited per unit (max_cells
        # bounds a layer's declared cells, which a PCA has none of): the
        # sparse threshold counts max_records cells per unit
        cells=None,
        scree_version=check_scree_version(fn, scree_version, unit, k),
        frame_version=check_frame_version(fn, frame_version),
        bounded=unit.bounded,
        size=check_size(fn, n, unit),
    )


def check_size(fn: str, n: Any, unit: Unit) -> int | None:
    """The declared public size ``n``: only under a privacy unit, a whole
    number >= 2."""
    if n is None:
        return None
    if not unit.bounded:
        raise fail(
            fn,
            f"n={n!r} is only for a privacy unit: without one every row is "
            "its own unit and the number of rows is public (replace-one "
            "adjacency). Remove n=, or declare the unit with "
            "pp.source(data, unit=..., max_records=k).",
        )
    if isinstance(n, bool) or not is_integer(n) or n < 2:
        raise fail(
            fn,
            f"n must be a whole number >= 2 (the public number of rows "
            f"the directions are calibrated on), got {n!r}; e.g. n=10000, "
            "or n=None to release a private count of the rows kept.",
        )
    return int(n)


def check_scree_version(
    fn: str, version: Any, unit: Unit = ONE_ROW, k: Any = None
) -> str:
    """``"v1"`` or ``"v2"``, else an error naming the fix (``"v1"`` not
    under a privacy unit, whose eigenvalues now pair public slots)."""
    checked = _check_version(
        fn, "scree_version", version, SCREE_VERSIONS, "eigenvalues"
    )
    if checked == "v1" and unit.bounded and k is not None:
        raise fail(
            fn,
            "scree_version='v1' reproduces eigenvalues released before v2 "
            "from rows; under a privacy unit the eigenvalues pair a public "
            "number of slots, which only 'v2' does. Use "
            "scree_version='v2'.",
        )
    return checked


def check_frame_version(fn: str, version: Any) -> str:
    """``"v1"`` or ``"v2"``, else an error naming the fix."""
    return _check_version(
        fn, "frame_version", version, FRAME_VERSIONS, "score frames"
    )


def _check_version(
    fn: str, name: str, version: Any, versions: Mapping, what: str
) -> str:
    if isinstance(version, str) and version in versions:
        return version
    raise fail(
        fn,
        f"{name} must be one of {', '.join(map(repr, versions))}, got "
        f"{version!r}: 'v2' (the default) for new releases, 'v1' only to "
        f"reproduce {what} released before v2.",
    )


def _release(
    fn: str,
    data: Any,
    columns: Any,
    *,
    group: Any,
    reference: bool,
    **params: Any,
) -> DPPCAResult:
    unit = unit_of(data)
    rows = data.data if isinstance(data, UnitFrame) else data
    frame = as_frame(fn, rows)
    if unit.bounded:
        # each unit keeps its max_records rows with the smallest public
        # keyed hash, as a plot's layer does at the door
        keep = bound_rows(fn, frame, unit)
        if not isinstance(group, str) and group is not None:
            labels = pd.Series(group)
            if len(labels) == len(frame):
                group = labels[keep].reset_index(drop=True)
        frame = rows = frame[keep].reset_index(drop=True)
    exclude = [group] if isinstance(group, str) else []
    # identifiers are not features (by default)
    exclude += [c for c in (unit.column, unit.record_id) if c is not None]
    cols = feature_columns(fn, frame, columns, exclude)
    x, cols = numeric_matrix(fn, frame, cols)
    settings = make_settings(fn, cols, unit=unit, **params)
    if settings.scale is not None:
        x = x / settings.scale
    groups = group_labels(fn, rows, group, len(x))
    partition = Partition.single(len(x))
    query_group = None
    if groups is not None:
        partition = Partition(
            np.zeros(len(x), dtype=np.int64),
            groups.codes,
            group_levels=list(groups.levels),
            groups_declared=groups.declared,
        )
        query_group = (
            groups.name or "labels",
            tuple(level_label(v) for v in groups.levels)
            if groups.declared
            else "observed",
        )
    query = with_unit(
        pca_query(settings, cols, "data", group=query_group), unit
    )
    with tagged(dataset_of(data)):
        fit = fit_pca(settings, x, partition, query, data_object=data)
    return _result(settings, fit, partition, x, cols, reference)


def _histogram_frame(fit, partition: Partition) -> tuple[pd.DataFrame, list]:
    """The released histogram as rows (display coordinates), with the
    groups shown (declared: all; observed: those with a released cell)."""
    shown = shown_groups(fit, partition)
    hist = released_cells(fit, shown).drop(columns=["_panel", "_g"])
    if not partition.grouped:
        return hist, []
    levels = [partition.group_levels[j] for j in shown.tolist()]
    m = fit.grid.size
    hist["group"] = pd.Categorical(np.repeat(levels, m), categories=levels)
    return hist, levels


def _result(settings, fit, partition, x, cols, reference) -> DPPCAResult:
    histogram, groups = _histogram_frame(fit, partition)
    totals = fit.histogram.total(axis=-1)[0]
    index = {lv: j for j, lv in enumerate(partition.group_levels)}
    k = settings.k
    names = [f"PC{i + 1}" for i in range(k or 0)]
    eigen = fit.eigen
    ref = None
    if reference:
        ref = ordinary_pca(
            x,
            fit.directions,
            settings.axes,
            k or x.shape[1],
            fit.grid,
            fit.scores,
            fit.offset,
        )
        if partition.grouped:
            levels = np.array(partition.group_levels, dtype=object)
            ref["groups"] = np.where(
                partition.group >= 0, levels[partition.group], None
            )
    return DPPCAResult(
        directions=pd.DataFrame(
            fit.directions,
            index=cols,
            columns=[f"PC{i + 1}" for i in range(len(cols))],
        ),
        eigenvalues=None
        if eigen is None
        else pd.Series(eigen.values, index=names),
        pve=None if eigen is None else pd.Series(eigen.pve, index=names),
        frame=fit.frame,
        histogram=histogram,
        privacy=settings.budget.table(
            settings.method, settings.directions is not None, k is not None
        ),
        releases=fit.releases,
        axes=settings.axes,
        method=settings.method,
        bins=settings.bins,
        center=settings.center,
        n=fit.n,
        columns=cols,
        groups=groups,
        group_totals={g: float(totals[index[g]]) for g in groups}
        if groups
        else {None: float(totals[0])},
        reference=ref,
        offset=fit.offset,
        identity=fit.identity,
        sample_key=fit.sample_key,
    )
