"""Perturbation tables (p-tables) for the Cell Key Method.

A p-table says, for each original value ``i``, which deviation ``v`` a
cell receives for each value of its cell key. Tables come in two kinds:

* **count** tables (R ``ptable`` / ``cellKey`` / Tau-Argus / ONS), built
  by :func:`create_cnt_ptable` exactly like R ``ptable`` 1.0.0
  ``create_cnt_ptable`` (spec ``cell-key-method.md`` section 1);
* **magnitude** tables, built by :func:`create_num_ptable` like R
  ``create_num_ptable`` (spec section 2), looked up as cellKey does by
  :meth:`PTable.magnitude_noise` and :func:`magnitude_noise`.

Both are held by the immutable :class:`PTable`; :func:`read_ptable` and
:meth:`PTable.to_csv` read and write R, Tau-Argus and ONS text.

Modules: :mod:`.build` (tables from parameters), :mod:`.spec` (parameter
validation), :mod:`.maxent` (the exact row solver), :mod:`.table` (the
object, read from a frame), :mod:`.table_lookups` and :mod:`.table_io`
(its lookups; its ONS conversion and text writers), :mod:`.lookup`
(magnitudes across tables), :mod:`.values` (constants and helpers),
:mod:`.frames` (validation of tables read) and :mod:`.io` (reading files
and formats): the table reads frames and writes text itself, so
:mod:`.frames` knows no table object and no module here but this one
imports :mod:`.io` (no import cycle). The package imports numpy, scipy
and pandas only, never plotnine.

CKM is not differential privacy: the noise is a deterministic function of
the contributing records' keys and the p-table, so the same cell gets the
same noise in every output, zero cells stay zero, and sums of perturbed
cells are not perturbed sums.
"""

from __future__ import annotations

from ..errors import PTableVarianceWarning
from .build import create_cnt_ptable, create_num_ptable
from .io import read_ptable, write_ptable
from .lookup import magnitude_noise
from .table import PTable, ons_pcv

__all__ = [
    "PTable",
    "PTableVarianceWarning",
    "create_cnt_ptable",
    "create_num_ptable",
    "magnitude_noise",
    "ons_pcv",
    "read_ptable",
    "write_ptable",
]
