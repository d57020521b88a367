"""The full table of parity cases (importing each family's module fills
:data:`cases.CASES`)."""

from __future__ import annotations

from . import cases_bins, cases_count  # noqa: F401
from .cases import CASES

__all__ = ["CASES"]
