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

from ..streams.versions import stream_version

__all__ = ["MadeOnRead", "Release", "Released"]


class MadeOnRead:
    """A dataclass field whose value, when none is stored, is made on its
    first read by ``make(instance)``, then kept.

    A data descriptor: ``dataclasses`` takes ``default`` as the field's
    default, ``__init__`` stores the value given, and
    equality, ``asdict``, ``replace``, ``repr`` and pickling read or
    carry it as for any other field. ``del obj.field`` (frozen classes:
    ``object.__delattr__``) drops the stored value, to be made when read.
    """

    def __init__(self, make: Callable[[Any], Any], default: Any):
        self._make, self._default = make, default

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:  # read on the class: the field's default
            return self._default
        stored = obj.__dict__
        if self._slot not in stored:
            stored[self._slot] = self._make(obj)
        return stored[self._slot]

    def __set__(self, obj: Any, value: Any) -> None:
        # frozen classes: only __init__ gets here (setattr raises first)
        obj.__dict__[self._slot] = value

    def __delete__(self, obj: Any) -> None:
        obj.__dict__.pop(self._slot, None)


def _name_cells(release: Release) -> str:
    return "" if release.name_of is None else release.name_of()


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
        (:mod:`~plotnine_private.mechanisms.streams.versions`): to reproduce
        the
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
    cells_name: MadeOnRead = MadeOnRead(_name_cells, "")
    stream_version: int = field(default_factory=stream_version)
    name_of: Callable[[], str] | None = field(
        default=None, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.name_of is not None:  # made on first read
            object.__delattr__(self, "cells_name")

    @property
    def formal(self) -> bool:
        """Whether the release has a formal (DP) guarantee."""
        return self.eps is not None


@dataclass
class Released:
    """Released values of a :class:`CellTable`, aligned with its cells."""

    values: np.ndarray  # released counts (>= 0, 0 where not shown)
    noisy: np.ndarray  # unclipped noisy counts (DP); = values for CKM
    keep: np.ndarray  # bool: shown
    release: Release
