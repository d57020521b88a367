"""Writing the p-table: the ONS ``pcv, ckey, pvalue`` lookup and R-style,
Tau-Argus or ONS text.

:class:`PTableIO` holds :meth:`~PTableIO.to_ons_frame` and
:meth:`~PTableIO.to_csv` of :class:`~.table.PTable`, which inherits them;
the readers of files live in :mod:`.io`. This module imports numpy and
pandas only.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .values import (
    BOUND_DIGITS,
    BOUND_SCALE,
    FORMATS,
    TABLE_COLUMNS,
    TAU_ARGUS_COLUMNS,
    TAU_ARGUS_MAGNITUDES,
    check_choice,
)

__all__ = ["PTableIO"]


def _decimal_text(x: pd.Series) -> pd.Series:
    """Targets of magnitude tables as short decimals (``0.25``, ``-1``)."""
    return x.map(lambda y: f"{y:.4f}".rstrip("0").rstrip("."))


class PTableIO:
    """Writing :class:`~.table.PTable`: the ONS lookup and text files (a
    mixin: it holds no data)."""

    __slots__ = ()

    if TYPE_CHECKING:  # set by PTable and PTableLookups
        _kind: str
        _key_kind: str
        _modulus: int
        _ons: Any
        _cycle: Any

        @property
        def table(self) -> pd.DataFrame: ...

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

    def to_csv(
        self,
        path: str | os.PathLike | io.TextIOBase,
        format: Literal["r", "tau_argus", "ons"] = "r",
        **ons_options: int,
    ) -> None:
        """Write the table as R-style, Tau-Argus or ONS text
        (:func:`~.io.write_ptable` calls this).

        Parameters
        ----------
        path : str, path or text buffer
        format : {"r", "tau_argus", "ons"}
            ``"r"``: comma-separated ``i,j,p,v,p_int_lb,p_int_ub,type``;
            ``"tau_argus"``: ``;``-separated ``i;j;p;v;p_int_ub`` (plus
            ``;type`` for magnitude tables, as R ``pt_export``);
            ``"ons"``: ``pcv,ckey,pvalue`` (count tables only; options
            ``modulus`` and ``max_pcv`` of :meth:`to_ons_frame`).

        Returns
        -------
        None

        Examples
        --------
        >>> import io
        >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
        >>> buf = io.StringIO()
        >>> create_cnt_ptable(D=2, V=0.9).to_csv(buf, format="tau_argus")
        >>> buf.getvalue().splitlines()[:2]
        ['i;j;p;v;p_int_ub', '0;0;1.00000000;0;1.00000000']
        """
        check_choice(format, "format", FORMATS, none_ok=False)
        if format == "ons":
            self.to_ons_frame(**ons_options).to_csv(path, index=False)
            return
        if ons_options:
            raise ParameterError(
                f"options {sorted(ons_options)} apply to format='ons' only"
            )
        if self._key_kind == "integer":
            self._check_ons_as_uniform()
        sep = "," if format == "r" else ";"
        self._r_style_frame(format).to_csv(
            path, sep=sep, index=False, float_format="%.8f"
        )

    def _check_ons_as_uniform(self) -> None:
        """An ONS table can be written R-style only if nothing is lost."""
        K = self._modulus
        if BOUND_SCALE % K:
            raise ParameterError(
                f"this ONS table has keys mod {K}; its intervals k/{K} have "
                f"more than {BOUND_DIGITS} decimals, so it can only be "
                "written with format='ons'"
            )
        tail = self._ons[-self._cycle :]
        if not np.all(tail == tail[-1]):
            raise ParameterError(
                "this ONS table cycles through its last rows for large "
                "counts, which an R-style table (last row for all larger "
                "counts) cannot express; write it with format='ons'"
            )

    def _r_style_frame(self, format: str) -> pd.DataFrame:
        """The columns R ``pt_export`` writes for this table and format."""
        frame = self.table
        if self._kind == "magnitudes":
            frame["j"] = _decimal_text(frame["j"])
            frame["v"] = _decimal_text(frame["v"])
        if format == "r":
            return frame[TABLE_COLUMNS]
        if self._kind == "magnitudes":
            return frame[TAU_ARGUS_MAGNITUDES]
        return frame[TAU_ARGUS_COLUMNS]
