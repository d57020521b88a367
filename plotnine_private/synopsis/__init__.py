"""One private synopsis, many figures: noisy marginals of a workload
released once (one charge), made consistent, and answered by
post-processing (:func:`synopsis`, :class:`Synopsis`)."""

from __future__ import annotations

from .plan import SynopsisPlan, plan_synopsis, synopsis_accuracy
from .release import synopsis
from .result import Synopsis, load_synopsis

__all__ = [
    "Synopsis",
    "SynopsisPlan",
    "load_synopsis",
    "plan_synopsis",
    "synopsis",
    "synopsis_accuracy",
]
