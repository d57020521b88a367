"""The scales the private panels of a comparison share: joined from their
builds only (released values and public parameters), so no raw value
reaches a panel that may be released."""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import numpy as np
from plotnine.scales.scale_continuous import scale_continuous
from plotnine.scales.scale_discrete import scale_discrete

from .._compat import Built

__all__ = [
    "join_continuous",
    "join_discrete",
    "other_scales",
    "position_limits",
]


def join_continuous(limits: list) -> tuple[float, float] | None:
    """The smallest range holding every ``(low, high)`` (None skipped).

    >>> join_continuous([(0, 2), None, (1, 5)])
    (0.0, 5.0)
    """
    lims = [tuple(map(float, x)) for x in limits if x is not None]
    if not lims:
        return None
    return (min(a for a, _ in lims), max(b for _, b in lims))


def join_discrete(limits: list) -> list:
    """Every level of the lists, in order of first appearance.

    >>> join_discrete([["a", "b"], None, ["c", "a"]])
    ['a', 'b', 'c']
    """
    out: list = []
    for lims in limits:
        for v in lims or ():
            if v not in out:
                out.append(v)
    return out


def position_limits(builds: list[Built], ax: str):
    """``("continuous", (low, high))`` in data space, ``("discrete",
    [levels of each build])`` or ``(None, None)`` for axis ``ax``."""
    scales = [
        s
        for b in builds
        for s in getattr(b.layout, f"panel_scales_{ax}") or []
    ]
    if not scales:
        return None, None
    if all(isinstance(s, scale_discrete) for s in scales):
        per_plot = [
            join_discrete(
                [
                    list(s.final_limits)
                    for s in getattr(b.layout, f"panel_scales_{ax}")
                ]
            )
            for b in builds
        ]
        return "discrete", per_plot
    cont = [s for s in scales if isinstance(s, scale_continuous)]
    joined = join_continuous(
        [s.final_limits for s in cont if not s.is_empty()]
    )
    if joined is None:
        return None, None
    data_space = tuple(float(v) for v in cont[0].inverse(np.array(joined)))
    return "continuous", data_space


def other_scales(builds: list[Built]) -> dict[str, Any]:
    """Joined non-position scales: aesthetic -> scale with shared limits."""
    found: dict[str, list] = {}
    for b in builds:
        for s in b.scales:
            ae = s.aesthetics[0]
            if ae in ("x", "y") or s.is_empty():
                continue
            found.setdefault(ae, []).append(s)
    shared: dict[str, Any] = {}
    for name, scales in found.items():
        s = deepcopy(scales[0])
        s.reset()
        if isinstance(s, scale_continuous):
            s.limits = join_continuous([x.final_limits for x in scales])
        elif isinstance(s, scale_discrete):
            s.limits = join_discrete([list(x.final_limits) for x in scales])
        else:  # pragma: no cover - identity and other scales
            continue
        shared[name] = s
    return shared
