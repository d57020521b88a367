"""Groups and panels of a private stat's cells.

The job of :class:`GroupingMixin` (mixed into
:class:`~plotnine_private.stats.base.PrivateCountStat`): the group
aesthetics and panels of a layer as dimensions of its domain, and the
released cells as rows with group columns, ``PANEL`` and plotnine's
group ids, from public facts only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._compat import missing_group_first
from ..cells import Dimension, object_column, small_codes
from ..door import Door, LayerBuild
from .cell_frames import CellFrame

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


def _literal(expr: str | None) -> bool:
    """Whether a mapped expression is a number (``group=1``)."""
    try:
        float(str(expr))
    except ValueError:
        return False
    return True


def _missing_first(codes: np.ndarray, size: int) -> np.ndarray:
    """Codes of a dimension whose last level is the declared missing
    value, renumbered with it first: plotnine 0.15 numbers a missing
    value before every level (its code -1), 0.16 after them
    (:func:`~plotnine_private._compat.missing_group_first`)."""
    return (np.asarray(codes, dtype=np.int64) + 1) % size


def _column_rank(order: list, column: str) -> tuple:
    """Where ``column`` sits among the rows' columns (a name plotnine
    renamed, such as ``colour``, by its canonical spelling; unknown ones
    last, by name)."""
    for name in (column, column.replace("colour", "color")):
        if name in order:
            return (order.index(name), "")
    return (len(order), column)


class GroupingMixin:
    """Group and panel dimensions, and cells as rows with group ids."""

    #: the build the stat's copy works for (see ``for_build``)
    build: LayerBuild

    @staticmethod
    def panel_dimension(data: pd.DataFrame, door: Door) -> Dimension:
        """The panel dimension of the cells: every panel of the public
        layout, each record in the panel plotnine assigned it to.

        Parameters
        ----------
        data
            The layer's rows, with plotnine's ``PANEL`` column.
        door
            The layer's public facts (its layout and panel labels).

        Returns
        -------
        Dimension
            Always public: panels come from declared facet levels.
        """
        layout_panels = door.layout["PANEL"]
        npanel = len(layout_panels)
        if "PANEL" in data.columns and len(data):
            col = data["PANEL"]
            if isinstance(col.dtype, pd.CategoricalDtype):
                # plotnine's PANEL categories are 1..npanel, in order (the
                # codes are small integers: no copy)
                codes = np.asarray(col.array.codes)
            else:
                panel = pd.to_numeric(col, errors="coerce").to_numpy(float)
                codes = np.where(
                    np.isfinite(panel), np.nan_to_num(panel) - 1, -1
                ).astype(np.int64)
                codes[(codes < 0) | (codes >= npanel)] = -1
                codes = small_codes(codes, npanel)
        else:
            codes = np.zeros(len(data), dtype=np.int8)
        return Dimension(
            "PANEL",
            codes,
            [object_column(door.panel_values)],
            list(layout_panels),
            True,
        )

    def cell_frame(self, fam, panel, gdims, idx, table, released, door):
        """The cells as rows: family columns, group columns (their values:
        declared levels, or the released ones), ``PANEL`` and ``group``."""
        frame = fam.frame.iloc[idx[:, -1]].reset_index(drop=True)
        keep = released.keep
        for k, g in enumerate(gdims):
            level = idx[:, 1 + k]
            if g.public:
                cats = list(g.values)
                codes = level
            else:
                # categories: the released levels only; a cell of a level
                # that was not released gets code -1 (from codes, so pandas
                # warns about nothing that depends on hidden levels)
                shown = np.zeros(g.size, dtype=bool)
                shown[level[keep]] = True
                cats = [v for v, s in zip(g.values, shown) if s]
                position = np.cumsum(shown) - 1
                codes = np.where(shown[level], position[level], -1)
            if None in cats:
                # the declared missing level (last) is no category: its
                # cells are drawn as plotnine's NA
                codes = np.where(codes == len(cats) - 1, -1, codes)
                cats = cats[:-1]
            frame[g.name] = pd.Categorical.from_codes(codes, categories=cats)
        positions = self.position_groups()
        for copy, of in getattr(self, "group_copies", {}).items():
            if of in positions.values():
                # a discrete position mapped again (fill="class" on
                # x="class"): the same levels, as a categorical
                order = [
                    v
                    for v in dict.fromkeys(fam.frame[of].tolist())
                    if not pd.isna(v)  # the missing level: NA
                ]
                if not table.public:
                    shown = set(frame.loc[keep, of].tolist())
                    order = [v for v in order if v in shown]
                # from codes: a hidden level gets -1 and pandas warns
                # about nothing that depends on it
                index = {v: i for i, v in enumerate(order)}
                codes = np.array(
                    [index.get(v, -1) for v in frame[of].tolist()],
                    dtype=np.int64,
                )
                frame[copy] = pd.Categorical.from_codes(
                    codes, categories=order
                )
            else:
                frame[copy] = frame[of]
        frame["group"] = self.group_ids(fam, gdims, idx, keep, table.public)
        cats = door.layout["PANEL"].cat.categories
        frame["PANEL"] = pd.Categorical(
            np.asarray(panel.values, dtype=object)[idx[:, 0]],
            categories=cats,
        )
        return CellFrame(frame, table.public)

    def position_groups(self) -> dict[str, str]:
        """Discrete positions of the family's cells, by mapped expression
        (``{"class": "x"}`` for bars of a discrete x): they take part in
        the group ids, and an aesthetic mapping the same expression is a
        copy of the position, not a new dimension."""
        return {}

    def group_ids(self, fam, gdims, idx, keep, public: bool) -> np.ndarray:
        """plotnine's group ids, from public facts only.

        As plotnine's ``add_group``: a mapped ``group`` alone decides (a
        constant gives one group); otherwise every discrete column counts
        (discrete positions first, then the group aesthetics, in the
        lexical order of their levels), and without any the id is -1.
        Ids run over the declared combinations (a public domain) or over
        the released ones (an observed domain: an id must not count
        combinations that were seen but not released).
        """
        mapped = self.build.door.mapping.get("group")
        n = len(idx)
        if mapped is not None and not _literal(mapped):
            # group="var" may map what another aesthetic maps (fill="drv"
            # or x="class" too): then it is that dimension
            of = getattr(self, "group_copies", {}).get("group", "group")
            gdims_g = [k for k, g in enumerate(gdims) if g.name == of]
            if gdims_g:
                parts = [(idx[:, 1 + gdims_g[0]], gdims[gdims_g[0]].size)]
                public = gdims[gdims_g[0]].public
            else:  # a discrete position's levels
                codes, uniques = pd.factorize(fam.frame[of], sort=False)
                parts = [(codes[idx[:, -1]], len(uniques))]
        elif mapped is not None:  # a constant such as group=1
            return np.ones(n, dtype=np.int64)
        else:
            named = []
            for col in self.position_groups().values():
                codes, uniques = pd.factorize(
                    fam.frame[col], sort=False, use_na_sentinel=False
                )
                codes = codes[idx[:, -1]]
                if (
                    len(uniques)
                    and pd.isna(uniques[-1])
                    and missing_group_first()
                ):
                    codes = _missing_first(codes, len(uniques))
                named.append((col, codes, len(uniques)))
            for k, g in enumerate(gdims):
                codes = idx[:, 1 + k]
                if g.size and g.values[-1] is None and missing_group_first():
                    codes = _missing_first(codes, g.size)
                named.append((g.name, codes, g.size))
            if not named:
                return np.full(n, -1, dtype=np.int64)
            # plotnine numbers the combinations in the order of the
            # evaluated aesthetic columns, which is the order of the rows'
            # columns at the door (plotnine 0.15: the mapping's aesthetics
            # as written, then x and y; 0.16: x and y first)
            order = list(self.build.records.columns)
            parts = [
                (c, size)
                for _, c, size in sorted(
                    named, key=lambda t: _column_rank(order, t[0])
                )
            ]
        gi = np.ravel_multi_index(
            tuple(np.asarray(c, dtype=np.int64) for c, _ in parts),
            tuple(size for _, size in parts),
        )
        if public:
            return (gi + 1).astype(np.int64)
        shown = np.unique(gi[keep])
        return (np.searchsorted(shown, gi) + 1).astype(np.int64)

    def group_columns(self, data: pd.DataFrame) -> list[str]:
        """Columns that define groups (discrete aesthetics such as
        ``fill`` or ``colour``), in the layer's column order.

        Parameters
        ----------
        data
            The layer's rows after the mapping.

        Returns
        -------
        list of str
            Categorical, string, boolean or object columns other than
            positions, weights, keys, labels and layout columns.
        """
        cols = []
        for c in data.columns:
            mapped = self.build.door.mapping.get(c)
            if c == "group" and mapped is not None and not _literal(mapped):
                # group="var": a dimension of its own (a constant such as
                # group=1 is one group, see group_ids)
                cols.append(c)
                continue
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
        return self.distinct_groups(cols)

    def distinct_groups(self, cols: list[str]) -> list[str]:
        """One group dimension per mapped expression.

        ``fill="drv", colour="drv"`` is one dimension of drive types, not
        drive types x drive types; the later aesthetics are recorded in
        ``self.group_copies`` and :meth:`cell_frame` gives them the same
        values.
        """
        mapping = self.build.door.mapping
        first: dict[str, str] = {
            str(expr): col for expr, col in self.position_groups().items()
        }
        self.group_copies: dict[str, str] = {}
        keep = []
        for c in cols:
            expr = mapping.get(c, mapping.get(c.replace("color", "colour")))
            if expr is not None and expr in first:
                self.group_copies[c] = first[expr]
                continue
            if expr is not None:
                first[expr] = c
            keep.append(c)
        return keep
