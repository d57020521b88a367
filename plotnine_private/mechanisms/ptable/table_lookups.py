"""Lookups of the p-table: the deviation of a count or a magnitude cell.

:class:`PTableLookups` holds the exact lookups of :class:`~.table.PTable`
(:meth:`~PTableLookups.noise` for counts,
:meth:`~PTableLookups.magnitude_noise` for magnitudes), which inherits
them. Bounds and keys are compared as integers, so every lookup is exact.
This module imports numpy only.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError
from .values import (
    BOUND_SCALE,
    _as_int_array,
    _as_ratio_array,
    _broadcast,
    ons_pcv,
)

__all__ = ["PTableLookups"]


class PTableLookups:
    """The lookups of :class:`~.table.PTable` (a mixin: it holds no data)."""

    __slots__ = ()

    if TYPE_CHECKING:  # set by PTable
        _i: np.ndarray
        _ub: np.ndarray
        _kind: str
        _j_scale: int
        _key_kind: str
        _modulus: int
        _ons: Any
        _cycle: Any

        @property
        def _v(self) -> np.ndarray: ...

        @property
        def max_i(self) -> int: ...

    def _key_scale(self, key_modulus: int | None) -> int:
        m = self._modulus if key_modulus is None else int(key_modulus)
        if m <= 0:
            raise ParameterError(f"key_modulus must be > 0, got {m}")
        if self._key_kind == "integer" and m != self._modulus:
            raise ParameterError(
                f"key_modulus={m} does not match this ONS table, whose "
                f"keys run 0..{self._modulus - 1}; leave key_modulus unset"
            )
        return m

    def noise(
        self, counts: Any, key_sums: Any, *, key_modulus: int | None = None
    ) -> np.ndarray:
        """Deviation ``v`` for each count cell (vectorised, exact).

        Parameters
        ----------
        counts : array of int
            Unweighted counts (>= 0).
        key_sums : array of int
            Exact integer sums of the cells' integer-scaled record keys
            (:func:`~plotnine_private.mechanisms.ptable.ckm.record_key_integers`).
            The cell key is ``key_sums mod key_modulus``; for uniform
            tables it stands for ``cell_key / key_modulus`` in [0, 1).
        key_modulus : int, optional
            Scale of the keys; defaults to :attr:`key_modulus`. Uniform
            tables accept any scale (e.g. ``10**10`` for 10-decimal keys);
            the comparison with the 8-decimal bounds stays exact.

        Returns
        -------
        numpy.ndarray of int64
            ``v``; the published count is ``counts + v``. Uniform rule:
            row ``min(count, max_i)``, the entry with ``p_int_lb <= key <
            p_int_ub`` (a key on a bound takes the upper interval).
            ONS rule: row :func:`ons_pcv` (count), enumerated by key.
            Zero counts always get 0.

        Raises
        ------
        ParameterError
            For a magnitude table (use :meth:`magnitude_noise`), negative
            or fractional counts, fractional key sums or unequal shapes.

        Examples
        --------
        >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
        >>> pt = create_cnt_ptable(D=2, V=0.9)
        >>> pt.noise([1, 1000], [36_250_000, 96_000_000]).tolist()
        [0, 2]
        """
        if self._kind != "counts":
            raise ParameterError(
                "noise() perturbs counts, but this is a magnitude p-table "
                "(create_num_ptable, fractional deviations); use "
                "magnitude_noise(ratios, key_sums), or a count table from "
                "create_cnt_ptable() for counts"
            )
        counts = _as_int_array(counts, "counts")
        key_sums = _as_int_array(key_sums, "key_sums")
        counts, key_sums = _broadcast(counts, key_sums, "counts and key_sums")
        if counts.size and counts.min() < 0:
            raise ParameterError("counts must be >= 0; found negatives")
        m = self._key_scale(key_modulus)
        keys = np.mod(key_sums, m)
        if self._key_kind == "integer":
            pcv = ons_pcv(counts, self.max_i, self._cycle)
            out = self._ons[pcv, keys]
        else:
            rows = np.minimum(counts, self.max_i)
            out = self._v[self._entry(rows, keys, m)]
        out = np.where(counts == 0, 0, out)
        return out.astype(np.int64, copy=False)

    def magnitude_noise(
        self, ratios: Any, key_sums: Any, *, key_modulus: int | None = None
    ) -> np.ndarray:
        """cellKey's perturbation value ``v`` for magnitude cells.

        The rule of cellKey 1.x (spec ``cell-key-method.md`` 2.2): the
        ratio ``a = |x / x_delta|`` of a cell is capped at :attr:`max_i`.
        If ``a`` is a row ``i`` of the table, ``v`` is that row's entry
        with ``p_int_lb <= key < p_int_ub``; otherwise ``v`` interpolates
        linearly between the rows ``a0 < a < a1`` around it, both read at
        the same cell key: ``v = (1 - l) v(a0) + l v(a1)`` with ``l = (a -
        a0) / (a1 - a0)`` (row 0 gives ``v = 0``). A cell key of exactly 0
        (no contributors) gives ``v = 0``. The caller then scales: noise
        ``= x_delta * v``.

        Parameters
        ----------
        ratios : array of float
            ``a = |x / x_delta|`` per cell, >= 0.
        key_sums : array of int
            Exact integer key sums, as for :meth:`noise`.
        key_modulus : int, optional
            Scale of the keys (default ``10**8``).

        Returns
        -------
        numpy.ndarray of float
            ``v`` per cell, within ``[-max_noise, max_noise]``.

        Raises
        ------
        ParameterError
            For ONS (integer-key) tables, negative or non-finite ratios,
            fractional key sums or unequal shapes.

        Examples
        --------
        >>> from plotnine_private.mechanisms.ptable import create_num_ptable
        >>> pt = create_num_ptable(D=2, V=1, step=2, icat=[1, 2])
        >>> pt.magnitude_noise([1, 2, 1.5, 9], [10**7] * 4).tolist()
        [-1.0, -1.5, -1.25, -1.5]
        """
        if self._key_kind != "uniform":
            raise ParameterError(
                "magnitude_noise() needs an R-style table with uniform "
                "keys; this is an ONS (integer-key) count table"
            )
        a = _as_ratio_array(ratios)
        key_sums = _as_int_array(key_sums, "key_sums")
        a, key_sums = _broadcast(a, key_sums, "ratios and key_sums")
        m = self._key_scale(key_modulus)
        keys = np.mod(key_sums, m)
        a = np.minimum(a, self.max_i)
        rows = np.unique(self._i)
        # a0: the largest row <= a; a1: the next row (a0 itself at the top)
        at = np.searchsorted(rows, a, side="right") - 1
        a0 = rows[at]
        a1 = rows[np.minimum(at + 1, len(rows) - 1)]
        exact = a == a0
        lam = np.where(exact, 0.0, (a - a0) / np.where(exact, 1, a1 - a0))
        scale = self._j_scale
        v0 = self._v[self._entry(a0, keys, m)] / scale
        v1 = self._v[self._entry(a1, keys, m)] / scale
        v = np.where(exact, v0, (1 - lam) * v0 + lam * v1)
        return np.where(keys == 0, 0.0, v)

    def _entry(
        self, rows: np.ndarray, key_num: np.ndarray, key_den: int
    ) -> np.ndarray:
        """Index of the entry ``[lb, ub)`` holding ``key_num / key_den``.

        ``rows`` must be rows of the table. Bounds and keys are compared
        on a common integer scale, so the search is exact.
        """
        g = math.gcd(key_den, BOUND_SCALE)
        bound_f, key_f = key_den // g, BOUND_SCALE // g
        span = BOUND_SCALE * bound_f  # one row's width on the common scale
        if (self.max_i + 1) * span >= 2**62:
            raise ParameterError(
                f"key_modulus={key_den} is too fine for exact lookup; use "
                f"keys with at most 10 decimals"
            )
        flat = self._i * span + self._ub * bound_f
        return np.searchsorted(flat, rows * span + key_num * key_f, "right")
