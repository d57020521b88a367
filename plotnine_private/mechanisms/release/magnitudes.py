"""Magnitude mechanisms of the release engine: private sums (totals).

A count release perturbs how many records a cell holds; a *magnitude*
release perturbs the total of a numeric variable over them. Both go
through :func:`~plotnine_private.mechanisms.release.engine.release_cells`, so
the
identity, the report, the seed/key streams and ``save_release`` treat them
like counts. The cells are a :class:`SumTable`: a
:class:`~plotnine_private.mechanisms.release.engine.CellTable` that also holds
the
exact total of each cell on a public integer grid (and, for the Cell Key
Method, its largest contribution).

**Values on a public grid.** Each record's value is clamped to public
bounds ``[lo, hi]``, shifted by a public centre ``c`` and rounded to a
public resolution ``r``: the record contributes the integer ``k =
round((y - c) / r)``, clipped to ``[k_lo, k_hi]``. Cell totals are exact
integer sums of ``k`` (order of the records does not matter), so the same
records give the same total in every plot and table.

**DP** (:class:`LaplaceSums`). With ``B = max(|k_lo|, |k_hi|)``, one added
or removed record changes one cell's total by at most ``B`` (L1
sensitivity ``B``); one replaced record can leave a cell and enter
another, changing two totals by at most ``B`` each (``2B``; within one
cell ``k_hi - k_lo <= 2B``). Exact discrete Laplace noise of scale
``sensitivity / eps`` on every cell of a public domain is then ``eps``-DP
(Canonne, Kamath & Steinke 2020), with no floating point in the noise:
floating-point Laplace samplers leak through the gaps of their outputs
(Mironov 2012), and float sums of clamped values have a sensitivity that
depends on the order of summation (Casacuberta et al. 2022); integers on a
public grid avoid both. Centring at ``c = (lo + hi) / 2`` makes ``B =
(hi - lo) / (2r)``: sensitivity ``(hi - lo)/2`` under add/remove and ``hi
- lo`` under replace, in value units.

**CKM** (:class:`CKMMagnitudes`). cellKey's perturbation of magnitudes
with a simple multiplier, for one component (``top_k = 1``): the
*magnifier* of a cell is its largest absolute contribution
(``"top_contr"``) or its absolute total (``"sum"``); ``x_delta = p *
magnifier``; the ratio ``a = |total / x_delta|`` is looked up in a
magnitude p-table at the cell key (:meth:`~plotnine_private.mechanisms.
ptable.PTable.magnitude_noise`, interpolating between rows), and the noise
is ``sign(total) * x_delta * v``, never pushing the total across zero. A
cell with total 0 or cell key 0 is not perturbed. No formal guarantee.

This module imports numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..samplers import laplace as lap
from ..streams.places import table_streams
from .count_mechanisms import check_bound
from .engine import CellTable, data_digest

__all__ = [
    "CKMMagnitudes",
    "LaplaceSums",
    "SumTable",
    "laplace_halfwidth",
    "rotate_key",
]


@dataclass
class SumTable(CellTable):
    """Cells with their exact totals on a public integer grid.

    Attributes
    ----------
    total
        Exact int64 total of the records' grid values per cell.
    top
        Largest absolute grid value per cell (0 for an empty cell), for
        the CKM magnifier ``"top_contr"``; ``None`` if not needed.
    """

    total: np.ndarray | None = None
    top: np.ndarray | None = None

    def digest(self) -> bytes:
        """Digest of the cells, counts and totals (order independent): a
        changed value changes the noise of its cell's stream."""
        words = np.asarray(self.words, dtype=np.uint64)
        if words.ndim == 1:  # one word per cell (or no cell at all)
            words = words[:, None]
        order = np.lexsort(words.T[::-1]) if len(words) else np.arange(0)
        parts = [words[order], np.asarray(self.n, dtype=np.int64)[order]]
        for extra in (self.total, self.top, self.key_sum):
            if extra is not None:
                parts.append(np.asarray(extra, dtype=np.int64)[order])
        return data_digest(*parts)


def laplace_halfwidth(scale: float, noise: str, alpha: float) -> int:
    """Smallest integer ``h >= 0`` with ``P(|Z| > h) <= alpha`` for the
    integer noise ``Z`` of scale ``scale`` (grid units).

    Discrete Laplace, ``p = exp(-1/scale)``: ``P(|Z| > h) = 2 p^(h+1) /
    (1 + p)``. Continuous Laplace rounded to an integer: ``P(|Z| > h) =
    exp(-(h + 1/2) / scale)``. Both use public parameters only.

    >>> laplace_halfwidth(1.0, "discrete_laplace", 0.05)
    3
    >>> laplace_halfwidth(1.0, "laplace", 0.05)
    3
    """
    if not 0 < alpha < 1:
        raise ParameterError(f"alpha must lie in (0, 1), got {alpha!r}")
    log_alpha = math.log(alpha)
    h = max(0, math.ceil(_guess(scale, noise, log_alpha)))
    # step from the closed form to the exact smallest h; the tail is
    # compared in log space with log p = -1/scale exactly, so that the
    # closed form and the check agree to a few steps at any scale (p**h
    # with a rounded p drifts by whole percents at scales near 1e12)
    while h > 0 and _log_tail(h - 1, scale, noise) <= log_alpha:
        h -= 1
    while _log_tail(h, scale, noise) > log_alpha:
        h += 1
    return h


def _guess(scale: float, noise: str, log_alpha: float) -> float:
    if noise == "discrete_laplace":
        log_half = math.log1p(math.exp(-1.0 / scale)) - math.log(2)
        return scale * (log_half - log_alpha) - 1 - 1e-12
    return -scale * log_alpha - 0.5 - 1e-12


def _log_tail(h: int, scale: float, noise: str) -> float:
    """log P(|Z| > h)."""
    if noise == "discrete_laplace":
        # 2 p^(h+1) / (1 + p) with log p = -1/scale
        return math.log(2) - (h + 1) / scale - math.log1p(math.exp(-1 / scale))
    return -(h + 0.5) / scale


@dataclass(frozen=True)
class LaplaceSums:
    """Laplace-type noise on cell totals of clamped values on a public
    integer grid (see the module docstring for the privacy map).

    Parameters
    ----------
    eps
        Budget of this release.
    bound
        ``B``: the largest absolute grid value one record can contribute.
    unit
        The grid resolution ``r`` (value units per grid unit).
    adjacency
        ``"replace"`` (sensitivity ``2B``) or ``"add_remove"`` (``B``).
    noise
        ``"discrete_laplace"`` (exact, default) or ``"laplace"``
        (continuous, rounded to the grid; replication only).
    records
        ``k``: records one privacy unit keeps at most. A unit changes the
        totals by at most ``k`` records' worth, so the sensitivity is
        ``k B`` (add/remove) or ``2 k B`` (replace).
    """

    eps: float
    bound: int
    unit: float
    adjacency: str = "replace"
    noise: str = "discrete_laplace"
    records: int = 1

    #: a formal guarantee, drawn from a stream of its own
    formal = True
    stream = "sums"
    input_domain = "a table of cells and their clamped grid totals"

    @property
    def name(self) -> str:
        """The mechanism's name in a release record (its noise)."""
        return self.noise

    def __post_init__(self):
        lap.check_laplace_options(self.adjacency, self.noise)
        if int(self.bound) != self.bound or self.bound < 1:
            raise ParameterError(
                f"bound must be a whole number >= 1, got {self.bound!r}."
            )
        if not (math.isfinite(self.unit) and self.unit > 0):
            raise ParameterError(f"unit must be > 0, got {self.unit!r}.")
        check_bound(self.records, None)

    @property
    def sensitivity_units(self) -> int:
        """L1 sensitivity of the totals in grid units (times the records
        a privacy unit keeps).

        >>> LaplaceSums(1.0, bound=10, unit=1.0, records=3).sensitivity
        60.0
        """
        return (
            int(self.bound)
            * int(self.records)
            * lap.ADJACENCY_SENSITIVITY[self.adjacency]
        )

    @property
    def sensitivity(self) -> float:
        """L1 sensitivity of the totals in value units."""
        return self.sensitivity_units * float(self.unit)

    @property
    def scale_units(self) -> float:
        """Laplace scale in grid units."""
        return self.sensitivity_units / float(lap.exact_epsilon(self.eps))

    @property
    def scale(self) -> float:
        """Laplace scale in value units."""
        return self.scale_units * float(self.unit)

    def halfwidth(self, alpha: float) -> float:
        """Half-width (value units) of a ``1 - alpha`` interval of the
        noise of one total."""
        h = laplace_halfwidth(self.scale_units, self.noise, alpha)
        return h * float(self.unit)

    def privacy_map(
        self, public: bool, multiplicity: int = 1
    ) -> tuple[float, float]:
        """``(eps, 0)``; ``m`` times that when one record is in ``m``
        cells (facet margins). Totals need a public domain.

        >>> LaplaceSums(1.0, bound=10, unit=0.5).privacy_map(True)
        (1.0, 0.0)
        """
        if not public:
            raise ParameterError(
                "private sums need a public domain (declared levels): a "
                "cell that exists only when some record has its value "
                "would disclose that record."
            )
        return float(self.eps) * multiplicity, 0.0

    def parameters(self) -> dict[str, Any]:
        """Public parameters that belong to a query (``records`` only
        where a unit keeps more than one, so one-row releases keep their
        identity)."""
        out: dict[str, Any] = {
            "eps": float(self.eps),
            "adjacency": self.adjacency,
            "noise": self.noise,
            "bound": int(self.bound),
            "unit": float(self.unit),
        }
        if self.records != 1:
            out["records"] = int(self.records)
        return out

    def perturb(self, table: SumTable, key: bytes):
        if not table.public:
            self.privacy_map(False)
        if table.total is None:
            raise ParameterError("LaplaceSums needs the totals of the cells.")
        total = np.asarray(table.total, dtype=np.int64)
        streams = table_streams(key, table)
        # every cell (None): its first words read in one call, as
        # LaplaceCounts draws a public table
        if self.noise == "discrete_laplace":
            scale = lap.rational_scale(self.sensitivity_units, self.eps)
            z = lap.discrete_laplace(streams, scale, None)
        else:
            z = np.round(lap.laplace(streams, self.scale_units, None))
        noisy = (total + z).astype(float) * float(self.unit)
        keep = np.ones(len(total), dtype=bool)
        details = {
            "what": "clamped sums on a grid",
            "scale": self.scale,
            "unit": float(self.unit),
            "bound": int(self.bound),
            **({"records": int(self.records)} if self.records != 1 else {}),
        }
        return noisy, noisy.copy(), keep, details


def rotate_key(key_sums: np.ndarray, modulus: int) -> np.ndarray:
    """The cell key with its decimal digits rotated left by one, as
    cellKey scrambles the key of a magnitude (``same_key=False``), so that
    the count and the total of one cell read independent-looking entries.

    ``modulus`` must be a power of ten (uniform keys with that many
    decimals).

    >>> rotate_key(np.array([12345678]), 10**8).tolist()
    [23456781]
    """
    m = int(modulus)
    digits = round(math.log10(m))
    if 10**digits != m:
        raise ParameterError(
            f"key rotation needs decimal keys (a power of ten), got "
            f"modulus {m}"
        )
    ck = np.mod(np.asarray(key_sums, dtype=np.int64), m)
    top = ck // (m // 10)
    return (ck % (m // 10)) * 10 + top


@dataclass(frozen=True)
class CKMMagnitudes:
    """Cell Key Method for totals with a magnitude p-table (cellKey,
    simple multiplier, one component).

    Parameters
    ----------
    ptable
        A magnitude p-table (:func:`~plotnine_private.mechanisms.ptable.
        create_num_ptable`).
    unit
        The grid resolution (value units per grid unit of the totals).
    magnifier
        ``"top_contr"`` (largest absolute contribution, cellKey's default
        for business data) or ``"sum"`` (absolute total).
    p
        Multiplier in (0, 1): ``x_delta = p * magnifier``.
    same_key
        Read the p-table at the cell key itself (True) or at the key with
        its digits rotated by one (False, cellKey's default), so that a
        cell's count and total do not share one key.
    """

    ptable: Any
    unit: float
    magnifier: str = "top_contr"
    p: float = 0.1
    same_key: bool = False

    #: no formal guarantee: no eps, nothing drawn from a keyed stream
    formal = False
    stream = "sums"
    input_domain = "a table of cells, their totals and record-key sums"
    name = "ckm"
    adjacency = None
    sensitivity = None

    def __post_init__(self):
        if getattr(self.ptable, "kind", None) != "magnitudes":
            raise ParameterError(
                "CKMMagnitudes needs a magnitude p-table from "
                "create_num_ptable(D, V, step=..., icat=[1, ..., D])."
            )
        if self.magnifier not in ("top_contr", "sum"):
            raise ParameterError(
                f"magnifier must be 'top_contr' or 'sum', got "
                f"{self.magnifier!r}."
            )
        if not (0 < self.p < 1):
            raise ParameterError(f"p must lie in (0, 1), got {self.p!r}.")

    def privacy_map(self, public: bool, multiplicity: int = 1):
        return None, 0.0

    def parameters(self) -> dict[str, Any]:
        return {
            "num_ptable": self.ptable.fingerprint,
            "magnifier": self.magnifier,
            "p": float(self.p),
            "same_key": bool(self.same_key),
            "unit": float(self.unit),
        }

    def bound(self, totals: np.ndarray, max_abs: float) -> np.ndarray:
        """Largest possible absolute noise of each perturbed total, from
        public facts: ``p * D * max_abs`` (``top_contr``, ``max_abs`` the
        largest absolute value a record can have) or ``p D |T| /
        (1 - p D)`` from the released total ``T`` (``sum``; infinite if
        ``p D >= 1``)."""
        d = float(self.ptable.max_noise)
        t = np.abs(np.asarray(totals, dtype=float))
        if self.magnifier == "top_contr":
            return np.full(t.shape, self.p * d * float(max_abs))
        if self.p * d >= 1:
            return np.full(t.shape, np.inf)
        return self.p * d * t / (1 - self.p * d)

    def noise(self, table: SumTable) -> np.ndarray:
        """The noise of each cell's total (value units)."""
        if table.key_sum is None or table.total is None:
            raise ParameterError(
                "CKM for totals needs the totals and record-key sums."
            )
        unit = float(self.unit)
        total = np.asarray(table.total, dtype=np.int64).astype(float) * unit
        if self.magnifier == "top_contr":
            if table.top is None:
                raise ParameterError("top_contr needs each cell's top value.")
            mag = np.asarray(table.top, dtype=float) * unit
        else:
            mag = np.abs(total)
        x_delta = self.p * mag
        # cellKey: when |total| < |x_delta| the magnifier is the total
        # itself (ratio 1); cellKey leaves such cells of a simple
        # multiplier unperturbed, here they are perturbed at row 1
        x_delta = np.where(np.abs(total) < x_delta, np.abs(total), x_delta)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(x_delta > 0, np.abs(total) / x_delta, 0.0)
        keys = np.asarray(table.key_sum, dtype=np.int64)
        m = self.ptable.key_modulus
        keys = np.mod(keys, m) if self.same_key else rotate_key(keys, m)
        v = self.ptable.magnitude_noise(a, keys)
        v = np.where(
            (np.mod(np.asarray(table.key_sum, np.int64), m) == 0)
            | (total == 0),
            0.0,
            v,
        )
        noise = np.sign(total) * x_delta * v
        # a negative deviation never pushes a total across zero
        crosses = np.sign(total + noise) * np.sign(total) < 0
        return np.where(crosses, -total, noise)

    def perturb(self, table: SumTable, key: bytes | None = None):
        total = np.asarray(table.total, dtype=np.int64).astype(float) * float(
            self.unit
        )
        values = total + self.noise(table)
        keep = np.ones(len(values), dtype=bool)
        if not table.public:
            keep &= np.asarray(table.n) > 0
        values = np.where(keep, values, 0.0)
        details = {
            "ptable": dict(self.ptable.params),
            "ptable_fingerprint": self.ptable.fingerprint,
            "magnifier": self.magnifier,
            "p": float(self.p),
            "same_key": bool(self.same_key),
        }
        return values, values.copy(), keep, details
