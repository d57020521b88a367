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

from plotnine import (
    aes,
    after_stat,
    geom_errorbar,
    geom_ribbon,
)

from ..exceptions import PlotninePrivateError

__all__ = ["geom_noise"]

#: stat family -> (geom, the mapped interval variables, default params)
_DRAW: dict[str, tuple[Any, dict[str, str], dict[str, Any]]] = {
    "count": (geom_errorbar, {"ymin": "low", "ymax": "high"}, {"width": 0.3}),
    "bin": (geom_errorbar, {"ymin": "low", "ymax": "high"}, {"width": 0.0}),
    "density": (
        geom_ribbon,
        {"ymin": "low", "ymax": "high"},
        {"alpha": 0.3, "outline_type": "full", "size": 0},
    ),
    "ecdf": (
        geom_ribbon,
        {"ymin": "low", "ymax": "high"},
        {"alpha": 0.3, "size": 0},
    ),
    "boxplot": (
        geom_errorbar,
        {"ymin": "low", "ymax": "high"},
        {"width": 0.3, "color": "firebrick"},
    ),
    "summary": (
        geom_errorbar,
        {"ymin": "low", "ymax": "high"},
        {"width": 0.2},
    ),
}

#: the variable drawn by default per family
_VARIABLE = {
    "count": "count",
    "bin": "count",
    "density": "density",
    "ecdf": "ecdf",
    "boxplot": "middle",
    "summary": "y",
}


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
    family, _, mech = str(stat).rpartition("_")
    if mech not in ("dp", "ckm") or family not in _DRAW:
        raise PlotninePrivateError(
            f"geom_noise(): stat={stat!r} has no drawn interval; use one of "
            f"{sorted(f + '_dp' for f in _DRAW)} (or their _ckm twins). "
            "Tiles and hexagons carry count_low/count_high for labels: "
            "aes(label=after_stat('count_high'))."
        )
    geom, ends, defaults = _DRAW[family]
    var = _VARIABLE[family] if variable is None else str(variable)
    interval = aes(
        **{
            ae: after_stat(
                f"{var}_{end}" if family != "summary" else f"y_{end}"
            )
            for ae, end in ends.items()
        }
    )
    if family in ("density", "ecdf"):
        interval = aes(**interval, y=after_stat(var))
    if mapping is not None:
        interval = aes(**{**mapping, **interval})
    return geom(interval, data, stat=stat, **{**defaults, **params})
