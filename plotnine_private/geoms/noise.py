"""``geom_noise``: draw a private layer's interval variables in one word.

The layer it returns uses the same stat and parameters as the layer it
annotates, so it is the *same release* (same public identity and seed:
the same noise, charged once) and only draws what that release already
computed: ``count_low``/``count_high`` as error bars on bars and
histograms, ``density_low``/``density_high`` and ``ecdf_low``/
``ecdf_high`` as ribbons, the median's interval on box plots, and
``y_low``/``y_high`` on summaries.
"""

from __future__ import annotations

from typing import Any

import plotnine
from plotnine import aes, after_stat

from ..declarations import declared, registered
from ..exceptions import PlotninePrivateError

__all__ = ["geom_noise"]


def geom_noise(
    mapping: Any = None,
    data: Any = None,
    *,
    stat: str,
    variable: str | None = None,
    **params: Any,
):
    """The intervals of a private layer, drawn: error bars, a ribbon or
    the median's interval, at the layer's ``level``.

    Parameters
    ----------
    mapping, data
        As in any geom (give the layer's own if it has them).
    stat
        The annotated layer's stat, e.g. ``"count_dp"``, ``"density_dp"``
        (``_dp`` or ``_ckm``).
    variable
        The computed variable whose interval is drawn (default: ``count``
        for bars and histograms, ``density``, ``ecdf``, ``middle`` for
        box plots, ``y`` for summaries); e.g. ``"prop"``, ``"upper"``.
    **params
        The annotated layer's parameters (eps, seed, limits, level ...)
        and the geom's own (width, alpha, colour ...).

    Examples
    --------
    >>> from plotnine import ggplot, aes, geom_bar
    >>> from plotnine.data import mpg
    >>> import plotnine_private as pp
    >>> kw = dict(stat="count_dp", eps=1, seed=3,
    ...           levels=sorted(mpg["class"].unique()))
    >>> p = (ggplot(mpg, aes("class")) + geom_bar(**kw)
    ...      + pp.geom_noise(**kw))
    >>> data = pp.layer_data(p, 1)
    >>> bool((data["ymin"] <= data["ymax"]).all())
    True
    """
    entry = declared(str(stat))
    draw = None if entry is None else entry.declaration.noise_geom
    if entry is None or draw is None:
        drawn = sorted(
            e.name
            for e in registered(aliases=False)
            if e.mechanism == "dp" and e.declaration.noise_geom is not None
        )
        raise PlotninePrivateError(
            f"geom_noise(): stat={stat!r} has no drawn interval; use one of "
            f"{drawn} (or their _ckm twins). "
            "Tiles and hexagons carry count_low/count_high for labels: "
            "aes(label=after_stat('count_high'))."
        )
    var = draw.variable if variable is None else str(variable)
    of = draw.variable if draw.fixed else var
    interval = aes(ymin=after_stat(f"{of}_low"), ymax=after_stat(f"{of}_high"))
    if draw.geom == "ribbon":
        interval = aes(**interval, y=after_stat(var))
    if mapping is not None:
        interval = aes(**{**mapping, **interval})
    geom = getattr(plotnine, f"geom_{draw.geom}")
    return geom(interval, data, stat=stat, **{**draw.params, **params})
