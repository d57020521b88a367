"""Signal against noise, said out loud: warnings when eps or the released
values cannot support what a layer draws.

Two kinds of fact are used, and no other (DESIGN rule 13):

* **public facts** (``eps``, the mechanism, and the ``total`` parameter:
  a public number of records such as a survey's size; never the rows
  handed to the layer, which may be a filtered subset of private size).
  :func:`warn_eps_scale` and the ``eps > 10`` check of
  :func:`~plotnine_private.validation.validate_eps` read only these, so
  the warning is identical on neighbouring data sets;
* **released values** (post-processing, free): the interval variables of
  :mod:`plotnine_private.stats.intervals` compared with what the layer
  draws (:func:`warn_wide`).
"""

from __future__ import annotations

import contextvars
import math
import warnings
from typing import Any

import numpy as np

from ..declarations import twin
from ..mechanisms.errors import PrivacyWarning

__all__ = [
    "BOX_SHARE",
    "EPS_HIGH",
    "ZERO_SHARE",
    "SignalWarning",
    "drawn_as",
    "expected_abs_noise",
    "new_figure",
    "planned_name",
    "warn",
    "warn_box_width",
    "warn_density_zero",
    "warn_eps_scale",
    "warn_once",
]

#: a quartile interval wider than this share of the limits is too wide to
#: show a box
BOX_SHARE = 0.25
#: a density band holding 0 over this share of the curve is noise
ZERO_SHARE = 0.9


class SignalWarning(PrivacyWarning):
    """The released values cannot support what a layer draws.

    Unlike other privacy warnings it is computed from released values
    (post-processing, rule 13), so its presence and numbers change with
    the noise, as the drawn numbers do.
    """


#: above this eps a release gives little protection: one record can make
#: an output e**10 (about 22,000) times more likely
EPS_HIGH = 10.0


def planned_name(stat: Any) -> str:
    """The name to plan a stat's family with (``pp.eps_for(name, ...)``):
    the DP stat of its declared family."""
    decl = getattr(stat, "DECLARATION", None)
    entry = None if decl is None else twin(decl.family, "dp")
    return "<the DP stat>" if entry is None else entry.name


def warn(name: str, message: str, cause: str = "") -> None:
    """A :class:`PrivacyWarning` prefixed with the stat's name, once per
    figure and ``cause`` (:func:`warn_once`; without a cause, per
    message)."""
    warn_once((name, cause or message), f"{name}: {message}", PrivacyWarning)


#: how a layer draws its noise marks, by its ``noise_marks``
DRAWN = {
    "fade": "drawn faded",
    "drop": "left out of the drawing",
    "draw": "drawn as the others",
}


def drawn_as(stat: Any) -> str:
    """How the stat's noise marks are drawn, for a warning: "drawn faded
    (noise_marks='fade')"."""
    how = stat.params.get("noise_marks", "fade")
    return f"{DRAWN.get(how, how)} (noise_marks={how!r})"


def expected_abs_noise(scale: float, noise: str = "discrete_laplace") -> float:
    """``E|N|`` of the count noise of scale ``scale``.

    Discrete Laplace, ``p = exp(-1/b)``: ``2p / (1 - p^2)``; continuous
    Laplace rounded to an integer: ``sum_k P(|N| >= k) = exp(1/(2b)) q /
    (1 - q)`` with ``q = exp(-1/b)``.

    >>> round(expected_abs_noise(2.0), 3), round(expected_abs_noise(1e3))
    (1.919, 1000)
    """
    q = math.exp(-1.0 / scale)
    if noise == "discrete_laplace":
        return 2 * q / (1 - q * q)
    return math.exp(0.5 / scale) * q / (1 - q)


def validate_total(name: str, total: Any) -> float | None:
    """``total``: None or a public number of records > 0."""
    if total is None:
        return None
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        ok = False
    else:
        ok = math.isfinite(total) and total > 0
    if not ok:
        from ..validation import fail

        raise fail(
            name,
            f"total must be None or a public number of records > 0 (e.g. "
            f"the survey's size, known without this data), got {total!r}.",
        )
    return float(total)


def warn_eps_scale(
    stat: Any,
    total: float | None,
    mechanism: Any,
    error: float | None = None,
    what: str = "records",
) -> None:
    """Warn when eps is so small that one cell's expected noise exceeds
    the layer's public total scale: the ``total`` parameter, a public
    number of records (a survey's size). The number of rows of the data
    handed to the layer is *not* used: it may be a filtered subset whose
    size is private, so without ``total`` nothing is said.

    Parameters
    ----------
    stat
        The stat (for its name).
    total
        The public total scale, in the units of ``error``, or None.
    mechanism
        The layer's mechanism (``eps``; ``scale`` and ``noise`` unless
        ``error`` is given).
    error
        Expected absolute noise of one cell (default: of the count noise).
    what
        Unit words for the message.
    """
    if total is None:
        return
    if error is None:
        error = expected_abs_noise(float(mechanism.scale), mechanism.noise)
    if error <= total:
        return
    eps = float(mechanism.eps)
    # the expected noise falls as 1/eps once it is large
    need = eps * error / max(total, 1.0)
    warn(
        stat.name,
        f"eps={eps:.4g} is so small that the expected noise of one cell "
        f"({error:,.4g} {what}) exceeds the layer's public total scale "
        f"({total:,.4g} {what}): the figure shows noise, not data. Use "
        f"eps >= {need:.3g} (plan it with pp.eps_for).",
        cause=f"eps_scale {what}",
    )


def _groups(out, cols) -> str:
    names = [str(v) for v in out[cols].drop_duplicates().to_numpy().ravel()]
    return ", ".join(names[:6]) + (" ..." if len(names) > 6 else "")


def warn_box_width(stat: Any, out: Any, level: float) -> None:
    """A box whose quartile intervals span more than ``BOX_SHARE`` of the
    limits: its quartiles are not shown by the released values."""
    lo, hi = stat.interval_range()
    span = hi - lo
    # column by column: a frame's selection of a list of columns costs
    # more than the arithmetic (2.5 ms a selection)
    width = np.max(
        [
            out[f"{q}_high"].to_numpy(dtype=float)
            - out[f"{q}_low"].to_numpy(dtype=float)
            for q in ("lower", "middle", "upper")
        ],
        axis=0,
    )
    bad = width > BOX_SHARE * span
    if not bad.any():
        return
    which = _groups(out[bad], ["x"]) if "x" in out.columns else "the box"
    share = float(width[bad].max() / span)
    warn_once(
        (stat.name, "box width"),
        f"{stat.name}: the {level:.0%} interval of a quartile spans up to "
        f"{share:.0%} of the limits ({lo:g}, {hi:g}) for {int(bad.sum())} "
        f"box(es) ({which}): the boxes show noise, not quartiles, and are "
        f"{drawn_as(stat)}. Use more "
        f"eps (plan it with pp.eps_for({planned_name(stat)!r}, error=..., "
        "n=...)), fewer fine bins (bins=...), or fewer boxes.",
        SignalWarning,
        stacklevel=3,
    )


def warn_density_zero(stat: Any, out: Any, level: float) -> None:
    """A density whose band includes 0 over ``ZERO_SHARE`` of its curve."""
    # each group's share of points whose band reaches 0 (as a groupby's
    # mean of the booleans: the count over the size)
    _, group = np.unique(out["group"].to_numpy(), return_inverse=True)
    low = out["density_low"].to_numpy() <= 0
    zero = np.bincount(group, weights=low) / np.bincount(group)
    bad = zero[zero >= ZERO_SHARE]
    if not len(bad):
        return
    warn_once(
        (stat.name, "density zero"),
        f"{stat.name}: the {level:.0%} band of {len(bad)} of "
        f"{len(zero)} group(s) includes 0 over {float(bad.min()):.0%} or "
        "more of the curve: the released density cannot be told from "
        f"noise; such curves are {drawn_as(stat)}. Use more eps (plan it with "
        f"pp.eps_for({planned_name(stat)!r}, ...)), fewer fine bins "
        "(bins=64), a wider bandwidth (adjust=2) "
        "or fewer groups.",
        SignalWarning,
        stacklevel=3,
    )


# --------------------------------------------------------------------------
# one warning per figure and cause
# --------------------------------------------------------------------------
#: the causes already warned of in the figure being built (None outside
#: a figure's build: then every warning is given)
_SEEN: contextvars.ContextVar[set | None] = contextvars.ContextVar(
    "plotnine_private_seen_warnings", default=None
)


def new_figure() -> None:
    """A figure's build starts: its warnings are given once per cause."""
    _SEEN.set(set())


def warn_once(
    cause: tuple,
    message: str,
    category: type[Warning] = PrivacyWarning,
    stacklevel: int = 3,
) -> None:
    """``warnings.warn(message, category)`` unless the figure being built
    already gave a warning of this ``cause`` (a layer drawn twice, a
    noise layer over its layer)."""
    seen = _SEEN.get()
    if seen is not None:
        if cause in seen:
            return
        seen.add(cause)
    warnings.warn(message, category, stacklevel=stacklevel + 1)
