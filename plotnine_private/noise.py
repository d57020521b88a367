"""Noise you can see: the interval of each private layer's noise.

:func:`noise_interval` reads the release records a build of the plot
produces (:class:`~plotnine_private.mechanisms.release.Release`: the
mechanism, its scale, eps and delta) and, for CKM layers, the layer's
p-table. Those are public parameters: the interval never depends on the
data, only on how the noise is drawn.

* **Discrete Laplace** (``noise="discrete_laplace"``) of scale ``b``
  (sensitivity / eps), ``p = exp(-1/b)``: ``P(|N| <= k) = 1 - 2 p^(k+1) /
  (1 + p)``; the interval is the smallest ``[-k, k]`` holding at least
  ``level`` of the mass.
* **Laplace, rounded** (``noise="laplace"``): the noise of a count is
  ``round(L)``, ``P(|round(L)| <= k) = 1 - exp(-(k + 1/2) / b)``.
* **Cell Key Method**: the noise of a cell with count ``n`` is row
  ``min(n, max_i)`` of the p-table at a uniform cell key, so it depends on
  the cell's count. The interval given is the smallest symmetric one
  holding ``level`` of the mass of every row used by *large* cells
  (``n >= max_i``: the last row; ONS tables cycle through their last
  rows); smaller cells use their own rows, zero cells stay 0, and no cell
  moves by more than ``D``.
* **PCA score histogram**: Gaussian noise (``method="add"``, ``±z
  sigma``) or Laplace noise on shown tiles (``"sparse"``) on each tile's
  count; the principal axes and the frame are private estimates too and
  are not covered.

The interval is for the noise of the unclipped noisy count
(``noisy_count - true count``); released counts are clipped at 0.
"""

from __future__ import annotations

import math
from copy import deepcopy
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ._compat import build
from .exceptions import PlotninePrivateError
from .mechanisms.gaussian import gaussian_sigma
from .mechanisms.ptable import ons_pcv
from .stats.dp_pca_score import stat_dp_pca_score

if TYPE_CHECKING:
    from plotnine import ggplot

    from .mechanisms.ptable import PTable
    from .mechanisms.release import Release

__all__ = [
    "NoiseIntervals",
    "ckm_interval",
    "dlap_interval",
    "intervals_of_built",
    "noise_caption",
    "noise_interval",
    "rounded_laplace_interval",
]

COLUMNS = [
    "layer",
    "stat",
    "mechanism",
    "eps",
    "level",
    "low",
    "high",
    "coverage",
    "scale",
    "note",
]


# --------------------------------------------------------------------------
# intervals of one noise distribution
# --------------------------------------------------------------------------
def _check_level(level: Any) -> float:
    if (
        isinstance(level, bool)
        or not isinstance(level, (int, float, np.floating))
        or not (0 < float(level) < 1)
    ):
        raise PlotninePrivateError(
            f"noise_interval(): level must be a number strictly between 0 "
            f"and 1, got {level!r}; use e.g. level=0.95."
        )
    return float(level)


def dlap_interval(scale: float, level: float) -> tuple[int, float]:
    """Smallest ``k`` with ``P(|N| <= k) >= level`` for ``N ~ DLap(scale)``,
    and that probability.

    >>> k, cov = dlap_interval(2.0, 0.95)
    >>> k, round(cov, 4)
    (6, 0.9624)
    """
    p = math.exp(-1.0 / scale)
    if p == 0.0:  # a vanishing scale: no noise at all
        return 0, 1.0

    def cover(k: int) -> float:
        return 1.0 - 2.0 * p ** (k + 1) / (1.0 + p)

    # p^(k+1) <= (1 - level)(1 + p)/2, then correct float rounding
    k = max(
        0, math.ceil(math.log((1 - level) * (1 + p) / 2) / math.log(p)) - 1
    )
    while k > 0 and cover(k - 1) >= level:
        k -= 1
    while cover(k) < level:
        k += 1
    return k, cover(k)


def rounded_laplace_interval(scale: float, level: float) -> tuple[int, float]:
    """Smallest ``k`` with ``P(|round(L)| <= k) >= level``, ``L ~
    Laplace(scale)`` (the ``noise="laplace"`` option), and that
    probability.

    >>> rounded_laplace_interval(2.0, 0.95)[0]
    6
    """

    def cover(k: int) -> float:
        return 1.0 - math.exp(-(k + 0.5) / scale)

    k = max(0, math.ceil(scale * math.log(1 / (1 - level)) - 0.5))
    while k > 0 and cover(k - 1) >= level:
        k -= 1
    while cover(k) < level:
        k += 1
    return k, cover(k)


def _row_distributions(ptable: PTable) -> dict[int, pd.Series]:
    """Noise distribution (deviation -> probability) of each p-table row
    at a uniform cell key."""
    t = ptable.table
    t["mass"] = t["p_int_ub"] - t["p_int_lb"]
    return {
        # pandas-stubs type a group key as any scalar: here a row number
        int(i): g.groupby("v")["mass"].sum()  # type: ignore[arg-type]
        for i, g in t.groupby("i", sort=True)
    }


def large_cell_rows(ptable: PTable) -> list[int]:
    """The p-table rows that perturb counts ``>= max_i``: the last row of
    an R-style table, the cycled rows of an ONS table."""
    top = ptable.max_i
    if ptable.key_kind == "integer":
        counts = np.arange(top + 1, 2 * top + 2)
        return sorted(set(ons_pcv(counts, top).tolist()))
    return [top]


def ckm_interval(
    ptable: PTable, level: float, rows: list[int] | None = None
) -> tuple[float, float, float]:
    """``(low, high, coverage)``: the smallest symmetric interval holding
    at least ``level`` of the noise of every row in ``rows`` (default: the
    rows of large cells), cut to the deviations the rows can take, and the
    smallest mass it holds over those rows.

    >>> from plotnine_private.mechanisms.ptable import create_cnt_ptable
    >>> low, high, cov = ckm_interval(create_cnt_ptable(D=2, V=0.9), 0.95)
    >>> (low, high)
    (-2.0, 2.0)
    """
    dists = _row_distributions(ptable)
    rows = large_cell_rows(ptable) if rows is None else rows
    k = 0.0
    for r in rows:
        d = dists[r]
        mags = np.sort(np.unique(np.abs(d.index.to_numpy(dtype=float))))
        for m in mags:
            if d[np.abs(d.index.to_numpy(dtype=float)) <= m].sum() >= (
                level - 1e-12
            ):
                k = max(k, float(m))
                break
    low = max(-k, min(float(dists[r].index.min()) for r in rows))
    high = min(k, max(float(dists[r].index.max()) for r in rows))
    coverage = min(
        float(
            dists[r][(dists[r].index >= low) & (dists[r].index <= high)].sum()
        )
        for r in rows
    )
    return low, high, coverage


def count_noise_bounds(
    release: Release, level: float, ptable: PTable | None = None
) -> tuple[float, float, float]:
    """``(low, high, coverage)`` of the noise a count release adds to a
    cell (``noisy - true``), from the release record alone (and the
    layer's p-table for CKM: the interval of large cells).

    Discrete Laplace of scale 2 (eps=1, replace) holds 96% in +-6, as
    :func:`dlap_interval` says; the same rule gives ``noise_interval``'s
    rows and the ``count_low``/``count_high`` of every count stat.
    """
    if release.mechanism == "discrete_laplace":
        k, cov = dlap_interval(float(release.details["scale"]), level)
        return -float(k), float(k), cov
    if release.mechanism == "laplace":
        k, cov = rounded_laplace_interval(
            float(release.details["scale"]), level
        )
        return -float(k), float(k), cov
    if release.mechanism == "ckm" and ptable is not None:
        return ckm_interval(ptable, level, large_cell_rows(ptable))
    raise PlotninePrivateError(
        f"no count noise interval for mechanism {release.mechanism!r}"
    )


# --------------------------------------------------------------------------
# the plot
# --------------------------------------------------------------------------
def _short(stat) -> str:
    name = type(stat).__name__
    return name[5:] if name.startswith("stat_") else name


def _fmt(v: float) -> str:
    return f"{v:.3g}" if v != int(v) else str(int(v))


def _row(i, stat, r, level) -> dict:
    """A row of the table for release ``r`` of layer ``i``."""
    row = dict.fromkeys(COLUMNS)
    row.update(
        layer=i,
        stat=_short(stat),
        mechanism=r.mechanism,
        eps=r.eps,
        level=level,
    )
    return row


def _count_rows(i, lyr, releases, level, mapped) -> list[dict]:
    stat = lyr.stat
    rows = []
    ranges = [r for r in releases if r.family == "range" and r.formal]
    for r in releases:
        if r.family == "range":
            continue
        row = _row(i, stat, r, level)
        notes = []
        if r.mechanism in ("discrete_laplace", "laplace"):
            b = float(r.details["scale"])
            low, high, cov = count_noise_bounds(r, level)
            row.update(low=low, high=high, coverage=cov, scale=b)
            notes.append(
                f"{r.mechanism.replace('_', ' ')} of scale {b:.4g} "
                f"(sensitivity {_fmt(r.sensitivity)}, {r.adjacency}) on "
                "every released cell; counts are clipped at 0 after it"
            )
            if r.domain == "thresholded":
                tau = r.details.get("threshold")
                notes.append(
                    f"undeclared domain: cells below a noisy count of "
                    f"{tau:.4g} are hidden, so shown cells lean high"
                )
            if ranges:
                spent = sum(x.eps for x in ranges)
                notes.append(
                    f"eps is what is left after a private range estimate "
                    f"(eps={_fmt(spent)})"
                )
        elif r.mechanism == "ckm":
            ptable = stat.params["ptable"]
            if ptable.fingerprint != r.details.get("ptable_fingerprint"):
                raise PlotninePrivateError(  # pragma: no cover - guard
                    f"layer {i}: the release used another p-table than "
                    "the layer's ptable parameter."
                )
            rows_used = large_cell_rows(ptable)
            low, high, cov = count_noise_bounds(r, level, ptable)
            row.update(low=low, high=high, coverage=cov)
            top = ptable.max_i
            which = (
                f"p-table row {top}"
                if len(rows_used) == 1
                else f"p-table rows {rows_used[0]}-{rows_used[-1]}"
            )
            notes.append(
                f"CKM: for cells with count >= {top} ({which}); smaller "
                f"cells have their own rows, zero cells stay 0, no cell "
                f"moves by more than {_fmt(float(ptable.max_noise))}"
            )
            if "weight" in mapped:
                notes.append("weighted: times the cell's mean weight")
            if r.details.get("threshold") is not None:
                notes.append(
                    f"counts below {r.details['threshold']} are hidden"
                )
        else:  # pragma: no cover - every count mechanism is above
            continue
        row["note"] = "; ".join(notes)
        rows.append(row)
    return rows


def pca_noise_bounds(
    release: Release, level: float, calibration: str = "analytic"
) -> tuple[float, float, float]:
    """``(low, high, scale)`` of the noise on one tile's count of a PCA
    score histogram: ``+-z sigma`` (Gaussian, ``method="add"``) or
    ``+-b log(1/(1 - level))`` (Laplace on shown tiles, ``"sparse"``).
    """
    if release.mechanism == "gaussian":
        sigma = gaussian_sigma(
            float(release.eps or 0.0),
            float(release.delta or 0.0),
            float(release.sensitivity or 0.0),
            calibration,
        )
        z = NormalDist().inv_cdf((1 + level) / 2)
        return -z * sigma, z * sigma, sigma
    b = float(release.details["laplace_scale_counts"])
    k = b * math.log(1 / (1 - level))
    return -k, k, b


def _pca_rows(i, lyr, releases, level) -> list[dict]:
    stat = lyr.stat
    hist = [r for r in releases if r.family.endswith("histogram")]
    rows = []
    for r in hist:
        row = _row(i, stat, r, level)
        tail = (
            "the principal axes and the frame are private estimates too "
            "and are not covered"
        )
        low, high, scale = pca_noise_bounds(
            r, level, stat.params.get("calibration", "analytic")
        )
        row.update(low=low, high=high, coverage=level, scale=scale)
        if r.mechanism == "gaussian":
            note = (
                f"Gaussian noise (sigma {scale:.4g}) on each tile's count "
                f"before it is clipped and normalised to prob; {tail}"
            )
        else:
            b = scale
            note = (
                f"Laplace noise (scale {b:.4g}) on each non-empty tile's "
                f"count; tiles below {r.details['threshold']:.4g} are "
                f"hidden, so shown tiles lean high; {tail}"
            )
        if stat.params.get("output") == "synthetic":
            note += "; the points are sampled from the noisy histogram"
        row["note"] = note
        rows.append(row)
    return rows


class NoiseIntervals(pd.DataFrame):
    """The noise intervals of a plot's private layers: a DataFrame with
    columns ``layer, stat, mechanism, eps, level, low, high, coverage,
    scale, note`` and :meth:`caption` for a plot caption."""

    _metadata: list[str] = []

    @property
    def _constructor(self):
        return NoiseIntervals

    def caption(self, layers: Any = None) -> str:
        """A short text for a plot caption, e.g. ``"noise: ±3 (95%) for
        count_dp eps=1"``; identical rows (a bar and its labels) once.

        Parameters
        ----------
        layers
            Layer indices to describe (default: all rows).
        """
        rows = (
            self
            if layers is None
            else self[
                self["layer"].isin(
                    [layers] if np.ndim(layers) == 0 else list(layers)
                )
            ]
        )
        parts: list[str] = []
        for _, r in rows.iterrows():
            part = _caption_part(r)
            if part not in parts:
                parts.append(part)
        if not parts:
            return ""
        return "noise: " + "; ".join(parts)

    def __str__(self) -> str:  # the caption first, then the table
        return self.caption() + "\n" + super().__str__()


def _caption_part(r) -> str:
    low, high = float(r["low"]), float(r["high"])
    if math.isclose(-low, high):
        width = f"±{_fmt(round(high, 1) if high != int(high) else high)}"
    else:
        width = f"[{_fmt(low)}, +{_fmt(high)}]"
    level = f"{100 * float(r['level']):.3g}%"
    if r["mechanism"] == "ckm":
        return f"{width} ({level}, large cells) for {r['stat']}"
    return f"{width} ({level}) for {r['stat']} eps={_fmt(float(r['eps']))}"


def noise_interval(plot: ggplot, level: float = 0.95) -> NoiseIntervals:
    """The interval of each private layer's noise, from public parameters.

    Builds a copy of the plot (as :func:`privacy_report` does) and reads
    each private layer's release records: mechanism, scale, eps, delta and
    p-table. Nothing about the data enters the interval.

    Parameters
    ----------
    plot
        A ggplot with private layers (not modified).
    level
        Probability mass the interval holds, in (0, 1).

    Returns
    -------
    NoiseIntervals
        A DataFrame, one row per noisy release of a layer: ``low`` and
        ``high`` bound the noise added to a cell's count (``noisy_count -
        true count``) with probability ``coverage >= level`` (exact for
        the discrete mechanisms, which cannot hit ``level`` exactly);
        ``note`` says what it covers. ``.caption()`` gives a short text
        such as ``"noise: ±6 (95%) for count_dp eps=1"``.

    Examples
    --------
    >>> import plotnine_private as pp
    >>> from plotnine import ggplot, aes, geom_bar
    >>> from plotnine.data import mpg
    >>> p = ggplot(mpg, aes("cty")) + geom_bar(
    ...     stat="count_dp", eps=1, seed=1, levels=list(range(9, 36)))
    >>> pp.noise_interval(p).caption()
    'noise: ±6 (95%) for count_dp eps=1'
    """
    level = _check_level(level)
    plot = deepcopy(plot)
    for lyr in plot.layers:
        if hasattr(lyr, "budget_eps"):
            lyr.enforce = False  # the interval is not a release
    return intervals_of_built(build(plot), level)


def intervals_of_built(built: ggplot, level: float = 0.95) -> NoiseIntervals:
    """:func:`noise_interval` of a plot that has been built."""
    level = _check_level(level)
    rows: list[dict] = []
    for i, lyr in enumerate(built.layers):
        releases = getattr(lyr.stat, "releases", None)
        if not releases:
            continue
        mapped = {str(k) for k in lyr.mapping}
        if lyr.inherit_aes:
            mapped |= {str(k) for k in built.mapping}
        if isinstance(lyr.stat, stat_dp_pca_score):
            rows.extend(_pca_rows(i, lyr, releases, level))
        else:
            rows.extend(_count_rows(i, lyr, releases, level, mapped))
    return NoiseIntervals(pd.DataFrame(rows, columns=COLUMNS))


def noise_caption(plot: ggplot, level: float = 0.95) -> str:
    """``noise_interval(plot, level).caption()``."""
    return noise_interval(plot, level).caption()
