"""How many records each privacy unit has: counted where the data are and
released as a private histogram (``pp.contributions``,
``pp.source(..., max_records="auto")``).

A frame in memory counts each unit's records by the unit's name
(:func:`~plotnine_private.identifiers.id_codes`, as bounding names it);
a table in an engine counts them in one ``GROUP BY`` of the unit, bins
the counts there (a sum of comparisons with the public powers of two)
and returns only the units per bin. Records whose unit (or
``record_id``) is missing are left out, as bounding leaves them out. The
histogram is released by :func:`~plotnine_private.mechanisms.release.
contributions.release_contributions`; what is read from it is
post-processing (:class:`~plotnine_private.mechanisms.release.
contributions.Contributions`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import PlotninePrivateError
from ..identifiers import id_codes
from ..mechanisms.errors import ParameterError
from ..mechanisms.release.contributions import (
    DEFAULT_CAP,
    Contributions,
    bin_edges,
    bin_labels,
    check_cap,
    contributions_query,
    histogram,
    noise_quantile,
    release_contributions,
)
from ..mechanisms.release.count_mechanisms import LaplaceCounts
from ..mechanisms.session import tagged
from ..units import Unit, UnitFrame, dataset_of
from ..validation import (
    from_polars,
    is_real,
    validate_choice,
    validate_eps,
    validate_seed,
)
from .bounding import UNIT_CODE, _ids

__all__ = [
    "ContributionTable",
    "auto_unit",
    "contributions",
    "unit_histogram",
]


def _frame_of(data: Any) -> Any:
    return data.data if isinstance(data, UnitFrame) else data


def _in_memory(data: Any) -> bool:
    frame = _frame_of(data)
    return isinstance(frame, pd.DataFrame) or (
        from_polars(frame) and not hasattr(frame, "collect")
    )


def unit_histogram(
    name: str, data: Any, column: str, record_id: str | None, cap: int
) -> np.ndarray:
    """Units per public bin of their number of records (the true
    histogram: released only through :func:`release_contributions`)."""
    columns = (
        [str(c) for c in _frame_of(data).columns]
        if _in_memory(data)
        else list(data.columns)
    )
    for what, col in (("unit", column), ("record_id", record_id)):
        if col is not None and col not in columns:
            raise PlotninePrivateError(
                f"{name}(): {what}={col!r} is not a column; the data have "
                f"{', '.join(columns[:8])}"
                f"{' ...' if len(columns) > 8 else ''}."
            )
    if _in_memory(data):
        frame = _frame_of(data)
        rows = frame if isinstance(frame, pd.DataFrame) else frame.to_pandas()
        units, missing = id_codes(rows[column])
        if record_id is not None:
            _, no_record = id_codes(rows[record_id])
            if no_record is not None:
                missing = no_record if missing is None else missing | no_record
        if missing is not None:
            units = units[~missing]
        _, per_unit = np.unique(units, return_counts=True)
        return histogram(per_unit, cap)
    return _engine_histogram(data, column, record_id, cap)


def _engine_histogram(
    src: Any, column: str, record_id: str | None, cap: int
) -> np.ndarray:
    import narwhals as nw

    frame = _ids(src, src.frame, column, UNIT_CODE)
    if record_id is not None:
        frame = _ids(src, frame, record_id, "_rcode")
    per_unit = frame.group_by(UNIT_CODE).agg(nw.len().alias("_n"))
    n = nw.col("_n")
    b = sum(
        ((n > (1 << j)).cast(nw.Int64) for j in range(1, cap.bit_length())),
        (n > 1).cast(nw.Int64),
    )
    binned = (
        per_unit.with_columns(_b=b)
        .group_by("_b")
        .agg(nw.len().alias("_units"))
        .collect()
        .to_pandas()
    )
    out = np.zeros(len(bin_edges(cap)), dtype=np.int64)
    out[binned["_b"].to_numpy(dtype=np.int64)] = binned["_units"].to_numpy(
        dtype=np.int64
    )
    return out


def _check_positive(name: str, param: str, value: Any) -> float:
    if not is_real(value) or not math.isfinite(value) or value <= 0:
        raise PlotninePrivateError(
            f"{name}(): {param} must be a finite number > 0, got "
            f"{value!r}; e.g. {param}=1."
        )
    return float(value)


def _check_cells(name: str, param: str, cells: Any) -> int:
    if (
        isinstance(cells, bool)
        or not isinstance(cells, (int, np.integer))
        or cells < 1
    ):
        raise PlotninePrivateError(
            f"{name}(): {param} must be a whole number >= 1 (the cells "
            f"of the figure: its bars), got {cells!r}; e.g. {param}=10."
        )
    return int(cells)


def release_for(
    name: str,
    data: Any,
    column: str,
    record_id: str | None,
    *,
    eps: Any,
    seed: Any,
    cap: Any,
    adjacency: str,
    eps_name: str = "eps",
) -> Contributions:
    """Count, bin and release the histogram of records per unit of
    ``data`` (every argument checked, naming the parameter)."""
    if eps is None:
        raise PlotninePrivateError(
            f"{name}(): {eps_name} is required: the eps the histogram of "
            f"records per unit spends (charged), e.g. {eps_name}=0.1."
        )
    try:
        eps = validate_eps(name, eps)
    except PlotninePrivateError as err:
        raise PlotninePrivateError(
            str(err).replace("eps", eps_name, 1)
        ) from None
    seed = validate_seed(name, seed)
    try:
        cap = check_cap(cap)
    except ParameterError as err:
        raise PlotninePrivateError(f"{name}(): {err}") from None
    adjacency = validate_choice(
        name, "adjacency", adjacency, ("replace", "add_remove")
    )
    mechanism = LaplaceCounts(eps, adjacency=adjacency)
    counts = unit_histogram(name, data, column, record_id, cap)
    query = contributions_query(column, record_id, cap, seed, mechanism)
    obj = _frame_of(data) if _in_memory(data) else data.native
    return release_contributions(query, counts, mechanism, data_object=obj)


class ContributionTable:
    """What :func:`contributions` returns.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per candidate ``k``: ``kept`` (estimated share of
        records kept), ``kept_low``/``kept_high`` (its interval at
        ``level``), ``removed`` (estimated records removed), ``bias``
        (removed / cells), ``noise`` (mean absolute noise of one count
        at ``plot_eps``, sensitivity ``k``), ``noise_95`` (its 95%
        half-width), ``error`` (bias + noise: the expected error of one
        cell, at most), ``recommended``.
    recommended : int
        The ``k`` with the smallest ``error``.
    histogram : pandas.DataFrame
        The released histogram: ``records`` (the bin), ``units`` (noisy
        count).
    released
        The :class:`~plotnine_private.mechanisms.release.contributions.
        Contributions` (give it to ``pp.source(...,
        contributions=...)``, or the table itself).
    assumptions : list[str]
        What the estimates assume.
    """

    def __init__(
        self,
        released: Contributions,
        plot_eps: float,
        cells: int,
        level: float,
    ):
        self.released = released
        self.plot_eps, self.cells, self.level = plot_eps, cells, level
        adjacency = released.adjacency
        rows = []
        for k in released.candidates():
            kept = released.kept(k, level)
            removed = released.removed(k)
            noise = released.noise(k, plot_eps, adjacency)
            sens = 2 * k if adjacency == "replace" else k
            rows.append(
                {
                    "k": k,
                    "kept": kept.share,
                    "kept_low": kept.low,
                    "kept_high": kept.high,
                    "removed": removed,
                    "bias": removed / cells,
                    "noise": noise,
                    "noise_95": noise_quantile(sens / plot_eps, 0.95),
                    "error": removed / cells + noise,
                }
            )
        self.table = pd.DataFrame(rows)
        self.recommended = released.choose(plot_eps, cells, adjacency)
        self.table["recommended"] = self.table["k"] == self.recommended
        self.histogram = pd.DataFrame(
            {"records": bin_labels(released.cap), "units": released.noisy}
        )
        seen = released.seen
        self.assumptions = [
            f"the histogram of records per unit is released with eps="
            f"{released.eps:g} ({adjacency}; charged like any release)",
            "units above the last bin seen over the noise "
            f"({'none seen' if seen is None and released.cut < 0 else seen}"
            " records) are extrapolated by a decay per bin fitted to "
            "the noisy counts from that bin up (least absolute "
            "deviations); a few units with very many records can hide "
            "in the noise",
            f"error = removed / cells + mean |noise| for a figure of "
            f"{cells} cells at eps={plot_eps:g}: each record is in one "
            "cell, the removed records spread evenly over the cells",
            "recommended: the k whose error is nearest the smallest under "
            "every decay that fits the noisy tail about as well (minimax "
            "regret)",
        ]

    def kept(self, k: int) -> Any:
        """The estimated share of records kept at ``k``."""
        return self.released.kept(k, self.level)

    def __str__(self) -> str:
        return (
            f"records per unit (eps={self.released.eps:g}): recommended "
            f"max_records={self.recommended}\n"
            + self.table.to_string(index=False, float_format="{:.3g}".format)
            + "\n"
            + "\n".join(f"- {a}" for a in self.assumptions)
        )

    def __repr__(self) -> str:
        return str(self)


def contributions(
    data: Any,
    *,
    eps: float,
    seed: int | str | None = None,
    unit: str | None = None,
    record_id: str | None = None,
    cap: int = DEFAULT_CAP,
    plot_eps: float = 1.0,
    cells: int = 10,
    adjacency: str = "replace",
    level: float = 0.95,
) -> ContributionTable:
    """Release how many records each privacy unit has, and weigh each
    bound ``k``.

    Releases (and charges, as any release: report, ledger) a histogram
    of units per public log-spaced bin of their number of records (1, 2,
    3-4, 5-8, ..., ``> cap``) with discrete Laplace noise of scale
    ``sensitivity / eps`` (sensitivity 1 per unit under add/remove, 2
    under replace), and reads from it, for each candidate ``k``, the
    share of records a bound ``k`` keeps and the error it leaves in a
    cell (see :class:`ContributionTable`).

    Parameters
    ----------
    data
        A pandas or polars frame, ``pp.source(...)`` of one, or a table
        in an engine (DuckDB, Polars lazy...: the counts per unit are a
        ``GROUP BY`` there; only units per bin come back).
    eps
        The budget of the histogram (required).
    seed
        Its seed (a public label under a key file).
    unit, record_id
        The unit's column (and the records' one): default, those the
        source declares.
    cap
        A power of two: units with more records share the last bin.
    plot_eps, cells
        The eps of one count of the figure to come, and its cells (bars):
        the error weighs the bias against that figure's noise.
    adjacency
        ``"replace"`` (default) or ``"add_remove"``.
    level
        Of the kept share's interval.

    Returns
    -------
    ContributionTable
    """
    name = "contributions"
    declared: Unit | None = getattr(data, "unit", None)
    if unit is None and declared is not None and declared.bounded:
        unit = declared.column
        record_id = declared.record_id if record_id is None else record_id
    if unit is None:
        raise PlotninePrivateError(
            f"{name}(): unit is required: give unit='<column naming each "
            "record's person>', or a pp.source(data, unit=..., "
            "max_records=...)."
        )
    if not isinstance(level, float) or not 0 < level < 1:
        raise PlotninePrivateError(
            f"{name}(): level must be a number strictly between 0 and 1, "
            f"got {level!r}; e.g. level=0.95."
        )
    plot_eps = _check_positive(name, "plot_eps", plot_eps)
    cells = _check_cells(name, "cells", cells)
    # charged to the data set the source names (as its figures are)
    with tagged(dataset_of(data), "records per unit (pp.contributions)"):
        released = release_for(
            name,
            data,
            unit,
            record_id,
            eps=eps,
            seed=seed,
            cap=cap,
            adjacency=adjacency,
        )
    return ContributionTable(released, plot_eps, cells, level)


def auto_unit(
    data: Any,
    unit: Unit,
    *,
    auto_eps: Any,
    auto_seed: Any,
    auto_plot_eps: Any,
    auto_cells: Any,
    cap: Any = DEFAULT_CAP,
) -> Unit:
    """``unit`` with ``max_records`` chosen from a released histogram of
    ``data`` (``pp.source(..., max_records="auto")``)."""
    name = "source"
    plot_eps = _check_positive(name, "auto_plot_eps", auto_plot_eps)
    cells = _check_cells(name, "auto_cells", auto_cells)
    assert unit.column is not None  # a bounded unit
    with tagged(dataset_of(data), "records per unit (max_records='auto')"):
        released = release_for(
            name,
            data,
            unit.column,
            unit.record_id,
            eps=auto_eps,
            seed=auto_seed,
            cap=cap,
            adjacency="replace",
            eps_name="auto_eps",
        )
    k = released.choose(plot_eps, cells, "replace")
    return dataclasses.replace(
        unit,
        max_records=k,
        contributions=released,
        chosen=(
            f"chosen by max_records='auto' from a histogram of records per "
            f"unit (eps={released.eps:g}) for {cells} cells at "
            f"eps={plot_eps:g}"
        ),
    )


def attached(unit: Unit, table: Any) -> Unit:
    """``unit`` carrying a released histogram (``pp.source(...,
    contributions=...)``): a :class:`ContributionTable` or its
    ``released``, of the same unit column."""
    released = getattr(table, "released", table)
    if not isinstance(released, Contributions):
        raise PlotninePrivateError(
            "source(): contributions= takes what pp.contributions(...) "
            f"returned, got {type(table).__name__}."
        )
    query_unit = _released_unit(released)
    if query_unit != unit.column:
        raise PlotninePrivateError(
            f"source(): contributions= counts records per {query_unit!r}, "
            f"and the unit is {unit.column!r}: release it with "
            f"pp.contributions(data, unit={unit.column!r}, eps=...)."
        )
    return dataclasses.replace(unit, contributions=released)


def _released_unit(released: Contributions) -> str | None:
    details = released.release.details or {}
    return details.get("unit")
