"""The records of the release engine (:mod:`.release`): a
:class:`Release` is what a mechanism outputs with its record (mechanism,
eps, delta, identity), and :class:`Released` the values of a cell table
with it. numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .streams import stream_version

__all__ = ["Release", "Released"]


@dataclass(frozen=True)
class Release:
    """The record of one release: what the report composes.

    Attributes
    ----------
    identity
        Public identity (:meth:`Query.identity`): releases with equal
        identity are one release and are charged once.
    family
        The query family (``"count"``, ``"range"``, ``"pca:directions"``).
    mechanism
        ``"discrete_laplace"``, ``"laplace"``, ``"gaussian"``, ``"ckm"``,
        ``"durfee_quantile"``...
    eps, delta
        What the release costs by its mechanism's privacy map (``None``
        eps for CKM, which has no formal guarantee).
    adjacency
        ``"replace"`` or ``"add_remove"`` (``None`` for CKM).
    sensitivity
        Sensitivity used to calibrate the noise.
    domain
        Where the cells came from, in words (``"public: levels"``,
        ``"thresholded"``, ``"observed"``, ``"private estimate"``).
    cells
        Number of cells released (shown).
    policy
        Key policy of the noise: ``"key"``, ``"seed-only"``,
        ``"session"``, or ``"record keys"`` (CKM).
    source
        The data source of the query (``"data"``, ``"layer 2 data"``).
    panels
        How panels (facets) were made: ``"single panel"``, ``"public:
        declared facets (drv)"``, ``"observed values of drv"``.
    composition
        How ``eps`` follows from the mechanism's parameters: ``"one
        histogram"``, ``"parallel over declared facets"``, ...
    details
        Mechanism parameters for the report (scale, threshold, p-table).
    cells_name
        Public name of the released cells without the mechanism
        (:func:`cells_name`): a DP and a CKM release of the same counts
        share it, so the report can say the DP guarantee does not hold
        for them. Empty when the release has no CKM counterpart.
    stream_version
        Version of the keyed streams its noise came from
        (:mod:`~plotnine_private.mechanisms.streams`): to reproduce the
        release, draw it again under this version.
    name_of
        Makes ``cells_name`` when it is first read, instead of when the
        release is made: naming a declared domain of 10**6 labels hashes
        some 12 MB, and a table's release is rarely read.
    """

    identity: str
    family: str
    mechanism: str
    eps: float | None
    delta: float
    adjacency: str | None
    sensitivity: float | None
    domain: str
    cells: int
    policy: str
    source: str = "data"
    panels: str = "single panel"
    composition: str = "one release"
    details: Mapping[str, Any] = field(default_factory=dict)
    cells_name: str = ""
    stream_version: int = field(default_factory=stream_version)
    name_of: Callable[[], str] | None = field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.name_of is not None:
            object.__delattr__(self, "cells_name")  # made on first read

    def __getattr__(self, name: str) -> Any:
        # only called for a missing attribute: a cells_name not yet made
        name_of = self.__dict__.get("name_of")
        if name != "cells_name" or name_of is None:
            raise AttributeError(name)
        value = name_of()
        object.__setattr__(self, "cells_name", value)
        return value

    @property
    def formal(self) -> bool:
        """Whether the release has a formal (DP) guarantee."""
        return self.eps is not None


# the default of cells_name lives in __init__; without the class
# attribute too, a release made with name_of lacks it until __getattr__
# makes it
del Release.cells_name


@dataclass
class Released:
    """Released values of a :class:`CellTable`, aligned with its cells."""

    values: np.ndarray  # released counts (>= 0, 0 where not shown)
    noisy: np.ndarray  # unclipped noisy counts (DP); = values for CKM
    keep: np.ndarray  # bool: shown
    release: Release
