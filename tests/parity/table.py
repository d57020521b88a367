"""The full table of parity cases (importing each family's module fills
:data:`cases.CASES`)."""

from __future__ import annotations

from . import (  # noqa: F401
    cases_bins,
    cases_count,
    cases_fine,
    cases_round3,
    cases_summary,
)
from .cases import CASES

__all__ = ["CASES"]
