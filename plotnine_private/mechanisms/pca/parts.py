"""The private PCA's parts as mechanisms of the release engine's protocol
(:class:`~..release.count_mechanisms.Mechanism`).

Each part says what it reads (``input_domain``), its adjacency and
sensitivity, its privacy map and its name in a release record, and
releases through :meth:`perturb`, which calls the part's function
(:func:`~.directions.private_directions`, :func:`~.scree.private_scree`,
:func:`~.quantile.private_frame`, :func:`~.histogram.private_histogram`)
with the same arguments as before: the same numbers.
:class:`~.size.RowCount` (the size under a privacy unit) is the fifth.

Privacy maps: every part is charged ``(eps, delta)`` once per release
(``multiplicity`` times when one record is in several of them); its
proof is in its module. ``public`` (whether the domain is public) does
not change a PCA part's cost: its domain is public or thresholded by
construction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import ParameterError
from ..release.count_mechanisms import check_bound
from .directions import (
    PrivateDirections,
    PrivateEigenvalues,
    kendall_sensitivity,
    private_directions,
    private_eigenvalues,
    private_scree,
)
from .histogram import (
    ReleasedHistogram,
    histogram_sigma,
    private_histogram,
    sparse_threshold,
)
from .quantile import PrivateFrame, private_frame
from .size import RowCount

__all__ = [
    "histogram_mechanism",
    "ClippedScree",
    "DiscreteGaussianHistogram",
    "DurfeeFrame",
    "KendallDirections",
    "RowCount",
    "SparseHistogram",
]


def _map(eps: float, delta: float, multiplicity: int) -> tuple[float, float]:
    return float(eps) * multiplicity, float(delta) * multiplicity


@dataclass(frozen=True)
class KendallDirections:
    """g-DPPCA directions: the analytic Gaussian mechanism on the
    spherical Kendall matrix of ``size`` public rows (or slots).

    ``size`` is the public ``n``: the number of rows under replace-one
    adjacency, or a public size under a privacy unit (``slots=True``:
    the rows fill ``size`` slots, :mod:`.size`). L2 (Frobenius)
    sensitivity ``2 sqrt(2) records / size``.
    """

    eps: float
    delta: float
    size: int
    records: int = 1
    slots: bool = False
    calibration: str = "analytic"
    estimator: str = "auto"
    keep_rows: bool = False

    formal = True
    stream = "directions"
    name = "gaussian"
    adjacency = "replace"
    input_domain = "(n, p) finite real rows (no bound needed: unit terms)"

    def __post_init__(self) -> None:
        check_bound(self.records, None)

    @property
    def sensitivity(self) -> float:
        return kendall_sensitivity(self.size) * int(self.records)

    def privacy_map(
        self, public: bool = True, multiplicity: int = 1
    ) -> tuple[float, float]:
        return _map(self.eps, self.delta, multiplicity)

    def parameters(self) -> dict[str, Any]:
        out = {
            "eps": float(self.eps),
            "delta": float(self.delta),
            "calibration": self.calibration,
            "estimator": self.estimator,
            "records": int(self.records),
        }
        if self.slots:
            out["size"] = int(self.size)
        return out

    def perturb(self, table: Any, key: bytes) -> PrivateDirections:
        """The private directions of the rows ``table``."""
        return private_directions(
            table,
            self.eps,
            self.delta,
            calibration=self.calibration,
            estimator=self.estimator,
            key=key,
            records=self.records,
            keep_rows=self.keep_rows,
            size=self.size if self.slots else None,
        )


@dataclass(frozen=True)
class ClippedScree:
    """dppca's clipped eigenvalues: the mean of clipped pair variances
    ``min(W, C)`` of ``size // 2`` pairs, with Gaussian noise.

    Sensitivity (L2) ``records sqrt(k) / (size // 2)`` of the means
    divided by the clip ``C`` (:meth:`sensitivity_at` on the released
    scale); ``C`` is public (``clip``) or a Durfee quantile paid out of
    the same ``eps``. Version 2 reads ``(rows, v)``, the rows in pair
    order and the released directions; version 1 the projected rows.
    """

    eps: float
    delta: float
    size: int
    k: int
    records: int = 1
    clip: float | None = None
    calibration: str = "analytic"
    version: str = "v2"

    formal = True
    stream = "scree"
    name = "gaussian"
    adjacency = "replace"
    input_domain = (
        "rows paired in a data-free order, projected on released "
        "directions (pair variances clipped to [0, C])"
    )

    def __post_init__(self) -> None:
        check_bound(self.records, None)

    @property
    def sensitivity(self) -> float:
        """L2 sensitivity of the clipped means over ``C``."""
        return int(self.records) * math.sqrt(self.k) / (self.size // 2)

    def sensitivity_at(self, clip: float) -> float:
        """L2 sensitivity of the released means for the clip ``clip``."""
        return int(self.records) * math.sqrt(self.k) * clip / (self.size // 2)

    def privacy_map(
        self, public: bool = True, multiplicity: int = 1
    ) -> tuple[float, float]:
        return _map(self.eps, self.delta, multiplicity)

    def parameters(self) -> dict[str, Any]:
        return {
            "eps": float(self.eps),
            "delta": float(self.delta),
            "k": int(self.k),
            "clip": self.clip,
            "calibration": self.calibration,
            "version": self.version,
            "records": int(self.records),
        }

    def perturb(self, table: Any, key: bytes) -> PrivateEigenvalues:
        """The private eigenvalues: ``table`` is ``(rows, v)`` (v2) or
        the projected rows (v1)."""
        if self.version == "v2":
            rows, v = table
            return private_scree(
                rows,
                v,
                self.eps,
                self.delta,
                clip=self.clip,
                calibration=self.calibration,
                key=key,
                records=self.records,
            )
        return private_eigenvalues(
            table,
            self.eps,
            self.delta,
            clip=self.clip,
            calibration=self.calibration,
            key=key,
            records=self.records,
        )


@dataclass(frozen=True)
class DurfeeFrame:
    """The square score frame: two signed Durfee medians and a radial
    upper quantile, each a search with ``eps / 3`` (pure DP).

    Sensitivity: the searches' counts move by at most ``records`` (one
    unit moves up to ``records`` scores; each search runs with
    ``eps / records``, group privacy). ``tail`` (version 2) lowers the
    radius's level by :func:`~.quantile.tail_level` of the public
    ``size`` (None: the number of scores, public under replace-one).
    """

    eps: float
    records: int = 1
    inflate: float = 0.2
    tail: float | None = None
    size: int | None = None

    formal = True
    stream = "frame"
    name = "durfee_quantile"
    adjacency = "replace"
    input_domain = "(n, 2) finite scores on released directions"
    delta = 0.0

    def __post_init__(self) -> None:
        check_bound(self.records, None)

    @property
    def sensitivity(self) -> float:
        return float(self.records)

    def privacy_map(
        self, public: bool = True, multiplicity: int = 1
    ) -> tuple[float, float]:
        return _map(self.eps, 0.0, multiplicity)

    def parameters(self) -> dict[str, Any]:
        return {
            "eps": float(self.eps),
            "inflate": self.inflate,
            "tail": self.tail,
            "records": int(self.records),
        }

    def perturb(self, table: Any, key: bytes) -> PrivateFrame:
        return private_frame(
            table,
            self.eps,
            inflate=self.inflate,
            key=key,
            records=self.records,
            tail=self.tail,
            size=self.size,
        )


@dataclass(frozen=True)
class DiscreteGaussianHistogram:
    """``method="add"``: discrete Gaussian noise on every cell of a
    count array over a public (or released) grid; L2 sensitivity
    ``records sqrt(2)`` under replace (a unit's rows leave one cell for
    another)."""

    eps: float
    delta: float
    records: int = 1
    calibration: str = "analytic"

    formal = True
    stream = "histogram"
    name = "discrete_gaussian"
    adjacency = "replace"
    input_domain = "integer counts on a public or released grid"

    def __post_init__(self) -> None:
        check_bound(self.records, None)

    @property
    def sensitivity(self) -> float:
        return int(self.records) * math.sqrt(2)

    @property
    def sigma(self) -> float:
        """The discrete Gaussian's sigma (public)."""
        return histogram_sigma(
            self.eps, self.delta, self.sensitivity, self.calibration
        )

    def privacy_map(
        self, public: bool = True, multiplicity: int = 1
    ) -> tuple[float, float]:
        return _map(self.eps, self.delta, multiplicity)

    def parameters(self) -> dict[str, Any]:
        return {
            "eps": float(self.eps),
            "delta": float(self.delta),
            "calibration": self.calibration,
            "records": int(self.records),
        }

    def noise_details(self, hist: ReleasedHistogram) -> dict[str, Any]:
        """Report words of a release: the sigma sampled."""
        return {"sigma": hist.sigma}

    def perturb(self, table: Any, key: bytes) -> ReleasedHistogram:
        return private_histogram(
            table,
            "add",
            self.eps,
            self.delta,
            calibration=self.calibration,
            key=key,
            records=self.records,
        )


@dataclass(frozen=True)
class SparseHistogram:
    """``method="sparse"``: the stability histogram (Karwa & Vadhan):
    ``DLap(2 records / eps)`` on non-empty cells, shown at
    :attr:`threshold`; L1 sensitivity ``2 records``."""

    eps: float
    delta: float
    records: int = 1
    cells: int | None = None

    formal = True
    stream = "histogram"
    name = "stability_histogram"
    adjacency = "replace"
    input_domain = "integer counts on a grid (only non-empty cells read)"

    def __post_init__(self) -> None:
        check_bound(self.records, self.cells)

    @property
    def sensitivity(self) -> float:
        return 2.0 * int(self.records)

    @property
    def scale(self) -> float:
        return 2 * int(self.records) / self.eps

    @property
    def threshold(self) -> float:
        return sparse_threshold(self.eps, self.delta, self.records, self.cells)

    def privacy_map(
        self, public: bool = True, multiplicity: int = 1
    ) -> tuple[float, float]:
        return _map(self.eps, self.delta, multiplicity)

    def parameters(self) -> dict[str, Any]:
        return {
            "eps": float(self.eps),
            "delta": float(self.delta),
            "records": int(self.records),
            "cells": self.cells,
        }

    def noise_details(self, hist: ReleasedHistogram) -> dict[str, Any]:
        """Report words of a release: the noise scale and the threshold,
        in counts."""
        return {
            "laplace_scale_counts": self.scale,
            "threshold": self.threshold,
        }

    def perturb(self, table: Any, key: bytes) -> ReleasedHistogram:
        return private_histogram(
            table,
            "sparse",
            self.eps,
            self.delta,
            key=key,
            records=self.records,
            cells=self.cells,
        )


def histogram_mechanism(
    method: str,
    eps: float,
    delta: float,
    records: int = 1,
    cells: int | None = None,
    calibration: str = "analytic",
) -> DiscreteGaussianHistogram | SparseHistogram:
    """The histogram part of a PCA for ``method`` ("add" or "sparse")."""
    if method == "add":
        return DiscreteGaussianHistogram(eps, delta, records, calibration)
    if method == "sparse":
        return SparseHistogram(eps, delta, records, cells)
    raise ParameterError(f"method must be 'add' or 'sparse', got {method!r}.")
