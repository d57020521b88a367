"""The public inputs of a private PCA: its budget split, its settings,
the partition of its rows and the public query it states."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..mechanisms.pca.quantile import FRAME_VERSIONS
from ..mechanisms.pca.scree import SCREE_VERSIONS
from ..mechanisms.pca.size import SIZE_SHARE
from ..mechanisms.release.engine import Query, data_digest

__all__ = [
    "FRAME_SHARE",
    "HIST_SHARE",
    "Budget",
    "Partition",
    "Settings",
    "pca_query",
]

FRAME_SHARE = 0.35
HIST_SHARE = 0.65


# --------------------------------------------------------------------------
# public inputs
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class Budget:
    """``(eps, delta)`` of each component (``docs/mechanisms.md``, "Private
    PCA").

    The score share is split 0.35 frame (pure DP) / 0.65 histogram (with
    all the score delta); with given directions nothing goes to loading.
    """

    loading: tuple[float, float]
    scree: tuple[float, float]
    frame: float
    histogram: tuple[float, float]
    #: eps of the private count of the rows kept (a PCA under a privacy
    #: unit without a declared ``n``; else 0)
    size: float = 0.0

    @classmethod
    def split(
        cls,
        eps: float,
        delta: float,
        shares: dict[str, float],
        size_share: float = 0.0,
    ) -> Budget:
        """``size_share`` of ``eps`` to the count of the rows, the rest
        by ``shares``.

        >>> b = Budget.split(3.0, 3e-5, {"loading": 1/3, "scree": 1/3,
        ...                              "score": 1/3})
        >>> round(b.frame, 4), round(b.histogram[0], 4)
        (0.35, 0.65)
        """
        size = eps * size_share
        eps = eps - size
        score = shares["score"]
        return cls(
            loading=(eps * shares["loading"], delta * shares["loading"]),
            scree=(
                eps * shares.get("scree", 0.0),
                delta * shares.get("scree", 0.0),
            ),
            frame=FRAME_SHARE * eps * score,
            histogram=(HIST_SHARE * eps * score, delta * score),
            size=size,
        )

    def table(self, method: str, given: bool, scree: bool) -> pd.DataFrame:
        """Budget table: loading, scree, frame, histogram, total."""
        rows = {
            "loading": (
                *self.loading,
                "given (spent before)"
                if given
                else "gaussian (spherical Kendall)",
            ),
            "scree": (
                (*self.scree, "gaussian (clipped mean)")
                if scree
                else (0.0, 0.0, "not released")
            ),
            "frame": (self.frame, 0.0, "durfee_quantile x3"),
            "histogram": (
                *self.histogram,
                "discrete_gaussian"
                if method == "add"
                else "stability_histogram",
            ),
        }
        if self.size:
            rows["size"] = (self.size, 0.0, "discrete_laplace (rows kept)")
        table = pd.DataFrame(rows, index=["eps", "delta", "mechanism"]).T
        table["eps"] = table["eps"].astype(float)
        table["delta"] = table["delta"].astype(float)
        table.loc["total"] = [  # type: ignore[assignment]
            table["eps"].sum(),
            table["delta"].sum(),
            "sequential composition",
        ]
        table.index.name = "component"
        return table


@dataclass(frozen=True)
class Settings:
    """The validated public parameters of one private PCA."""

    fn: str
    eps: float
    delta: float
    shares: dict[str, float]
    bins: tuple[int, int]
    method: str
    axes: tuple[int, int]
    center: bool
    seed: int | str | None
    k: int | None  # eigenvalues to release (None: no scree)
    scale: np.ndarray | None
    scree_clip: float | None
    calibration: str
    estimator: str
    directions: np.ndarray | None  # given (released before)
    #: rows one privacy unit keeps at most (k; 1: a unit is a row) and
    #: cells of the score histogram its rows may fall in (None: k)
    records: int = 1
    cells: int | None = None
    #: version of the scree release (``mechanisms.scree.SCREE_VERSIONS``)
    scree_version: str = "v2"
    #: version of the frame release (``mechanisms.quantile.FRAME_VERSIONS``)
    frame_version: str = "v2"
    #: whether the rows were bounded per privacy unit: then how many were
    #: kept is private, and the pair statistics run on a public size
    bounded: bool = False
    #: the declared public size (``n=``; None: released privately under a
    #: unit, the number of rows without one)
    size: int | None = None

    @property
    def count_size(self) -> bool:
        """Whether the size is released by a private count of the rows."""
        return self.bounded and self.size is None

    @property
    def budget(self) -> Budget:
        share = SIZE_SHARE if self.count_size else 0.0
        return Budget.split(self.eps, self.delta, self.shares, share)


@dataclass(frozen=True)
class Partition:
    """Where each row is counted: its panel and its group.

    Panels and groups with declared levels partition the rows publicly,
    so one histogram over all (panel, group, cell) costs what one
    histogram costs (parallel composition).

    Attributes
    ----------
    panel, group
        Code of each row (-1: counted in no histogram).
    panel_labels
        Canonical label of each panel (one panel: ``[""]``).
    group_levels
        Group levels (``[None]`` without groups).
    groups_declared
        Whether the group levels were fixed without the data (else only
        the thresholded "sparse" histogram may release them).
    panels
        Words for the report: how the panels were made.
    """

    panel: np.ndarray
    group: np.ndarray
    panel_labels: list[str] = field(default_factory=lambda: [""])
    group_levels: list = field(default_factory=lambda: [None])
    groups_declared: bool = True
    panels: str = "single panel"

    @classmethod
    def single(cls, n: int) -> Partition:
        zero = np.zeros(n, dtype=np.int64)
        return cls(zero, zero)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.panel_labels), len(self.group_levels)

    @property
    def grouped(self) -> bool:
        return self.group_levels != [None]


def pca_query(
    settings: Settings,
    columns: Sequence[str],
    source: str,
    *,
    group: tuple[str, Any] | None = None,
    facets: Sequence[str] = (),
    panel_labels: Sequence[str] = (),
) -> Query:
    """The public query of a PCA release.

    ``dp_score(df)`` and ``ggplot(df) + stat_dp_pca_score()`` with the same
    parameters state the same query, so they are one release (same
    noise, charged once). Display-only and sampling parameters are not
    part of it; ``group`` is ``(column, declared levels or "observed")``.
    """
    s = settings
    given = None
    if s.directions is not None:
        given = data_digest(np.asarray(s.directions, dtype=float)).hex()
    # the scree's version is named from v2 on, so that a v1 release keeps
    # the identity (and the noise) it had before versions had names
    named = SCREE_VERSIONS[s.scree_version] if s.k is not None else None
    versioned: dict[str, Any] = (
        {} if named is None else {"scree_version": named}
    )
    # the frame's likewise (every PCA release has a frame)
    framed = FRAME_VERSIONS[s.frame_version]
    if framed is not None:
        versioned["frame_version"] = framed
    # a bounded PCA's public size: declared, or a private count (a row-
    # level release names none and keeps its identity)
    if s.bounded:
        versioned["size"] = (
            "pnp-size-count-v1" if s.size is None else ("declared", s.size)
        )
    return Query.make(
        "pca",
        source,
        s.seed,
        columns=tuple(str(c) for c in columns),
        eps=s.eps,
        delta=s.delta,
        split=tuple(sorted(s.shares.items())),
        bins=s.bins,
        method=s.method,
        axes=s.axes,
        center=s.center,
        k=s.k,
        scale=None if s.scale is None else tuple(s.scale.tolist()),
        scree_clip=s.scree_clip,
        calibration=s.calibration,
        estimator=s.estimator,
        directions=given,
        group=group,
        facets=tuple(facets),
        panels=tuple(sorted(panel_labels)) if facets else (),
        **versioned,
    )
