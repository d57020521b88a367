"""Exceptions raised by the mechanisms core (no plotnine dependency)."""

from __future__ import annotations

__all__ = ["ParameterError", "PrivacyWarning"]


class ParameterError(ValueError):
    """A privacy parameter or input that a mechanism cannot accept.

    Messages name the parameter, the bad value and what would be valid.
    """


class PrivacyWarning(UserWarning):
    """Something about a release a person should know (and a checker see).

    Its presence never depends on the data: it states public facts (an
    undeclared domain, a privately estimated range, a reused seed) and the
    fix.
    """
