"""Construction of p-tables, as R ``ptable`` 1.0.0 builds them.

Each row ``i`` of a p-table is the solution of one maximum-entropy problem
(spec ``cell-key-method.md`` 1.3): over the targets ``j`` of the row, with
deviations ``v = j - i``,

    maximise  -sum p log p
    subject to  sum p = 1,  sum p v = 0,  sum p v**2 <= V (= V if optim=4),
                1e-8 <= p <= 1  (p(v=0) >= pstay),
                p non-decreasing from the most negative v up to v = 0
                (if mono).

:func:`create_cnt_ptable` builds count tables (rows ``0..ncat``, whole
targets, no target in ``1..js``); :func:`create_num_ptable` builds
magnitude tables (rows ``{0} | icat``, targets on a ``1/step`` grid). The
problem is strictly convex, so its unique optimum is what R finds through
``nloptr`` (SLSQP); we solve its three-variable dual by Newton's method
(:mod:`.maxent`, about 1 ms a row) and keep scipy's SLSQP as the
fallback. Tables are cached by parameters.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import ParameterError, PTableVarianceWarning
from . import maxent
from .spec import TableSpec, _count_spec, _num_spec
from .table import PTable
from .values import BOUND_DIGITS, BOUND_SCALE, J_DIGITS, J_SCALES

__all__ = ["create_cnt_ptable", "create_num_ptable"]

#: Lower bound of every probability in the optimisation (docs/ptables.md §3).
EPSILON = 1e-8
#: Passes of the pstay relaxation loop (docs/ptables.md §3).
MAX_PASSES = 20
#: Relaxation of the pstay bound per pass (docs/ptables.md §3).
PSTAY_STEP = 0.05
#: A row whose variance falls short of V by more than this is reported
#: (R compares the variance rounded to 3 decimals with V).
VARIANCE_TOLERANCE = 5e-4


# ---------------------------------------------------------------------------
# The per-row maximum-entropy problem (docs/ptables.md §3)
# ---------------------------------------------------------------------------


def _support(i: int, spec: TableSpec) -> np.ndarray:
    """Targets ``j`` of row ``i``, in units of ``1 / J_SCALES[kind]``.

    Counts: ``max(i-D, 0) .. i+D`` without ``1..js``. Magnitudes: the same
    range in steps of ``1/step``, rounded to 4 decimals as R does.
    """
    low = max(i - spec.D, 0)
    n = (i + spec.D - low) * spec.step + 1
    if spec.kind == "counts":
        j = low + np.arange(n)
        return j[(j == 0) | (j > spec.js)]
    j = np.round(low + np.arange(n) / spec.step, J_DIGITS)
    return np.rint(j * J_SCALES["magnitudes"]).astype(np.int64)


def _constraints(v, V, zero, mono, optim) -> list[dict]:
    """SLSQP constraints: sum 1, mean 0, variance, monotonicity."""
    n = len(v)
    v2 = v * v
    eq_a = np.vstack([np.ones(n), v])
    eq_b = np.array([1.0, 0.0])
    out: list[dict[str, Any]] = [
        {
            "type": "eq",
            "fun": lambda p: eq_a @ p - eq_b,
            "jac": lambda p: eq_a,
        },
        {
            "type": "eq" if optim == 4 else "ineq",
            "fun": lambda p: np.array([V - v2 @ p]),
            "jac": lambda p: -v2[None, :],
        },
    ]
    if mono and zero > 0:
        # p_1 <= p_2 <= ... <= p_z, left side only (docs/ptables.md §3)
        mono_a = np.zeros((zero, n))
        for k in range(zero):
            mono_a[k, k] = -1.0
            mono_a[k, k + 1] = 1.0
        out.append(
            {
                "type": "ineq",
                "fun": lambda p: mono_a @ p,
                "jac": lambda p: mono_a,
            }
        )
    return out


def _entropy(p: np.ndarray) -> float:
    q = np.maximum(p, 1e-300)
    return float(np.sum(q * np.log(q)))


def _entropy_gradient(p: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(p, 1e-300)) + 1.0


def _solve_row(
    v: np.ndarray,
    V: float,
    lower: np.ndarray,
    zero: int,
    mono: bool,
    optim: int,
) -> np.ndarray:
    """Maximise the entropy of one row (docs/ptables.md §3): exactly in
    the dual (:mod:`.maxent`), or with scipy SLSQP if Newton fails."""
    v = v.astype(float)
    p = maxent.solve_row(v, V, lower, zero, mono, optim)
    if p is not None:
        return p
    n = len(v)
    # imported here: scipy.optimize takes longer to import than plotnine
    from scipy.optimize import minimize

    res = minimize(
        _entropy,
        np.full(n, 1.0 / n),
        jac=_entropy_gradient,
        method="SLSQP",
        bounds=[(lo, 1.0) for lo in lower],
        constraints=_constraints(v, V, zero, mono, optim),
        options={"ftol": 1e-15, "maxiter": 10000},
    )
    return np.asarray(res.x, dtype=float)


def _violation(p, v, V, lower, optim) -> float:
    """Largest violation of the row's constraints by ``p``."""
    var = float(v * v @ p)
    return max(
        abs(float(v @ p)),
        abs(var - V) if optim == 4 else var - V,
        float(np.max(lower - p)),
    )


def _check_solution(p, v, V, lower, optim, i, spec: TableSpec) -> None:
    """R's abort (docs/ptables.md §3), plus a check that the constraints
    hold."""
    if (
        round(float(p.sum()), 10) != 1
        or _violation(p, v, V, lower, optim) > 1e-6
    ):
        raise ParameterError(
            f"The ptable can't be calculated without a violation of the "
            f"constraints (row i={i}, D={spec.D}, V={spec.V:g}, "
            f"js={spec.js}); try another specification (changing the "
            f"variance V is sufficient in most cases, or mono=False / "
            f"optim for this row)"
        )


def _optimise_row(i, v, lower, zero, r, spec: TableSpec):
    """Solve row ``i``, relaxing ``pstay`` until the variance is V.

    R runs up to 20 passes; each lowers the bound on p(v=0) by 0.05 and
    stops once ``round(variance, 3) == V`` (docs/ptables.md §3). An unchanged
    problem has the same (unique) optimum: R solves it again, we reuse it.
    Returns the probabilities and the number of passes.
    """
    V, optim, mono = spec.V, spec.optim[r], spec.mono[r]
    p = None
    for passes in range(1, MAX_PASSES + 1):
        changed = p is None
        if passes > 1 and zero >= 0:
            new = max(lower[zero] - PSTAY_STEP, EPSILON)
            changed = new != lower[zero]
            lower[zero] = new
        if changed:
            p = _solve_row(v, V, lower, zero, mono, optim)
            _check_solution(p, v, V, lower, optim, i, spec)
        if round(float(v * v @ p), 3) == V or i <= spec.js:
            break
    return p, passes


def _build_row(i: int, r: int, spec: TableSpec):
    """Targets (integer units), probabilities and diagnostics of row ``i``."""
    j = _support(i, spec)
    scale = J_SCALES[spec.kind]
    v = (j - i * scale) / scale
    zero_at = np.flatnonzero(j == i * scale)
    zero = int(zero_at[0]) if len(zero_at) else -1
    lower = np.full(len(v), EPSILON)
    if zero >= 0:
        lower[zero] = max(spec.pstay[r], EPSILON)
    p, passes = _optimise_row(i, v, lower, zero, r, spec)
    diag = (
        i,
        *(
            round(float(d), 5) + 0.0
            for d in (
                v @ p,
                v * v @ p,
                p.sum(),
                p[zero] if zero >= 0 else 0.0,
            )
        ),
        passes,
    )
    return j, p, diag


def _rounded_bounds(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative bounds rounded to 8 decimals, as integers
    (docs/ptables.md §5);
    the published ``p`` is then ``ub - lb``."""
    ub = np.cumsum(p)
    lb = ub - p
    ub_int = np.rint(np.round(ub, BOUND_DIGITS) * BOUND_SCALE)
    lb_int = np.rint(np.round(lb, BOUND_DIGITS) * BOUND_SCALE)
    return lb_int.astype(np.int64), ub_int.astype(np.int64)


def _params(spec: TableSpec) -> dict:
    """The ``params`` dict of a built table (scalars where constant)."""

    def compact(values):
        return values[0] if len(set(values)) == 1 else list(values)

    common: dict[str, Any] = {
        "D": spec.D,
        "V": spec.V,
        "pstay": None if not any(spec.pstay) else compact(spec.pstay),
        "optim": compact(spec.optim),
        "mono": compact(spec.mono),
    }
    if spec.kind == "counts":
        extra: dict[str, Any] = {"js": spec.js}
    else:
        extra = {"step": spec.step, "icat": list(spec.rows), "type": spec.type}
    return {
        **common,
        **extra,
        "ncat": len(spec.rows),
        "source": spec.source,
    }


# memos of pure functions of the spec: the same in every session
@functools.lru_cache(maxsize=64)
def _create_cached(spec: TableSpec) -> PTable:
    """Build (once per parameters) the table of a validated spec."""
    i_all, j_all, lb_all, ub_all = [0], [0], [0], [BOUND_SCALE]
    diags = [(0, 0.0, 0.0, 1.0, 1.0, 0)]
    for r, i in enumerate(spec.rows):
        j, p, diag = _build_row(i, r, spec)
        lb, ub = _rounded_bounds(p)
        i_all.extend([i] * len(j))
        j_all.extend(j.tolist())
        lb_all.extend(lb.tolist())
        ub_all.extend(ub.tolist())
        diags.append(diag)
    diagnostics = pd.DataFrame(
        diags, columns=["i", "p_mean", "p_var", "p_sum", "p_stay", "iter"]
    )
    return PTable._from_arrays(
        i=np.array(i_all, dtype=np.int64),
        j=np.array(j_all, dtype=np.int64),
        lb=np.array(lb_all, dtype=np.int64),
        ub=np.array(ub_all, dtype=np.int64),
        type_=spec.type,
        params=_params(spec),
        diagnostics=diagnostics,
        max_noise=spec.D,
        kind=spec.kind,
    )


# ---------------------------------------------------------------------------
# Variance check (rows that cannot reach V)
# ---------------------------------------------------------------------------


def _variance_advice(spec: TableSpec) -> str:
    """What to change so that the widest row can reach V."""
    # the widest row is symmetric; max entropy spreads it at most to the
    # uniform distribution on -D..D (step 1/step): variance D(D+1/s)/3
    s = spec.step
    need = spec.D
    # the smallest D whose bound reaches V (a row at V is not short)
    while need * (need + 1 / s) / 3 < spec.V - VARIANCE_TOLERANCE:
        need += 1
    reach = spec.D * (spec.D + 1 / s) / 3
    return (
        f"With deviations bounded by D={spec.D}, a row reaches at most "
        f"D*(D+1/step)/3 = {reach:.4g}; use a larger D (D >= {need}) or a "
        f"smaller V"
    )


@functools.lru_cache(maxsize=64)
def _variance_shortfall(spec: TableSpec) -> str | None:
    """The warning text if the widest row of ``spec`` ends below V.

    The last row serves every value >= max_i, i.e. most cells. Rows near 0
    may end below V by design (targets are cut at 0, and monotonicity
    holds them), as in R; they are listed in the message when the last
    row is short too, and always in ``PTable.diagnostics``. Cached with
    the table, so a repeated call costs a dictionary lookup.
    """
    diag = _create_cached(spec)._diagnostics
    low = spec.V - VARIANCE_TOLERANCE
    short = diag[(diag["i"] > 0) & (diag["p_var"] < low)]
    if short.empty or short["i"].iloc[-1] != spec.rows[-1]:
        return None
    last = float(short["p_var"].iloc[-1])
    gap = spec.V - last
    rows = ", ".join(str(int(i)) for i in short["i"])
    return (
        f"{spec.source}(D={spec.D}, V={spec.V:g}): the noise variance "
        f"stays below V: {last:.4g} in the last row i={spec.rows[-1]} "
        f"(used for every larger value), short by {gap:.4g} "
        f"({gap / spec.V:.0%} of V); rows below V: i = {rows}. "
        f"{_variance_advice(spec)}. The table is kept as R ptable builds "
        f"it; see PTable.diagnostics."
    )


def _build(spec: TableSpec) -> PTable:
    """The (cached) table of ``spec``; warns on every call if it cannot
    reach V (R only reports it in its diagnostics)."""
    message = _variance_shortfall(spec)
    if message:
        warnings.warn(message, PTableVarianceWarning, stacklevel=3)
    return _create_cached(spec)


# ---------------------------------------------------------------------------
# Public constructors
# ---------------------------------------------------------------------------


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
        Immutable table of kind ``"counts"``; see :attr:`PTable.table`
        and :attr:`PTable.diagnostics`.

    Raises
    ------
    ParameterError
        For invalid or infeasible parameters, before any optimisation.

    Warns
    -----
    PTableVarianceWarning
        When rows end with a variance below ``V`` (e.g. ``D=3, V=50``).

    Examples
    --------
    >>> pt = create_cnt_ptable(D=2, V=0.9)
    >>> pt.table.query("i == 1")["p"].round(4).tolist()
    [0.3625, 0.3625, 0.1875, 0.0875]
    >>> pt.max_i, pt.max_noise
    (2, 2)
    """
    return _build(_count_spec(D, V, js, pstay, optim, mono))


def create_num_ptable(
    D: int,
    V: float,
    pstay: float | Sequence[float] | None = None,
    optim: int | Sequence[int] = 1,
    mono: bool | Sequence[bool] = True,
    step: int = 2,
    icat: Sequence[int] | None = None,
    type: Literal["all", "even", "odd"] = "all",
) -> PTable:
    """Build a magnitude p-table exactly like R ``ptable::create_num_ptable``.

    Rows ``i`` in ``{0} | icat``; row ``i >= 1`` spreads its probability
    over the targets ``j = max(i-D, 0), max(i-D, 0) + 1/step, ..., i+D``
    (rounded to 4 decimals), maximising entropy subject to mean 0,
    variance <= ``V`` (equality with ``optim=4``), probabilities >= 1e-8
    and (if ``mono``) left-side monotonicity. cellKey reads the deviation
    ``v`` of a cell from the row of its ratio ``|x / x_delta|``,
    interpolating between rows (:meth:`PTable.magnitude_noise`).

    Parameters
    ----------
    D : int
        Maximum absolute noise factor, a whole number > 0.
    V : float
        Noise variance.
    pstay : None
        Accepted for R's signature; ignored with a warning (R ptable 1.0.0
        ignores it for magnitude tables). Values are still checked.
    optim : int or sequence of int
        1, 2, 3 (variance inequality) or 4 (equality), one or one per
        row of ``icat``.
    mono : bool or sequence of bool
        Left-side monotonicity constraint, one or one per row of ``icat``.
    step : int
        Targets per unit of ``v``; ``D * step`` must be below 50.
    icat : sequence of int
        The rows ``i`` to build; must hold 1 and ``D``, none above ``D``.
    type : {"all", "even", "odd"}
        The ``type`` column (separate tables by parity of the number of
        contributors).

    Returns
    -------
    PTable
        Immutable table of kind ``"magnitudes"``.

    Raises
    ------
    ParameterError
        For invalid parameters (e.g. "There must be 1 and 'D' in 'icat'").

    Warns
    -----
    PTableVarianceWarning
        When rows end with a variance below ``V``.

    Examples
    --------
    >>> pt = create_num_ptable(D=2, V=1, step=2, icat=[1, 2])
    >>> pt.table.query("i == 1")["j"].tolist()
    [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
    >>> len(create_num_ptable(D=10, V=3, step=2, optim=[4, 1, 1],
    ...                       icat=[1, 5, 10]).table)
    96
    """
    return _build(_num_spec(D, V, pstay, optim, mono, step, icat, type))
