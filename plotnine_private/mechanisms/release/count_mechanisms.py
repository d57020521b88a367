"""The count mechanisms of the release engine and their privacy maps.

:class:`LaplaceCounts` (discrete or rounded Laplace noise, formal DP) and
:class:`CKMCounts` (the Cell Key Method, no formal guarantee): each says
what a release costs and perturbs a :class:`~.cell_table.CellTable`. Split
out of :mod:`.release`, which re-exports these names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import ParameterError
from ..samplers import laplace as lap
from ..streams.places import table_streams
from .cell_table import CellTable

__all__ = [
    "BlockLaplaceCounts",
    "CKMCounts",
    "CountMechanism",
    "LaplaceCounts",
    "Mechanism",
    "check_bound",
]


def check_bound(records: Any, cells: Any) -> None:
    """Refuse a contribution bound that is not a whole number >= 1 (and
    ``cells`` not above ``records``)."""
    for name, v in (("max_records", records), ("max_cells", cells)):
        if v is None and name == "max_cells":
            continue
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, np.integer))
            or (v < 1)
        ):
            raise ParameterError(
                f"{name} must be a whole number >= 1, got {v!r}."
            )
    if cells is not None and cells > records:
        raise ParameterError(
            f"max_cells ({cells}) must not exceed max_records ({records}): "
            "a unit's records fall in at most max_records cells."
        )


@runtime_checkable
class Mechanism(Protocol):
    """What the release engine and the stats read of a mechanism (the
    counts', the totals' and the private PCA's parts alike), in place of
    asking its class.

    ``formal``: whether it has a formal guarantee (keyed noise, an eps in
    its privacy map); ``stream``: the name of its keyed stream; ``name``:
    its name in a release record; ``input_domain``: what it reads, in
    words; ``adjacency`` and ``sensitivity``: the neighbouring relation
    its map assumes and the noise's calibration (None without a
    guarantee).
    ``privacy_map(public, multiplicity)`` gives ``(eps, delta)``;
    ``parameters()`` the public parts of a query; ``perturb(table, key)``
    the released values.
    """

    formal: bool
    stream: str
    input_domain: str

    @property
    def name(self) -> str: ...

    @property
    def adjacency(self) -> str | None: ...

    @property
    def sensitivity(self) -> float | None: ...

    def privacy_map(
        self, public: bool, multiplicity: int = 1
    ) -> tuple[float | None, float]: ...

    def parameters(self) -> dict[str, Any]: ...

    def perturb(self, table: Any, key: Any) -> Any: ...


class CountMechanism(Mechanism, Protocol):
    """A mechanism on counts, which a stat can bound to a privacy unit and
    divide between the parts of one layer."""

    def bounded(
        self, records: int, cells: int | None = None
    ) -> CountMechanism: ...

    def after_spending(self, eps: float) -> CountMechanism: ...

    def split(self, share: float) -> tuple[Any, Any]: ...


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
    :func:`~plotnine_private.mechanisms.samplers.laplace.threshold_for`: ``(ε,
    δ)``-DP (Karwa & Vadhan 2018). When one record is counted in ``m``
    cells (facet margins), the cost is ``m`` times that (group privacy).
    """

    eps: float
    delta: float = lap.DEFAULT_DELTA
    adjacency: str = "replace"
    noise: str = "discrete_laplace"
    #: records one privacy unit keeps at most (``k``; 1: a unit is a row)
    records: int = 1
    #: cells one unit's records may fall in at most (None: ``records``)
    cells: int | None = None

    def __post_init__(self):
        lap.check_laplace_options(self.adjacency, self.noise)
        check_bound(self.records, self.cells)

    @property
    def sensitivity(self) -> int:
        """L1 sensitivity of a count vector: 2 (replace), 1 (add/remove),
        times the records a privacy unit keeps (``records``)."""
        return lap.ADJACENCY_SENSITIVITY[self.adjacency] * int(self.records)

    @property
    def scale(self) -> float:
        """Noise scale ``sensitivity / eps``, with ``eps`` as the exact
        rational the sampler uses."""
        return self.sensitivity / float(lap.exact_epsilon(self.eps))

    @property
    def threshold(self) -> float:
        """Display threshold of a thresholded release."""
        return lap.threshold_for(
            self.eps,
            self.delta,
            self.adjacency,
            self.noise,
            self.records,
            self.cells,
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
        return LaplaceCounts(
            eps,
            self.delta,
            self.adjacency,
            self.noise,
            self.records,
            self.cells,
        )

    def bounded(self, records: int, cells: int | None = None) -> LaplaceCounts:
        """The same mechanism for privacy units that keep up to
        ``records`` records in up to ``cells`` cells."""
        return LaplaceCounts(
            self.eps, self.delta, self.adjacency, self.noise, records, cells
        )

    #: a formal guarantee: keyed noise and a privacy map with an eps
    formal = True
    #: the name of its keyed stream
    stream = "counts"
    #: what it reads
    input_domain = "a table of cells and their record counts"

    @property
    def name(self) -> str:
        """The mechanism's name in a release record (its noise)."""
        return self.noise

    def after_spending(self, eps: float) -> LaplaceCounts:
        """What is left once ``eps`` of it was spent elsewhere (a private
        range paid out of a layer's budget)."""
        return self.with_eps(self.eps - eps) if eps else self

    def split(self, share: float) -> tuple[LaplaceCounts, LaplaceCounts]:
        """Two mechanisms whose eps add up to this one's: ``share`` of it,
        and the rest (sequential composition)."""
        part = self.with_eps(self.eps * share)
        return part, self.with_eps(self.eps - part.eps)

    def parameters(self) -> dict[str, Any]:
        """Public parameters that belong to a query (the unit's bound
        only where a unit keeps more than one record, so that releases of
        one row per unit keep their identity)."""
        out: dict[str, Any] = {
            "eps": float(self.eps),
            "delta": float(self.delta),
            "adjacency": self.adjacency,
            "noise": self.noise,
        }
        if self.records != 1 or self.cells is not None:
            out["records"] = int(self.records)
            out["cells"] = self.cells
        return out

    def perturb(self, table: CellTable, key: bytes):
        """Add noise to the cells of ``table``.

        Every cell of a public table gets noise; otherwise only non-empty
        cells are candidates and a cell is kept iff its noisy count reaches
        :attr:`threshold`. Each cell's noise comes from its own stream,
        named by its words under ``key`` (by its place in the domain for a
        whole public domain under stream version 3).

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
        streams = table_streams(key, table)
        if table.public:
            # every cell is drawn and kept: whole arrays, no gathers or
            # NaN fill (10**6 declared cells)
            raw = (n + self._noise(streams, None)).astype(np.float64)
            noisy = raw if self.noise == "discrete_laplace" else np.round(raw)
            values = np.clip(noisy, 0, None)
            keep = np.ones(len(n), dtype=bool)
            return values, noisy, keep, {"scale": self.scale}
        cells = np.flatnonzero(n > 0)  # empty cells are never candidates
        raw = np.full(len(n), np.nan)
        raw[cells] = n[cells] + self._noise(streams, cells)
        keep = np.zeros(len(n), dtype=bool)
        keep[cells] = True
        tau = self.threshold
        # compare the unrounded value: rounding first would lower the
        # effective cut below tau for continuous noise
        keep &= np.nan_to_num(raw, nan=-np.inf) >= tau
        details: dict[str, Any] = {"scale": self.scale, "threshold": tau}
        noisy = raw if self.noise == "discrete_laplace" else np.round(raw)
        values = np.where(keep, np.clip(np.nan_to_num(noisy), 0, None), 0.0)
        return values, noisy, keep, details

    def _noise(self, streams, cells: np.ndarray | None) -> np.ndarray:
        """The noise of the selected cells (all if None), from their
        streams."""
        if self.noise == "discrete_laplace":
            scale = lap.rational_scale(self.sensitivity, self.eps)
            return lap.discrete_laplace(streams, scale, cells)
        return lap.laplace(streams, self.scale, cells)


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

    #: no formal guarantee: no eps, nothing drawn from a keyed stream
    formal = False
    stream = "counts"
    input_domain = "a table of cells, their counts and record-key sums"
    name = "ckm"
    adjacency = None
    sensitivity = None

    def bounded(self, records: int, cells: int | None = None) -> CKMCounts:
        """The same: the Cell Key Method has no sensitivity to scale (a
        unit's records share its key, :func:`add_record_keys`)."""
        return self

    def after_spending(self, eps: float) -> CKMCounts:
        """The same: nothing to spend."""
        return self

    def split(self, share: float) -> tuple[CKMCounts, CKMCounts]:
        """The same mechanism twice: no budget to divide."""
        return self, self

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


#: shares of a :class:`BlockLaplaceCounts` are rounded down to this grid
#: of eps (a rational the sampler takes exactly)
_BLOCK_GRID = 2**20


@dataclass(frozen=True)
class BlockLaplaceCounts:
    """Exact discrete Laplace noise on a whole public cell table cut into
    consecutive blocks (the marginals of a synopsis), block ``i`` at its
    own share ``shares[i]`` of ``eps``.

    Privacy map: each record is counted once in every block, so a
    neighbour moves at most ``Δ`` (2 under replace-one, 1 under
    add/remove, times ``records``) in each block's L1 norm; block ``i``
    with noise of scale ``Δ / eps_i`` costs ``eps_i`` and the blocks
    compose to ``sum(eps_i) <= eps`` (each ``eps_i`` is ``eps *
    shares[i]`` as a short decimal when those fit in ``eps`` exactly,
    else rounded down to a multiple of 2**-20).
    Equal shares are :class:`LaplaceCounts` at ``eps / m`` with
    multiplicity ``m``, up to that rounding.

    >>> m = BlockLaplaceCounts(1.0, (0.75, 0.25), (3, 2))
    >>> m.scales, m.privacy_map(public=True, multiplicity=2)
    ((2.6666666666666665, 8.0), (1.0, 0.0))
    """

    eps: float
    shares: tuple[float, ...]
    sizes: tuple[int, ...]
    adjacency: str = "replace"
    records: int = 1

    noise = "discrete_laplace"
    formal = True
    stream = "counts"
    input_domain = "a table of cells and their record counts, in blocks"

    def __post_init__(self):
        lap.check_laplace_options(self.adjacency, self.noise)
        check_bound(self.records, None)
        shares = [float(w) for w in self.shares]
        if (
            len(shares) != len(self.sizes)
            or not shares
            or not all(np.isfinite(w) and w > 0 for w in shares)
            or abs(sum(shares) - 1.0) > 1e-9
        ):
            raise ParameterError(
                f"shares must be one positive number per block summing to "
                f"1, got {self.shares!r} for {len(self.sizes)} blocks."
            )

    @property
    def name(self) -> str:
        return self.noise

    @property
    def sensitivity(self) -> int:
        """L1 sensitivity of one block: 2 (replace), 1 (add/remove), times
        the records a privacy unit keeps."""
        return lap.ADJACENCY_SENSITIVITY[self.adjacency] * int(self.records)

    def block_eps(self) -> tuple[Fraction, ...]:
        """Each block's exact eps: its share of the exact eps, as a short
        decimal or rounded down to a multiple of 2**-20 (their sum never
        exceeds eps)."""
        whole = lap.exact_epsilon(self.eps)
        shares = [Fraction(float(w)) for w in self.shares]
        total = sum(shares, Fraction(0))
        # short decimals (eps 1 in shares 0.1, 0.2 ...) are kept exactly
        # when they fit in the budget
        short = [lap.exact_epsilon(float(whole * w / total)) for w in shares]
        if sum(short, Fraction(0)) <= whole:
            return tuple(short)
        out = []
        for w in shares:
            e = Fraction(math.floor(whole * w / total * _BLOCK_GRID))
            if e <= 0:
                raise ParameterError(
                    f"a share {float(w):g} of eps={self.eps:g} is below "
                    "2**-20: give every block a larger share."
                )
            out.append(e / _BLOCK_GRID)
        return tuple(out)

    @property
    def scales(self) -> tuple[float, ...]:
        """Each block's noise scale ``Δ / eps_i``."""
        return tuple(float(self.sensitivity / e) for e in self.block_eps())

    def privacy_map(
        self, public: bool, multiplicity: int = 1
    ) -> tuple[float, float]:
        """``(eps, 0)`` on a public domain where each record is counted
        once per block (``multiplicity`` = the number of blocks); ``k``
        times that when it is counted ``k`` times in every block (group
        privacy)."""
        m = len(self.sizes)
        if not public or multiplicity % m:
            raise ParameterError(
                "BlockLaplaceCounts releases a public domain in which each "
                f"record is counted once per block ({m}), got "
                f"public={public}, multiplicity={multiplicity}."
            )
        return float(self.eps) * (multiplicity // m), 0.0

    def bounded(
        self, records: int, cells: int | None = None
    ) -> BlockLaplaceCounts:
        """The same for units keeping up to ``records`` records (a unit
        may put all of them in one cell of each block: ``cells`` is not
        used)."""
        return BlockLaplaceCounts(
            self.eps, self.shares, self.sizes, self.adjacency, records
        )

    def parameters(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "eps": float(self.eps),
            "shares": tuple(float(w) for w in self.shares),
            "adjacency": self.adjacency,
            "noise": self.noise,
        }
        if self.records != 1:
            out["records"] = int(self.records)
        return out

    def perturb(self, table: CellTable, key: bytes):
        """Discrete Laplace noise on every cell, block ``i``'s cells at
        scale ``Δ / eps_i``; returns as :meth:`LaplaceCounts.perturb`."""
        n = np.asarray(table.n, dtype=np.int64)
        if not table.public or len(n) != sum(self.sizes):
            raise ParameterError(
                f"BlockLaplaceCounts needs a public table of "
                f"{sum(self.sizes)} cells, got {len(n)} "
                f"(public={table.public})."
            )
        streams = table_streams(key, table)
        noise = np.empty(len(n), dtype=np.int64)
        start = 0
        for size, e in zip(self.sizes, self.block_eps()):
            b = Fraction(self.sensitivity) / e
            cells = np.arange(start, start + size)
            noise[start : start + size] = lap.discrete_laplace(
                streams, (b.numerator, b.denominator), cells
            )
            start += size
        noisy = (n + noise).astype(np.float64)
        values = np.clip(noisy, 0, None)
        keep = np.ones(len(n), dtype=bool)
        return values, noisy, keep, {"scales": list(self.scales)}
