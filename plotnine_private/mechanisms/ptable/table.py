"""The p-table object: immutable content, fingerprint and exact lookups.

A :class:`PTable` is data: rows ``i`` of half-open cumulative-probability
intervals ``[p_int_lb, p_int_ub)`` over cell keys, each interval mapping to
a target ``j`` (deviation ``v = j - i``). Bounds are held as integers on the
``1e-8`` grid (R ``ptable`` rounds them to 8 decimals), so every lookup is
an exact integer comparison.

Two *kinds* of table exist:

* ``"counts"`` (R ``create_cnt_ptable``, Tau-Argus, ONS): rows ``0..max_i``,
  whole-number targets; :meth:`PTable.noise` gives the deviation of a
  count (the last row serves every larger count).
* ``"magnitudes"`` (R ``create_num_ptable``): rows ``{0} | icat``, targets
  on a ``1/step`` grid held to 4 decimals; :meth:`PTable.magnitude_noise`
  gives cellKey's noise factor for a magnitude, interpolating between
  rows (spec ``cell-key-method.md`` section 2.2).

A table is read from a frame here (:meth:`PTable.from_frame`, validated
by :mod:`.frames`) and written by :meth:`PTable.to_csv` (inherited from
:mod:`.table_io`); the readers of files live in :mod:`.io`, construction
from parameters in :mod:`.build`.
This module imports numpy and pandas only.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .frames import ONS_COLUMNS, ons_values, uniform_arrays
from .table_io import PTableIO
from .table_lookups import PTableLookups
from .values import (
    BOUND_DIGITS,
    BOUND_SCALE,
    FORMATS,
    J_DIGITS,
    J_SCALES,
    KINDS,
    ONS_CYCLE,
    TABLE_COLUMNS,
    _number,
    _ons_runs,
    _readonly,
    check_choice,
    diagnostics_from,
    ons_pcv,
)

__all__ = [
    "BOUND_DIGITS",
    "BOUND_SCALE",
    "J_DIGITS",
    "ONS_CYCLE",
    "PTable",
    "TABLE_COLUMNS",
    "ons_pcv",
]

# ---------------------------------------------------------------------------
# The p-table object
# ---------------------------------------------------------------------------


class PTable(PTableLookups, PTableIO):
    """An immutable p-table for the Cell Key Method.

    Create one with :func:`create_cnt_ptable`, :func:`create_num_ptable`
    or :func:`read_ptable` (or :meth:`PTable.from_frame`); do not call
    the constructor.

    Attributes
    ----------
    table : pandas.DataFrame
        ``i, j, p, v, p_int_lb, p_int_ub, type`` (a copy). For ONS tables
        each entry is a run of consecutive integer keys with the same
        deviation, with ``p_int_lb = k0 / K`` and ``p_int_ub = (k1+1) / K``.
    kind : {"counts", "magnitudes"}
        Count table (rows ``0..max_i``, whole deviations) or magnitude
        table (rows ``{0} | icat``, deviations on a ``1/step`` grid).
    type : {"all", "even", "odd"}
        The ``type`` column (magnitude tables may be built per parity of
        the number of contributors).
    icat : tuple of int
        The positive rows ``i`` (``1..max_i`` for count tables).
    params : dict
        Parameters it was built with (or where it was read from).
    diagnostics : pandas.DataFrame
        ``i, p_mean, p_var, p_sum, p_stay, iter`` per row (``iter`` is
        missing for tables that were read, not built).
    max_i : int
        Last row; it applies to every larger count (ONS: largest pcv).
    max_noise : int or float
        Largest absolute deviation ``D``.
    key_kind : {"uniform", "integer"}
        Uniform keys in [0, 1) (R style) or integer keys (ONS style).
    key_modulus : int
        Cell key = key sum mod ``key_modulus``: ``10**8`` for uniform keys
        with 8 decimals, ``max(ckey) + 1`` for ONS tables.
    fingerprint : str
        SHA-256 of the canonical table content.

    Examples
    --------
    >>> import numpy as np
    >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
    >>> pt = create_cnt_ptable(D=2, V=0.9)
    >>> pt.noise(np.array([0, 1, 1, 7]),
    ...          np.array([5, 36_250_000, 72_500_000, 2_000_000])).tolist()
    [0, 0, 1, -2]
    """

    __slots__ = (
        "_i",
        "_j",
        "_lb",
        "_ub",
        "_type",
        "_kind",
        "_j_scale",
        "_params",
        "_diagnostics",
        "_max_noise",
        "_key_kind",
        "_modulus",
        "_ons",
        "_cycle",
        "_frame",
        "_fingerprint",
    )
    # the slots' types (set once by _new, read-only afterwards)
    _i: np.ndarray
    _j: np.ndarray
    _lb: np.ndarray
    _ub: np.ndarray
    _type: str
    _kind: str
    _j_scale: int
    _params: dict
    _diagnostics: Any
    _max_noise: Any
    _key_kind: str
    _modulus: int
    # integer-key (ONS) tables only; None for uniform keys
    _ons: Any
    _cycle: Any
    # caches filled on first use
    _frame: Any
    _fingerprint: Any

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "PTable has no public constructor; use create_cnt_ptable(), "
            "create_num_ptable(), read_ptable() or PTable.from_frame()"
        )

    # -- construction ------------------------------------------------------

    @classmethod
    def _new(cls, **values) -> PTable:
        self = object.__new__(cls)
        for name, value in values.items():
            object.__setattr__(self, "_" + name, value)
        object.__setattr__(self, "_frame", None)
        object.__setattr__(self, "_fingerprint", None)
        return self

    @classmethod
    def _from_arrays(
        cls,
        *,
        i,
        j,
        lb,
        ub,
        type_,
        params,
        diagnostics,
        max_noise,
        kind="counts",
    ) -> PTable:
        """A uniform-key table from validated, sorted integer arrays.

        ``j`` is in units of ``1 / J_SCALES[kind]``; ``lb`` and ``ub`` in
        units of ``1 / BOUND_SCALE``.
        """
        return cls._new(
            i=_readonly(i),
            j=_readonly(j),
            lb=_readonly(lb),
            ub=_readonly(ub),
            type=type_,
            kind=kind,
            j_scale=J_SCALES[kind],
            params=dict(params),
            diagnostics=diagnostics,
            max_noise=_number(max_noise),
            key_kind="uniform",
            modulus=BOUND_SCALE,
            ons=None,
            cycle=None,
        )

    @classmethod
    def _from_ons(cls, values: np.ndarray, params: dict) -> PTable:
        """An integer-key table from a dense ``(max_pcv+1, K)`` array."""
        max_pcv, K = values.shape[0] - 1, values.shape[1]
        i, j, lb, ub = _ons_runs(values)
        return cls._new(
            i=_readonly(i),
            j=_readonly(j),
            lb=_readonly(lb),
            ub=_readonly(ub),
            type="all",
            kind="counts",
            j_scale=1,
            params=dict(params),
            diagnostics=diagnostics_from(i, j - i, (ub - lb) / K),
            max_noise=int(np.abs(values).max()) if values.size else 0,
            key_kind="integer",
            modulus=K,
            ons=_readonly(values),
            cycle=min(ONS_CYCLE, max_pcv),
        )

    def __setattr__(self, name, value):
        raise AttributeError("PTable is immutable")

    def __delattr__(self, name):
        raise AttributeError("PTable is immutable")

    def __copy__(self) -> PTable:
        return self

    def __deepcopy__(self, memo) -> PTable:
        return self

    def __reduce__(self):
        # pickle through the canonical frame (rebuilds and re-validates)
        if self._key_kind == "integer":
            state = ("ons", self._ons_frame(), self._params, self._kind)
        else:
            state = ("r", self.table, self._params, self._kind)
        return (_unpickle_ptable, state)

    def __eq__(self, other) -> bool:
        if not isinstance(other, PTable):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    # -- public properties -------------------------------------------------

    @property
    def _v(self) -> np.ndarray:
        """Deviations in units of ``1 / _j_scale``."""
        return self._j - self._i * self._j_scale

    @property
    def table(self) -> pd.DataFrame:
        """The p-table ``i, j, p, v, p_int_lb, p_int_ub, type`` (a copy)."""
        if self._frame is None:
            den = BOUND_SCALE if self._key_kind == "uniform" else self._modulus
            scale = self._j_scale
            j = self._j if scale == 1 else self._j / scale
            v = self._v if scale == 1 else self._v / scale
            frame = pd.DataFrame(
                {
                    "i": self._i,
                    "j": j,
                    "p": (self._ub - self._lb) / den,
                    "v": v,
                    "p_int_lb": self._lb / den,
                    "p_int_ub": self._ub / den,
                    "type": self._type,
                }
            )
            object.__setattr__(self, "_frame", frame)
        return self._frame.copy()

    @property
    def kind(self) -> str:
        """``"counts"`` or ``"magnitudes"`` (R ``table``: cnts / nums)."""
        return self._kind

    @property
    def type(self) -> str:
        """The ``type`` column: ``"all"``, ``"even"`` or ``"odd"``."""
        return self._type

    @property
    def icat(self) -> tuple[int, ...]:
        """The positive rows ``i`` (R ``icat``; ``1..max_i`` for counts)."""
        rows = np.unique(self._i)
        return tuple(int(r) for r in rows[rows > 0])

    @property
    def params(self) -> dict:
        """Parameters of the table (a copy)."""
        return dict(self._params)

    @property
    def diagnostics(self) -> pd.DataFrame:
        """Per-row ``i, p_mean, p_var, p_sum, p_stay, iter`` (a copy)."""
        return self._diagnostics.copy()

    @property
    def max_i(self) -> int:
        """The last row; every larger count uses it (ONS: cycles)."""
        if self._key_kind == "integer":
            return self._ons.shape[0] - 1
        return int(self._i[-1])

    @property
    def max_noise(self) -> int | float:
        """The largest absolute deviation ``D``."""
        return self._max_noise

    @property
    def key_kind(self) -> str:
        """``"uniform"`` (keys in [0, 1)) or ``"integer"`` (ONS keys)."""
        return self._key_kind

    @property
    def key_modulus(self) -> int:
        """Cell key = key sum mod this (10**8, or ONS ``max(ckey)+1``)."""
        return self._modulus

    @property
    def fingerprint(self) -> str:
        """SHA-256 hex digest of the canonical table content.

        Two tables with the same rows, targets and bounds share it,
        whatever their origin (built, read from R, Tau-Argus or ONS text).
        """
        if self._fingerprint is None:
            h = hashlib.sha256()
            if self._key_kind == "integer":
                h.update(f"ons;K={self._modulus};".encode())
                h.update(np.ascontiguousarray(self._ons, "<i8").tobytes())
            else:
                h.update(f"uniform;scale={BOUND_SCALE};".encode())
                if self._kind == "magnitudes":
                    # count tables keep their historical digest
                    h.update(f"nums;j={self._j_scale};{self._type};".encode())
                for a in (self._i, self._j, self._lb, self._ub):
                    h.update(np.ascontiguousarray(a, "<i8").tobytes())
            object.__setattr__(self, "_fingerprint", h.hexdigest())
        return self._fingerprint

    def __repr__(self) -> str:
        return "\n".join([*self._repr_head(), *self._repr_grid()])

    def _repr_head(self) -> list[str]:
        p = self._params
        names = {
            "create_cnt_ptable": ("D", "V", "js", "pstay", "optim", "mono"),
            "create_num_ptable": ("D", "V", "step", "icat", "optim", "mono",
                                  "type"),
        }.get(str(p.get("source")))  # fmt: skip
        if names:
            head = ", ".join(f"{k}={p[k]!r}" for k in names)
        else:
            head = f"source={p.get('source')!r}, format={p.get('format')!r}"
        if self._key_kind == "uniform":
            keys = f"uniform keys in [0, 1), {BOUND_DIGITS} decimals"
        else:
            keys = f"integer keys mod {self._modulus}"
        return [
            f"PTable({head})",
            f"  {self._kind} table, rows i = 0..{self.max_i}, "
            f"{len(self._i)} entries, max noise {self._max_noise}, {keys}",
            f"  fingerprint {self.fingerprint[:16]}",
        ]

    def _repr_grid(self) -> list[str]:
        tab = self.table
        shown = sorted(set(tab["i"]))
        if len(shown) > 12:
            shown = shown[:10] + shown[-1:]
        tab = tab[tab["i"].isin(shown)]
        grid = tab.pivot_table(
            index="i", columns="v", values="p", aggfunc="sum"
        )
        text = grid.to_string(float_format=lambda x: f"{x:.4f}", na_rep=".")
        lines = ["  p by original count i (rows) and deviation v:"]
        lines.extend("    " + line for line in text.splitlines())
        return lines

    # -- reading a frame (lookups in .table_lookups; to_csv and
    # to_ons_frame in .table_io) --------------------------------------------

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        format: Literal["r", "tau_argus", "ons"] | None = None,
        kind: Literal["counts", "magnitudes"] | None = None,
    ) -> PTable:
        """Validate a p-table given as a DataFrame.

        Parameters
        ----------
        df : pandas.DataFrame
            R style needs ``i``, ``j`` or ``v``, and ``p_int_ub`` or ``p``
            (``p_int_lb`` is derived when absent, as for Tau-Argus files);
            ONS style needs ``pcv, ckey, pvalue``.
        format : {"r", "tau_argus", "ons"}, optional
            Detected from the columns when None.
        kind : {"counts", "magnitudes"}, optional
            Detected when None: a table with fractional targets, rows with
            gaps or an even/odd ``type`` is a magnitude table.

        Returns
        -------
        PTable

        Raises
        ------
        ParameterError
            Naming the bad column or row.

        Examples
        --------
        >>> df = pd.DataFrame({"i": [0, 1, 1], "j": [0, 0, 2],
        ...                    "p": [1, 0.5, 0.5]})
        >>> PTable.from_frame(df).table["p_int_ub"].tolist()
        [1.0, 0.5, 1.0]
        """
        if not isinstance(df, pd.DataFrame):
            raise ParameterError(
                f"expected a pandas DataFrame, got {type(df).__name__}"
            )
        check_choice(format, "format", FORMATS, none_ok=True)
        check_choice(kind, "kind", KINDS, none_ok=True)
        df = df.rename(columns=lambda c: str(c).strip().strip('"').lower())
        if format is None:
            format = "ons" if set(ONS_COLUMNS) <= set(df.columns) else "r"
        params = {"source": "frame", "format": format}
        if format == "ons":
            if kind == "magnitudes":
                raise ParameterError(
                    "ONS tables (pcv, ckey, pvalue) hold count deviations; "
                    "kind='magnitudes' needs an R-style or Tau-Argus table"
                )
            return cls._from_ons(ons_values(df), params)
        return cls._from_arrays(params=params, **uniform_arrays(df, kind))


def _unpickle_ptable(fmt: Any, frame: pd.DataFrame, params: dict, kind: Any):
    """Rebuild a pickled :class:`PTable` from its canonical frame."""
    pt = PTable.from_frame(frame, format=fmt, kind=kind)
    object.__setattr__(pt, "_params", dict(params))
    return pt
