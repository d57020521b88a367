"""Exceptions and warnings raised by plotnine_private's stats and geoms."""

from __future__ import annotations

from plotnine.exceptions import PlotnineError

from .mechanisms.errors import ParameterError, PrivacyWarning

__all__ = ["PlotninePrivateError", "PrivacyWarning", "BudgetExceededError"]


class PlotninePrivateError(PlotnineError, ParameterError):
    """Bad input to a private stat: raised before anything is drawn.

    A subclass of both plotnine's ``PlotnineError`` and ``ValueError``.
    """

    def __init__(self, message: str):
        # PlotnineError joins *args; keep the message intact
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class BudgetExceededError(PlotninePrivateError):
    """The layers of a plot would spend more than its privacy budget."""
