"""The installed version of plotnine_private (``__version__``).

Read from the package metadata, so it is the version in ``pyproject.toml``
of the installed distribution; ``"0+unknown"`` (a valid PEP 440 local
version) when the package is imported from a source tree that was never
installed.
"""

from __future__ import annotations

import importlib.metadata

__all__ = ["DISTRIBUTION", "UNKNOWN", "installed_version", "__version__"]

#: the distribution name in ``pyproject.toml``
DISTRIBUTION = "plotnine-private"
#: the fallback when no metadata is found
UNKNOWN = "0+unknown"


def installed_version() -> str:
    """The version of the installed distribution, or :data:`UNKNOWN`."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return UNKNOWN


__version__ = installed_version()
