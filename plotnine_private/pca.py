"""Differentially private PCA score plots: ``dp_pca`` and ``dp_score``.

Modelled on the R package dppca (NEWEST state, see the dp-pca spec):
private directions (g-DPPCA on the spherical Kendall matrix), private
eigenvalues (dppca's "clipped" scree), a private square frame (Durfee
quantiles) and a private 2-D histogram of the scores ("add" or
"sparse"), from which synthetic points can be drawn for free.

Privacy model
-------------
* Adjacency: **replace one row**; ``n``, ``p``, the column names and (for
  group-wise histograms) the group labels and group sizes are public.
* Budget: ``eps`` and ``delta`` are split by ``split`` (default thirds)
  into loading / scree / score; the score part is split 0.35 (frame,
  pure DP, ``eps/3`` for each of its three quantiles) / 0.65 (histogram,
  with all the score ``delta``). The total is the sum of the parts
  (sequential composition); see :attr:`DPPCAResult.privacy`.
* **Centring: no data-dependent preprocessing.** dppca centres (and
  optionally standardises) with the sample means and SDs, which are not
  private: one row then moves every score, and the histogram's count
  sensitivity argument fails (spec section 8). Here the directions need
  no centring (the Kendall matrix is translation invariant), the
  eigenvalues use paired differences (translation invariant too), and the
  scores are the raw projections ``X v``. ``center=True`` is *display*
  centring: the histogram, frame and synthetic points are shifted by the
  **private** frame centre (two private medians) - pure post-processing.
  Standardisation is only by **public** scales (``scale=``), never by
  sample SDs.
* Non-private references (ordinary PCA) are computed only with
  ``reference=True`` and are labelled "not private" wherever shown.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .exceptions import PlotninePrivateError
from .ledger import Release
from .mechanisms.errors import ParameterError
from .mechanisms.histogram import (
    grid_counts,
    private_histogram,
    score_grid,
    sparse_threshold,
)
from .mechanisms.pca import (
    PrivateEigenvalues,
    private_directions,
    private_eigenvalues,
)
from .mechanisms.quantile import PrivateFrame, private_frame
from .mechanisms.randomness import derive_key, master_key
from .mechanisms.synthetic import allocate_group_sizes, sample_histogram

__all__ = ["DPPCAResult", "dp_pca", "dp_score"]

FRAME_SHARE = 0.35
HIST_SHARE = 0.65
NOT_PRIVATE = "not private"
PRIVATE_COLOR = "#1F4E79"
REFERENCE_COLOR = "#444444"


# --------------------------------------------------------------------------
# validation (one place; errors name the parameter, the value and a fix)
# --------------------------------------------------------------------------
def _fail(fn: str, message: str) -> PlotninePrivateError:
    return PlotninePrivateError(f"{fn}(): {message}")


def _real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _check_eps_delta(fn: str, eps: Any, delta: Any) -> tuple[float, float]:
    if eps is None or not _real(eps) or not math.isfinite(eps) or eps <= 0:
        raise _fail(
            fn, f"eps must be a finite number > 0 (e.g. eps=2), got {eps!r}."
        )
    if delta is None or not _real(delta) or not 0 < delta < 1:
        raise _fail(
            fn,
            f"delta must lie strictly between 0 and 1 (e.g. 1e-5, at most "
            f"1/n), got {delta!r}.",
        )
    return float(eps), float(delta)


def _check_split(
    fn: str, split: Any, needed: tuple[str, ...]
) -> dict[str, float]:
    if split is None:
        return {k: 1 / len(needed) for k in needed}
    if not isinstance(split, Mapping):
        raise _fail(
            fn,
            f"split must be a dict with keys {needed}, got {split!r}; e.g. "
            f"split={dict.fromkeys(needed, round(1 / len(needed), 3))}.",
        )
    if set(split) != set(needed):
        raise _fail(
            fn,
            f"split must have exactly the keys {needed}, got {tuple(split)}.",
        )
    vals = {k: split[k] for k in needed}
    if any(not _real(v) or not v > 0 for v in vals.values()):
        raise _fail(fn, f"split shares must be numbers > 0, got {split!r}.")
    if abs(sum(vals.values()) - 1) > 1e-8:
        raise _fail(
            fn,
            f"split shares must sum to 1, got {sum(vals.values())!r} "
            f"({split!r}).",
        )
    return {k: float(v) for k, v in vals.items()}


def _check_bins(fn: str, bins: Any) -> tuple[int, int]:
    if _real(bins):
        bins = (bins, bins)
    try:
        mx, my = bins
    except (TypeError, ValueError):
        raise _fail(
            fn, f"bins must be an int or a pair of ints, got {bins!r}."
        ) from None
    for b in (mx, my):
        if not _real(b) or not float(b).is_integer() or b < 1:
            raise _fail(
                fn,
                f"bins must be positive integers, got {bins!r}; e.g. "
                "bins=(20, 20).",
            )
    return int(mx), int(my)


def _check_axes(fn: str, axes: Any, k: int) -> tuple[int, int]:
    try:
        a, b = axes
    except (TypeError, ValueError):
        raise _fail(
            fn, f"axes must be two component numbers, got {axes!r}."
        ) from None
    for v in (a, b):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool):
            raise _fail(fn, f"axes must be integers, got {axes!r}.")
        if not 1 <= v <= k:
            raise _fail(
                fn,
                f"axes must lie in 1..{k} (the number of columns), got "
                f"{axes!r}.",
            )
    if a == b:
        raise _fail(
            fn, f"axes must be two different components, got {axes!r}."
        )
    return int(a), int(b)


def _check_method(fn: str, method: Any) -> str:
    if method not in ("add", "sparse"):
        raise _fail(fn, f"method must be 'add' or 'sparse', got {method!r}.")
    return method


def _check_seed(fn: str, seed: Any) -> int | None:
    if seed is None:
        return None
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool):
        raise _fail(fn, f"seed must be an int or None, got {seed!r}.")
    return int(seed)


def _numeric_matrix(
    fn: str,
    data: Any,
    columns: Sequence[str] | None,
    exclude: Sequence[str] = (),
) -> tuple[np.ndarray, list[str]]:
    """The numeric feature matrix; errors for bad columns or values."""
    if isinstance(data, pd.DataFrame):
        df = data
    else:
        arr = np.asarray(data)
        if arr.ndim != 2:
            raise _fail(
                fn,
                "data must be a DataFrame or a 2-D array, got an array of "
                f"shape {arr.shape}.",
            )
        df = pd.DataFrame(
            arr, columns=[f"X{i + 1}" for i in range(arr.shape[1])]
        )
    if columns is None:
        columns = [
            c
            for c in df.columns
            if c not in exclude
            and pd.api.types.is_numeric_dtype(df[c])
            and not pd.api.types.is_bool_dtype(df[c])
        ]
    else:
        if isinstance(columns, str):
            columns = [columns]
        columns = list(columns)
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise _fail(
                fn,
                f"columns {missing!r} are not in the data; available: "
                f"{list(df.columns)!r}.",
            )
        bad = [
            c
            for c in columns
            if not pd.api.types.is_numeric_dtype(df[c])
            or pd.api.types.is_bool_dtype(df[c])
        ]
        if bad:
            raise _fail(
                fn,
                f"columns {bad!r} are not numeric; PCA needs numeric "
                "columns (encode categories yourself or drop them).",
            )
        if len(set(columns)) != len(columns):
            raise _fail(fn, f"columns has duplicates: {columns!r}.")
    if len(columns) < 2:
        raise _fail(
            fn,
            f"PCA needs at least 2 numeric columns, got {list(columns)!r}.",
        )
    x = df[list(columns)].to_numpy(dtype=float)
    if x.shape[0] < 2:
        raise _fail(fn, f"data must have at least 2 rows, got {x.shape[0]}.")
    if not np.all(np.isfinite(x)):
        bad = [c for c, ok in zip(columns, np.isfinite(x).all(0)) if not ok]
        raise _fail(
            fn,
            f"columns {bad!r} contain NaN or inf; remove or impute those "
            "rows first (with a public rule).",
        )
    return x, [str(c) for c in columns]


def _group_labels(
    fn: str, data: Any, group: Any, n: int
) -> tuple[np.ndarray | None, list[Any], str | None]:
    """Group labels, their levels and the column name (if any)."""
    if group is None:
        return None, [], None
    name = None
    if isinstance(group, str):
        if not isinstance(data, pd.DataFrame) or group not in data.columns:
            raise _fail(fn, f"group column {group!r} is not in the data.")
        name = group
        values = data[group]
    else:
        values = pd.Series(np.asarray(group))
        if len(values) != n:
            raise _fail(
                fn,
                f"group must be a column name or have one label per row "
                f"({n}), got length {len(values)}.",
            )
    if values.isna().any():
        raise _fail(fn, "group labels must not be missing (NA).")
    if isinstance(values.dtype, pd.CategoricalDtype):
        levels = list(values.cat.categories)  # declared, public levels
    else:
        levels = list(pd.unique(values))
    return np.asarray(values, dtype=object), levels, name


def _check_scale(fn: str, scale: Any, p: int) -> np.ndarray | None:
    if scale is None:
        return None
    s = np.asarray(scale, dtype=float).ravel()
    if s.size != p or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise _fail(
            fn,
            f"scale must be {p} public positive numbers (one per column), "
            f"got {scale!r}. Never pass sample SDs: they are not private.",
        )
    return s


def _check_directions(
    fn: str, directions: Any, columns: list[str]
) -> np.ndarray:
    p = len(columns)
    if isinstance(directions, pd.DataFrame):
        if list(map(str, directions.index)) not in (
            columns,
            [f"X{i + 1}" for i in range(p)],
        ) and not isinstance(directions.index, pd.RangeIndex):
            raise _fail(
                fn,
                "directions row names must equal the feature columns "
                f"{columns!r}.",
            )
        directions = directions.to_numpy(dtype=float)
    v = np.asarray(directions, dtype=float)
    if v.shape != (p, p) or not np.all(np.isfinite(v)):
        raise _fail(
            fn,
            f"directions must be a finite {p}x{p} orthonormal matrix, got "
            f"shape {v.shape}.",
        )
    if np.abs(v.T @ v - np.eye(p)).max() > 1e-6:
        raise _fail(
            fn, "directions must be orthonormal (V^T V = I within 1e-6)."
        )
    return v


# --------------------------------------------------------------------------
# result
# --------------------------------------------------------------------------
@dataclass
class DPPCAResult:
    """A private PCA score release and its plots.

    Attributes
    ----------
    directions
        ``p x p`` DataFrame of private directions (rows: columns of the
        data; columns ``PC1..``).
    eigenvalues
        Private eigenvalues (Series ``PC1..PCk``) or ``None`` (dp_score).
    pve
        Private proportions of variance explained (over the ``k`` values).
    frame
        The private square frame, in score (not display) coordinates.
    histogram
        DataFrame ``xmin, xmax, ymin, ymax, x, y, prob`` (+ ``group``), in
        *display* coordinates (shifted by the private centre when
        ``center=True``).
    privacy
        Budget table: rows loading, scree, frame, histogram, total;
        columns eps, delta, mechanism.
    releases
        One :class:`~plotnine_private.ledger.Release` per mechanism.
    reference
        Only with ``reference=True``: ordinary (non-private) PCA for
        comparison. **Not private.**
    """

    directions: pd.DataFrame
    eigenvalues: pd.Series | None
    pve: pd.Series | None
    frame: PrivateFrame
    histogram: pd.DataFrame
    privacy: pd.DataFrame
    releases: list[Release]
    axes: tuple[int, int]
    method: str
    bins: tuple[int, int]
    center: bool
    n: int
    columns: list[str]
    groups: list[Any] = field(default_factory=list)
    group_sizes: dict[Any, int] = field(default_factory=dict)
    reference: dict[str, Any] | None = None
    seed: int | None = None
    offset: tuple[float, float] = (0.0, 0.0)

    # -- conveniences -----------------------------------------------------
    @property
    def labels(self) -> tuple[str, str]:
        """Axis names, e.g. ``("PC1", "PC2")``."""
        return f"PC{self.axes[0]}", f"PC{self.axes[1]}"

    @property
    def limits(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """Frame limits in display coordinates."""
        ox, oy = self.offset
        return (
            (self.frame.xlim[0] - ox, self.frame.xlim[1] - ox),
            (self.frame.ylim[0] - oy, self.frame.ylim[1] - oy),
        )

    @property
    def empty(self) -> bool:
        """True when no bin survived (sparse thresholding)."""
        return not bool((self.histogram["prob"] > 0).any())

    def __repr__(self) -> str:
        total = self.privacy.loc["total"]
        ev = (
            ""
            if self.eigenvalues is None
            else ", eigenvalues="
            + np.array2string(self.eigenvalues.to_numpy()[:6], precision=3)
        )
        return (
            f"<DPPCAResult n={self.n} p={len(self.columns)} axes={self.axes}"
            f" method={self.method!r} eps={total['eps']:.4g} "
            f"delta={total['delta']:.3g}{ev}"
            f"{' +reference (not private)' if self.reference else ''}>"
        )

    # -- sampling ---------------------------------------------------------
    def sample(
        self,
        n: int | None = None,
        method: str = "uniform",
        bandwidth_scale: float | None = None,
        seed: int | None = None,
    ) -> pd.DataFrame:
        """Synthetic score points from the private histogram (free).

        Parameters
        ----------
        n
            Number of points; default the number of rows (public under
            replace-one adjacency). Split over groups by largest remainder.
        method
            ``"uniform"`` (uniform in the cell) or ``"center"``.
        bandwidth_scale
            Gaussian jitter in cell widths; default 0.25 / 0.5.
        seed
            Seed of the sampling stream; default the release's seed.

        Returns
        -------
        DataFrame with the two PC columns (display coordinates) and
        ``group`` when group-wise.
        """
        size = self.n if n is None else n
        if not isinstance(size, numbers.Integral) or size < 0:
            raise _fail("sample", f"n must be an int >= 0, got {n!r}.")
        seed = self.seed if seed is None else seed
        lx, ly = self.labels
        h = self.histogram
        frames = []
        try:
            if self.groups:
                sizes = allocate_group_sizes(
                    int(size), [self.group_sizes[g] for g in self.groups]
                )
                parts = [
                    (g, h[h["group"] == g], int(m))
                    for g, m in zip(self.groups, sizes)
                ]
            else:
                parts = [(None, h, int(size))]
            for g, cells, m in parts:
                x, y = sample_histogram(
                    cells["xmin"],
                    cells["xmax"],
                    cells["ymin"],
                    cells["ymax"],
                    cells["prob"],
                    m,
                    method,
                    bandwidth_scale,
                    key=derive_key(master_key(seed), "dp_pca_sample", g),
                )
                part = pd.DataFrame({lx: x, ly: y})
                if g is not None:
                    part["group"] = g
                frames.append(part)
        except ParameterError as err:
            raise _fail("sample", str(err)) from None
        out = pd.concat(frames, ignore_index=True)
        if self.groups:
            out["group"] = pd.Categorical(out["group"], self.groups)
        return out

    # -- plots --------------------------------------------------------------
    def plot(self, kind: str = "score", **kwargs: Any):
        """A plotnine figure of the release.

        Parameters
        ----------
        kind
            ``"score"`` (private histogram tiles), ``"synthetic"``
            (points sampled from it), ``"biplot"`` (synthetic points and
            loading arrows) or ``"scree"`` (private PVE). With a
            reference, the ordinary PCA is drawn in a facet labelled
            "not private" beside the private one.
        **kwargs
            Passed to :meth:`sample` for ``"synthetic"`` / ``"biplot"``.
        """
        kinds = {
            "score": _score_plot,
            "synthetic": _synthetic_plot,
            "biplot": _biplot,
            "scree": _scree_plot,
        }
        if kind not in kinds:
            raise _fail(
                "plot", f"kind must be one of {sorted(kinds)}, got {kind!r}."
            )
        return kinds[kind](self, **kwargs)


# --------------------------------------------------------------------------
# the computation
# --------------------------------------------------------------------------
def _release_id(key: bytes, *parts: Any) -> str:
    h = hashlib.blake2b(key=key[:16], digest_size=12, person=b"pnp-pca")
    for part in parts:
        h.update(np.ascontiguousarray(part).tobytes())
    return h.hexdigest()


def _budget_table(
    loading: tuple[float, float, str],
    scree: tuple[float, float, str] | None,
    score: tuple[float, float],
    method: str,
) -> pd.DataFrame:
    eps_s, delta_s = score
    rows = {
        "loading": loading,
        "scree": scree if scree else (0.0, 0.0, "not released"),
        "frame": (FRAME_SHARE * eps_s, 0.0, "durfee_quantile x3"),
        "histogram": (
            HIST_SHARE * eps_s,
            delta_s,
            "gaussian" if method == "add" else "stability_histogram",
        ),
    }
    table = pd.DataFrame(rows, index=["eps", "delta", "mechanism"]).T
    table["eps"] = table["eps"].astype(float)
    table["delta"] = table["delta"].astype(float)
    table.loc["total"] = [
        table["eps"].sum(),
        table["delta"].sum(),
        "sequential composition",
    ]
    table.index.name = "component"
    return table


def _reference(
    x: np.ndarray,
    v_dp: np.ndarray,
    axes: tuple[int, int],
    k: int,
    grid: Any,
    counts_scores: np.ndarray,
    offset: tuple[float, float],
) -> dict[str, Any]:
    """Ordinary PCA for comparison. NOT PRIVATE."""
    xc = x - x.mean(axis=0)
    cov = np.cov(xc, rowvar=False)
    values, vectors = np.linalg.eigh(cov)
    order = np.argsort(values)[::-1]
    values, vectors = values[order], vectors[:, order]
    signs = np.sign(np.sum(vectors * v_dp, axis=0))
    signs[signs == 0] = 1
    vectors = vectors * signs
    ev = np.maximum(values[:k], 0)
    a, b = axes[0] - 1, axes[1] - 1
    counts = grid_counts(counts_scores[:, 0], counts_scores[:, 1], grid)
    return {
        "label": NOT_PRIVATE,
        "directions": vectors,
        "eigenvalues": ev,
        "pve": ev / ev.sum() if ev.sum() > 0 else ev,
        "scores": xc @ vectors[:, [a, b]],
        "mean_projection": x.mean(axis=0) @ vectors[:, [a, b]],
        "histogram_prob": counts / counts.sum(),
        "variable_sd": xc.std(axis=0, ddof=1),
        "offset": offset,
    }


def _score_release(
    fn: str,
    x: np.ndarray,
    columns: list[str],
    v: np.ndarray,
    *,
    axes: tuple[int, int],
    eps_score: float,
    delta_score: float,
    bins: tuple[int, int],
    method: str,
    labels: np.ndarray | None,
    levels: list[Any],
    center: bool,
    seed: int | None,
    key_parts: tuple,
    stat_name: str,
    calibration: str,
) -> tuple[
    PrivateFrame,
    pd.DataFrame,
    list[Release],
    Any,
    np.ndarray,
    tuple[float, float],
    dict[Any, int],
]:
    """Frame and histogram(s) of the scores on private directions."""
    a, b = axes[0] - 1, axes[1] - 1
    scores = x @ v[:, [a, b]]
    eps_frame = FRAME_SHARE * eps_score
    eps_hist = HIST_SHARE * eps_score
    secret = master_key(seed)
    try:
        frame = private_frame(
            scores, eps_frame, inflate=0.2,
            key=derive_key(secret, "private_frame", *key_parts),
        )
        grid = score_grid(frame.xlim, frame.ylim, bins)
    except ParameterError as err:
        raise _fail(fn, str(err)) from None
    offset = frame.center if center else (0.0, 0.0)
    frame_key = derive_key(secret, "frame", *key_parts)
    releases = [
        Release(
            stat=stat_name,
            mechanism="durfee_quantile",
            eps=eps_frame,
            delta=0.0,
            adjacency="replace",
            sensitivity=1.0,
            domain="public",
            cells=3,
            release_id=_release_id(frame_key, scores),
            details={
                "what": "frame",
                "quantiles": "signed medians (eps/3 each), radial 0.99 "
                "quantile (eps/3)",
                "noise": "one-sided exponential; rate eps/12 per draw "
                "for the medians, eps/6 for the radius (eps = frame eps)",
                "beta": 1.01,
                "max_steps": 5000,
                "inflate": 0.2,
                "xlim": frame.xlim,
                "ylim": frame.ylim,
            },
        )
    ]
    hist_mech = "gaussian" if method == "add" else "stability_histogram"
    domain = "private_estimate" if method == "add" else "thresholded"
    parts = (
        [(g, labels == g) for g in levels]
        if labels is not None
        else [(None, slice(None))]
    )
    tables = []
    sizes: dict[Any, int] = {}
    for g, rows in parts:
        s = scores[rows]
        counts = grid_counts(s[:, 0], s[:, 1], grid)
        n_g = int(counts.sum())
        sizes[g] = n_g
        hist_parts = (
            (*key_parts, "hist")
            if g is None
            else (*key_parts, "hist", "group", g)
        )
        try:
            prob = private_histogram(
                counts,
                method,
                eps_hist,
                delta_score,
                calibration=calibration,
                key=derive_key(secret, "histogram", *hist_parts),
            ).prob()
        except ParameterError as err:
            prefix = "" if g is None else f"Group `{g}`: "
            raise _fail(fn, prefix + str(err)) from None
        table = pd.DataFrame(
            {
                "xmin": grid.xmin - offset[0],
                "xmax": grid.xmax - offset[0],
                "ymin": grid.ymin - offset[1],
                "ymax": grid.ymax - offset[1],
            }
        )
        table["x"] = (table["xmin"] + table["xmax"]) / 2
        table["y"] = (table["ymin"] + table["ymax"]) / 2
        table["prob"] = prob
        if g is not None:
            table["group"] = g
        tables.append(table)
        details: dict[str, Any] = {"what": "histogram", "bins": bins}
        if method == "sparse":
            details["laplace_scale_counts"] = 2 / eps_hist
            details["threshold"] = sparse_threshold(eps_hist, delta_score)
        if g is not None:
            details["group"] = g
        releases.append(
            Release(
                stat=stat_name,
                mechanism=hist_mech,
                eps=eps_hist,
                delta=delta_score,
                adjacency="replace",
                sensitivity=math.sqrt(2) if method == "add" else 2.0,
                domain=domain,
                cells=int(np.count_nonzero(prob)),
                release_id=_release_id(
                    derive_key(secret, "hist", *hist_parts), counts
                ),
                partition=None if g is None else "group",
                details=details,
            )
        )
    histogram = pd.concat(tables, ignore_index=True)
    if labels is not None:
        histogram["group"] = pd.Categorical(histogram["group"], levels)
    return frame, histogram, releases, grid, scores, offset, sizes


def _directions_release(
    fn: str,
    x: np.ndarray,
    eps: float,
    delta: float,
    seed: int | None,
    key_parts: tuple,
    stat_name: str,
    calibration: str,
    estimator: str,
):
    try:
        d = private_directions(
            x,
            eps,
            delta,
            calibration=calibration,
            estimator=estimator,
            key=derive_key(master_key(seed), "directions", *key_parts),
        )
    except ParameterError as err:
        raise _fail(fn, str(err)) from None
    p = x.shape[1]
    rel = Release(
        stat=stat_name,
        mechanism="gaussian",
        eps=eps,
        delta=delta,
        adjacency="replace",
        sensitivity=d.sensitivity,
        domain="public",
        cells=p * (p + 1) // 2,
        release_id=_release_id(
            derive_key(master_key(seed), "directions", *key_parts), x
        ),
        details={
            "what": "directions",
            "matrix": "spherical Kendall (g-DPPCA)",
            "sigma": d.sigma,
            "calibration": calibration,
            "estimator": d.estimator,
            "shifts": d.shifts,
        },
    )
    return d.vectors, rel


def _frame_pcs(v: np.ndarray, columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        v, index=columns, columns=[f"PC{i + 1}" for i in range(v.shape[1])]
    )


def dp_pca(
    data: Any,
    columns: Sequence[str] | None = None,
    *,
    eps: float,
    delta: float,
    split: Mapping[str, float] | None = None,
    bins: int | tuple[int, int] = (20, 20),
    method: str = "sparse",
    axes: tuple[int, int] = (1, 2),
    group: Any = None,
    center: bool = True,
    seed: int | None = None,
    reference: bool = False,
    k: int | None = None,
    scale: Sequence[float] | None = None,
    scree_clip: float | None = None,
    calibration: str = "analytic",
    estimator: str = "auto",
) -> DPPCAResult:
    """Private PCA: directions, eigenvalues and a score histogram.

    Parameters
    ----------
    data
        DataFrame (or 2-D array) with one row per person.
    columns
        Numeric feature columns; default all numeric columns except
        ``group``.
    eps, delta
        Total budget (``eps > 0``, ``0 < delta < 1``).
    split
        Shares of ``eps`` and ``delta`` for ``loading`` (directions),
        ``scree`` (eigenvalues) and ``score`` (frame + histogram); default
        thirds. The score part is split 0.35 frame / 0.65 histogram (all
        score delta to the histogram).
    bins
        ``(m_x, m_y)`` cells of the score histogram.
    method
        ``"sparse"`` (Karwa-Vadhan, only observed cells can appear) or
        ``"add"`` (Gaussian noise on every cell).
    axes
        Two distinct components to plot, in ``1..k``.
    group
        Column name or labels: group-wise histograms on one shared frame
        (labels and group sizes are treated as public; the groups
        partition the rows, so each gets the full histogram budget by
        parallel composition).
    center
        Display centring by the private frame centre (post-processing).
        No data-dependent preprocessing is ever applied.
    seed
        Secret seed for reproducible noise; ``None`` uses OS entropy.
    reference
        Also compute ordinary, **non-private** PCA for comparison.
    k
        Number of private eigenvalues (default ``p``).
    scale
        Public positive column scales to divide by (never sample SDs).
    scree_clip
        Public clipping constant for the eigenvalues; default ``None``
        spends a quarter of the scree budget on a private one.
    calibration
        Gaussian calibration, ``"analytic"`` (valid for all eps) or
        ``"classic"`` (dppca's formula).
    estimator
        Kendall matrix estimator (``"auto"``, ``"exact"``,
        ``"incomplete"``).

    Returns
    -------
    DPPCAResult
    """
    fn = "dp_pca"
    eps, delta = _check_eps_delta(fn, eps, delta)
    shares = _check_split(fn, split, ("loading", "scree", "score"))
    return _run(
        fn,
        data,
        columns,
        eps=eps,
        delta=delta,
        shares=shares,
        bins=bins,
        method=method,
        axes=axes,
        group=group,
        center=center,
        seed=seed,
        reference=reference,
        k=k,
        scale=scale,
        scree_clip=scree_clip,
        calibration=calibration,
        estimator=estimator,
        directions=None,
    )


def dp_score(
    data: Any,
    columns: Sequence[str] | None = None,
    *,
    eps: float,
    delta: float,
    split: Mapping[str, float] | None = None,
    bins: int | tuple[int, int] = (20, 20),
    method: str = "sparse",
    axes: tuple[int, int] = (1, 2),
    group: Any = None,
    center: bool = True,
    seed: int | None = None,
    reference: bool = False,
    directions: Any = None,
    scale: Sequence[float] | None = None,
    calibration: str = "analytic",
    estimator: str = "auto",
) -> DPPCAResult:
    """Private score histogram alone (no eigenvalues).

    Without ``directions``: ``split`` shares ``eps``/``delta`` between
    ``loading`` and ``score`` (default halves). With ``directions`` (a
    ``p x p`` orthonormal matrix released privately before, e.g.
    ``dp_pca(...).directions``), no loading budget is spent: all of
    ``eps``/``delta`` go to the score, and ``split`` must be ``None``.
    Other parameters as in :func:`dp_pca`.
    """
    fn = "dp_score"
    eps, delta = _check_eps_delta(fn, eps, delta)
    if directions is not None:
        if split is not None:
            raise _fail(
                fn,
                "split must be None when directions are given: no loading "
                "budget is spent and eps/delta all go to the score.",
            )
        shares = {"loading": 0.0, "score": 1.0}
    else:
        shares = _check_split(fn, split, ("loading", "score"))
    return _run(
        fn,
        data,
        columns,
        eps=eps,
        delta=delta,
        shares=shares,
        bins=bins,
        method=method,
        axes=axes,
        group=group,
        center=center,
        seed=seed,
        reference=reference,
        k=None,
        scale=scale,
        scree_clip=None,
        calibration=calibration,
        estimator=estimator,
        directions=directions,
    )


def _run(
    fn: str,
    data: Any,
    columns: Sequence[str] | None,
    *,
    eps: float,
    delta: float,
    shares: dict[str, float],
    bins: Any,
    method: str,
    axes: Any,
    group: Any,
    center: bool,
    seed: Any,
    reference: bool,
    k: int | None,
    scale: Any,
    scree_clip: float | None,
    calibration: str,
    estimator: str,
    directions: Any,
    key_parts: tuple = (),
    stat_name: str | None = None,
) -> DPPCAResult:
    stat_name = stat_name or fn
    bins = _check_bins(fn, bins)
    method = _check_method(fn, method)
    seed = _check_seed(fn, seed)
    if calibration not in ("analytic", "classic"):
        raise _fail(
            fn,
            f"calibration must be 'analytic' or 'classic', got "
            f"{calibration!r}.",
        )
    exclude = [group] if isinstance(group, str) else []
    x, cols = _numeric_matrix(fn, data, columns, exclude)
    n, p = x.shape
    labels, levels, _ = _group_labels(fn, data, group, n)
    s = _check_scale(fn, scale, p)
    if s is not None:
        x = x / s
    want_scree = "scree" in shares
    if k is None:
        k = p
    if want_scree and (
        not isinstance(k, numbers.Integral)
        or isinstance(k, bool)
        or not 2 <= k <= p
    ):
        raise _fail(fn, f"k must be an integer in [2, {p}], got {k!r}.")
    axes = _check_axes(fn, axes, k if want_scree else p)

    releases: list[Release] = []
    if directions is None:
        eps_l, delta_l = eps * shares["loading"], delta * shares["loading"]
        v, rel = _directions_release(
            fn,
            x,
            eps_l,
            delta_l,
            seed,
            (*key_parts, "directions", eps_l, delta_l, calibration, estimator),
            stat_name,
            calibration,
            estimator,
        )
        releases.append(rel)
        loading = (eps_l, delta_l, "gaussian (spherical Kendall)")
    else:
        v = _check_directions(fn, directions, cols)
        loading = (0.0, 0.0, "given (spent before)")

    eigen: PrivateEigenvalues | None = None
    scree_row = None
    if want_scree:
        eps_s, delta_s = eps * shares["scree"], delta * shares["scree"]
        try:
            eigen = private_eigenvalues(
                x @ v[:, :k],
                eps_s,
                delta_s,
                clip=scree_clip,
                calibration=calibration,
                key=derive_key(
                    master_key(seed),
                    "scree",
                    *key_parts,
                    eps_s,
                    delta_s,
                    k,
                    scree_clip,
                    calibration,
                ),
            )
        except ParameterError as err:
            raise _fail(fn, str(err)) from None
        scree_row = (eps_s, delta_s, "gaussian (clipped mean)")
        releases.append(
            Release(
                stat=stat_name,
                mechanism="gaussian",
                eps=eps_s,
                delta=delta_s,
                adjacency="replace",
                sensitivity=math.sqrt(k) * eigen.clip / (n // 2),
                domain="public",
                cells=k,
                release_id=_release_id(
                    derive_key(master_key(seed), "scree", *key_parts), x
                ),
                details={
                    "what": "eigenvalues",
                    "method": "clipped",
                    "clip": eigen.clip,
                    "clip_source": eigen.clip_source,
                    "eps_clip_quantile": eigen.eps_clip,
                    "sigma": eigen.sigma,
                },
            )
        )

    eps_score = eps * shares["score"]
    delta_score = delta * shares["score"]
    frame, histogram, rels, grid, scores, offset, sizes = _score_release(
        fn,
        x,
        cols,
        v,
        axes=axes,
        eps_score=eps_score,
        delta_score=delta_score,
        bins=bins,
        method=method,
        labels=labels,
        levels=levels,
        center=bool(center),
        seed=seed,
        # the query's parameters name its noise: different queries never
        # share noise, the same query (same seed) gives the same release
        key_parts=(
            *key_parts,
            "score",
            eps_score,
            delta_score,
            method,
            bins,
            axes,
            calibration,
        ),
        stat_name=stat_name,
        calibration=calibration,
    )
    releases.extend(rels)
    privacy = _budget_table(
        loading, scree_row, (eps_score, delta_score), method
    )

    ref = None
    if reference:
        ref = _reference(x, v, axes, k, grid, scores, offset)
        if labels is not None:
            ref["groups"] = labels
    names = [f"PC{i + 1}" for i in range(k)]
    return DPPCAResult(
        directions=_frame_pcs(v, cols),
        eigenvalues=None
        if eigen is None
        else pd.Series(eigen.values, index=names),
        pve=None if eigen is None else pd.Series(eigen.pve, index=names),
        frame=frame,
        histogram=histogram,
        privacy=privacy,
        releases=releases,
        axes=axes,
        method=method,
        bins=bins,
        center=bool(center),
        n=n,
        columns=cols,
        groups=levels,
        group_sizes={g: sizes[g] for g in levels},
        reference=ref,
        seed=seed,
        offset=(float(offset[0]), float(offset[1])),
    )


# --------------------------------------------------------------------------
# plots (post-processing of the release; references labelled not private)
# --------------------------------------------------------------------------
DP_PANEL = "DP (private release)"
REF_PANEL = "Ordinary PCA (not private)"


def _panels(result: DPPCAResult) -> list[str]:
    return [DP_PANEL, REF_PANEL] if result.reference else [DP_PANEL]


def _with_panel(df: pd.DataFrame, name: str, result: DPPCAResult):
    df = df.copy()
    df["panel"] = pd.Categorical([name] * len(df), _panels(result))
    return df


def _reference_scores(result: DPPCAResult) -> pd.DataFrame:
    ref = result.reference
    assert ref is not None
    lx, ly = result.labels
    sc = ref["scores"]
    if not result.center:  # raw projections, like the private display
        sc = sc + ref["mean_projection"]
    out = pd.DataFrame({lx: sc[:, 0], ly: sc[:, 1]})
    if result.groups:
        out["group"] = pd.Categorical(ref["groups"], result.groups)
    return out


def _subtitle(result: DPPCAResult) -> str:
    total = result.privacy.loc["total"]
    text = (
        f"eps = {total['eps']:.3g}, delta = {total['delta']:.2g} "
        f"({result.method} histogram, {result.bins[0]}x{result.bins[1]} "
        "bins)"
    )
    if result.empty:
        text += "; No bins survived private thresholding"
    return text


def _base(result: DPPCAResult, title: str, limits=None):
    import plotnine as p9

    (x0, x1), (y0, y1) = limits or result.limits
    lx, ly = result.labels
    plot = (
        p9.ggplot()
        + p9.coord_fixed(xlim=(x0, x1), ylim=(y0, y1), expand=False)
        + p9.labs(x=lx, y=ly, title=title, subtitle=_subtitle(result))
        + p9.theme_minimal()
        + p9.theme(panel_border=p9.element_rect(color="black", fill=None))
    )
    if result.reference:
        plot += p9.facet_wrap("panel")
    return plot


def _score_plot(result: DPPCAResult, alpha_range=(0.0, 1.0)):
    import plotnine as p9

    h = _with_panel(result.histogram, DP_PANEL, result)
    top = float(h["prob"].max()) if len(h) else 1.0
    plot = _base(result, "Private PCA score histogram")
    if result.groups:
        plot += p9.geom_rect(
            p9.aes(
                "xmin",
                xmin="xmin",
                xmax="xmax",
                ymin="ymin",
                ymax="ymax",
                fill="group",
                alpha="prob",
            ),
            data=h,
            inherit_aes=False,
        )
    else:
        plot += p9.geom_rect(
            p9.aes(
                xmin="xmin",
                xmax="xmax",
                ymin="ymin",
                ymax="ymax",
                alpha="prob",
            ),
            data=h,
            fill=PRIVATE_COLOR,
        )
    plot += p9.scale_alpha_continuous(
        range=alpha_range, limits=(0, top if top > 0 else 1)
    )
    if result.reference:
        plot += _reference_points(result)
    return plot


def _reference_points(result: DPPCAResult):
    import plotnine as p9

    lx, ly = result.labels
    ref = _with_panel(_reference_scores(result), REF_PANEL, result)
    if result.groups:
        return p9.geom_point(
            p9.aes(lx, ly, color="group"), data=ref, size=0.5, alpha=0.5
        )
    return p9.geom_point(
        p9.aes(lx, ly), data=ref, size=0.5, alpha=0.4, color=REFERENCE_COLOR
    )


def _synthetic_plot(result: DPPCAResult, **sample_args: Any):
    import plotnine as p9

    lx, ly = result.labels
    pts = _with_panel(result.sample(**sample_args), DP_PANEL, result)
    plot = _base(result, "Synthetic points from the private histogram")
    if result.groups:
        plot += p9.geom_point(
            p9.aes(lx, ly, color="group"), data=pts, size=0.5, alpha=0.5
        )
    else:
        plot += p9.geom_point(
            p9.aes(lx, ly),
            data=pts,
            size=0.5,
            alpha=0.4,
            color=PRIVATE_COLOR,
        )
    if result.reference:
        plot += _reference_points(result)
    return plot


def _arrows(
    v: np.ndarray, columns: list[str], mult: float, origin, top: int
) -> pd.DataFrame:
    norms = np.hypot(v[:, 0], v[:, 1])
    keep = np.argsort(-norms, kind="stable")[:top]
    return pd.DataFrame(
        {
            "x0": origin[0],
            "y0": origin[1],
            "x1": origin[0] + mult * v[keep, 0],
            "y1": origin[1] + mult * v[keep, 1],
            "variable": [columns[i] for i in keep],
        }
    )


def _biplot(result: DPPCAResult, variables: int = 10, **sample_args: Any):
    import plotnine as p9

    lx, ly = result.labels
    a, b = result.axes[0] - 1, result.axes[1] - 1
    v = result.directions.to_numpy()[:, [a, b]]
    pts = result.sample(**sample_args)
    xy = pts[[lx, ly]].to_numpy()
    (x0, x1), (y0, y1) = result.limits
    origin = (0.0, 0.0) if result.center else ((x0 + x1) / 2, (y0 + y1) / 2)
    spread = (
        float(np.quantile(np.hypot(*(xy - xy.mean(0)).T), 0.9))
        if len(xy)
        else 0.0
    )
    longest = float(np.hypot(v[:, 0], v[:, 1]).max())
    mult = spread / longest if spread > 0 and longest > 0 else 0.0
    arrows = _arrows(v, result.columns, mult, origin, variables)
    # square display frame containing the private frame and arrow tips
    lo_x = min(x0, arrows["x1"].min(), origin[0])
    hi_x = max(x1, arrows["x1"].max(), origin[0])
    lo_y = min(y0, arrows["y1"].min(), origin[1])
    hi_y = max(y1, arrows["y1"].max(), origin[1])
    half = max(hi_x - lo_x, hi_y - lo_y) / 2 * 1.05 or 1.0
    cx, cy = (lo_x + hi_x) / 2, (lo_y + hi_y) / 2
    limits = ((cx - half, cx + half), (cy - half, cy + half))
    plot = _base(result, "Private PCA biplot", limits)
    pts = _with_panel(pts, DP_PANEL, result)
    if result.groups:
        plot += p9.geom_point(
            p9.aes(lx, ly, color="group"), data=pts, size=0.5, alpha=0.4
        )
    else:
        plot += p9.geom_point(
            p9.aes(lx, ly), data=pts, size=0.5, alpha=0.35, color=PRIVATE_COLOR
        )
    frames = [_with_panel(arrows, DP_PANEL, result)]
    if result.reference:
        plot += _reference_points(result)
        ref_v = result.reference["directions"][:, [a, b]]
        ref_origin = (0.0, 0.0) if result.center else origin
        frames.append(
            _with_panel(
                _arrows(ref_v, result.columns, mult, ref_origin, variables),
                REF_PANEL,
                result,
            )
        )
    arr = pd.concat(frames, ignore_index=True)
    plot += p9.geom_segment(
        p9.aes(x="x0", y="y0", xend="x1", yend="y1"),
        data=arr,
        arrow=p9.arrow(length=0.08, type="closed"),
        color="#B44A4A",
        size=0.6,
        inherit_aes=False,
    )
    plot += p9.geom_text(
        p9.aes(x="x1", y="y1", label="variable"),
        data=arr,
        size=7,
        va="bottom",
        color="#B44A4A",
        inherit_aes=False,
    )
    return plot


def _scree_plot(result: DPPCAResult):
    import plotnine as p9

    if result.pve is None:
        raise _fail(
            "plot",
            "kind='scree' needs private eigenvalues; use dp_pca() (dp_score "
            "releases none).",
        )
    names = list(result.pve.index)
    frames = [
        pd.DataFrame(
            {"component": names, "pve": result.pve.to_numpy(), "source": "DP"}
        )
    ]
    if result.reference:
        frames.append(
            pd.DataFrame(
                {
                    "component": names,
                    "pve": result.reference["pve"],
                    "source": "Ordinary PCA (not private)",
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)
    df["component"] = pd.Categorical(df["component"], names)
    df["source"] = pd.Categorical(
        df["source"], ["DP", "Ordinary PCA (not private)"][: len(frames)]
    )
    total = result.privacy.loc["total"]
    return (
        p9.ggplot(df, p9.aes("component", "pve", fill="source"))
        + p9.geom_col(position="dodge", width=0.8)
        + p9.scale_fill_manual(values=[PRIVATE_COLOR, "#AAAAAA"])
        + p9.labs(
            x="",
            y="Proportion of variance explained",
            title="Private scree plot (clipped eigenvalues)",
            subtitle=f"eps = {total['eps']:.3g}, delta = {total['delta']:.2g}",
            fill="",
        )
        + p9.theme_minimal()
    )
