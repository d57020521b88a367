"""Exceptions raised by the mechanisms core (no plotnine dependency)."""

from __future__ import annotations

__all__ = ["PTableVarianceWarning", "ParameterError", "PrivacyWarning"]


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


class PTableVarianceWarning(UserWarning):
    """A p-table whose rows end with a noise variance below the target V.

    The table is still built (as R ``ptable`` does); the message names the
    rows, the shortfall and what to change (usually a larger D).
    """
