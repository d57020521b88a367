"""Perturbation tables (p-tables) for the Cell Key Method.

A count p-table says, for each original count ``i``, which deviation ``v``
a cell receives for each value of its cell key. Two kinds of key exist:

* **uniform** keys (R ``ptable`` / ``cellKey`` / Tau-Argus): per row a
  list of half-open cumulative-probability intervals ``[p_int_lb,
  p_int_ub)`` over cell keys in ``[0, 1)``. Built by
  :func:`create_cnt_ptable`, exactly like R ``ptable`` 1.0.0
  ``create_cnt_ptable`` (spec ``cell-key-method.md`` section 1).
* **integer** keys (ONS ``cell_key_perturbation``): an enumerated
  ``pcv, ckey -> pvalue`` lookup for integer cell keys ``0..K-1``
  (spec section 4).

Both are held by the immutable :class:`PTable`; :func:`read_ptable` and
:meth:`PTable.to_csv` read and write R, Tau-Argus and ONS text.

Modules: :mod:`.build` (parameters and the maximum-entropy solver),
:mod:`.table` (the object and its lookup), :mod:`.io` (formats). The
package imports numpy, scipy and pandas only, never plotnine.

CKM is not differential privacy: the noise is a deterministic function of
the contributing records' keys and the p-table, so the same cell gets the
same noise in every output, zero cells stay zero, and sums of perturbed
cells are not perturbed sums.
"""

from __future__ import annotations

from .build import create_cnt_ptable
from .io import read_ptable, write_ptable
from .table import PTable, ons_pcv

__all__ = [
    "PTable",
    "create_cnt_ptable",
    "ons_pcv",
    "read_ptable",
    "write_ptable",
]
