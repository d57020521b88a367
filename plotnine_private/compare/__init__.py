"""One plot three ways: unperturbed, DP and CKM, side by side
(:func:`compare`); the private panels share their scales.

The comparison is for the person who makes a private plot, inside the
secure environment: it shows what the noise does. Its unperturbed panel
is the ordinary plotnine plot of the raw data and is marked "unperturbed:
not for release"; only the private panels may leave.

How the panels are made from one plot with private layers:

* **unperturbed**: every private stat is swapped for the counterpart
  its declaration names (``pp.stats()["counterpart"]``: plotnine's own,
  our non-private ``bin_hex``, or for the DP PCA score an ordinary PCA
  of the rows, its scores binned alike), on the edges the private layer
  used (so bars and tiles line up), with the declared
  ``counterpart_params`` and the stat's own ``counterpart_arguments``
  (a density's bandwidth as a number) and the summary's function
  (exact, drawn without a range);
* **DP**: DP layers as they are; CKM layers become their DP twin with the
  parameters of ``dp=dict(eps=..., seed=...)``;
* **CKM**: CKM layers as they are; DP layers become their CKM twin with
  ``ckm=dict(ptable=..., rkey="<record key column>")`` (summaries also
  ``num_ptable=``). Bins a DP layer estimated privately (a released
  range) are given to the twin as public edges. The DP PCA score has no
  CKM version: with it the CKM panel is left out.

Captions: the count noise of each private panel (:func:`~plotnine_private.
noise_interval`) and, for curves, boxes and summaries, the widest
half-width of the interval variables they draw (post-processing of
released values).

The modules: :mod:`.families` (which stat each becomes, and with which
parameters), :mod:`.plain_pca` (the unperturbed PCA score stat),
:mod:`.versions` (swapping the stats), :mod:`.scales` (the shared
scales), :mod:`.comparison` (:func:`compare`, :class:`Comparison`).

Shared scales: the plots are built, and the trained limits of every
scale of the *private* panels are joined (union of ranges, union of
levels) and applied to each private panel: continuous positions through
``coord_cartesian(xlim, ylim)`` (which zooms and changes no stat: position
scale limits would change what a private layer releases), colour, fill,
size and other scales through their own limits. Those limits come from
released values and public parameters only, so a private panel (which may
leave the secure environment) never shows where the raw data lie. The
unperturbed panel keeps its own scales (trained on raw data) and is
marked. Discrete positions whose levels differ between the private panels
(an undeclared domain, released with a threshold) are not joined: a
private panel shows what it released.

A :class:`Comparison` cannot be passed to ``save_release``: it holds the
unperturbed panel; save one of its private plots instead.
"""

from __future__ import annotations

from .comparison import MARKER, Comparison, compare

__all__ = ["MARKER", "Comparison", "compare"]
