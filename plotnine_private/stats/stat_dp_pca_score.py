"""Private PCA score histogram as a plotnine stat: ``stat_dp_pca_score``.

How the stat reaches the raw columns
------------------------------------
plotnine evaluates only the *mapped aesthetics* before a stat runs
(``layer.compute_aesthetics`` replaces the layer data by them), but PCA
needs every feature column. The stat therefore makes its own layer
(:meth:`stat_dp_pca_score.to_layer`): a subclass of plotnine's ``layer``
whose ``compute_aesthetics`` copies the feature columns named in
``columns=`` from the layer (or plot) data into the evaluated data, under
reserved names, aligned on the row index that plotnine keeps. Nothing is
mapped to a scale, so no raw value trains an axis. This works for
``ggplot(df) + stat_dp_pca_score(...)``; a geom given
``stat="dp_pca_score"`` builds an ordinary layer and gets a clear error.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from plotnine.doctools import document
from plotnine.layer import layer
from plotnine.mapping.evaluation import after_stat
from plotnine.stats.stat import stat

from ..exceptions import PlotninePrivateError
from ..pca import _check_eps_delta, _check_split, _run

if TYPE_CHECKING:
    from plotnine import ggplot
    from plotnine.facets.layout import Layout

__all__ = ["stat_dp_pca_score"]

_LAYOUT_COLUMNS = {"PANEL", "ROW", "COL", "SCALE_X", "SCALE_Y", "AXIS_X",
                   "AXIS_Y"}


def facet_panels(name: str, dp: bool, layout_frame: pd.DataFrame):
    """Facet panels must be public: declared Categoricals with
    ``drop=False`` (this stat is not released at the door yet)."""
    cols = [c for c in layout_frame.columns if c not in _LAYOUT_COLUMNS]
    undeclared = [
        str(c)
        for c in cols
        if not isinstance(layout_frame[c].dtype, pd.CategoricalDtype)
        or set(layout_frame[c].dropna())
        != set(layout_frame[c].dtype.categories)
    ]
    if undeclared:
        raise PlotninePrivateError(
            f"{name}(): facet variable(s) {', '.join(undeclared)} have no "
            "public set of levels, so a panel would appear exactly when "
            "some record has its value. Declare them as pandas "
            "Categoricals with the public levels and keep empty panels: "
            "facet_wrap(..., drop=False) / facet_grid(..., drop=False)."
        )

_PREFIX = "__dp_pca__"
_NAME = "stat_dp_pca_score"
_AES_COLUMNS = {"PANEL", "group"}


class _FeatureLayer(layer):
    """A layer that hands the stat the raw feature columns it names."""

    def compute_aesthetics(self, plot: ggplot):
        raw = self.data
        super().compute_aesthetics(plot)
        st = self.stat
        columns = st.params.get("columns")
        if columns is None:
            used = {v for v in self.mapping.values() if isinstance(v, str)}
            facet = plot.facet
            facet_vars = {
                str(v)
                for attr in ("vars", "rows", "cols")
                for v in (getattr(facet, attr, None) or ())
            }
            columns = [
                c
                for c in raw.columns
                if c not in {"PANEL"} | used | facet_vars
                and pd.api.types.is_numeric_dtype(raw[c])
                and not pd.api.types.is_bool_dtype(raw[c])
            ]
        elif isinstance(columns, str):
            columns = [columns]
        missing = [c for c in columns if c not in raw.columns]
        if missing:
            raise PlotninePrivateError(
                f"{_NAME}(): columns {missing!r} are not in the layer data; "
                f"available: {list(map(str, raw.columns))!r}."
            )
        st._feature_names = [str(c) for c in columns]
        extra = pd.DataFrame(
            {f"{_PREFIX}{i}": raw[c] for i, c in enumerate(columns)},
            index=raw.index,
        )
        self.data = pd.concat([self.data, extra.loc[self.data.index]], axis=1)


@document
class stat_dp_pca_score(stat):
    """
    Differentially private PCA score histogram (or synthetic points)

    {usage}

    `ggplot(df) + stat_dp_pca_score(columns=[...], eps=2, delta=1e-5,
    seed=1)` draws the private 2-D histogram of the scores on two private
    principal components as tiles shaded by probability. With
    `output="synthetic"` it draws points sampled from that histogram
    (free post-processing). Mapping `fill` (or `colour`/`group`) to a
    discrete column gives one histogram per group on one shared private
    frame.

    Pipeline (dppca NEWEST, see `plotnine_private.dp_score`): private
    directions from the noisy spherical Kendall matrix (Gaussian
    mechanism), a square private frame from Durfee quantiles, and an
    "add" (Gaussian) or "sparse" (Karwa-Vadhan) histogram. No sample
    means or SDs are used: `center=True` shifts the display by the
    private frame centre.

    Parameters
    ----------
    {common_parameters}
    columns : list of str, default=None
        Numeric feature columns of the layer data. Default: every numeric
        column not used by an aesthetic or a facet.
    eps : float
        Total budget of the layer (> 0). Required.
    delta : float
        Total delta of the layer, in (0, 1). Required.
    split : dict, default=None
        Shares for `loading` and `score` (default halves). Ignored keys
        are an error. With `directions`, must be None.
    directions : array, default=None
        A p x p orthonormal matrix of directions released before (for
        instance `dp_pca(...).directions`): then no loading budget is
        spent and eps/delta all go to the score.
    bins : int or tuple, default=(20, 20)
        Number of cells along each axis.
    method : {{"sparse", "add"}}, default="sparse"
        Karwa-Vadhan thresholded histogram, or Gaussian noise on every
        cell.
    axes : tuple, default=(1, 2)
        Components on the x and y axes.
    center : bool, default=True
        Display centring by the private frame centre.
    seed : int, default=None
        Secret seed for reproducible noise.
    output : {{"histogram", "synthetic"}}, default="histogram"
        Tiles (geom rect) or sampled points (geom point).
    n_sample : int, default=None
        Number of synthetic points (default: number of rows).
    sample_method : {{"uniform", "center"}}, default="uniform"
        How synthetic points are placed in their cell.
    bandwidth_scale : float, default=None
        Gaussian jitter of synthetic points in cell widths.
    scale : array, default=None
        Public column scales to divide by (never sample SDs).
    calibration : {{"analytic", "classic"}}, default="analytic"
        Gaussian calibration (classic = dppca's formula).
    drop_zero : bool, default=True
        Omit cells whose released probability is 0 (else they would be
        drawn with the smallest alpha of the scale).

    Notes
    -----
    Axis titles are not set by the stat (nothing is mapped to x and y);
    add `labs(x="PC1", y="PC2")`.

    Computed variables: `prob` (private cell probability; 0 for removed
    cells), `xmin`, `xmax`, `ymin`, `ymax`, `x`, `y` (cell centre); for
    synthetic output `x`, `y`.

    Adjacency: replace one row; n, p, group labels and group sizes are
    public. Facet panels are released separately with the full budget
    each (parallel composition only if the facet variable is public).
    Each build appends one `Release` per mechanism to `self.releases`.
    """

    REQUIRED_AES: set[str] = set()
    DEFAULT_AES = {"alpha": after_stat("prob")}
    DEFAULT_PARAMS = {
        "geom": "rect",
        "position": "identity",
        "na_rm": False,
        "columns": None,
        "eps": None,
        "delta": None,
        "split": None,
        "directions": None,
        "bins": (20, 20),
        "method": "sparse",
        "axes": (1, 2),
        "center": True,
        "seed": None,
        "output": "histogram",
        "n_sample": None,
        "sample_method": "uniform",
        "bandwidth_scale": None,
        "scale": None,
        "calibration": "analytic",
        "drop_zero": True,
    }
    CREATES = {"prob", "xmin", "xmax", "ymin", "ymax"}

    def __init__(self, mapping=None, data=None, **kwargs: Any):
        output = kwargs.get("output", "histogram")
        if output not in ("histogram", "synthetic"):
            raise PlotninePrivateError(
                f"{_NAME}(): output must be 'histogram' or 'synthetic', "
                f"got {output!r}."
            )
        if output == "synthetic" and "geom" not in kwargs:
            kwargs["geom"] = "point"
        super().__init__(mapping, data, **kwargs)
        if output == "synthetic":
            self.DEFAULT_AES = type(self.DEFAULT_AES)()
        _check_eps_delta(_NAME, self.params["eps"], self.params["delta"])
        if self.params["directions"] is None:
            _check_split(_NAME, self.params["split"], ("loading", "score"))
        self.releases: list = []
        self._feature_names: list[str] | None = None

    def to_layer(self) -> layer:
        """A layer that passes the feature columns to this stat."""
        from plotnine.geoms.geom import geom

        plain = layer.from_geom(geom.from_stat(self))
        lyr = _FeatureLayer.__new__(_FeatureLayer)
        lyr.__dict__.update(plain.__dict__)
        return lyr

    def compute_layer(self, data: pd.DataFrame, layout: Layout):
        self.releases = []
        if self._feature_names is None:
            raise PlotninePrivateError(
                f"{_NAME}(): the feature columns did not reach the stat. "
                "Add the stat itself to the plot, "
                "`ggplot(df) + stat_dp_pca_score(columns=[...], ...)`, "
                "instead of `geom_*(stat='dp_pca_score')`."
            )
        names = self._feature_names
        inner = [f"{_PREFIX}{i}" for i in range(len(names))]
        aes_cols = [
            c for c in data.columns if c not in set(inner) | _AES_COLUMNS
        ]
        for c in aes_cols:
            if pd.api.types.is_numeric_dtype(data[c]) and not isinstance(
                data[c].dtype, pd.CategoricalDtype
            ):
                raise PlotninePrivateError(
                    f"{_NAME}(): aesthetic {c!r} maps a continuous "
                    "variable; only discrete aesthetics (fill, colour, "
                    "group) that define groups are supported. Map a "
                    "categorical column, or drop the mapping."
                )
        # facet panels are part of the released domain: the same rule as
        # the count stats (declared Categorical levels, drop=False)
        facet_panels(_NAME, True, layout.layout)
        out = []
        panels = pd.unique(data["PANEL"])
        for panel in panels:
            pdata = data[data["PANEL"] == panel]
            out.append(
                self._compute_panel(
                    pdata, panel, names, inner, aes_cols, len(panels) > 1
                )
            )
        result = pd.concat(out, ignore_index=True)
        if isinstance(data["PANEL"].dtype, pd.CategoricalDtype):
            result["PANEL"] = pd.Categorical(
                result["PANEL"], data["PANEL"].cat.categories
            )
        return result

    def _compute_panel(
        self,
        pdata: pd.DataFrame,
        panel: Any,
        names: list[str],
        inner: list[str],
        aes_cols: list[str],
        faceted: bool,
    ) -> pd.DataFrame:
        p = self.params
        features = pdata[inner].copy()
        features.columns = names
        groups = pdata["group"].to_numpy()
        grouped = len(np.unique(groups)) > 1
        directions = p["directions"]
        shares = (
            {"loading": 0.0, "score": 1.0}
            if directions is not None
            else _check_split(_NAME, p["split"], ("loading", "score"))
        )
        result = _run(
            _NAME,
            features,
            names,
            eps=float(p["eps"]),
            delta=float(p["delta"]),
            shares=shares,
            bins=p["bins"],
            method=p["method"],
            axes=p["axes"],
            group=groups if grouped else None,
            center=p["center"],
            seed=p["seed"],
            reference=False,
            k=None,
            scale=p["scale"],
            scree_clip=None,
            calibration=p["calibration"],
            estimator="auto",
            directions=directions,
            key_parts=("panel", str(panel)) if faceted else (),
            stat_name=_NAME,
        )
        self.releases.extend(
            dataclasses.replace(r, panel=panel) for r in result.releases
        )
        if p["output"] == "synthetic":
            pts = result.sample(
                n=p["n_sample"],
                method=p["sample_method"],
                bandwidth_scale=p["bandwidth_scale"],
            )
            lx, ly = result.labels
            res = pts.rename(columns={lx: "x", ly: "y"})
        else:
            res = result.histogram
            if p["drop_zero"]:
                res = res[res["prob"] > 0]
            res = res.reset_index(drop=True)
        if grouped:
            res["group"] = res["group"].astype(groups.dtype)
            first = pdata.drop_duplicates("group").set_index("group")
            for c in aes_cols:
                res[c] = first.loc[res["group"].to_numpy(), c].to_numpy()
        else:
            res["group"] = groups[0]
            for c in aes_cols:
                res[c] = pdata[c].iloc[0]
        res["PANEL"] = panel
        return res
