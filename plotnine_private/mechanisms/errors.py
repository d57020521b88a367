"""Exceptions raised by the mechanisms core (no plotnine dependency)."""

from __future__ import annotations

__all__ = ["ParameterError"]


class ParameterError(ValueError):
    """A privacy parameter or input that a mechanism cannot accept.

    Messages name the parameter, the bad value and what would be valid.
    """
