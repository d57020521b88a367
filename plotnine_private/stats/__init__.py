"""Private stats: one module per family, DP and CKM twins share a base.

The package is also callable: ``pp.stats()`` is the table of every
registered private stat and its declaration
(:func:`plotnine_private.declarations.stats_table`). ``pp.stats`` is this
subpackage (``pp.stats.count`` and dotted paths keep working), so the
call is made by the module's class rather than by a function that would
hide the subpackage.
"""

import sys
import types
from typing import Any

from ..declarations import stats_table


class _CallableModule(types.ModuleType):
    def __call__(self) -> Any:
        """Every registered private stat with its declaration (a
        DataFrame; see :func:`~plotnine_private.declarations.
        stats_table`)."""
        return stats_table()


sys.modules[__name__].__class__ = _CallableModule
