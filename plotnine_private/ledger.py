"""Interim record of the PCA releases (to be replaced by the engine's
:class:`~plotnine_private.mechanisms.release.Release`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Release"]


@dataclass(frozen=True)
class Release:
    """One released quantity of a private PCA (see ``pca.py``)."""

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

    @property
    def identity(self) -> str:
        return self.release_id

    @property
    def family(self) -> str:
        return "range" if self.mechanism == "durfee_quantile" else "pca"

    @property
    def policy(self) -> str:
        return "session or seed"

    @property
    def source(self) -> str:
        return "data"

    @property
    def panels(self) -> str:
        return "single panel" if self.panel is None else str(self.panel)

    @property
    def composition(self) -> str:
        return "sequential"

    @property
    def formal(self) -> bool:
        return self.eps is not None
