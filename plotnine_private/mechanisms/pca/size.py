"""The public size of a private PCA under a privacy unit: slots and a
private count of the rows kept (``docs/mechanisms.md``, "Private PCA",
"The size of a PCA under a privacy unit").

Under replace-one adjacency of rows, ``n`` is public and the directions'
and the eigenvalues' sensitivities (``2 sqrt(2)/n``, ``sqrt(k) C/
floor(n/2)``) use it. Under a privacy unit that keeps up to ``r`` rows,
replacing one unit can change the number of rows kept (a unit of one row
replaced by one of ``r``), so the true count ``m`` is private and no
noise scale may be computed from it.

A bounded PCA therefore runs its pair statistics on a *public* number
``s`` of **slots** (a declared ``n=``, or a lower confidence bound of a
private count, :class:`RowCount`): the rows are put in the slots by a
keyed random order of ``max(m, s)`` places (:func:`slot_rows`). With
``m > s`` a uniformly random ``s`` of them fill the slots and the rest
are left out of the directions and eigenvalues; with ``m < s`` the
``s - m`` slots left empty contribute no pair (their pairs' terms are
0). The statistics are normalised by pairs of *slots*, a public number.

Sensitivity. Take two data sets that differ in one unit, with kept rows
``C + U`` and ``C + U'`` (``|U|, |U'| <= r``). Filling slots with the
first ``s`` places of a uniform order is choosing the ``s`` rows of
smallest independent uniform priorities, each row with its own; for
the common rows ``C`` the priorities are coupled equal. Then the rows of
``C`` in the slots of the two sets are nested (the smallest ``s - a``
and ``s - b`` of ``C``, ``a``, ``b`` the rows of ``U``, ``U'`` that
enter), so each set has at most ``max(a, b) <= r`` slotted rows the
other has not; a uniform placement of the slotted rows couples those in
both to the same slots, and at most ``r`` slots differ (a row replaced
by another, or a slot filled in one set and empty in the other). A
slot is in ``n - 1`` pairs of the exact Kendall statistic or ``2 t``
of the incomplete one (``t`` shifts) and in one scree pair, each term
changing by at most ``sqrt(2)`` (Kendall, replaced), 1 (Kendall,
emptied) or a vector in ``[0, C]^k`` (scree): the one-row bounds with
``s`` for ``n``, times ``r``, whatever ``m`` is. Nothing computed from
``m`` is released.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..release.count_mechanisms import check_bound
from ..samplers.laplace import discrete_laplace, exact_epsilon, rational_scale
from ..streams.randomness import cell_words, derive_key, keyed_permutation
from ..streams.versions import cell_streams

__all__ = [
    "SIZE_BETA",
    "SIZE_SHARE",
    "RowCount",
    "scree_pairs",
    "slot_rows",
]

#: share of a bounded PCA's eps spent on the count of its rows when no
#: ``n=`` is declared (taken before the shares of the parts)
SIZE_SHARE = 0.05
#: chance that the released lower bound of the rows exceeds the rows kept
#: (then some slots stay empty): the bound is ``count - b ln(1/beta)``
SIZE_BETA = 0.01


def slot_rows(
    x: np.ndarray, size: int, key: bytes
) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``x`` (``m`` of them) in ``size`` slots, and which
    slots are filled.

    Slot ``i`` holds row ``order[i]`` of a keyed uniform order of
    ``max(m, size)`` places when that place is a row (``< m``), else it
    is empty (zeros). With ``m == size`` every slot is filled, as
    ``x[keyed_permutation(key, m)]`` (the one-row design).

    >>> rows, filled = slot_rows(np.eye(3), 4, bytes(16))
    >>> rows.shape, int(filled.sum())
    ((4, 3), 3)
    """
    m, p = x.shape
    order = keyed_permutation(key, max(m, size))[:size]
    filled = order < m
    rows = np.zeros((size, p), dtype=np.float64)
    rows[filled] = x[order[filled]]
    return rows, filled


def scree_pairs(rows: np.ndarray, filled: np.ndarray) -> np.ndarray:
    """``rows`` (slots) with the second slot of every pair that is not
    filled on both sides set equal to the first: the pair's difference,
    and so its ``W``, is 0, as an empty slot's pair must be. A copy.

    >>> r = scree_pairs(np.array([[1.0], [5.0], [2.0], [0.0]]),
    ...                 np.array([True, True, True, False]))
    >>> r.ravel().tolist()
    [1.0, 5.0, 2.0, 2.0]
    """
    out = np.array(rows, dtype=np.float64, copy=True)
    m = len(out) // 2
    whole = filled[0 : 2 * m : 2] & filled[1 : 2 * m : 2]
    bad = np.flatnonzero(~whole)
    out[2 * bad + 1] = out[2 * bad]
    return out


@dataclass(frozen=True)
class RowCount:
    """The number of rows a bounded PCA kept, released with discrete
    Laplace noise, and the public size made from it.

    Input: the kept rows (only their number is read). A unit changes it
    by at most ``records`` (added, removed, or replaced by one of another
    size): L1 sensitivity ``records``, ``DLap(records/eps)``, pure
    ``eps``-DP under either adjacency. The size is the count less
    ``b ln(1/beta)`` (``b`` the noise scale), at least 2: post-processing,
    below the rows kept with chance ``1 - beta`` or more.
    """

    eps: float
    records: int = 1
    beta: float = SIZE_BETA

    #: a formal guarantee, drawn from its own keyed stream
    formal = True
    stream = "size"
    name = "discrete_laplace"
    adjacency = "replace"
    #: what the mechanism reads
    input_domain = "the rows kept (their number only)"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.eps) and self.eps > 0):
            raise ParameterError(
                f"eps must be a finite number > 0, got {self.eps!r}."
            )
        check_bound(self.records, None)

    @property
    def sensitivity(self) -> float:
        """L1 sensitivity of the count: ``records``."""
        return float(self.records)

    @property
    def scale(self) -> float:
        """Noise scale ``records / eps`` (eps as the sampler's rational)."""
        return self.records / float(exact_epsilon(self.eps))

    @property
    def margin(self) -> int:
        """Rows taken off the count: ``ceil(scale ln(1/beta))``."""
        return math.ceil(self.scale * math.log(1.0 / self.beta))

    def privacy_map(
        self, public: bool = True, multiplicity: int = 1
    ) -> tuple[float, float]:
        """``(eps, 0)``: pure DP (times ``multiplicity``)."""
        return float(self.eps) * multiplicity, 0.0

    def parameters(self) -> dict[str, Any]:
        return {"eps": float(self.eps), "records": int(self.records)}

    def perturb(self, table: Any, key: bytes) -> tuple[int, int]:
        """``(count, size)``: the noisy count of ``table``'s rows (an
        integer) and the public size, ``max(2, count - margin)``."""
        m = len(table)
        streams = cell_streams(
            derive_key(key, "row_count"), cell_words(np.arange(1))
        )
        scale = rational_scale(int(self.records), self.eps)
        count = m + int(discrete_laplace(streams, scale)[0])
        return count, max(2, count - self.margin)
