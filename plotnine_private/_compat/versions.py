"""The plotnine releases the adapter supports, and its error when the
installed plotnine no longer fits (:class:`PlotnineAdapterError`)."""

from __future__ import annotations

import plotnine

__all__ = ["PLOTNINE_VERSION", "SUPPORTED", "PlotnineAdapterError"]

PLOTNINE_VERSION = plotnine.__version__
#: the plotnine releases the hooks are made and tested for
SUPPORTED = ">=0.15.4,<0.17"


class PlotnineAdapterError(ImportError):
    """This plotnine no longer has a hook in the shape the package uses."""
