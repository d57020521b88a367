"""The p-table object: immutable content, fingerprint and exact lookup.

A :class:`PTable` is data: rows ``i`` of half-open cumulative-probability
intervals ``[p_int_lb, p_int_ub)`` over cell keys, each interval mapping to
a target ``j`` (deviation ``v = j - i``). Bounds are held as integers on the
``1e-8`` grid (R ``ptable`` rounds them to 8 decimals), so every lookup is
an exact integer comparison. :meth:`PTable.noise` gives the deviation of a
count (the last row serves every larger count).

Readers and writers live in :mod:`.io`, construction in :mod:`.build`.
This module imports numpy and pandas only.
"""

from __future__ import annotations

import hashlib
import io
import math
import os
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import ParameterError

__all__ = [
    "BOUND_DIGITS",
    "BOUND_SCALE",
    "ONS_CYCLE",
    "PTable",
    "TABLE_COLUMNS",
    "ons_pcv",
]

#: Interval bounds are rounded to this many decimals (spec 1.6).
BOUND_DIGITS = 8
#: Integer scale of the interval bounds: bounds are ``k / BOUND_SCALE``.
BOUND_SCALE = 10**BOUND_DIGITS
#: Rows 501..750 of an ONS table are reused with this period (spec 4.3).
ONS_CYCLE = 250
#: Columns of an R-style table, in R's order (spec 1.6).
TABLE_COLUMNS = ["i", "j", "p", "v", "p_int_lb", "p_int_ub", "type"]
# ---------------------------------------------------------------------------
# Small pure helpers
# ---------------------------------------------------------------------------


def ons_pcv(
    counts: Any, max_pcv: int = 750, cycle: int = ONS_CYCLE
) -> np.ndarray:
    """Map counts to ONS p-table rows (``pcv``), spec section 4.3.

    ``pcv = count`` for ``count <= max_pcv``; larger counts cycle through
    the last ``cycle`` rows ``max_pcv - cycle + 1 .. max_pcv``. With the
    ONS defaults (750, 250) this is ``((count - 1) mod 250) + 501``. For a
    table with fewer than ``cycle`` rows the whole table is the cycle.

    Parameters
    ----------
    counts : array of int
        Counts (>= 0).
    max_pcv : int
        Largest row of the ONS table.
    cycle : int
        Period of the reused rows.

    Returns
    -------
    numpy.ndarray of int64
        The row ``pcv`` of each count.

    Examples
    --------
    >>> ons_pcv([0, 1, 750, 751, 1000, 1001]).tolist()
    [0, 1, 750, 501, 750, 501]
    """
    counts = np.asarray(counts, dtype=np.int64)
    cycle = min(int(cycle), int(max_pcv))
    start = max_pcv - cycle + 1
    big = counts > max_pcv
    out = counts.copy()
    out[big] = (counts[big] - start) % cycle + start
    return out


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _as_int_array(x: Any, name: str) -> np.ndarray:
    """``x`` as int64, refusing fractions, NaN and non-numeric input."""
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        return a.astype(np.int64, copy=False)
    if a.dtype == object:
        try:
            a = a.astype(float)
        except (TypeError, ValueError):
            raise ParameterError(
                f"{name} must be whole numbers, got dtype object"
            ) from None
    elif a.dtype.kind != "f":
        raise ParameterError(
            f"{name} must be an integer array, got dtype {a.dtype}"
        )
    if not np.all(np.isfinite(a)) or np.any(a != np.round(a)):
        raise ParameterError(
            f"{name} must be finite whole numbers; found non-integer or "
            f"NaN values (sum integer record keys exactly, see "
            f"record_key_integers)"
        )
    return a.astype(np.int64)


def _broadcast(a: np.ndarray, b: np.ndarray, names: str) -> tuple:
    try:
        return np.broadcast_arrays(a, b)
    except ValueError:
        raise ParameterError(
            f"{names} must have the same shape (one value per cell); got "
            f"{a.shape} and {b.shape}"
        ) from None


def diagnostics_from(i, v, p) -> pd.DataFrame:
    """Per-row ``p_mean, p_var, p_sum, p_stay`` (R ``pt_check``), 5 dp."""
    frame = pd.DataFrame({"i": i, "v": v, "p": p})
    frame["pv"] = frame["p"] * frame["v"]
    frame["pv2"] = frame["pv"] * frame["v"]
    frame["stay"] = np.where(frame["v"] == 0, frame["p"], 0.0)
    g = frame.groupby("i", sort=True)
    out = pd.DataFrame(
        {
            "p_mean": g["pv"].sum(),
            "p_var": g["pv2"].sum(),
            "p_sum": g["p"].sum(),
            "p_stay": g["stay"].sum(),
        }
    ).round(5)
    out["iter"] = pd.array([pd.NA] * len(out), dtype="Int64")
    return out.reset_index()


def _ons_runs(values: np.ndarray):
    """Runs of equal deviations along the keys of each ONS row."""
    vals = values[1:]
    M, K = vals.shape
    start = np.ones((M, K), dtype=bool)
    start[:, 1:] = vals[:, 1:] != vals[:, :-1]
    r, c = np.nonzero(start)
    nxt = np.r_[c[1:], K]
    nxt[np.r_[r[1:] != r[:-1], True]] = K
    i = np.r_[0, r + 1].astype(np.int64)
    lb = np.r_[0, c].astype(np.int64)
    ub = np.r_[K, nxt].astype(np.int64)
    j = i + np.r_[0, vals[r, c]]
    return i, j, lb, ub


# ---------------------------------------------------------------------------
# The p-table object
# ---------------------------------------------------------------------------


class PTable:
    """An immutable count p-table for the Cell Key Method.

    Create one with :func:`create_cnt_ptable` or :func:`read_ptable`
    (or :meth:`PTable.from_frame`); do not call the constructor.

    Attributes
    ----------
    table : pandas.DataFrame
        ``i, j, p, v, p_int_lb, p_int_ub, type`` (a copy). For ONS tables
        each entry is a run of consecutive integer keys with the same
        deviation, with ``p_int_lb = k0 / K`` and ``p_int_ub = (k1+1) / K``.
    params : dict
        Parameters it was built with (or where it was read from).
    diagnostics : pandas.DataFrame
        ``i, p_mean, p_var, p_sum, p_stay, iter`` per row (``iter`` is
        missing for tables that were read, not built).
    max_i : int
        Last row; it applies to every larger count (ONS: largest pcv).
    max_noise : int
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

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "PTable has no public constructor; use create_cnt_ptable(), "
            "read_ptable() or PTable.from_frame()"
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
    ) -> PTable:
        """A uniform-key table from validated, sorted integer arrays.

        ``lb`` and ``ub`` are in units of ``1 / BOUND_SCALE``.
        """
        return cls._new(
            i=_readonly(i),
            j=_readonly(j),
            lb=_readonly(lb),
            ub=_readonly(ub),
            type=type_,
            params=dict(params),
            diagnostics=diagnostics,
            max_noise=int(max_noise),
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
        # pickle through the canonical frame (rebuilds and re-validates);
        # .io imports this module, so it is imported here, not at the top
        from .io import unpickle_ptable

        if self._key_kind == "integer":
            state = ("ons", self._ons_frame(), self._params)
        else:
            state = ("r", self.table, self._params)
        return (unpickle_ptable, state)

    def __eq__(self, other) -> bool:
        if not isinstance(other, PTable):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    # -- public properties -------------------------------------------------

    @property
    def _v(self) -> np.ndarray:
        """Deviations ``v = j - i`` of the entries."""
        return self._j - self._i

    @property
    def table(self) -> pd.DataFrame:
        """The p-table ``i, j, p, v, p_int_lb, p_int_ub, type`` (a copy)."""
        if self._frame is None:
            den = BOUND_SCALE if self._key_kind == "uniform" else self._modulus
            frame = pd.DataFrame(
                {
                    "i": self._i,
                    "j": self._j,
                    "p": (self._ub - self._lb) / den,
                    "v": self._v,
                    "p_int_lb": self._lb / den,
                    "p_int_ub": self._ub / den,
                    "type": self._type,
                }
            )
            object.__setattr__(self, "_frame", frame)
        return self._frame.copy()

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
    def max_noise(self) -> int:
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
        }.get(p.get("source"))  # fmt: skip
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
            f"  rows i = 0..{self.max_i}, "
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

    # -- lookup ------------------------------------------------------------

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
        """Deviation ``v`` for each cell (vectorised, exact).

        Parameters
        ----------
        counts : array of int
            Unweighted counts (>= 0).
        key_sums : array of int
            Exact integer sums of the cells' integer-scaled record keys
            (:func:`~plotnine_private.mechanisms.ckm.record_key_integers`).
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
            For negative or fractional counts, fractional key sums or
            unequal shapes.

        Examples
        --------
        >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
        >>> pt = create_cnt_ptable(D=2, V=0.9)
        >>> pt.noise([1, 1000], [36_250_000, 96_000_000]).tolist()
        [0, 2]
        """
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

    # -- conversion and I/O (implemented in .io) -----------------------------

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
        """The table as an ONS ``pcv, ckey, pvalue`` lookup (spec 4.4).

        For a uniform table, ``pvalue`` at ``(pcv, k)`` is the deviation at
        key ``(k + 0.5) / modulus`` in row ``min(pcv, max_i)``.

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
            For a too small ``max_pcv``.

        Examples
        --------
        >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
        >>> ons = create_cnt_ptable(D=2, V=0.9).to_ons_frame()
        >>> ons.shape
        (192000, 3)
        """
        if self._key_kind == "integer":
            return self._ons_frame()
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
        """Write the table (see :func:`~.io.write_ptable`).

        Parameters
        ----------
        path : str, path or text buffer
        format : {"r", "tau_argus", "ons"}
            ``"r"``: comma-separated ``i,j,p,v,p_int_lb,p_int_ub,type``;
            ``"tau_argus"``: ``;``-separated ``i;j;p;v;p_int_ub``;
            ``"ons"``: ``pcv,ckey,pvalue`` (options ``modulus`` and
            ``max_pcv`` of :meth:`to_ons_frame`).

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
        from .io import write_ptable  # .io imports this module

        write_ptable(self, path, format=format, **ons_options)

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        format: Literal["r", "tau_argus", "ons"] | None = None,
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
        from .io import frame_to_ptable  # .io imports this module

        return frame_to_ptable(df, format=format)
