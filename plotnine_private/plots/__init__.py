"""Plots of the package's own objects (p-tables), built with plotnine.

The mechanisms core never imports this package; it imports the core.
"""

from __future__ import annotations

from .ptable import plot_ptable

__all__ = ["plot_ptable"]
