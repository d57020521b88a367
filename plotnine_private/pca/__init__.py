"""Differentially private PCA score plots: ``dp_pca`` and ``dp_score``.

Modelled on the R package dppca (its newest state): private directions
(g-DPPCA on the spherical Kendall matrix), private eigenvalues (dppca's
"clipped" scree), a private square frame (Durfee quantiles) and a private
2-D histogram of the scores ("add" or "sparse"), from which synthetic
points can be drawn for free.

Privacy model
-------------
* Adjacency: **replace one row**; ``n``, ``p`` and the column names are
  public. Group and panel sizes are **not**: no released number, noise
  scale, threshold or point count depends on them.
* Budget: ``eps`` and ``delta`` are split by ``split`` (default thirds)
  into loading / scree / score; the score part is split 0.35 (frame,
  pure DP, ``eps/3`` for each of its three quantiles) / 0.65 (histogram,
  with all the score ``delta``). The total is the sum of the parts
  (sequential composition); see :attr:`DPPCAResult.privacy`. Groups and
  declared facet panels partition the rows, so the histograms of all of
  them are one histogram (parallel composition).
* Identity and noise come from the release engine: the query is public,
  each component's noise is keyed by the query's identity and a digest
  of the data it perturbs.
* **Centring: no data-dependent preprocessing.** dppca centres (and
  optionally standardises) with the sample means and SDs, which are not
  private: one row then moves every score. Here the directions need no
  centring (the Kendall matrix is translation invariant), the
  eigenvalues use paired differences (translation invariant too), and the
  scores are the raw projections ``X v``. ``center=True`` is *display*
  centring by the **private** frame centre (post-processing).
  Standardisation is only by **public** scales (``scale=``).
* Non-private references (ordinary PCA) are computed only with
  ``reference=True`` and are labelled "not private" wherever shown.

Modules: :mod:`.validation` (parameter checks), :mod:`.fit` (the run),
:mod:`.result` (:class:`DPPCAResult`), :mod:`.plots` (its figures),
:mod:`.api` (the two functions).
"""

from __future__ import annotations

from .api import dp_pca, dp_score
from .result import DPPCAResult

__all__ = ["DPPCAResult", "dp_pca", "dp_score"]
