"""``geom_noise``: draw a private layer's interval variables in one word.

``pp.geom_noise()`` with no arguments, added after a private layer,
draws that layer's intervals: the same stat object's parameters, data and
mapping, so it is the *same release* (same public identity and seed: the
same noise, charged once), at the positions of that layer's marks
(stacked, filled or dodged as they are: :mod:`.noise_position`). It only
draws what that release already computed: ``count_low``/``count_high``
as error bars on bars and histograms, ``density_low``/``density_high``
and ``ecdf_low``/``ecdf_high`` as ribbons, the median's interval on box
plots, and ``y_low``/``y_high`` on summaries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotnine
from plotnine import aes, after_stat, stage

from .._compat import given_arguments, layer_own_data
from ..declarations import Registered, declared, registered
from ..exceptions import PlotninePrivateError
from .noise_position import geom_errorbar_of_layer, position_of_layer

__all__ = ["geom_noise"]


def geom_noise(
    mapping: Any = None,
    data: Any = None,
    *,
    stat: str | None = None,
    variable: str | None = None,
    **params: Any,
) -> NoiseLayer:
    """The intervals of a private layer, drawn: error bars, a ribbon or
    the median's interval, at the layer's ``level``.

    Parameters
    ----------
    mapping, data
        Added to the annotated layer's own (rarely needed).
    stat
        Not needed after a private layer (its stat is taken). Alone, the
        stat to draw the intervals of, e.g. ``"count_dp"``, with its
        parameters in ``params``.
    variable
        The computed variable whose interval is drawn (default: the one
        the annotated layer maps to ``y`` if it has an interval, else
        ``count`` for bars and histograms, ``density``, ``ecdf``,
        ``middle`` for box plots, ``y`` for summaries); e.g. ``"prop"``.
    **params
        The geom's own parameters (width, alpha, colour ...). After a
        private layer, a stat parameter that differs from that layer's
        (another ``seed``, ``eps``) is refused: it would be a second
        release, charged again, whose intervals belong to other bars.

    Examples
    --------
    >>> from plotnine import ggplot, aes, geom_bar
    >>> from plotnine.data import mpg
    >>> import plotnine_private as pp
    >>> p = (ggplot(mpg, aes("class", fill="drv"))
    ...      + geom_bar(stat="count_dp", eps=1, seed=3,
    ...                 levels=sorted(mpg["class"].unique()))
    ...      + pp.geom_noise())
    >>> bars, noise = pp.layer_data(p, 0), pp.layer_data(p, 1)
    >>> bool((noise["y"] == bars["ymax"]).all())  # on the stacked tops
    True
    """
    if stat is not None:
        _drawn(declared(str(stat)), stat)
    return NoiseLayer(mapping, data, stat, variable, params)


class NoiseLayer:
    """What ``geom_noise`` returns: a layer made when it is added to a
    plot, from the private layer before it."""

    def __init__(
        self,
        mapping: Any,
        data: Any,
        stat: str | None,
        variable: str | None,
        params: dict[str, Any],
    ) -> None:
        self.mapping = mapping
        self.data = data
        self.stat = stat
        self.variable = variable
        self.params = dict(params)

    def __radd__(self, plot: Any) -> Any:
        target = _annotated(plot, self.stat)
        if target is None:
            if self.stat is None:
                raise PlotninePrivateError(
                    "geom_noise() draws the intervals of the private layer "
                    "before it, and this plot has none: add it after a "
                    "layer such as geom_bar(stat='count_dp', eps=1, "
                    "seed=3), or name the stat and its parameters: "
                    "pp.geom_noise(stat='count_dp', eps=1, seed=3)."
                )
            return self._alone().__radd__(plot)
        return self._over(target, plot.mapping).__radd__(plot)

    def _alone(self) -> Any:
        entry = declared(str(self.stat))
        draw = _drawn(entry, self.stat)
        var = draw.variable if self.variable is None else str(self.variable)
        geom = getattr(plotnine, f"geom_{draw.geom}")
        return geom(
            _interval(draw, var, self.mapping),
            self.data,
            stat=self.stat,
            **{**draw.params, **self.params},
        )

    def _over(self, layer: Any, inherited: Any) -> Any:
        entry = declared(layer.stat)
        assert entry is not None  # _annotated found a registered stat
        draw = _drawn(entry, entry.name)
        accepted = set(type(layer.stat).DEFAULT_PARAMS)
        # the parameters as the user gave them (the stat keeps them
        # normalised: fun="median" is a quantile with its q)
        given = {
            k: v
            for k, v in given_arguments(layer.stat).items()
            if k in accepted and k not in ("geom", "position", "na_rm")
        }
        looks = {**draw.params, **self.params}
        own: dict[str, Any] = {}
        if draw.geom == "errorbar":
            # the interval's width, not the stat's (see the geom)
            own["interval_width"] = looks.pop("width", 0.5)
        asked = {}
        for key, value in looks.items():
            if key not in accepted or key in ("position", "na_rm"):
                own[key] = value
            else:
                asked[key] = value
        if asked:
            again = _as_made(type(layer.stat), asked, given)
            for key, value in asked.items():
                before = layer.stat.params.get(key)
                if not _same(again.get(key), before):
                    raise PlotninePrivateError(
                        f"geom_noise(): {key}={value!r} differs from the "
                        f"layer it annotates ({entry.name}, {key}="
                        f"{before!r}): its intervals would be those of a "
                        "second release, charged again, not of the drawn "
                        "marks. Drop the stat's parameters: "
                        "pp.geom_noise() takes them from the layer."
                    )
        var = self.variable or _mapped_variable(layer, entry) or draw.variable
        mapping = dict(layer.mapping)
        if layer.inherit_aes and "y" in inherited and "y" not in mapping:
            mapping["y"] = inherited["y"]  # the y the stat reads
        if self.mapping is not None:
            mapping.update(self.mapping)
        mapping = _interval(draw, var, _drawn_y(mapping, var))
        geom = (
            geom_errorbar_of_layer
            if draw.geom == "errorbar"
            else getattr(plotnine, f"geom_{draw.geom}")
        )
        data = self.data if self.data is not None else layer_own_data(layer)
        # the layer's own stat object: the same parameters, so the same
        # release (a stat keeps nothing of a build on itself)
        return geom(
            mapping,
            data,
            stat=layer.stat,
            inherit_aes=layer.inherit_aes,
            **{
                "position": position_of_layer.over(layer.position, layer.geom),
                **own,
            },
        )


def _as_made(cls: type, asked: dict, given: dict) -> dict:
    """The parameters a stat of ``cls`` keeps when made with ``asked`` (a
    stat may normalise them: fun="median" is a quantile): made from them
    alone, or over the layer's (a stat may need others to be made); the
    values as given where neither makes a stat."""
    for args in (asked, {**given, **asked}):
        try:
            return dict(cls(**args).params)
        except (PlotninePrivateError, TypeError, ValueError):
            continue
    return dict(asked)


def _drawn(entry: Registered | None, stat: Any) -> Any:
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
    return draw


def _annotated(plot: Any, stat: str | None) -> Any:
    """The last layer of ``plot`` with a stat that draws intervals (of
    ``stat`` if given)."""
    want = None if stat is None else declared(str(stat))
    for layer in reversed(getattr(plot, "layers", [])):
        entry = declared(layer.stat)
        if entry is None or entry.declaration.noise_geom is None:
            continue
        if want is None or entry.cls is want.cls:
            return layer
    return None


def _mapped_variable(layer: Any, entry: Registered) -> str | None:
    """The computed variable the layer maps to ``y``, if it has an
    interval (``prop`` of ``aes(y=after_stat("prop"))``)."""
    staged = layer.mapping.get("y")
    name = getattr(staged, "after_stat", None)
    draw = entry.declaration.noise_geom
    if not isinstance(name, str) or draw is None or draw.fixed:
        return None
    return name if name in entry.declaration.intervals else None


def _drawn_y(mapping: dict, var: str) -> dict:
    """``y`` after the stat is the drawn variable; a ``y`` the stat reads
    (a box plot's ``aes(y="hwy")``) stays its input."""
    given = mapping.get("y")
    start = getattr(given, "start", given)
    if isinstance(given, stage) and given.after_stat is not None:
        start = None  # aes(y=after_stat("prop")): no input
    if start is None:
        return {**mapping, "y": after_stat(var)}
    return {**mapping, "y": stage(start=start, after_stat=var)}


def _interval(draw: Any, var: str, mapping: Any) -> Any:
    of = draw.variable if draw.fixed else var
    interval = aes(ymin=after_stat(f"{of}_low"), ymax=after_stat(f"{of}_high"))
    if draw.geom == "ribbon":
        interval = aes(**interval, y=after_stat(var))
    if mapping is not None:
        interval = aes(**{**mapping, **interval})
    return interval


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays: equal element by element
        try:
            return bool(np.array_equal(a, b))
        except (TypeError, ValueError):
            return a is b
