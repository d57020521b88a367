"""The privacy report of a plot and its plot-level budget.

Each private layer records typed
:class:`~plotnine_private.mechanisms.release.engine.Release` s while the plot
is
built (the release engine decides their identity and cost);
:func:`privacy_report` builds a copy of the plot and composes them:

* **identical releases count once**: releases with the same public
  identity (same source, query and seed: a bar layer and its text layer)
  are one release; later copies are charged nothing;
* **parallel composition** over declared facets is part of a release's own
  privacy map (one histogram over all panels), so it needs nothing here;
* **sequential composition** (sum of eps and of delta) for everything
  else: across layers and for a private range estimate;
* **CKM** releases have no formal guarantee and no eps: they appear in the
  report with their p-table but add nothing to the total;
* a layer without a mechanism (``geom_blank``, a layer on raw data) is
  **not protected**: the report says which axis it trains.

Nothing here depends on the data's content. :func:`privacy_budget` caps
the composed cost of a plot: drawing, saving or displaying a plot whose
layers compose to more raises
:class:`~plotnine_private.exceptions.BudgetExceededError` before anything
is drawn.
"""

from .budget import PrivacyBudget, privacy_budget
from .composition import COLUMNS, POLICY_WORDS
from .presentation import PrivacyReport, privacy_report, report_from_built

__all__ = [
    "COLUMNS",
    "POLICY_WORDS",
    "PrivacyBudget",
    "PrivacyReport",
    "privacy_budget",
    "privacy_report",
    "report_from_built",
]
