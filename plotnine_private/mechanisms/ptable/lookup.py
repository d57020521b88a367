"""Magnitude lookup across the tables of one cellKey setup (moved out of
:mod:`.table`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ParameterError
from .table import PTable
from .values import _as_int_array, _as_ratio_array, _broadcast

# ---------------------------------------------------------------------------
# Magnitude lookup across the tables of one cellKey setup
# ---------------------------------------------------------------------------


def magnitude_noise(
    ptables: Mapping[str, PTable],
    category: Any,
    ratios: Any,
    key_sums: Any,
    *,
    key_modulus: int | None = None,
) -> np.ndarray:
    """Perturbation values ``v`` of magnitude cells, table by category.

    cellKey keeps the tables of one magnitude setup in one frame and picks
    the rows by a lookup category per cell: ``"all"``, or ``"even"`` /
    ``"odd"`` (parity of the number of contributors), or
    ``"small_cells"`` for cells below the separation point
    (docs/ptables.md §2).
    Here each category names a :class:`PTable`; every cell is looked up
    with :meth:`PTable.magnitude_noise` in the table of its category.

    Parameters
    ----------
    ptables : mapping of str to PTable
        E.g. ``{"all": main, "small_cells": small}``.
    category : str or array of str
        The lookup category of each cell (one string for all cells).
    ratios : array of float
        ``a = |x / x_delta|`` per cell (``x_delta = 1`` for small cells).
    key_sums : array of int
        Exact integer key sums per cell.
    key_modulus : int, optional
        Scale of the keys (default ``10**8``).

    Returns
    -------
    numpy.ndarray of float
        ``v`` per cell.

    Raises
    ------
    ParameterError
        For a category without a table, or a table that is not a
        :class:`PTable`.

    Examples
    --------
    >>> from plotnine_private.mechanisms.ptable import create_num_ptable
    >>> main = create_num_ptable(D=2, V=1, step=2, icat=[1, 2])
    >>> small = create_num_ptable(D=5, V=2, step=4, icat=[1, 3, 5])
    >>> magnitude_noise({"all": main, "small_cells": small},
    ...                 ["all", "small_cells"], [2, 5],
    ...                 [10**7, 10**7]).tolist()
    [-1.5, -1.75]
    """
    for name, pt in ptables.items():
        if not isinstance(pt, PTable):
            raise ParameterError(
                f"ptables[{name!r}] must be a PTable, got {type(pt).__name__}"
            )
    a = _as_ratio_array(ratios)
    key_sums = _as_int_array(key_sums, "key_sums")
    a, key_sums = _broadcast(a, key_sums, "ratios and key_sums")
    cat = np.broadcast_to(np.asarray(category, dtype=object), a.shape)
    unknown = sorted({str(c) for c in np.unique(cat)} - set(ptables))
    if unknown:
        raise ParameterError(
            f"category {unknown[0]!r} has no p-table; categories with a "
            f"table: {sorted(ptables)}"
        )
    out = np.zeros(a.shape, dtype=float)
    for name, pt in ptables.items():
        sel = cat == name
        if sel.any():
            out[sel] = pt.magnitude_noise(
                a[sel], key_sums[sel], key_modulus=key_modulus
            )
    return out
