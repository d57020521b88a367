"""The shared base of every private count stat.

A private stat does plumbing only (DESIGN.md):

1. **Domain.** The family (count, bin, bin2d, sum, hex) maps each record to
   a cell of a domain and says whether that domain is *public* (from
   parameters, declared categorical levels or user scale limits) or only
   *observed*. Group aesthetics (``fill``, ``colour`` ...) multiply the
   domain by their declared levels, or by their observed combinations.
2. **Aggregation** (:func:`aggregate_cells`): true counts, weighted sums
   and exact integer record-key sums per cell; zero cells included for a
   public domain.
3. **Perturbation** by a :class:`CountMechanism`: :class:`DPCounts`
   (discrete or continuous Laplace; thresholded when the domain is not
   public) or :class:`CKMCounts` (cell key lookup in a p-table). This is
   the only thing in which a DP stat and its CKM twin differ.
4. **Shaping** the output like the plotnine stat it replaces, with derived
   variables (prop, density, ...) recomputed from the released counts.

Each release is recorded as a :class:`~plotnine_private.ledger.Release` in
the stat's ``releases`` list.

Writing a family: subclass :class:`PrivateCountStat`, implement
``family_cells(data, scales) -> FamilyCells`` and
``shape_output(table, released) -> DataFrame``; then
``class stat_x_dp(DPMixin, FamilyBase)`` and
``class stat_x_ckm(CKMMixin, FamilyBase)`` with merged ``DEFAULT_PARAMS``.
"""

from __future__ import annotations

import hashlib
import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from plotnine.scales.scale_discrete import scale_discrete
from plotnine.stats.stat import stat

from ..exceptions import PlotninePrivateError
from ..ledger import Release
from ..mechanisms import laplace as lap
from ..mechanisms.randomness import (
    CellStreams,
    cell_words,
    derive_key,
    master_key,
)

if TYPE_CHECKING:
    from plotnine.facets.layout import Layout
    from plotnine.typing import pos_scales

__all__ = [
    "CKMCounts",
    "CKMMixin",
    "CellTable",
    "DPCounts",
    "DPMixin",
    "FamilyCells",
    "PrivateCountStat",
    "aggregate_cells",
]

# columns that never define groups
_NON_GROUP = {
    "x",
    "y",
    "PANEL",
    "group",
    "weight",
    "rkey",
    "label",
    "xmin",
    "xmax",
    "ymin",
    "ymax",
}

DP_PARAMS: dict[str, Any] = {
    "eps": None,
    "delta": 1e-6,
    "seed": None,
    "adjacency": "replace",
    "noise": "discrete_laplace",
}

CKM_PARAMS: dict[str, Any] = {"ptable": None, "threshold": None}


# --------------------------------------------------------------------------
# parameter validation (one place, scikit-learn style)
# --------------------------------------------------------------------------
def _fail(stat_name: str, message: str) -> PlotninePrivateError:
    return PlotninePrivateError(f"{stat_name}(): {message}")


def validate_eps(name: str, eps: Any) -> float:
    if eps is None:
        raise _fail(
            name,
            "eps is required: the privacy budget of this layer, a number "
            "> 0 (e.g. eps=1). Smaller eps means more noise.",
        )
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise _fail(name, f"eps must be a number > 0, got {eps!r}.")
    if not math.isfinite(eps) or eps <= 0:
        raise _fail(name, f"eps must be a finite number > 0, got {eps!r}.")
    try:
        lap.exact_epsilon(eps)
    except ValueError as err:
        raise _fail(name, str(err)) from None
    return float(eps)


def validate_delta(name: str, delta: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise _fail(name, f"delta must be a number in (0, 1), got {delta!r}.")
    if not (0 < delta < 1):
        raise _fail(
            name,
            f"delta must lie in (0, 1), got {delta!r}; use a small value "
            "such as 1e-6 (at most 1/n).",
        )
    return float(delta)


def validate_seed(name: str, seed: Any) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise _fail(
            name,
            f"seed must be an int or None, got {seed!r} "
            f"({type(seed).__name__}); a Generator is not accepted because "
            "plotnine deep-copies parameters on every '+'.",
        )
    return int(seed)


def validate_choice(name: str, param: str, value: Any, choices) -> str:
    if value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise _fail(name, f"{param} must be one of {valid}; got {value!r}.")
    return value


def validate_range(name: str, param: str, value: Any) -> tuple[float, float]:
    """A public (lo, hi) pair of finite numbers with lo < hi."""
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise _fail(
            name, f"{param} must be a pair (low, high), got {value!r}."
        ) from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise _fail(
            name,
            f"{param} must be finite with low < high, got {value!r}.",
        )
    return lo, hi


def validate_range_share(name: str, share: Any) -> float | None:
    """Share of a layer's eps for *each* privately estimated axis range;
    the counts get what is left, so at most two axes need share < 0.5."""
    if share is None:
        return None
    if (
        isinstance(share, bool)
        or not isinstance(share, numbers.Real)
        or not 0 < share < 0.5
    ):
        raise _fail(
            name,
            f"range_share must be a number in (0, 0.5), got {share!r}: it "
            "is taken out of eps for each axis whose range is estimated.",
        )
    return float(share)


def validate_breaks(name: str, param: str, value: Any) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.ndim != 1 or arr.size < 2:
        raise _fail(
            name, f"{param} must list at least two bin edges, got {value!r}."
        )
    if not np.all(np.isfinite(arr)):
        raise _fail(name, f"{param} must be finite numbers, got {value!r}.")
    if np.any(np.diff(arr) <= 0):
        raise _fail(
            name,
            f"{param} must be strictly increasing, got {value!r}; sort them "
            "and remove duplicates.",
        )
    return arr


def level_label(value: Any) -> str:
    """Canonical text of a category, facet or group value, used to key the
    noise: a number is written as a float (4, 4.0 and np.int64(4) are one
    level), anything else as its ``str``. Plots and tables use the same
    labels, so they draw the same noise for the same cell.

    >>> level_label(4), level_label(4.0), level_label("4")
    ('4.0', '4.0', '4')
    """
    if isinstance(value, numbers.Real) and not isinstance(
        value, (bool, np.bool_)
    ):
        return repr(float(value))
    return str(value)


_LAYOUT_COLUMNS = {"PANEL", "ROW", "COL", "SCALE_X", "SCALE_Y", "AXIS_X",
                   "AXIS_Y"}


def facet_panels(name: str, dp: bool, layout_frame: pd.DataFrame):
    """Facet panels are part of the domain: they must be public.

    A panel exists for every declared level only when the facet variable
    is a Categorical and the facet keeps unused levels
    (``facet_wrap(..., drop=False)``); otherwise a panel appears because
    (and only if) some record has that value. DP stats refuse that; CKM
    stats, which do not hide empty cells, accept it and say so.

    Returns ``(facet columns, partition, panels source)``: the partition
    (facet names) allows parallel composition and is None unless public.
    """
    cols = [c for c in layout_frame.columns if c not in _LAYOUT_COLUMNS]
    if not cols:
        return cols, None, "single panel"
    undeclared = [
        str(c)
        for c in cols
        if not isinstance(layout_frame[c].dtype, pd.CategoricalDtype)
        or set(layout_frame[c].dropna())
        != set(layout_frame[c].dtype.categories)
    ]
    if not undeclared:
        return cols, ",".join(map(str, cols)), "public: declared facets"
    if dp:
        raise _fail(
            name,
            f"facet variable(s) {', '.join(undeclared)} have no public set "
            "of levels, so a panel would appear exactly when some record "
            "has its value. Declare them as pandas Categoricals with the "
            "public levels and keep empty panels: "
            "facet_wrap(..., drop=False) / facet_grid(..., drop=False).",
        )
    return cols, None, f"observed values of {', '.join(undeclared)}"


def as_ptable(name: str, obj: Any):
    """A PTable from a PTable, a DataFrame or a path (any known format)."""
    from ..mechanisms.ptable import PTable, read_ptable

    if isinstance(obj, PTable):
        return obj
    try:
        return read_ptable(obj)
    except (ValueError, OSError, TypeError) as err:
        raise _fail(name, f"ptable: {err}") from None


# --------------------------------------------------------------------------
# cells
# --------------------------------------------------------------------------
@dataclass
class FamilyCells:
    """What a family says about one panel.

    Attributes
    ----------
    frame
        One row per cell of the family's domain: output columns (x,
        xmin, ...) of the cell.
    content
        Columns that identify a cell by its content (label, bin edges),
        used to key the noise; aligned with ``frame``.
    code
        For each record, the row of ``frame`` it falls in (-1: outside the
        domain, dropped).
    public
        Whether ``frame`` was fixed without looking at the data.
    source
        Words for the report: where the domain came from.
    """

    frame: pd.DataFrame
    content: list
    code: np.ndarray
    public: bool
    source: str
    extra_releases: list = field(default_factory=list)


@dataclass
class CellTable:
    """Aggregated cells of one panel, before perturbation."""

    frame: pd.DataFrame  # output columns incl. group-key columns, group
    words: np.ndarray  # (n, k) uint64 content words for keyed noise
    n: np.ndarray  # unweighted true counts (int64)
    weighted: np.ndarray  # weighted counts (float64)
    key_sum: np.ndarray | None  # exact integer record-key sums
    public: bool
    source: str


@dataclass
class Released:
    values: np.ndarray  # released counts (float64, >= 0 after clipping)
    noisy: np.ndarray  # unclipped released values (DP), or same as values
    keep: np.ndarray  # bool: shown
    release: Release


def aggregate_cells(
    code: np.ndarray,
    ncells: int,
    weight: np.ndarray | None = None,
    key_ints: np.ndarray | None = None,
):
    """Counts, weighted counts and exact key sums per cell code.

    Records with code -1 are outside the domain and ignored.

    >>> aggregate_cells(np.array([0, 0, 2, -1]), 3)[0]
    array([2, 0, 1])
    """
    inside = code >= 0
    c = code[inside]
    n = np.bincount(c, minlength=ncells).astype(np.int64)
    if weight is None:
        w = n.astype(np.float64)
    else:
        w = np.bincount(c, weights=weight[inside], minlength=ncells)
    ks = None
    if key_ints is not None:
        ks = np.zeros(ncells, dtype=np.int64)
        np.add.at(ks, c, key_ints[inside])
    return n, w, ks


def _table_key(query_key: bytes, words: np.ndarray, n: np.ndarray) -> bytes:
    """16-byte key of (secret query key, every cell and its true count)."""
    h = hashlib.blake2b(key=query_key, digest_size=16, person=b"pnp-table")
    h.update(np.ascontiguousarray(words).tobytes())
    h.update(np.ascontiguousarray(n, dtype=np.int64).tobytes())
    return h.digest()


def _release_id(table_key: bytes, *parts: Any) -> str:
    """One-way id of a release: its table key (secret) plus whatever else
    changes what is shown (e.g. the threshold). Reveals no count."""
    h = hashlib.blake2b(key=table_key, digest_size=12, person=b"pnp-rel")
    h.update(repr(parts).encode())
    return h.hexdigest()


# --------------------------------------------------------------------------
# mechanisms: the only difference between a DP stat and its CKM twin
# --------------------------------------------------------------------------
class DPCounts:
    """Laplace-type noise on counts (see ``mechanisms/laplace.py``).

    Public domain: every cell gets noise, pure ε-DP. Observed domain: only
    non-empty cells get noise and a cell is shown iff its noisy count is
    at least :func:`~plotnine_private.mechanisms.laplace.threshold_for`,
    (ε, δ)-DP.
    """

    def __init__(self, stat_name, eps, delta, seed, adjacency, noise):
        self.stat_name = stat_name
        self.eps = eps
        self.delta = delta
        self.seed = seed
        self.adjacency = adjacency
        self.noise = noise
        self.sensitivity = lap.ADJACENCY_SENSITIVITY[adjacency]
        # the query key names the mechanism, not the stat: the same cell
        # gets the same noise from count_dp, dp_table, ... (one release)
        self.query_key = derive_key(
            master_key(seed),
            "counts",
            noise,
            str(lap.exact_epsilon(eps)),
            adjacency,
        )

    @property
    def scale(self) -> float:
        return self.sensitivity / float(lap.exact_epsilon(self.eps))

    def with_eps(self, eps: float) -> DPCounts:
        """The same mechanism with another budget (what is left for the
        counts after a private range took its share)."""
        return DPCounts(self.stat_name, eps, self.delta, self.seed,
                        self.adjacency, self.noise)

    def perturb(self, table: CellTable, panel=None, partition=None):
        # The noise of a release is keyed by the secret, the query and a
        # digest of the whole table (every cell's content and true count).
        # The same data gives the same numbers in every layer, table and
        # process (one release, and no averaging by redrawing); data that
        # differ in any record (a neighbour, a subset, an update) get
        # independent noise in *every* cell, so comparing two releases
        # reveals neither which cell changed nor by how much beyond what
        # composing two eps-DP releases allows. Within a table, each cell
        # reads its own keyed stream.
        table_key = _table_key(self.query_key, table.words, table.n)
        streams = CellStreams(table_key, table.words)
        cells = np.arange(len(table.n))
        if not table.public:
            cells = cells[table.n > 0]  # empty cells are never candidates
        raw = np.full(len(table.n), np.nan)
        if self.noise == "discrete_laplace":
            scale = lap.rational_scale(self.sensitivity, self.eps)
            raw[cells] = table.n[cells] + lap.discrete_laplace(
                streams, scale, cells
            )
        else:
            raw[cells] = table.n[cells] + lap.laplace(
                streams, self.scale, cells
            )
        keep = np.zeros(len(table.n), dtype=bool)
        keep[cells] = True
        details: dict[str, Any] = {"scale": self.scale}
        delta = 0.0
        tau = None
        if not table.public:
            tau = lap.threshold_for(
                self.eps, self.delta, self.adjacency, self.noise
            )
            # compare the unrounded value: rounding first would lower the
            # effective cut below tau for continuous noise
            keep &= np.nan_to_num(raw, nan=-np.inf) >= tau
            details["threshold"] = tau
            delta = self.delta
        noisy = raw if self.noise == "discrete_laplace" else np.round(raw)
        values = np.where(keep, np.clip(np.nan_to_num(noisy), 0, None), 0.0)
        release = Release(
            stat=self.stat_name,
            mechanism=self.noise,
            eps=self.eps,
            delta=delta,
            adjacency=self.adjacency,
            sensitivity=float(self.sensitivity),
            domain=table.source if table.public else "thresholded",
            cells=int(keep.sum()),
            release_id=_release_id(table_key, tau),
            panel=panel,
            partition=partition,
            details=details,
        )
        return Released(values, noisy, keep, release)


class CKMCounts:
    """Cell Key Method: noise read from a p-table at the cell key.

    Deterministic given the record keys and the p-table; zero cells stay
    zero; weighted counts are the perturbed unweighted count times the
    cell's mean weight (cellKey / Tau-Argus). No formal privacy budget.
    """

    def __init__(self, stat_name, ptable, threshold):
        self.stat_name = stat_name
        self.ptable = ptable
        self.threshold = threshold

    def key_integers(self, keys: np.ndarray) -> np.ndarray:
        from ..mechanisms.ckm import record_key_integers

        kind = self.ptable.key_kind
        try:
            return record_key_integers(
                keys,
                kind=kind,
                modulus=self.ptable.key_modulus if kind == "integer" else None,
            )
        except ValueError as err:
            raise _fail(self.stat_name, f"aesthetic rkey: {err}") from None

    def perturb(self, table: CellTable, panel=None, partition=None):
        v = self.ptable.noise(table.n, table.key_sum)
        pert = table.n + v
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_w = np.where(table.n > 0, table.weighted / table.n, 0.0)
        values = pert * mean_w
        keep = np.ones(len(values), dtype=bool)
        if not table.public:
            keep &= table.n > 0
        if self.threshold is not None:
            keep &= ~(values < self.threshold)
        values = np.where(keep, values, 0.0)
        h = hashlib.blake2b(digest_size=12, person=b"pnp-ckm")
        h.update(self.ptable.fingerprint.encode())
        h.update(np.ascontiguousarray(table.words).tobytes())
        h.update(np.ascontiguousarray(table.key_sum).tobytes())
        details = {
            "ptable": dict(self.ptable.params),
            "ptable_fingerprint": self.ptable.fingerprint,
            "threshold": self.threshold,
        }
        release = Release(
            stat=self.stat_name,
            mechanism="ckm",
            eps=None,
            delta=0.0,
            adjacency=None,
            sensitivity=None,
            domain=table.source if table.public else "observed",
            cells=int(keep.sum()),
            release_id=h.hexdigest(),
            panel=panel,
            partition=partition,
            details=details,
        )
        return Released(values, values.astype(float), keep, release)


# --------------------------------------------------------------------------
# the stat base
# --------------------------------------------------------------------------
class PrivateCountStat(stat):
    """Base of all private count stats (not registered under a stat name).

    Subclasses implement :meth:`family_cells` and :meth:`shape_output`.
    """

    #: stat names that must not be used with a y aesthetic, etc. are in
    #: the families; here only the shared plumbing.
    DP: bool = False

    def __init__(self, mapping=None, data=None, **kwargs):
        super().__init__(mapping, data, **kwargs)
        self.releases: list[Release] = []
        self.declared_levels: dict[str, list] = {}
        self.validate_params()

    # -- hooks for subclasses ------------------------------------------
    def validate_params(self) -> None:
        """Check parameter values; raise before any plotting."""

    def family_cells(
        self, data: pd.DataFrame, scales: pos_scales
    ) -> FamilyCells:  # pragma: no cover - abstract
        raise NotImplementedError

    def shape_output(
        self, table: CellTable, released: Released
    ) -> pd.DataFrame:  # pragma: no cover - abstract
        raise NotImplementedError

    def make_mechanism(self):  # pragma: no cover - provided by mixins
        raise NotImplementedError

    def record_key_integers(self, data: pd.DataFrame):
        return None

    # -- plotnine entry points -----------------------------------------
    @property
    def name(self) -> str:
        return type(self).__name__

    def observe_aesthetics(
        self, declared: dict[str, list], scales, nrows: int
    ) -> None:
        """Called (via ``_compat``) with the categorical levels of the
        evaluated aesthetics, before the position scales are trained."""
        if nrows == 0:
            # plotnine skips the stat of an empty layer, which would
            # silently release nothing: say so instead
            raise _fail(
                self.name,
                "the layer's data frame is empty: there is nothing to "
                "release. Check the data (or a filter) given to ggplot().",
            )
        self.declared_levels = declared
        levels = self.params.get("levels")
        for ae in ("x", "y"):
            sc = scales.get_scales(ae)
            if sc is None or not isinstance(sc, scale_discrete):
                continue
            if ae == "x" and levels is not None and sc.limits is None:
                sc.limits = list(levels)
                sc.na_translate = False  # no 'nan' level on the axis
            elif ae in declared and sc.limits is None:
                # the declared levels, and only them, make the axis: empty
                # levels keep their place and no 'nan' level appears
                sc.limits = list(declared[ae])
                sc.na_translate = False

    def setup_params(self, data):
        pass

    def compute_layer(self, data: pd.DataFrame, layout: Layout):
        self.releases = []
        self.check_input(data)
        data = self.drop_missing(data)
        mechanism = self.make_mechanism()
        key_ints = self.record_key_integers(data)
        if key_ints is not None:
            data = data.assign(_rkey_int=key_ints)
        facet_cols, partition, self.panels_source = facet_panels(
            self.name, self.DP, layout.layout
        )
        # families that estimate a domain privately do it once per layer,
        # on all panels' records, so every panel shares one set of bins
        self.layer_records = data
        self.axis_cache: dict = {}
        out = []
        for _, lrow in layout.layout.iterrows():
            panel = lrow["PANEL"]
            pdata = data[data["PANEL"] == panel]
            scales = layout.get_scales(panel)
            panel_label = tuple(level_label(lrow[c]) for c in facet_cols)
            res = self.compute_private_panel(
                pdata, scales, mechanism, panel_label, partition
            )
            if res is not None and len(res):
                res["PANEL"] = panel
                out.append(res)
        if not out:
            # nothing released: an empty frame that plotnine can still train
            cols = {"PANEL", "group", *self.REQUIRED_AES, *self.CREATES}
            out = [pd.DataFrame({c: pd.Series(dtype=float) for c in cols})]
        result = pd.concat(out, ignore_index=True)
        panel_dtype = layout.layout["PANEL"].dtype
        if isinstance(panel_dtype, pd.CategoricalDtype):
            result["PANEL"] = pd.Categorical(
                result["PANEL"], categories=panel_dtype.categories
            )
        return self.finish_layer_output(result)

    def finish_layer_output(self, result: pd.DataFrame) -> pd.DataFrame:
        return result

    # -- shared steps --------------------------------------------------
    def check_input(self, data: pd.DataFrame) -> None:
        missing = [
            ae for ae in sorted(self.REQUIRED_AES) if ae not in data.columns
        ]
        if missing:
            raise _fail(
                self.name,
                f"missing required aesthetic(s) {', '.join(missing)}: map "
                f"them, e.g. aes({missing[0]}='column').",
            )
        if "y" in data.columns and "y" not in self.REQUIRED_AES:
            raise _fail(
                self.name,
                "must not be used with a y aesthetic: it computes y (the "
                "released count) itself.",
            )

    def drop_missing(self, data: pd.DataFrame) -> pd.DataFrame:
        """Drop records with missing or infinite positions (as plotnine
        does), without any warning."""
        cols = [
            c for c in sorted(self.REQUIRED_AES) if c in data.columns
        ]
        bad = np.zeros(len(data), dtype=bool)
        for c in cols:
            col = data[c]
            if pd.api.types.is_numeric_dtype(col):
                bad |= ~np.isfinite(col.to_numpy(dtype=float, na_value=np.nan))
            else:
                bad |= col.isna().to_numpy()
        # silently, whatever na_rm says: a warning would tell whether some
        # record is missing or outside the scale limits (plotnine censors
        # those to NaN before the stat), a fact about the data
        return data[~bad] if bad.any() else data

    def checked_weights(self, column: pd.Series) -> np.ndarray:
        """Weights must be finite numbers >= 0 (a weighted count is still a
        count): anything else is an error, not a silently wrong bar."""
        w = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(w) | (w < 0)
        if bad.any():
            raise _fail(
                self.name,
                "the weight aesthetic must hold finite numbers >= 0 (survey "
                "or frequency weights); found "
                f"{'negative' if (w < 0).any() else 'missing/non-numeric'} "
                "values. Clean or drop them before plotting.",
            )
        return w

    def require_continuous(self, scales, *axes: str) -> None:
        """Binned families need continuous positions: a discrete axis was
        trained on the observed levels, which would show on the plot."""
        for ax in axes:
            if isinstance(getattr(scales, ax), scale_discrete):
                raise _fail(
                    self.name,
                    f"{ax} is discrete: this stat bins continuous positions, "
                    f"and a discrete {ax} axis lists the levels seen in the "
                    f"data. Map a numeric column, or count categories with "
                    f"stat='count_dp'/'count_ckm' (x) and a declared "
                    f"Categorical.",
                )

    def group_columns(self, data: pd.DataFrame) -> list[str]:
        cols = []
        for c in data.columns:
            if c in _NON_GROUP or c.startswith("_"):
                continue
            dtype = data[c].dtype
            if (
                isinstance(dtype, pd.CategoricalDtype)
                or pd.api.types.is_string_dtype(dtype)
                or pd.api.types.is_bool_dtype(dtype)
                or pd.api.types.is_object_dtype(dtype)
            ):
                cols.append(c)
        return cols

    def group_domain(self, data: pd.DataFrame, cols: list[str]):
        """Combinations of the group aesthetics: (frame, codes, public)."""
        if not cols:
            frame = pd.DataFrame(index=[0])
            return frame, np.zeros(len(data), dtype=np.int64), True
        declared = self.declared_levels
        public = all(c in declared for c in cols)
        if public:
            levels = [list(declared[c]) for c in cols]
            frame = pd.MultiIndex.from_product(levels, names=cols).to_frame(
                index=False
            )
        else:
            frame = (
                data[cols]
                .drop_duplicates()
                .sort_values(cols)
                .reset_index(drop=True)
            )
        for c in cols:
            if isinstance(data[c].dtype, pd.CategoricalDtype):
                frame[c] = pd.Categorical(
                    frame[c], categories=data[c].cat.categories
                )
        idx = pd.MultiIndex.from_frame(frame.astype(object))
        rec = pd.MultiIndex.from_frame(data[cols].astype(object))
        codes = idx.get_indexer(rec).astype(np.int64)
        return frame, codes, public

    def compute_private_panel(
        self, data, scales, mechanism, panel_label, partition
    ):
        fam = self.family_cells(data, scales)
        self.releases.extend(fam.extra_releases)
        spent = sum(
            r.eps for r in self.releases if r.mechanism == "durfee_quantile"
        )
        if spent and isinstance(mechanism, DPCounts):
            # a private range was paid out of this layer's eps
            mechanism = mechanism.with_eps(mechanism.eps - spent)
        gcols = self.group_columns(data)
        gframe, gcode, gpublic = self.group_domain(data, gcols)
        nfam = len(fam.frame)
        ngrp = len(gframe)
        code = np.where(
            (fam.code >= 0) & (gcode >= 0), gcode * nfam + fam.code, -1
        )
        weight = None
        if "weight" in data.columns:
            weight = self.checked_weights(data["weight"])
        key_ints = (
            data["_rkey_int"].to_numpy(dtype=np.int64)
            if "_rkey_int" in data.columns
            else None
        )
        n, w, ks = aggregate_cells(code, ngrp * nfam, weight, key_ints)
        # cell frame: group combos (outer) x family cells (inner)
        gi = np.repeat(np.arange(ngrp), nfam)
        fi = np.tile(np.arange(nfam), ngrp)
        frame = fam.frame.iloc[fi].reset_index(drop=True)
        for c in gcols:
            frame[c] = gframe[c].iloc[gi].to_numpy()
        frame["group"] = gi + 1
        public = fam.public and gpublic
        if not public:
            # observed domain: only non-empty cells are candidates
            sel = n > 0
            frame = frame[sel].reset_index(drop=True)
            gi, fi = gi[sel], fi[sel]
            n, w = n[sel], w[sel]
            ks = ks[sel] if ks is not None else None
        content = [
            np.array(["|".join(panel_label)] * len(frame), dtype=object)
        ]
        for c in gcols:
            content.append(frame[c].map(level_label).to_numpy(dtype=object))
        for col in fam.content:
            content.append(np.asarray(col)[fi])
        words = cell_words(*content)
        source = fam.source
        if fam.public and not gpublic:
            source = "thresholded"
        table = CellTable(
            frame=frame,
            words=words,
            n=n,
            weighted=w,
            key_sum=ks,
            public=public,
            source=source,
        )
        released = mechanism.perturb(
            table,
            panel="|".join(panel_label) or None,
            partition=partition,
        )
        released.release.details["panels"] = self.panels_source
        self.releases.append(released.release)
        return self.shape_output(table, released)


class DPMixin:
    """Parameters, validation and mechanism of the DP stats."""

    DP = True

    def validate_params(self) -> None:
        p = self.params
        name = type(self).__name__
        p["eps"] = validate_eps(name, p["eps"])
        p["delta"] = validate_delta(name, p["delta"])
        p["seed"] = validate_seed(name, p["seed"])
        validate_choice(
            name, "adjacency", p["adjacency"], ("replace", "add_remove")
        )
        validate_choice(
            name, "noise", p["noise"], ("discrete_laplace", "laplace")
        )
        super().validate_params()  # type: ignore[misc]

    def make_mechanism(self) -> DPCounts:
        p = self.params
        return DPCounts(
            type(self).__name__,
            p["eps"],
            p["delta"],
            p["seed"],
            p["adjacency"],
            p["noise"],
        )

    def check_input(self, data: pd.DataFrame) -> None:
        super().check_input(data)  # type: ignore[misc]
        if "weight" in data.columns:
            w = pd.to_numeric(data["weight"], errors="coerce")
            if not np.allclose(w.to_numpy(dtype=float), 1.0):
                raise _fail(
                    type(self).__name__,
                    "the weight aesthetic is not supported by DP stats: one "
                    "record of unbounded weight has unbounded sensitivity. "
                    "Remove aes(weight=...) or use the CKM twin, which "
                    "perturbs weighted counts.",
                )


class CKMMixin:
    """Parameters, validation and mechanism of the CKM stats."""

    def validate_params(self) -> None:
        p = self.params
        name = type(self).__name__
        if p["ptable"] is None:
            raise _fail(
                name,
                "ptable is required: a PTable from create_cnt_ptable(D, V, "
                "js) or read_ptable(path) with your office's p-table.",
            )
        p["ptable"] = as_ptable(name, p["ptable"])
        thr = p["threshold"]
        if thr is not None and (
            isinstance(thr, bool)
            or not isinstance(thr, numbers.Real)
            or not math.isfinite(thr)
            or thr < 0
        ):
            raise _fail(
                name,
                f"threshold must be None or a number >= 0, got {thr!r}.",
            )
        super().validate_params()  # type: ignore[misc]

    def make_mechanism(self) -> CKMCounts:
        p = self.params
        return CKMCounts(type(self).__name__, p["ptable"], p["threshold"])

    def record_key_integers(self, data: pd.DataFrame):
        name = type(self).__name__
        if "rkey" not in data.columns:
            raise _fail(
                name,
                "needs record keys: map them with aes(rkey='<column>'). "
                "Create them once with add_record_keys(data) and store them "
                "with the data, so every output gets the same noise.",
            )
        mech = self.make_mechanism()  # type: ignore[attr-defined]
        return mech.key_integers(data["rkey"].to_numpy())
