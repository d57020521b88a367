"""Perturbation tables (p-tables) for the Cell Key Method.

A count p-table says, for each original count ``i``, which deviation ``v``
a cell receives for each value of its cell key. Two kinds exist:

* **uniform** tables (R ``ptable`` / ``cellKey`` / Tau-Argus): per row a
  list of half-open cumulative-probability intervals ``[p_int_lb,
  p_int_ub)`` over cell keys in ``[0, 1)``. Built here by
  :func:`create_cnt_ptable`, exactly like R ``ptable`` 1.0.0
  ``create_cnt_ptable`` (spec ``cell-key-method.md`` section 1).
* **integer** tables (ONS ``cell_key_perturbation``): an enumerated
  ``pcv, ckey -> pvalue`` lookup for integer cell keys ``0..K-1``
  (spec section 4).

Both are held by the immutable :class:`PTable`, whose :meth:`PTable.noise`
looks up the deviation of many cells at once from their counts and exact
integer key sums (see :mod:`plotnine_private.mechanisms.ckm`).

CKM is not differential privacy: the noise is a deterministic function of
the contributing records' keys and the p-table, so the same cell gets the
same noise in every output, zero cells stay zero, and sums of perturbed
cells are not perturbed sums.
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
import os
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from .errors import ParameterError

__all__ = [
    "PTable",
    "create_cnt_ptable",
    "ons_pcv",
    "read_ptable",
]

#: Lower bound of every probability in the optimisation (spec 1.3).
EPSILON = 1e-8
#: Interval bounds are rounded to this many decimals (spec 1.6).
BOUND_DIGITS = 8
#: Integer scale of the interval bounds: bounds are ``k / BOUND_SCALE``.
BOUND_SCALE = 10**BOUND_DIGITS
#: Passes of the pstay relaxation loop (spec 1.5).
MAX_PASSES = 20
#: Relaxation of the pstay bound per pass (spec 1.5).
PSTAY_STEP = 0.05
#: Rows 501..750 of an ONS table are reused with this period (spec 4.3).
ONS_CYCLE = 250

_R_COLUMNS = ["i", "j", "p", "v", "p_int_lb", "p_int_ub", "type"]
_ONS_COLUMNS = ["pcv", "ckey", "pvalue"]
_FORMATS = ("r", "tau_argus", "ons")


# ---------------------------------------------------------------------------
# Parameter validation (spec 1.1 and the feasibility rule of 1.5)
# ---------------------------------------------------------------------------


def _whole(value: Any, name: str, minimum: int, hint: str) -> int:
    """Return ``value`` as an int, or raise naming ``name``."""
    ok = (
        not isinstance(value, (bool, np.bool_))
        and isinstance(value, (int, float, np.integer, np.floating))
        and math.isfinite(value)
        and float(value).is_integer()
        and value >= minimum
    )
    if not ok:
        raise ParameterError(
            f"{name} must be a whole number >= {minimum}, got {value!r}; "
            f"{hint}"
        )
    return int(value)


def _per_row(value: Any, name: str, ncat: int) -> tuple[Any, ...]:
    """Expand a scalar or a length-``ncat`` vector to one value per row."""
    if isinstance(value, (str, bytes)) or not np.iterable(value):
        return (value,) * ncat
    values = tuple(np.asarray(value).tolist())
    if len(values) == 1:
        return values * ncat
    if len(values) != ncat:
        raise ParameterError(
            f"{name} has {len(values)} values but the table has ncat="
            f"{ncat} positive rows (i = 1..{ncat}); give one value or "
            f"{ncat} values (ncat = D if js == 0, else D + js + 1)"
        )
    return values


def _check_params(D, V, js, pstay, optim, mono) -> tuple:
    """Validate and normalise the parameters into a hashable key."""
    D = _whole(D, "D", 1, "D is the maximum absolute noise, e.g. D=5")
    js = _whole(js, "js", 0, "js is the blocking threshold, e.g. js=0")
    if isinstance(V, (bool, np.bool_)) or not isinstance(
        V, (int, float, np.integer, np.floating)
    ):
        raise ParameterError(
            f"V must be a positive number (the noise variance), got {V!r}"
        )
    V = float(V)
    if not (math.isfinite(V) and V > 0):
        raise ParameterError(
            f"V must be a positive finite number (the noise variance), "
            f"got {V!r}; e.g. V=2.01"
        )
    if js > 0 and js >= D:
        # Row 1 must reach js+1 (needs D >= js), and row js+1 needs a
        # downward target: 0 is reachable only if D >= js+1, and js+1-D..js
        # are blocked. Otherwise the solver fails (spec 1.5 states only
        # D >= js; D == js is infeasible at row js+1 as well).
        raise ParameterError(
            f"D={D} must be greater than js={js}: a count of {js + 1} can "
            f"only move down to 0, which needs D >= {js + 1}; use "
            f"D >= {js + 1} or a smaller js"
        )
    if js > 0:
        # A blocked row i <= js can only move to 0 or to >= js+1, so its
        # variance is at least i*(js+1-i) (spec 1.5, feasibility rule).
        need = max(i * (js + 1 - i) for i in range(1, js + 1))
        if need >= V:
            raise ParameterError(
                f"V={V:g} is infeasible with js={js}: a blocked count i in "
                f"1..{js} must move to 0 or above {js}, so its variance is "
                f"at least i*(js+1-i), which is {need} at its largest; use "
                f"V > {need} or a smaller js"
            )
    ncat = D if js == 0 else D + js + 1

    if pstay is None:
        pstay_t = (0.0,) * ncat
    else:
        pstay_t = _per_row(pstay, "pstay", ncat)
        clean = []
        for p in pstay_t:
            if p is None or (isinstance(p, float) and math.isnan(p)):
                clean.append(0.0)  # NA: no bound, as in R
                continue
            if isinstance(p, (bool, str)) or not (0 < float(p) < 1):
                raise ParameterError(
                    f"pstay must lie strictly between 0 and 1 (a lower "
                    f"bound on the probability that a count stays "
                    f"unchanged), got {p!r}; use e.g. pstay=0.5 or None"
                )
            clean.append(float(p))
        pstay_t = tuple(clean)

    optim_t = _per_row(optim, "optim", ncat)
    for o in optim_t:
        if isinstance(o, (bool, str)) or o not in (1, 2, 3, 4):
            raise ParameterError(
                f"optim must be 1, 2, 3 or 4 (4 makes the variance an "
                f"equality), got {o!r}"
            )
    optim_t = tuple(int(o) for o in optim_t)

    mono_t = _per_row(mono, "mono", ncat)
    for m in mono_t:
        if not isinstance(m, (bool, np.bool_)):
            raise ParameterError(
                f"mono must be True or False (or one per row), got {m!r}"
            )
    mono_t = tuple(bool(m) for m in mono_t)
    return D, V, js, pstay_t, optim_t, mono_t


# ---------------------------------------------------------------------------
# The per-row maximum-entropy problem (spec 1.3, 1.4)
# ---------------------------------------------------------------------------


def _solve_row(
    v: np.ndarray,
    V: float,
    lower: np.ndarray,
    zero: int,
    mono: bool,
    optim: int,
) -> np.ndarray:
    """Maximise the entropy of one row with scipy SLSQP (spec 1.4)."""
    n = len(v)
    v = v.astype(float)
    v2 = v * v

    def objective(p):
        q = np.maximum(p, 1e-300)
        return float(np.sum(q * np.log(q)))

    def gradient(p):
        return np.log(np.maximum(p, 1e-300)) + 1.0

    eq_a = np.vstack([np.ones(n), v])
    eq_b = np.array([1.0, 0.0])
    constraints = [
        {
            "type": "eq",
            "fun": lambda p: eq_a @ p - eq_b,
            "jac": lambda p: eq_a,
        }
    ]
    var_kind = "eq" if optim == 4 else "ineq"
    constraints.append(
        {
            "type": var_kind,
            "fun": lambda p: np.array([V - v2 @ p]),
            "jac": lambda p: -v2[None, :],
        }
    )
    if mono and zero > 0:
        # p_1 <= p_2 <= ... <= p_z, left side only (spec 1.3)
        mono_a = np.zeros((zero, n))
        for k in range(zero):
            mono_a[k, k] = -1.0
            mono_a[k, k + 1] = 1.0
        constraints.append(
            {
                "type": "ineq",
                "fun": lambda p: mono_a @ p,
                "jac": lambda p: mono_a,
            }
        )
    res = minimize(
        objective,
        np.full(n, 1.0 / n),
        jac=gradient,
        method="SLSQP",
        bounds=[(lo, 1.0) for lo in lower],
        constraints=constraints,
        options={"ftol": 1e-15, "maxiter": 10000},
    )
    return np.asarray(res.x, dtype=float)


def _build_row(i, D, V, js, pstay, optim, mono):
    """Support, optimised probabilities and diagnostics of row ``i``."""
    j = np.arange(max(i - D, 0), i + D + 1)
    j = j[(j == 0) | (j > js)]
    v = j - i
    zero_at = np.flatnonzero(v == 0)
    zero = int(zero_at[0]) if len(zero_at) else -1
    lower = np.full(len(v), EPSILON)
    if zero >= 0:
        lower[zero] = max(pstay, EPSILON)
    p = None
    passes = 0
    for passes in range(1, MAX_PASSES + 1):
        changed = p is None
        if passes > 1 and zero >= 0:
            new = max(lower[zero] - PSTAY_STEP, EPSILON)
            changed = new != lower[zero]
            lower[zero] = new
        if changed:
            # an unchanged problem has the same (unique) optimum: R solves
            # it again, we reuse it (spec 1.5)
            p = _solve_row(v, V, lower, zero, mono, optim)
            total = round(float(p.sum()), 10)
            viol = max(
                abs(float(v @ p)),
                float(v * v @ p) - V if optim != 4 else 0.0,
                abs(float(v * v @ p) - V) if optim == 4 else 0.0,
                float(np.max(lower - p)),
            )
            if total != 1 or viol > 1e-6:
                raise ParameterError(
                    f"The ptable can't be calculated without a violation "
                    f"of the constraints (row i={i}, D={D}, V={V:g}, "
                    f"js={js}); try another specification (changing the "
                    f"variance V is sufficient in most cases)"
                )
        if round(float(v * v @ p), 3) == V or i <= js:
            break
    diag = (
        float(v @ p),
        float(v * v @ p),
        float(p.sum()),
        float(p[zero]) if zero >= 0 else 0.0,
        passes,
    )
    return j, v, p, diag


@functools.lru_cache(maxsize=64)
def _create_cached(key: tuple) -> PTable:
    D, V, js, pstay, optim, mono = key
    ncat = D if js == 0 else D + js + 1
    i_all, j_all, lb_all, ub_all = [0], [0], [0], [BOUND_SCALE]
    diags = [(0, 0.0, 0.0, 1.0, 1.0, 0)]
    for i in range(1, ncat + 1):
        j, v, p, diag = _build_row(
            i, D, V, js, pstay[i - 1], optim[i - 1], mono[i - 1]
        )
        ub = np.cumsum(p)
        lb = ub - p
        # spec 1.6: round both bounds to 8 decimals, p := ub - lb
        ub_int = np.rint(np.round(ub, BOUND_DIGITS) * BOUND_SCALE)
        lb_int = np.rint(np.round(lb, BOUND_DIGITS) * BOUND_SCALE)
        i_all.extend([i] * len(j))
        j_all.extend(j.tolist())
        lb_all.extend(lb_int.astype(np.int64).tolist())
        ub_all.extend(ub_int.astype(np.int64).tolist())
        diags.append((i, *(round(d, 5) + 0.0 for d in diag[:4]), diag[4]))

    def compact(values):
        return values[0] if len(set(values)) == 1 else list(values)

    pstay_param = None if not any(pstay) else compact(pstay)
    params = {
        "D": D,
        "V": V,
        "js": js,
        "pstay": pstay_param,
        "optim": compact(optim),
        "mono": compact(mono),
        "ncat": ncat,
        "source": "create_cnt_ptable",
    }
    diagnostics = pd.DataFrame(
        diags, columns=["i", "p_mean", "p_var", "p_sum", "p_stay", "iter"]
    )
    return PTable._from_arrays(
        i=np.array(i_all, dtype=np.int64),
        j=np.array(j_all, dtype=np.int64),
        lb=np.array(lb_all, dtype=np.int64),
        ub=np.array(ub_all, dtype=np.int64),
        type_="all",
        params=params,
        diagnostics=diagnostics,
        max_noise=D,
    )


def create_cnt_ptable(
    D: int,
    V: float,
    js: int = 0,
    pstay: float | Sequence[float] | None = None,
    optim: int | Sequence[int] = 1,
    mono: bool | Sequence[bool] = True,
) -> PTable:
    """Build a count p-table exactly like R ``ptable::create_cnt_ptable``.

    Rows ``i = 0..ncat`` (``ncat = D`` if ``js == 0`` else ``D + js + 1``);
    row ``i >= 1`` spreads its probability over targets ``j = max(i-D, 0)
    .. i+D`` without ``1..js``, maximising entropy subject to mean 0,
    variance <= ``V``, probabilities >= 1e-8 and (if ``mono``) probabilities
    non-decreasing from the most negative deviation up to 0. The last row
    applies to every count >= ``ncat``. Results are cached by parameters.

    Parameters
    ----------
    D : int
        Maximum absolute noise, a whole number > 0.
    V : float
        Noise variance (an upper bound; an equality with ``optim=4``).
    js : int
        Blocking threshold: perturbed counts never land in ``1..js``.
        Requires ``D > js`` (for ``js > 0``) and ``V > max_i i*(js+1-i)``
        (js=2: V > 2).
    pstay : float, sequence of float or None
        Lower bound(s) in (0, 1) on the probability of no change, one
        value or one per row ``i = 1..ncat``. It is relaxed by 0.05 per
        pass (up to 20 passes) until the rounded variance equals ``V``.
    optim : int or sequence of int
        1, 2, 3 (variance inequality) or 4 (variance equality), per row.
    mono : bool or sequence of bool
        Left-side monotonicity constraint, per row.

    Returns
    -------
    PTable
        Immutable table; see :attr:`PTable.table` and
        :attr:`PTable.diagnostics`.

    Raises
    ------
    ParameterError
        For invalid or infeasible parameters, before any optimisation.

    Examples
    --------
    >>> pt = create_cnt_ptable(D=2, V=0.9)
    >>> pt.table.query("i == 1")["p"].round(4).tolist()
    [0.3625, 0.3625, 0.1875, 0.0875]
    >>> pt.max_i, pt.max_noise
    (2, 2)
    """
    return _create_cached(_check_params(D, V, js, pstay, optim, mono))


# ---------------------------------------------------------------------------
# ONS helpers (spec 4.3)
# ---------------------------------------------------------------------------


def ons_pcv(
    counts: Any, max_pcv: int = 750, cycle: int = ONS_CYCLE
) -> np.ndarray:
    """Map counts to ONS p-table rows (``pcv``), spec section 4.3.

    ``pcv = count`` for ``count <= max_pcv``; larger counts cycle through
    the last ``cycle`` rows ``max_pcv - cycle + 1 .. max_pcv``. With the
    ONS defaults (750, 250) this is ``((count - 1) mod 250) + 501``. For a
    table with fewer than ``cycle`` rows the whole table is the cycle.

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


# ---------------------------------------------------------------------------
# The p-table object
# ---------------------------------------------------------------------------


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _as_int_array(x: Any, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind in "iu":
        return a.astype(np.int64, copy=False)
    if a.dtype.kind == "b" or a.dtype.kind not in "f":
        if a.dtype == object:
            try:
                a = a.astype(float)
            except (TypeError, ValueError):
                raise ParameterError(
                    f"{name} must be whole numbers, got dtype object"
                ) from None
        else:
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
        "_kind",
        "_modulus",
        "_ons",
        "_cycle",
        "_table",
        "_fingerprint",
    )

    def __init__(self, *args, **kwargs):
        raise TypeError(
            "PTable has no public constructor; use create_cnt_ptable(), "
            "read_ptable() or PTable.from_frame()"
        )

    # -- construction ------------------------------------------------------

    @classmethod
    def _new(cls) -> PTable:
        return object.__new__(cls)

    def _set(self, **values) -> None:
        for name, value in values.items():
            object.__setattr__(self, "_" + name, value)

    @classmethod
    def _from_arrays(
        cls, *, i, j, lb, ub, type_, params, diagnostics, max_noise
    ) -> PTable:
        """A uniform-key table from validated, sorted integer arrays."""
        self = cls._new()
        self._set(
            i=_readonly(i),
            j=_readonly(j),
            lb=_readonly(lb),
            ub=_readonly(ub),
            type=type_,
            params=dict(params),
            diagnostics=diagnostics,
            max_noise=int(max_noise),
            kind="uniform",
            modulus=BOUND_SCALE,
            ons=None,
            cycle=None,
            table=None,
            fingerprint=None,
        )
        return self

    @classmethod
    def _from_ons(cls, values: np.ndarray, params: dict) -> PTable:
        """An integer-key table from a dense ``(max_pcv+1, K)`` array."""
        self = cls._new()
        max_pcv, K = values.shape[0] - 1, values.shape[1]
        i, j, lb, ub = _ons_runs(values)
        p = (ub - lb) / K
        v = j - i
        diag = _diagnostics_from(i, v, p)
        self._set(
            i=_readonly(i),
            j=_readonly(j),
            lb=_readonly(lb),
            ub=_readonly(ub),
            type="all",
            params=dict(params),
            diagnostics=diag,
            max_noise=int(np.abs(values).max()) if values.size else 0,
            kind="integer",
            modulus=K,
            ons=_readonly(values),
            cycle=min(ONS_CYCLE, max_pcv),
            table=None,
            fingerprint=None,
        )
        return self

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
        if self._kind == "integer":
            return (_unpickle, ("ons", self._ons_frame(), self._params))
        return (_unpickle, ("r", self.table, self._params))

    def __eq__(self, other) -> bool:
        if not isinstance(other, PTable):
            return NotImplemented
        return self.fingerprint == other.fingerprint

    def __hash__(self) -> int:
        return hash(self.fingerprint)

    # -- public properties -------------------------------------------------

    @property
    def table(self) -> pd.DataFrame:
        """The p-table ``i, j, p, v, p_int_lb, p_int_ub, type`` (a copy)."""
        if self._table is None:
            den = BOUND_SCALE if self._kind == "uniform" else self._modulus
            frame = pd.DataFrame(
                {
                    "i": self._i,
                    "j": self._j,
                    "p": (self._ub - self._lb) / den,
                    "v": self._j - self._i,
                    "p_int_lb": self._lb / den,
                    "p_int_ub": self._ub / den,
                    "type": self._type,
                }
            )
            object.__setattr__(self, "_table", frame)
        return self._table.copy()

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
        if self._kind == "integer":
            return self._ons.shape[0] - 1
        return int(self._i[-1])

    @property
    def max_noise(self) -> int:
        """The largest absolute deviation ``D``."""
        return self._max_noise

    @property
    def key_kind(self) -> str:
        """``"uniform"`` (keys in [0, 1)) or ``"integer"`` (ONS keys)."""
        return self._kind

    @property
    def key_modulus(self) -> int:
        """Cell key = key sum mod this (10**8, or ONS ``max(ckey)+1``)."""
        return self._modulus

    @property
    def fingerprint(self) -> str:
        """SHA-256 hex digest of the canonical table content."""
        if self._fingerprint is None:
            h = hashlib.sha256()
            if self._kind == "integer":
                h.update(f"ons;K={self._modulus};".encode())
                h.update(np.ascontiguousarray(self._ons, "<i8").tobytes())
            else:
                h.update(f"uniform;scale={BOUND_SCALE};".encode())
                for a in (self._i, self._j, self._lb, self._ub):
                    h.update(np.ascontiguousarray(a, "<i8").tobytes())
            object.__setattr__(self, "_fingerprint", h.hexdigest())
        return self._fingerprint

    def __repr__(self) -> str:
        p = self._params
        if p.get("source") == "create_cnt_ptable":
            head = ", ".join(
                f"{k}={p[k]!r}"
                for k in ("D", "V", "js", "pstay", "optim", "mono")
            )
        else:
            head = f"source={p.get('source')!r}, format={p.get('format')!r}"
        if self._kind == "uniform":
            keys = f"uniform keys in [0, 1), {BOUND_DIGITS} decimals"
        else:
            keys = f"integer keys mod {self._modulus}"
        lines = [
            f"PTable({head})",
            f"  rows i = 0..{self.max_i}, {len(self._i)} entries, "
            f"max noise {self._max_noise}, {keys}",
            f"  fingerprint {self.fingerprint[:16]}",
        ]
        tab = self.table
        shown = sorted(set(tab["i"]))
        if len(shown) > 12:
            shown = shown[:10] + shown[-1:]
        tab = tab[tab["i"].isin(shown)]
        grid = tab.pivot_table(
            index="i", columns="v", values="p", aggfunc="sum"
        )
        text = grid.to_string(float_format=lambda x: f"{x:.4f}", na_rep=".")
        lines.append("  p by original count i (rows) and deviation v:")
        lines.extend("    " + line for line in text.splitlines())
        return "\n".join(lines)

    # -- lookup ------------------------------------------------------------

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

        Examples
        --------
        >>> pt = create_cnt_ptable(D=2, V=0.9)
        >>> pt.noise([1, 1000], [36_250_000, 96_000_000]).tolist()
        [0, 2]
        """
        counts = _as_int_array(counts, "counts")
        key_sums = _as_int_array(key_sums, "key_sums")
        try:
            counts, key_sums = np.broadcast_arrays(counts, key_sums)
        except ValueError:
            raise ParameterError(
                f"counts {counts.shape} and key_sums {key_sums.shape} must "
                f"have the same shape (one key sum per cell)"
            ) from None
        if counts.size and counts.min() < 0:
            raise ParameterError("counts must be >= 0; found negatives")
        m = self._modulus if key_modulus is None else int(key_modulus)
        if m <= 0:
            raise ParameterError(f"key_modulus must be > 0, got {m}")
        if self._kind == "integer" and m != self._modulus:
            raise ParameterError(
                f"key_modulus={m} does not match this ONS table, whose "
                f"keys run 0..{self._modulus - 1}; leave key_modulus unset"
            )
        keys = np.mod(key_sums, m)
        if self._kind == "integer":
            pcv = ons_pcv(counts, self.max_i, self._cycle)
            out = self._ons[pcv, keys]
        else:
            out = self._lookup(np.minimum(counts, self.max_i), keys, m)
        out = np.where(counts == 0, 0, out)
        return out.astype(np.int64, copy=False)

    def _lookup(
        self, rows: np.ndarray, key_num: np.ndarray, key_den: int
    ) -> np.ndarray:
        """Exact [lb, ub) search for keys ``key_num / key_den``."""
        g = math.gcd(key_den, BOUND_SCALE)
        bound_f, key_f = key_den // g, BOUND_SCALE // g
        span = BOUND_SCALE * bound_f  # one row's width on the common scale
        if (self.max_i + 1) * span >= 2**62:
            raise ParameterError(
                f"key_modulus={key_den} is too fine for exact lookup; use "
                f"keys with at most 10 decimals"
            )
        flat = self._i * span + self._ub * bound_f
        idx = np.searchsorted(flat, rows * span + key_num * key_f, "right")
        return (self._j - self._i)[idx]

    # -- conversion --------------------------------------------------------

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

        Examples
        --------
        >>> ons = create_cnt_ptable(D=2, V=0.9).to_ons_frame()
        >>> ons.shape
        (192000, 3)
        """
        if self._kind == "integer":
            return self._ons_frame()
        modulus, max_pcv = int(modulus), int(max_pcv)
        if modulus < 1 or max_pcv < self.max_i:
            raise ParameterError(
                f"need modulus >= 1 and max_pcv >= max_i={self.max_i}, got "
                f"modulus={modulus}, max_pcv={max_pcv}"
            )
        pcv = np.repeat(np.arange(1, max_pcv + 1), modulus)
        k = np.tile(np.arange(modulus), max_pcv)
        v = self._lookup(np.minimum(pcv, self.max_i), 2 * k + 1, 2 * modulus)
        return pd.DataFrame({"pcv": pcv, "ckey": k, "pvalue": v})

    def to_csv(
        self,
        path: str | os.PathLike | io.TextIOBase,
        format: Literal["r", "tau_argus", "ons"] = "r",
        **ons_options: int,
    ) -> None:
        """Write the table.

        Parameters
        ----------
        path : str, path or text buffer
        format : {"r", "tau_argus", "ons"}
            ``"r"``: comma-separated ``i,j,p,v,p_int_lb,p_int_ub,type``;
            ``"tau_argus"``: ``;``-separated ``i;j;p;v;p_int_ub``;
            ``"ons"``: ``pcv,ckey,pvalue`` (options ``modulus`` and
            ``max_pcv`` of :meth:`to_ons_frame`).

        Examples
        --------
        >>> buf = io.StringIO()
        >>> create_cnt_ptable(D=2, V=0.9).to_csv(buf, format="tau_argus")
        >>> buf.getvalue().splitlines()[:2]
        ['i;j;p;v;p_int_ub', '0;0;1.00000000;0;1.00000000']
        """
        if format not in _FORMATS:
            raise ParameterError(
                f"format must be one of {_FORMATS}, got {format!r}"
            )
        if format == "ons":
            self.to_ons_frame(**ons_options).to_csv(path, index=False)
            return
        if self._kind == "integer":
            self._check_ons_as_uniform()
        frame = self.table
        if format == "r":
            cols = _R_COLUMNS
            sep = ","
        else:
            cols = ["i", "j", "p", "v", "p_int_ub"]
            sep = ";"
        frame[cols].to_csv(path, sep=sep, index=False, float_format="%.8f")

    def _check_ons_as_uniform(self) -> None:
        K = self._modulus
        if BOUND_SCALE % K:
            raise ParameterError(
                f"this ONS table has keys mod {K}; its intervals k/{K} "
                f"have more than {BOUND_DIGITS} decimals, so it can only be "
                f"written with format='ons'"
            )
        tail = self._ons[-self._cycle :]
        if not np.all(tail == tail[-1]):
            raise ParameterError(
                "this ONS table cycles through its last rows for large "
                "counts, which an R-style table (last row for all larger "
                "counts) cannot express; write it with format='ons'"
            )

    # -- readers -----------------------------------------------------------

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        format: Literal["r", "tau_argus", "ons"] | None = None,
    ) -> PTable:
        """Validate a p-table given as a DataFrame.

        R style needs ``i``, ``j`` or ``v``, and ``p_int_ub`` or ``p``
        (``p_int_lb`` is derived when absent, as for Tau-Argus files);
        ONS style needs ``pcv, ckey, pvalue``. Bounds are rounded to 8
        decimals. Raises :class:`ParameterError` naming the bad row.

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
        df = df.rename(columns=lambda c: str(c).strip().strip('"').lower())
        if format is None:
            format = "ons" if set(_ONS_COLUMNS) <= set(df.columns) else "r"
        if format not in _FORMATS:
            raise ParameterError(
                f"format must be one of {_FORMATS} or None, got {format!r}"
            )
        params = {"source": "frame", "format": format}
        if format == "ons":
            return _ons_from_frame(df, params)
        return _uniform_from_frame(df, params)


def _unpickle(fmt: str, frame: pd.DataFrame, params: dict) -> PTable:
    pt = PTable.from_frame(frame, format=fmt)
    object.__setattr__(pt, "_params", dict(params))
    return pt


def _diagnostics_from(i, v, p) -> pd.DataFrame:
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


def _whole_column(df: pd.DataFrame, col: str) -> np.ndarray:
    values = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ParameterError(
            f"p-table column {col!r} must hold whole numbers; line {k + 1} "
            f"has {df[col].iloc[k]!r}"
        )
    return values.astype(np.int64)


def _number_column(df: pd.DataFrame, col: str) -> np.ndarray:
    values = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
    if not np.all(np.isfinite(values)):
        k = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ParameterError(
            f"p-table column {col!r} must be numeric; line {k + 1} has "
            f"{df[col].iloc[k]!r}"
        )
    return values


def _uniform_from_frame(df: pd.DataFrame, params: dict) -> PTable:
    cols = set(df.columns)
    if (
        "i" not in cols
        or not cols & {"j", "v"}
        or not cols & {"p", "p_int_ub"}
    ):
        raise ParameterError(
            f"an R-style p-table needs columns i, j (or v) and p_int_ub "
            f"(or p); got {sorted(cols)}. ONS tables need pcv, ckey, pvalue"
        )
    if len(df) == 0:
        raise ParameterError("the p-table is empty")
    i = _whole_column(df, "i")
    if "j" in cols:
        j = _whole_column(df, "j")
        if "v" in cols:
            v = _whole_column(df, "v")
            bad = np.flatnonzero(j != i + v)
            if len(bad):
                k = bad[0]
                raise ParameterError(
                    f"p-table row i={i[k]}: j={j[k]} is not i + v = "
                    f"{i[k] + v[k]}"
                )
    else:
        j = i + _whole_column(df, "v")
    if "type" in cols:
        types = pd.unique(df["type"].astype(str))
        if len(types) != 1:
            raise ParameterError(
                f"a count p-table has one type; found {list(types)} (split "
                f"even/odd tables before loading)"
            )
        type_ = str(types[0])
    else:
        type_ = "all"
    p = _number_column(df, "p") if "p" in cols else None
    ub = _number_column(df, "p_int_ub") if "p_int_ub" in cols else None
    lb = _number_column(df, "p_int_lb") if "p_int_lb" in cols else None
    # stable order: by row, then by interval (upper, then lower bound)
    if ub is None:
        order = np.argsort(i, kind="stable")
    elif lb is None:
        order = np.lexsort((ub, i))
    else:
        order = np.lexsort((lb, ub, i))
    i, j = i[order], j[order]
    p = None if p is None else p[order]
    first = np.r_[True, i[1:] != i[:-1]]
    last = np.r_[i[1:] != i[:-1], True]
    if ub is None:
        cum = np.cumsum(p)
        starts = np.flatnonzero(first)
        offset = np.repeat(
            np.r_[0.0, cum[starts[1:] - 1]], np.diff(np.r_[starts, len(p)])
        )
        ub = cum - offset
    else:
        ub = ub[order]
    ub_int = np.rint(np.round(ub, BOUND_DIGITS) * BOUND_SCALE).astype(np.int64)
    prev_ub = np.r_[0, ub_int[:-1]]
    derived_lb = np.where(first, 0, prev_ub)
    if lb is None:
        lb_int = derived_lb
    else:
        lb_int = np.rint(
            np.round(lb[order], BOUND_DIGITS) * BOUND_SCALE
        ).astype(np.int64)

    def fail(k, what):
        raise ParameterError(f"p-table row i={i[k]}: {what}")

    rows = np.unique(i)
    if rows[0] != 0 or len(rows) != rows[-1] + 1:
        missing = sorted(set(range(int(rows[-1]) + 1)) - set(rows.tolist()))
        raise ParameterError(
            f"p-table rows must be i = 0, 1, ..., max_i without gaps; "
            f"{'negative i' if rows[0] < 0 else f'missing i={missing}'}"
        )
    for k in np.flatnonzero(j < 0)[:1]:
        fail(k, f"target j={j[k]} is negative (counts must stay >= 0)")
    for k in np.flatnonzero(first & (lb_int != 0))[:1]:
        fail(k, f"first interval starts at {lb_int[k] / BOUND_SCALE}, not 0")
    for k in np.flatnonzero(~first & (lb_int != prev_ub))[:1]:
        fail(
            k,
            f"intervals overlap or leave a gap: [{lb_int[k] / BOUND_SCALE}"
            f", {ub_int[k] / BOUND_SCALE}) follows an interval ending at "
            f"{prev_ub[k] / BOUND_SCALE}",
        )
    for k in np.flatnonzero(ub_int < lb_int)[:1]:
        fail(
            k,
            f"interval [{lb_int[k] / BOUND_SCALE}, "
            f"{ub_int[k] / BOUND_SCALE}) is reversed",
        )
    if p is not None:
        sums = pd.Series(p).groupby(i).sum()
        bad = sums[(sums - 1).abs() > 1e-6]
        if len(bad):
            raise ParameterError(
                f"p-table row i={bad.index[0]}: probabilities sum to "
                f"{bad.iloc[0]:.8g}, not 1 (tolerance 1e-6)"
            )
        widths = (ub_int - lb_int) / BOUND_SCALE
        for k in np.flatnonzero(np.abs(widths - p) > 1e-6)[:1]:
            fail(
                k,
                f"p={p[k]} at j={j[k]} differs from the interval width "
                f"{widths[k]:.8f}",
            )
    for k in np.flatnonzero(last & (ub_int != BOUND_SCALE))[:1]:
        fail(k, f"last interval ends at {ub_int[k] / BOUND_SCALE}, not 1")
    row0 = (i == 0) & (ub_int > lb_int)
    if np.any(j[row0] != 0):
        raise ParameterError(
            "p-table row i=0 must map 0 to 0 (empty cells stay empty); "
            f"found targets {sorted(set(j[row0].tolist()))}"
        )
    v = j - i
    p_canon = (ub_int - lb_int) / BOUND_SCALE
    return PTable._from_arrays(
        i=i,
        j=j,
        lb=lb_int,
        ub=ub_int,
        type_=type_,
        params=params,
        diagnostics=_diagnostics_from(i, v, p_canon),
        max_noise=int(np.abs(v[ub_int > lb_int]).max()),
    )


def _ons_from_frame(df: pd.DataFrame, params: dict) -> PTable:
    missing = [c for c in _ONS_COLUMNS if c not in df.columns]
    if missing:
        raise ParameterError(
            f"an ONS p-table needs columns pcv, ckey, pvalue; missing "
            f"{missing}"
        )
    pcv = _whole_column(df, "pcv")
    ckey = _whole_column(df, "ckey")
    pvalue = _whole_column(df, "pvalue")
    if len(pcv) == 0:
        raise ParameterError("the ONS p-table is empty")
    zero = pcv == 0
    if np.any(pvalue[zero] != 0):
        raise ParameterError("ONS p-table: pcv 0 must have pvalue 0")
    pcv, ckey, pvalue = pcv[~zero], ckey[~zero], pvalue[~zero]
    if len(pcv) == 0 or pcv.min() < 1 or ckey.min() < 0:
        raise ParameterError("ONS p-table: pcv must be >= 1 and ckey >= 0")
    M, K = int(pcv.max()), int(ckey.max()) + 1
    if M * K > 50_000_000:
        raise ParameterError(f"ONS p-table too large: {M} x {K} entries")
    values = np.zeros((M + 1, K), dtype=np.int64)
    seen = np.zeros((M + 1, K), dtype=np.int64)
    np.add.at(seen, (pcv, ckey), 1)
    if np.any(seen[1:] != 1):
        bad = np.argwhere(seen[1:] != 1)[0]
        n = seen[1 + bad[0], bad[1]]
        raise ParameterError(
            f"ONS p-table must list every pcv 1..{M} with every ckey "
            f"0..{K - 1} exactly once; pcv={bad[0] + 1}, ckey={bad[1]} "
            f"appears {n} times"
        )
    values[pcv, ckey] = pvalue
    neg = np.argwhere(values + np.arange(M + 1)[:, None] < 0)
    if len(neg):
        raise ParameterError(
            f"ONS p-table row pcv={neg[0][0]}: pvalue "
            f"{values[neg[0][0], neg[0][1]]} makes the count negative"
        )
    return PTable._from_ons(values, params)


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


def read_ptable(
    path_or_frame: str | os.PathLike | pd.DataFrame | io.TextIOBase,
    format: Literal["r", "tau_argus", "ons"] | None = None,
) -> PTable:
    """Read and validate a p-table file or DataFrame.

    The format is detected from the columns when ``format`` is None:
    R style (``i,j,p,v,p_int_lb,p_int_ub[,type]``), Tau-Argus
    (``i;j;p;v;p_int_ub``, ``;``-separated, ``p_int_lb`` derived) or ONS
    (``pcv,ckey,pvalue``). Files without a header are read as Tau-Argus
    (5 columns), SAS (6) or R (7) exports.

    Examples
    --------
    >>> text = "i;j;p;v;p_int_ub\\n0;0;1;0;1\\n1;0;0.5;-1;0.5\\n1;2;0.5;1;1\\n"
    >>> read_ptable(io.StringIO(text)).max_i
    1
    """
    if format is not None and format not in _FORMATS:
        raise ParameterError(
            f"format must be one of {_FORMATS} or None, got {format!r}"
        )
    if isinstance(path_or_frame, pd.DataFrame):
        return PTable.from_frame(path_or_frame, format=format)
    if hasattr(path_or_frame, "read"):
        text = path_or_frame.read()
        source = "buffer"
    else:
        with open(path_or_frame, encoding="utf-8-sig") as fh:
            text = fh.read()
        source = os.fspath(path_or_frame)
    first = text.lstrip().split("\n", 1)[0]
    sep = ";" if ";" in first else ","
    token = first.split(sep)[0].strip().strip('"')
    try:
        float(token)
        header = None
    except ValueError:
        header = 0
    df = pd.read_csv(io.StringIO(text), sep=sep, header=header)
    if header is None:
        names = {
            3: _ONS_COLUMNS,
            5: ["i", "j", "p", "v", "p_int_ub"],
            6: ["i", "j", "p", "v", "p_int_lb", "p_int_ub"],
            7: _R_COLUMNS,
        }.get(df.shape[1])
        if names is None:
            raise ParameterError(
                f"cannot tell the p-table format of a file without header "
                f"and {df.shape[1]} columns; add a header line"
            )
        df.columns = names
    detected = format
    if detected is None:
        cols = {str(c).strip().lower() for c in df.columns}
        if set(_ONS_COLUMNS) <= cols:
            detected = "ons"
        elif sep == ";" and "p_int_lb" not in cols:
            detected = "tau_argus"
        else:
            detected = "r"
    frame_format = "ons" if detected == "ons" else "r"
    pt = PTable.from_frame(df, format=frame_format)
    # params is a fresh dict made by from_frame; record the origin
    pt._params.update(source=source, format=detected)
    return pt
