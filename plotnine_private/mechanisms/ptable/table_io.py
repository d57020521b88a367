"""Conversion of the p-table to the ONS ``pcv, ckey, pvalue`` lookup.

:class:`PTableIO` holds :meth:`~PTableIO.to_ons_frame` of
:class:`~.table.PTable`, which inherits it; the readers and writers of
files live in :mod:`.io`. This module imports numpy and pandas only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import ParameterError

__all__ = ["PTableIO"]


class PTableIO:
    """Conversion of :class:`~.table.PTable` to the ONS lookup (a mixin:
    it holds no data)."""

    __slots__ = ()

    if TYPE_CHECKING:  # set by PTable and PTableLookups
        _kind: str
        _key_kind: str
        _ons: Any

        @property
        def _v(self) -> np.ndarray: ...

        @property
        def max_i(self) -> int: ...

        def _entry(
            self, rows: np.ndarray, key_num: np.ndarray, key_den: int
        ) -> np.ndarray: ...

    def _ons_frame(self) -> pd.DataFrame:
        vals = self._ons[1:]
        M, K = vals.shape
        return pd.DataFrame(
            {
                "pcv": np.repeat(np.arange(1, M + 1), K),
                "ckey": np.tile(np.arange(K), M),
                "pvalue": vals.ravel(),
            }
        )

    def to_ons_frame(
        self, modulus: int = 256, max_pcv: int = 750
    ) -> pd.DataFrame:
        """The table as an ONS ``pcv, ckey, pvalue`` lookup
        (docs/ptables.md §5).

        For a uniform count table, ``pvalue`` at ``(pcv, k)`` is the
        deviation at key ``(k + 0.5) / modulus`` in row ``min(pcv,
        max_i)``.

        Parameters
        ----------
        modulus : int
            Number of integer keys ``K`` (keys ``0..K-1``).
        max_pcv : int
            Last row, at least :attr:`max_i`.

        Returns
        -------
        pandas.DataFrame
            Columns ``pcv, ckey, pvalue``, one row per (pcv, ckey).

        Raises
        ------
        ParameterError
            For magnitude tables (ONS tables hold whole deviations of
            counts) or a too small ``max_pcv``.

        Examples
        --------
        >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
        >>> ons = create_cnt_ptable(D=2, V=0.9).to_ons_frame()
        >>> ons.shape
        (192000, 3)
        """
        if self._key_kind == "integer":
            return self._ons_frame()
        if self._kind != "counts":
            raise ParameterError(
                "an ONS table (pcv, ckey, pvalue) holds whole deviations of "
                "counts; this magnitude p-table can only be written with "
                "format='r' or format='tau_argus'"
            )
        modulus, max_pcv = int(modulus), int(max_pcv)
        if modulus < 1 or max_pcv < self.max_i:
            raise ParameterError(
                f"need modulus >= 1 and max_pcv >= max_i={self.max_i}, got "
                f"modulus={modulus}, max_pcv={max_pcv}"
            )
        pcv = np.repeat(np.arange(1, max_pcv + 1), modulus)
        k = np.tile(np.arange(modulus), max_pcv)
        rows = np.minimum(pcv, self.max_i)
        v = self._v[self._entry(rows, 2 * k + 1, 2 * modulus)]
        return pd.DataFrame({"pcv": pcv, "ckey": k, "pvalue": v})
