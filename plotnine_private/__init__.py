"""plotnine_private: privacy-protected plotnine stats.

Importing this package registers every private stat (``stat="count_dp"``,
``"bin_ckm"``, ...) and ``geom_hex`` with plotnine.
"""

from __future__ import annotations

from ._compat import install_categorical_hook, layer_data
from .exceptions import (
    BudgetExceededError,
    PlotninePrivateError,
    PrivacyWarning,
)
from .ledger import Release
from .stats.count import stat_count_ckm, stat_count_dp

install_categorical_hook()

__all__ = [
    "BudgetExceededError",
    "PlotninePrivateError",
    "PrivacyWarning",
    "Release",
    "layer_data",
    "stat_count_ckm",
    "stat_count_dp",
]
