"""What each private layer released: the unit of privacy accounting.

Every private stat appends one :class:`Release` per release it makes to its
own ``releases`` list while the plot is built (see
``stats/base.py``). :func:`plotnine_private.privacy_report` builds a copy of
the plot and collects them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Release"]


@dataclass(frozen=True)
class Release:
    """One released set of cells.

    Parameters
    ----------
    stat
        Name of the stat class that released it (``"stat_count_dp"``).
    mechanism
        ``"discrete_laplace"``, ``"laplace"``, ``"gaussian"``, ``"ckm"``,
        ``"durfee_quantile"`` ...
    eps, delta
        Privacy cost (``None`` for CKM, which has no formal budget).
    adjacency
        ``"replace"`` or ``"add_remove"`` (``None`` for CKM).
    sensitivity
        L1 (Laplace) or L2 (Gaussian) sensitivity used to calibrate noise.
    domain
        Where the cells came from: ``"public"`` (parameters, declared
        levels, scale limits), ``"private_estimate"`` (a range estimated
        under DP, charged separately) or ``"thresholded"`` (observed cells
        kept only when their noisy count clears ``details["threshold"]``).
    cells
        Number of cells released (shown, after any thresholding).
    release_id
        A one-way id of (secret key, query, true aggregate): identical
        releases (a bar layer and its text layer) share it and are charged
        once. It reveals neither the seed nor any count.
    panel
        The panel (facet) the cells belong to, or ``None`` if all panels.
    partition
        Name of the public variable that splits the data into disjoint
        parts released separately (facets), for parallel composition.
    details
        Mechanism parameters for the report: scale, threshold, p-table
        parameters and fingerprint, split of a budget ...
    """

    stat: str
    mechanism: str
    eps: float | None
    delta: float
    adjacency: str | None
    sensitivity: float | None
    domain: str
    cells: int
    release_id: str
    panel: Any = None
    partition: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
