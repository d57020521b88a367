"""Signal against noise, said out loud: warnings when eps or the released
values cannot support what a layer draws.

Two kinds of fact are used, and no other (DESIGN rule 13):

* **public facts** (``eps``, the mechanism, and the number of rows of the
  layer's data, which is public under ``adjacency="replace"``: neighbours
  have the same size). :func:`warn_eps_scale` and the ``eps > 10`` check
  of :func:`~plotnine_private.validation.validate_eps` read only these, so
  the warning is identical on neighbouring data sets;
* **released values** (post-processing, free): the interval variables of
  :mod:`plotnine_private.stats.intervals` compared with what the layer
  draws (:func:`warn_wide`).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..mechanisms.errors import PrivacyWarning

__all__ = [
    "EPS_HIGH",
    "expected_abs_noise",
    "warn",
    "warn_eps_scale",
]

#: above this eps a release gives little protection: one record can make
#: an output e**10 (about 22,000) times more likely
EPS_HIGH = 10.0


def warn(name: str, message: str) -> None:
    """A :class:`PrivacyWarning` prefixed with the stat's name."""
    warnings.warn(f"{name}: {message}", PrivacyWarning, stacklevel=3)


def expected_abs_noise(scale: float, noise: str = "discrete_laplace") -> float:
    """``E|N|`` of the count noise of scale ``scale``.

    Discrete Laplace, ``p = exp(-1/b)``: ``2p / (1 - p^2)``; continuous
    Laplace rounded to an integer: ``sum_k P(|N| >= k) = exp(1/(2b)) q /
    (1 - q)`` with ``q = exp(-1/b)``.

    >>> round(expected_abs_noise(2.0), 3), round(expected_abs_noise(1e3))
    (1.042, 1000)
    """
    q = math.exp(-1.0 / scale)
    if noise == "discrete_laplace":
        return 2 * q / (1 - q * q)
    return math.exp(0.5 / scale) * q / (1 - q)


def warn_eps_scale(
    stat: Any,
    n_rows: int,
    mechanism: Any,
    error: float | None = None,
    total: float | None = None,
    what: str = "records",
) -> None:
    """Warn when eps is so small that one cell's expected noise exceeds the
    layer's public total scale: its number of rows (public under
    ``adjacency="replace"``; under ``"add_remove"`` the size is private
    and nothing is said), or ``total`` when given (e.g. rows times the
    largest bound for a sum).

    Parameters
    ----------
    stat
        The stat (for its name).
    n_rows
        Rows of the layer's data before anything is left out.
    mechanism
        The layer's mechanism (``adjacency``, ``eps``; ``scale`` and
        ``noise`` unless ``error`` is given).
    error
        Expected absolute noise of one cell (default: of the count noise).
    total
        The public total scale (default: ``n_rows``).
    what
        Unit words for the message.
    """
    if getattr(mechanism, "adjacency", None) != "replace":
        return
    if error is None:
        error = expected_abs_noise(float(mechanism.scale), mechanism.noise)
    total = float(n_rows if total is None else total)
    if error <= total:
        return
    eps = float(mechanism.eps)
    # the expected noise falls as 1/eps once it is large
    need = eps * error / max(total, 1.0)
    warn(
        stat.name,
        f"eps={eps:.4g} is so small that the expected noise of one cell "
        f"({error:,.4g} {what}) exceeds the layer's public total scale "
        f"({total:,.4g} {what}, from its {n_rows:,} rows): the figure "
        f"shows noise, not data. Use eps >= {need:.3g} (plan it with "
        "pp.eps_for).",
    )
