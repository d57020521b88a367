"""A released synopsis: consistent noisy marginals, answered and saved.

Everything here is post-processing of released tables: a
:class:`Synopsis` holds no record, answers marginals and histograms from
its tables, and is saved to / loaded from a JSON file with its
statement (loading reads no data).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import PlotninePrivateError
from ..mechanisms.release.records import Release
from ..mechanisms.samplers.laplace import dlap_variance
from .ckm import ptable_from_json, ptable_json
from .consistency import linear_consistent

__all__ = ["Dim", "Synopsis", "load_synopsis"]

FORMAT = "plotnine_private.synopsis/1"


@dataclass(frozen=True)
class Dim:
    """One declared dimension: categorical ``levels``, or numeric
    ``limits`` cut into fine bins of width ``resolution``."""

    name: str
    levels: tuple | None = None
    limits: tuple[float, float] | None = None
    resolution: float | None = None

    @property
    def numeric(self) -> bool:
        return self.levels is None

    @property
    def bins(self) -> int:
        if self.levels is not None:
            return len(self.levels)
        assert self.limits is not None and self.resolution is not None
        lo, hi = self.limits
        return int(round((hi - lo) / self.resolution))

    def level_codes(self, values: Any) -> np.ndarray:
        """Each of ``values``' position among the declared levels (-1:
        none, or missing), a value matching a level equal to it."""
        assert self.levels is not None
        index = pd.Index(list(self.levels), dtype=object)
        found = index.get_indexer(pd.Index(np.asarray(values, dtype=object)))
        return np.asarray(found, dtype=np.int64)

    def labels(self) -> list:
        """The value shown for each cell: a level, or a fine bin's left
        edge."""
        if self.levels is not None:
            return list(self.levels)
        assert self.limits is not None and self.resolution is not None
        lo = self.limits[0]
        return [lo + k * self.resolution for k in range(self.bins)]

    def to_json(self) -> dict[str, Any]:
        if self.levels is not None:
            return {"levels": list(self.levels)}
        return {
            "limits": list(self.limits or ()),
            "resolution": self.resolution,
        }

    @classmethod
    def from_json(cls, name: str, d: dict[str, Any]) -> Dim:
        if "levels" in d:
            return cls(name, levels=tuple(d["levels"]))
        lo, hi = d["limits"]
        return cls(name, limits=(lo, hi), resolution=d["resolution"])


@dataclass
class Synopsis:
    """Noisy marginals released once: consistent (DP), or each
    published as the Cell Key Method perturbed it (CKM).

    Attributes
    ----------
    dims
        The declared dimensions, by name.
    tables
        Each held marginal (a tuple of dimension names) and its consistent
        counts (one array axis per dimension, in that order).
    eps, delta
        What the release was charged (once, for every marginal); ``eps``
        is None for CKM (no formal guarantee).
    statement
        What was released and how it was made consistent (for a reader
        and an output checker).
    raw
        Each held marginal's noisy counts as released (DP: before the
        consistency step; saved with the file), whose linear estimate
        (:meth:`linear`) the figures' intervals centre on.
    disagreement
        The largest difference left between two tables' shared 1-way
        totals (0 unless raking stopped before its tolerance).
    release
        The record of the one release (what the report composes: every
        figure drawn from the synopsis repeats it, charged once).
    scale
        The discrete Laplace scale of every released cell (public; NaN
        when ``weights`` gave the marginals unequal shares).
    shares, scales
        Each marginal's share of eps and its cells' noise scale (DP).
    method
        ``"dp"`` or ``"ckm"``.
    ptable, threshold, rkey
        CKM: the count p-table, the threshold and the name of the
        record-key column (public words, no key).
    derived
        Post-processing kept once computed (never saved).
    """

    dims: dict[str, Dim]
    tables: dict[tuple[str, ...], np.ndarray]
    eps: float | None
    delta: float
    statement: str
    disagreement: float = 0.0
    raw: dict[tuple[str, ...], np.ndarray] = field(
        default_factory=dict, repr=False
    )
    release: Release | None = field(default=None, repr=False)
    scale: float = math.nan
    #: each marginal's share of eps and its cells' noise scale (public)
    shares: dict[tuple[str, ...], float] = field(default_factory=dict)
    scales: dict[tuple[str, ...], float] = field(default_factory=dict)
    method: str = "dp"
    ptable: Any = field(default=None, repr=False)
    threshold: float | None = None
    rkey: str | None = None
    #: post-processing computed once for this synopsis (the bootstrap
    #: draws of its summaries' intervals), by what it is
    #: (init=False: a copy made by dataclasses.replace starts empty)
    derived: dict = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def name(self) -> str:
        """A short public name of the release (from its identity)."""
        if self.release is None:
            return "synopsis"
        return f"synopsis {self.release.identity[:8]}"

    # -- a source for plotnine: columns and declared levels, no row ------
    @property
    def columns(self) -> list[str]:
        """The declared dimensions (the columns a figure may map)."""
        return list(self.dims)

    def declared_levels(self, column: str) -> list | None:
        """The levels of a categorical dimension (None otherwise)."""
        d = self.dims.get(column)
        return None if d is None or d.levels is None else list(d.levels)

    def to_pandas(self) -> pd.DataFrame:
        """No row: the declared columns, typed (a Categorical of its
        levels, or floats), for plotnine's scales; the private layers
        read the synopsis's tables (:mod:`.draw`)."""
        out: dict[str, Any] = {}
        for k, d in self.dims.items():
            if d.levels is None:
                out[k] = pd.Series([], dtype=float)
            else:
                out[k] = pd.Categorical([], categories=list(d.levels))
        return pd.DataFrame(out)

    @property
    def marginals(self) -> list[tuple[str, ...]]:
        """The marginals held, in workload order."""
        return list(self.tables)

    @property
    def ckm(self) -> bool:
        """Whether the Cell Key Method perturbed the tables."""
        return self.method == "ckm"

    def _holder(self, want: tuple[str, ...]) -> tuple[str, ...]:
        if self.ckm:
            return self._ckm_holder(want)
        for held in self.tables:
            if set(want) <= set(held) and len(set(want)) == len(want):
                return held
        raise PlotninePrivateError(
            f"Synopsis.marginal(): the marginal {want!r} is not held by "
            f"this synopsis, nor is it a sub-marginal of one it holds; it "
            f"holds {self.marginals}. Declare it in the synopsis' "
            "workload=... (a new release) or draw one it holds."
        )

    def _ckm_holder(self, want: tuple[str, ...]) -> tuple[str, ...]:
        """CKM: only a held marginal itself (its cells are perturbed
        cells; a sum of them is not)."""
        for held in self.tables:
            if set(want) == set(held) and len(held) == len(want):
                return held
        subs = [h for h in self.tables if set(want) < set(h)]
        raise PlotninePrivateError(
            f"Synopsis.marginal(): the marginal {want!r} is not held by "
            f"this CKM synopsis; it holds {self.marginals}. "
            + (
                f"A sum of the perturbed cells of {subs[0]!r} is not a "
                "perturbed cell (CKM perturbs each published cell by its "
                "own cell key), so it is not drawn. "
                if subs
                else ""
            )
            + "Declare it in the synopsis' workload=... (a new release) "
            "or draw one it holds."
        )

    def linear(self) -> dict[tuple[str, ...], np.ndarray]:
        """The linear estimate ``L(raw)`` of every held table: the
        consistency step's averages and additive adjustments of the raw
        noisy tables with no clipping
        (:func:`~.consistency.linear_consistent`; cells may be negative),
        whose error has a public distribution (``L`` of the noise) that
        the figures' intervals are simulated from. The consistent tables
        themselves when the raw ones are not held (a CKM synopsis, a
        file saved without them). Computed once (:attr:`derived`)."""
        if self.ckm or set(self.raw) != set(self.tables):
            return self.tables
        if "linear" not in self.derived:
            marginals = self.marginals
            scales = [float(self.scales.get(m, self.scale)) for m in marginals]
            # weighted by each table's variance as the release was
            # (unequal shares), else equally
            variances = (
                None
                if len(set(scales)) == 1
                else [dlap_variance(b) for b in scales]
            )
            made = linear_consistent(
                [self.raw[m] for m in marginals], marginals, variances
            )
            for t in made:
                t.flags.writeable = False
            self.derived["linear"] = dict(zip(marginals, made))
        return self.derived["linear"]

    def counts(
        self, dims: Sequence[str] | str, linear: bool = False
    ) -> np.ndarray:
        """The consistent counts of a held marginal or of a sub-marginal
        of one (summed from it), one axis per name of ``dims``
        (``linear``: of :meth:`linear`'s tables)."""
        want = (dims,) if isinstance(dims, str) else tuple(dims)
        unknown = [d for d in want if d not in self.dims]
        if unknown:
            raise PlotninePrivateError(
                f"Synopsis.marginal(): {unknown[0]!r} is not a declared "
                f"dimension; the synopsis declares {list(self.dims)}."
            )
        held = self._holder(want)
        t = (self.linear() if linear else self.tables)[held]
        drop = tuple(k for k, d in enumerate(held) if d not in want)
        t = t.sum(axis=drop) if drop else t
        kept = [d for d in held if d in want]
        return np.transpose(t, [kept.index(d) for d in want])

    def marginal(self, dims: Sequence[str] | str) -> pd.DataFrame:
        """A frame of the consistent noisy counts of ``dims``: one column
        per dimension (a level, or a numeric fine bin's left edge) and
        ``count``, every combination of the declared levels (a
        post-processing of the release: nothing is charged)."""
        want = (dims,) if isinstance(dims, str) else tuple(dims)
        t = self.counts(want)
        grids = np.meshgrid(
            *(np.arange(self.dims[d].bins) for d in want), indexing="ij"
        )
        out = pd.DataFrame()
        for d, g in zip(want, grids):
            values = np.empty(self.dims[d].bins, dtype=object)
            values[:] = self.dims[d].labels()
            out[d] = values[g.ravel()]
        out["count"] = t.ravel()
        return out

    def histogram(self, dim: str, binwidth: float) -> pd.DataFrame:
        """A histogram of a numeric dimension with bins of ``binwidth``
        (a whole multiple of its resolution that divides its limits):
        the sums of its consistent fine bins; columns ``xmin``, ``xmax``,
        ``x`` (the centre) and ``count``."""
        d = self.dims.get(dim)
        if d is None or not d.numeric:
            numeric = [k for k, v in self.dims.items() if v.numeric]
            raise PlotninePrivateError(
                f"Synopsis.histogram(): {dim!r} is not a numeric dimension "
                f"of the synopsis; its numeric dimensions are {numeric}."
            )
        assert d.resolution is not None and d.limits is not None
        k = float(binwidth) / d.resolution
        ok = (
            isinstance(binwidth, (int, float))
            and math.isfinite(k)
            and k >= 1
            and abs(k - round(k)) <= 1e-9 * max(1.0, k)
            and d.bins % round(k) == 0
        )
        if not ok:
            raise PlotninePrivateError(
                f"Synopsis.histogram(): binwidth={binwidth!r} must be a "
                f"whole multiple of {dim!r}'s resolution {d.resolution} "
                f"that divides its {d.bins} fine bins of limits "
                f"{d.limits}; e.g. binwidth={d.resolution * _divisor(d.bins)}."
            )
        step = round(k)
        if self.ckm and step != 1:
            raise PlotninePrivateError(
                f"Synopsis.histogram(): binwidth={binwidth!r} sums "
                f"{step} fine bins of {dim!r}, and a sum of cells perturbed "
                "by the Cell Key Method is not a perturbed cell; a CKM "
                f"synopsis draws its fine bins: binwidth={d.resolution} (or "
                "declare a coarser resolution in dims=...)."
            )
        fine = self.counts((dim,))
        counts = fine.reshape(-1, step).sum(axis=1)
        lo = d.limits[0]
        xmin = lo + np.arange(len(counts)) * step * d.resolution
        xmax = xmin + step * d.resolution
        return pd.DataFrame(
            {
                "xmin": xmin,
                "xmax": xmax,
                "x": (xmin + xmax) / 2,
                "count": counts,
            }
        )

    # -- a file: the released consistent tables and the statement -------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "statement": self.statement,
            "eps": self.eps,
            "delta": self.delta,
            "disagreement": self.disagreement,
            "dims": {k: v.to_json() for k, v in self.dims.items()},
            "tables": [
                {
                    "dims": list(k),
                    "counts": v.tolist(),
                    # the raw noisy counts (DP): released as the consistent
                    # ones are, what the figures' intervals centre on
                    **(
                        {"noisy": _numbers(self.raw[k])}
                        if not self.ckm and k in self.raw
                        else {}
                    ),
                    **(
                        {"share": self.shares[k], "scale": self.scales[k]}
                        if k in self.scales
                        else {}
                    ),
                }
                for k, v in self.tables.items()
            ],
            "scale": self.scale,
            **(
                {
                    "method": "ckm",
                    "ptable": ptable_json(
                        self.ptable,
                        (self.release.details.get("ptable") or {})
                        if self.release is not None
                        else self.ptable.params,
                    ),
                    "threshold": self.threshold,
                    "rkey": self.rkey,
                }
                if self.ckm
                else {}
            ),
            "release": None
            if self.release is None
            else _release_json(self.release),
        }

    def save(self, path: str | Path) -> Path:
        """Write the synopsis (its consistent tables and statement, no
        record) to a JSON file."""
        path = Path(path)
        path.write_text(json.dumps(self.to_json(), indent=1))
        return path


def _numbers(a: np.ndarray) -> list:
    """An array as nested lists, whole numbers as ints (shorter text)."""
    a = np.asarray(a, dtype=float)
    if np.all(np.isfinite(a)) and np.array_equal(a, np.rint(a)):
        return np.rint(a).astype(np.int64).tolist()
    return a.tolist()


def _divisor(n: int) -> int:
    return next((k for k in range(2, n + 1) if n % k == 0), 1)


def load_synopsis(path: str | Path) -> Synopsis:
    """A synopsis saved by :meth:`Synopsis.save` (reads no data)."""
    d = json.loads(Path(path).read_text())
    if d.get("format") != FORMAT:
        raise PlotninePrivateError(
            f"load_synopsis(): {str(path)!r} is not a synopsis file (format "
            f"{d.get('format')!r}, expected {FORMAT!r}); save one with "
            "Synopsis.save(path)."
        )
    dims = {k: Dim.from_json(k, v) for k, v in d["dims"].items()}
    tables = {
        tuple(t["dims"]): np.asarray(t["counts"], dtype=float)
        for t in d["tables"]
    }
    raw = {
        tuple(t["dims"]): np.asarray(t["noisy"], dtype=float)
        for t in d["tables"]
        if "noisy" in t
    }
    rel = d.get("release")
    release = None if rel is None else Release(**rel)
    ckm: dict[str, Any] = {}
    if d.get("method") == "ckm":
        pt = ptable_from_json(str(path), d["ptable"])
        params = d["ptable"].get("params") or {}
        if release is not None:
            # the report names the p-table by its parameters, as the
            # release record did
            release = dataclasses.replace(
                release, details={**release.details, "ptable": params}
            )
        ckm = {
            "method": "ckm",
            "ptable": pt,
            "threshold": None
            if d.get("threshold") is None
            else float(d["threshold"]),
            "rkey": d.get("rkey"),
        }
    return Synopsis(
        dims,
        tables,
        None if d["eps"] is None else float(d["eps"]),
        float(d["delta"]),
        d["statement"],
        float(d["disagreement"]),
        # a file of an earlier version holds no raw tables: its intervals
        # centre on the consistent ones (Synopsis.linear)
        raw,
        release=release,
        scale=float(d.get("scale", math.nan)),
        shares={
            tuple(t["dims"]): float(t["share"])
            for t in d["tables"]
            if "share" in t
        },
        scales={
            tuple(t["dims"]): float(t["scale"])
            for t in d["tables"]
            if "scale" in t
        },
        **ckm,
    )


#: the release record's fields a file keeps (its public words and numbers)
_RELEASE_FIELDS = (
    "identity",
    "family",
    "mechanism",
    "eps",
    "delta",
    "adjacency",
    "sensitivity",
    "domain",
    "cells",
    "policy",
    "source",
    "panels",
    "composition",
    "stream_version",
)


def _release_json(release: Release) -> dict[str, Any]:
    out = {k: getattr(release, k) for k in _RELEASE_FIELDS}
    out["details"] = {
        k: v
        for k, v in release.details.items()
        if isinstance(v, (str, int, float, bool)) or v is None
    }
    return out
