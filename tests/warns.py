"""Which recorded warnings a test about data leaks looks at."""

from __future__ import annotations

from pathlib import Path

import plotnine

_PLOTNINE_DIR = str(Path(plotnine.__file__).parent)


def data_warnings(records: list) -> list:
    """The recorded warnings but plotnine's own deprecation warnings:
    plotnine 0.16 uses pandas API that pandas 3.1 deprecates, and warns on
    every plot whatever the data, so that warning tells nothing."""
    return [
        w
        for w in records
        if not (
            issubclass(w.category, DeprecationWarning)
            and w.filename.startswith(_PLOTNINE_DIR)
        )
    ]
