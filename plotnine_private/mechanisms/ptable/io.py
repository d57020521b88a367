"""Readers and writers of p-tables: R, Tau-Argus and ONS formats.

* R style (``ptable`` 1.0.0 ``@pTable``; SAS export): comma- or
  ``;``-separated ``i, j, p, v, p_int_lb, p_int_ub, type``.
* Tau-Argus (R ``pt_export(SDCtool = "TauArgus")``): ``;``-separated
  ``i;j;p;v;p_int_ub`` for count tables and ``i;j;p;v;p_int_ub;type`` for
  magnitude tables; ``p_int_lb`` is derived.
* ONS ``cell_key_perturbation``: ``pcv, ckey, pvalue``, one row per count
  and integer key (count tables only).

Every table read is validated (rows, intervals, probabilities) and
rounded to 8 decimals, so a table written and read back has the same
fingerprint.
"""

from __future__ import annotations

import io
import os
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import ParameterError
from .table import (
    BOUND_DIGITS,
    BOUND_SCALE,
    J_SCALES,
    TABLE_COLUMNS,
    TYPES,
    PTable,
    diagnostics_from,
)

__all__ = [
    "frame_to_ptable",
    "is_ptable_source",
    "ptable_type_message",
    "read_ptable",
    "write_ptable",
]

ONS_COLUMNS = ["pcv", "ckey", "pvalue"]
FORMATS = ("r", "tau_argus", "ons")
KINDS = tuple(J_SCALES)
#: Column names of header-less exports, by number of columns (R
#: ``pt_export``: Tau-Argus and SAS flavours, counts and magnitudes).
_HEADERLESS = {
    3: ONS_COLUMNS,
    5: ["i", "j", "p", "v", "p_int_ub"],
    6: ["i", "j", "p", "v", "p_int_lb", "p_int_ub"],
    7: TABLE_COLUMNS,
}
_TAU_ARGUS_MAGNITUDES = ["i", "j", "p", "v", "p_int_ub", "type"]


# ---------------------------------------------------------------------------
# Column parsers
# ---------------------------------------------------------------------------


def _number_column(df: pd.DataFrame, col: str) -> np.ndarray:
    """Column ``col`` as finite floats, or raise naming the line."""
    values = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
    if not np.all(np.isfinite(values)):
        k = int(np.flatnonzero(~np.isfinite(values))[0])
        raise ParameterError(
            f"p-table column {col!r} must be numeric; line {k + 1} has "
            f"{df[col].iloc[k]!r}"
        )
    return values


def _grid_column(df: pd.DataFrame, col: str, scale: int) -> np.ndarray:
    """Column ``col`` as integers in units of ``1 / scale``.

    ``scale = 1`` asks for whole numbers; ``10**4`` for the 4-decimal
    targets of magnitude tables.
    """
    values = _number_column(df, col) * scale
    units = np.round(values)
    # scaled decimals carry float error (0.1 * 10**4); whole numbers do not
    tol = 0 if scale == 1 else 1e-6 * np.maximum(1, np.abs(values))
    bad = np.abs(values - units) > tol
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        what = (
            "whole numbers"
            if scale == 1
            else f"numbers with at most {len(str(scale)) - 1} decimals"
        )
        raise ParameterError(
            f"p-table column {col!r} must hold {what}; line {k + 1} has "
            f"{df[col].iloc[k]!r}"
        )
    return units.astype(np.int64)


def _to_bound_units(x: np.ndarray) -> np.ndarray:
    """Probabilities rounded to 8 decimals, as integers
    (docs/ptables.md §5)."""
    return np.rint(np.round(x, BOUND_DIGITS) * BOUND_SCALE).astype(np.int64)


# ---------------------------------------------------------------------------
# R-style frames: one job per function
# ---------------------------------------------------------------------------


def _check_r_columns(cols: set) -> None:
    if (
        "i" not in cols
        or not cols & {"j", "v"}
        or not cols & {"p", "p_int_ub"}
    ):
        raise ParameterError(
            f"an R-style p-table needs columns i, j (or v) and p_int_ub "
            f"(or p); got {sorted(cols)}. ONS tables need pcv, ckey, pvalue"
        )


def _table_type(df: pd.DataFrame) -> str:
    """The single value of the ``type`` column (``"all"`` if absent)."""
    if "type" not in df.columns:
        return "all"
    types = pd.unique(df["type"].astype(str).str.strip().str.strip('"'))
    if len(types) != 1:
        raise ParameterError(
            f"a p-table has one type; found {list(types)} (split an "
            f"even/odd export into one table per type before loading)"
        )
    if types[0] not in TYPES:
        raise ParameterError(
            f"p-table column 'type' must be one of {TYPES}, got {types[0]!r}"
        )
    return str(types[0])


def _detect_kind(df: pd.DataFrame, type_: str) -> str:
    """Magnitude table if its targets are fractional or it is even/odd.

    A magnitude table with whole targets (``step=1``) cannot be told from
    a count table by its content; read it with ``kind="magnitudes"``.
    """
    if type_ != "all":
        return "magnitudes"
    for col in ("j", "v"):
        if col in df.columns:
            x = _number_column(df, col)
            if np.any(x != np.round(x)):
                return "magnitudes"
    return "counts"


def _targets(df: pd.DataFrame, scale: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``i`` and targets ``j`` (units ``1/scale``); checks ``j=i+v``."""
    cols = set(df.columns)
    i = _grid_column(df, "i", 1)
    if "j" not in cols:
        return i, i * scale + _grid_column(df, "v", scale)
    j = _grid_column(df, "j", scale)
    if "v" in cols:
        v = _grid_column(df, "v", scale)
        bad = np.flatnonzero(j != i * scale + v)
        if len(bad):
            k = bad[0]
            raise ParameterError(
                f"p-table row i={i[k]}: j={j[k] / scale:g} is not i + v = "
                f"{i[k] + v[k] / scale:g}"
            )
    return i, j


def _entry_order(i, lb, ub) -> np.ndarray:
    """Stable order: by row, then by interval (upper, then lower bound)."""
    if ub is None:
        return np.argsort(i, kind="stable")
    if lb is None:
        return np.lexsort((ub, i))
    return np.lexsort((lb, ub, i))


def _upper_from_p(i: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Cumulative sums of ``p`` restarted at each row (sorted by row)."""
    cum = np.cumsum(p)
    starts = np.flatnonzero(np.r_[True, i[1:] != i[:-1]])
    offset = np.repeat(
        np.r_[0.0, cum[starts[1:] - 1]], np.diff(np.r_[starts, len(p)])
    )
    return cum - offset


def _bounds(i, first, p, lb, ub) -> tuple[np.ndarray, np.ndarray]:
    """Integer ``lb, ub``; ``ub`` from ``p`` and ``lb`` from ``ub`` if
    missing (Tau-Argus files carry only ``p_int_ub``)."""
    ub_int = _to_bound_units(_upper_from_p(i, p) if ub is None else ub)
    if lb is not None:
        return _to_bound_units(lb), ub_int
    prev_ub = np.r_[0, ub_int[:-1]]
    return np.where(first, 0, prev_ub), ub_int


def _check_rows(i: np.ndarray, kind: str) -> None:
    """Counts: rows 0..max_i without gaps. Magnitudes: 0 and 1 present."""
    rows = np.unique(i)
    if rows[0] < 0:
        raise ParameterError("p-table rows i must be >= 0; found negative i")
    if kind == "magnitudes":
        missing = sorted({0, 1} - set(rows.tolist()))
        if missing:
            raise ParameterError(
                f"a magnitude p-table needs rows i = 0 and i = 1 (R: 'There "
                f"must be 1 and D in icat'); missing i={missing}"
            )
        return
    if rows[0] != 0 or len(rows) != rows[-1] + 1:
        missing = sorted(set(range(int(rows[-1]) + 1)) - set(rows.tolist()))
        raise ParameterError(
            f"p-table rows must be i = 0, 1, ..., max_i without gaps; "
            f"missing i={missing} (a magnitude table from "
            f"create_num_ptable? read it with kind='magnitudes')"
        )


def _fail_row(i, k, what) -> None:
    raise ParameterError(f"p-table row i={i[k]}: {what}")


def _check_intervals(i, j, lb, ub, first, scale) -> None:
    """Each row tiles [0, 1) with consecutive, non-reversed intervals."""
    prev_ub = np.r_[0, ub[:-1]]
    for k in np.flatnonzero(j < 0)[:1]:
        _fail_row(
            i, k, f"target j={j[k] / scale:g} is negative (values stay >= 0)"
        )
    for k in np.flatnonzero(first & (lb != 0))[:1]:
        _fail_row(i, k, f"first interval starts at {lb[k] / BOUND_SCALE}, "
                  f"not 0")  # fmt: skip
    for k in np.flatnonzero(~first & (lb != prev_ub))[:1]:
        _fail_row(
            i,
            k,
            f"intervals overlap or leave a gap: [{lb[k] / BOUND_SCALE}, "
            f"{ub[k] / BOUND_SCALE}) follows an interval ending at "
            f"{prev_ub[k] / BOUND_SCALE}",
        )
    for k in np.flatnonzero(ub < lb)[:1]:
        _fail_row(
            i,
            k,
            f"interval [{lb[k] / BOUND_SCALE}, {ub[k] / BOUND_SCALE}) is "
            f"reversed",
        )


def _check_probabilities(i, j, p, lb, ub, scale) -> None:
    """Given ``p`` sum to 1 per row and match the interval widths."""
    if p is None:
        return
    sums = pd.Series(p).groupby(i).sum()
    bad = sums[(sums - 1).abs() > 1e-6]
    if len(bad):
        raise ParameterError(
            f"p-table row i={bad.index[0]}: probabilities sum to "
            f"{bad.iloc[0]:.8g}, not 1 (tolerance 1e-6)"
        )
    widths = (ub - lb) / BOUND_SCALE
    for k in np.flatnonzero(np.abs(widths - p) > 1e-6)[:1]:
        _fail_row(
            i,
            k,
            f"p={p[k]} at j={j[k] / scale:g} differs from the interval "
            f"width {widths[k]:.8f}",
        )


def _check_row_ends(i, ub, last) -> None:
    for k in np.flatnonzero(last & (ub != BOUND_SCALE))[:1]:
        _fail_row(i, k, f"last interval ends at {ub[k] / BOUND_SCALE}, not 1")


def _check_row_zero(i, j, lb, ub, scale) -> None:
    row0 = (i == 0) & (ub > lb)
    if np.any(j[row0] != 0):
        targets = sorted({x / scale for x in j[row0].tolist()})
        raise ParameterError(
            "p-table row i=0 must map 0 to 0 (empty cells stay empty); "
            f"found targets {targets}"
        )


def _uniform_from_frame(df: pd.DataFrame, params: dict, kind) -> PTable:
    """Validate an R-style / Tau-Argus frame into a uniform-key table."""
    cols = set(df.columns)
    _check_r_columns(cols)
    if len(df) == 0:
        raise ParameterError("the p-table is empty")
    type_ = _table_type(df)
    kind = _detect_kind(df, type_) if kind is None else kind
    scale = J_SCALES[kind]
    i, j = _targets(df, scale)
    p = _number_column(df, "p") if "p" in cols else None
    ub = _number_column(df, "p_int_ub") if "p_int_ub" in cols else None
    lb = _number_column(df, "p_int_lb") if "p_int_lb" in cols else None
    order = _entry_order(i, lb, ub)
    i, j = i[order], j[order]
    p, lb, ub = (None if x is None else x[order] for x in (p, lb, ub))
    first = np.r_[True, i[1:] != i[:-1]]
    last = np.r_[i[1:] != i[:-1], True]
    lb, ub = _bounds(i, first, p, lb, ub)
    _check_rows(i, kind)
    _check_intervals(i, j, lb, ub, first, scale)
    _check_probabilities(i, j, p, lb, ub, scale)
    _check_row_ends(i, ub, last)
    _check_row_zero(i, j, lb, ub, scale)
    v = j - i * scale
    used = ub > lb
    return PTable._from_arrays(
        i=i,
        j=j,
        lb=lb,
        ub=ub,
        type_=type_,
        params=params,
        diagnostics=diagnostics_from(i, v / scale, (ub - lb) / BOUND_SCALE),
        max_noise=np.abs(v[used]).max() / scale,
        kind=kind,
    )


# ---------------------------------------------------------------------------
# ONS frames
# ---------------------------------------------------------------------------


def _ons_columns(df: pd.DataFrame) -> tuple[np.ndarray, ...]:
    missing = [c for c in ONS_COLUMNS if c not in df.columns]
    if missing:
        raise ParameterError(
            f"an ONS p-table needs columns pcv, ckey, pvalue; missing "
            f"{missing}"
        )
    pcv, ckey, pvalue = (_grid_column(df, c, 1) for c in ONS_COLUMNS)
    if len(pcv) == 0:
        raise ParameterError("the ONS p-table is empty")
    zero = pcv == 0
    if np.any(pvalue[zero] != 0):
        raise ParameterError("ONS p-table: pcv 0 must have pvalue 0")
    pcv, ckey, pvalue = pcv[~zero], ckey[~zero], pvalue[~zero]
    if len(pcv) == 0 or pcv.min() < 1 or ckey.min() < 0:
        raise ParameterError("ONS p-table: pcv must be >= 1 and ckey >= 0")
    return pcv, ckey, pvalue


def _ons_dense(pcv, ckey, pvalue) -> np.ndarray:
    """The ``(max_pcv + 1, K)`` array of deviations; every cell once."""
    M, K = int(pcv.max()), int(ckey.max()) + 1
    if M * K > 50_000_000:
        raise ParameterError(f"ONS p-table too large: {M} x {K} entries")
    seen = np.zeros((M + 1, K), dtype=np.int64)
    np.add.at(seen, (pcv, ckey), 1)
    if np.any(seen[1:] != 1):
        bad = np.argwhere(seen[1:] != 1)[0]
        n = seen[1 + bad[0], bad[1]]
        raise ParameterError(
            f"ONS p-table must list every pcv 1..{M} with every ckey "
            f"0..{K - 1} exactly once; pcv={bad[0] + 1}, ckey={bad[1]} "
            f"appears {n} times"
        )
    values = np.zeros((M + 1, K), dtype=np.int64)
    values[pcv, ckey] = pvalue
    return values


def _check_ons_nonnegative(values: np.ndarray) -> None:
    neg = np.argwhere(values + np.arange(len(values))[:, None] < 0)
    if len(neg):
        raise ParameterError(
            f"ONS p-table row pcv={neg[0][0]}: pvalue "
            f"{values[neg[0][0], neg[0][1]]} makes the count negative"
        )


def _ons_from_frame(df: pd.DataFrame, params: dict) -> PTable:
    values = _ons_dense(*_ons_columns(df))
    _check_ons_nonnegative(values)
    return PTable._from_ons(values, params)


# ---------------------------------------------------------------------------
# Public readers
# ---------------------------------------------------------------------------


def _check_choice(value, name: str, choices: tuple, none_ok: bool) -> None:
    if value is None and none_ok:
        return
    if value not in choices:
        extra = " or None" if none_ok else ""
        raise ParameterError(
            f"{name} must be one of {choices}{extra}, got {value!r}"
        )


def frame_to_ptable(
    df: pd.DataFrame,
    format: Literal["r", "tau_argus", "ons"] | None = None,
    kind: Literal["counts", "magnitudes"] | None = None,
) -> PTable:
    """Validate a p-table given as a DataFrame (see PTable.from_frame).

    Parameters
    ----------
    df : pandas.DataFrame
        R-style, Tau-Argus or ONS columns (names are case-insensitive).
    format : {"r", "tau_argus", "ons"}, optional
        Detected from the columns when None.
    kind : {"counts", "magnitudes"}, optional
        Detected when None (see :meth:`PTable.from_frame`).

    Returns
    -------
    PTable

    Examples
    --------
    >>> df = pd.DataFrame({"i": [0, 1, 1], "v": [0, -1, 1],
    ...                    "p": [1, 0.5, 0.5]})
    >>> frame_to_ptable(df).max_noise
    1
    """
    if not isinstance(df, pd.DataFrame):
        raise ParameterError(
            f"expected a pandas DataFrame, got {type(df).__name__}"
        )
    _check_choice(format, "format", FORMATS, none_ok=True)
    _check_choice(kind, "kind", KINDS, none_ok=True)
    df = df.rename(columns=lambda c: str(c).strip().strip('"').lower())
    if format is None:
        format = "ons" if set(ONS_COLUMNS) <= set(df.columns) else "r"
    params = {"source": "frame", "format": format}
    if format == "ons":
        if kind == "magnitudes":
            raise ParameterError(
                "ONS tables (pcv, ckey, pvalue) hold count deviations; "
                "kind='magnitudes' needs an R-style or Tau-Argus table"
            )
        return _ons_from_frame(df, params)
    return _uniform_from_frame(df, params, kind)


def _unpickle_ptable(fmt: Any, frame: pd.DataFrame, params: dict, kind: Any):
    """Rebuild a pickled :class:`PTable` from its canonical frame."""
    pt = frame_to_ptable(frame, format=fmt, kind=kind)
    object.__setattr__(pt, "_params", dict(params))
    return pt


def _read_text(source: Any) -> tuple[str, str]:
    """The text of a path or an open text file, and a label for it."""
    if hasattr(source, "read"):
        return source.read(), "buffer"
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8-sig") as fh:
            return fh.read(), os.fspath(source)
    raise ParameterError(ptable_type_message(source))


#: parameters of create_cnt_ptable / create_num_ptable, to recognise a
#: dict of them passed as a table
_BUILD_PARAMS = {
    "D",
    "V",
    "js",
    "pstay",
    "optim",
    "mono",
    "step",
    "icat",
    "type",
}


def is_ptable_source(obj: Any) -> bool:
    """Whether :func:`read_ptable` takes ``obj`` at all (its type)."""
    return isinstance(
        obj, (PTable, pd.DataFrame, str, os.PathLike)
    ) or hasattr(obj, "read")


def ptable_type_message(obj: Any) -> str:
    """Why ``obj`` is not a p-table (its type) and how to make one."""
    kind = type(obj)
    tname = (
        kind.__qualname__
        if kind.__module__ == "builtins"
        else f"{kind.__module__}.{kind.__qualname__}"
    )
    shown = repr(obj)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    text = (
        "ptable must be a PTable, a pandas DataFrame of a p-table's rows or "
        "a file path (str, os.PathLike or an open text file) of a p-table "
        f"in R, Tau-Argus or ONS format; got {tname} {shown}. Build one "
        "with create_cnt_ptable(D=..., V=...) (counts; create_num_ptable "
        "for magnitudes) or read your office's table with "
        "read_ptable(path)"
    )
    if isinstance(obj, dict) and obj and set(map(str, obj)) <= _BUILD_PARAMS:
        text += (
            f"; these look like its parameters: "
            f"ptable=create_cnt_ptable(**{shown})"
        )
    elif isinstance(obj, (dict, list, tuple)):
        text += (
            "; if it holds the table's columns (i, j, p, ...), wrap it: "
            "pandas.DataFrame(...)"
        )
    return text + "."


def _has_header(first_line: str, sep: str) -> bool:
    token = first_line.split(sep)[0].strip().strip('"')
    try:
        float(token)
    except ValueError:
        return True
    return False


def _name_headerless(df: pd.DataFrame) -> pd.DataFrame:
    """Column names of an export without header, from its shape."""
    names = _HEADERLESS.get(df.shape[1])
    last = df.iloc[:, -1]
    if df.shape[1] == 6 and pd.to_numeric(last, errors="coerce").isna().all():
        names = _TAU_ARGUS_MAGNITUDES  # i;j;p;v;p_int_ub;type
    if names is None:
        raise ParameterError(
            f"cannot tell the p-table format of a file without header "
            f"and {df.shape[1]} columns; add a header line"
        )
    return df.set_axis(names, axis=1)


def _detect_format(df: pd.DataFrame, sep: str) -> str:
    cols = {str(c).strip().lower() for c in df.columns}
    if set(ONS_COLUMNS) <= cols:
        return "ons"
    if sep == ";" and "p_int_lb" not in cols:
        return "tau_argus"
    return "r"


def read_ptable(
    path_or_frame: str | os.PathLike | pd.DataFrame | io.TextIOBase | PTable,
    format: Literal["r", "tau_argus", "ons"] | None = None,
    kind: Literal["counts", "magnitudes"] | None = None,
) -> PTable:
    """Read and validate a p-table file or DataFrame.

    Parameters
    ----------
    path_or_frame : str, os.PathLike, text buffer, DataFrame or PTable
        The p-table: a file, an open text file, a frame, or a
        :class:`PTable` (returned as is).
    format : {"r", "tau_argus", "ons"}, optional
        Detected from the columns when None: R style
        (``i,j,p,v,p_int_lb,p_int_ub[,type]``), Tau-Argus (``;``-separated
        without ``p_int_lb``, which is derived) or ONS
        (``pcv,ckey,pvalue``). Files without a header are read as
        Tau-Argus (5 columns, or 6 ending in ``type``), SAS (6) or R (7)
        exports.
    kind : {"counts", "magnitudes"}, optional
        Detected when None: fractional targets, rows with gaps or an
        even/odd ``type`` make a magnitude table.

    Returns
    -------
    PTable
        With ``params["source"]`` (path, ``"buffer"`` or ``"frame"``) and
        ``params["format"]``.

    Raises
    ------
    ParameterError
        For an input of another type, an unknown format or kind, or an
        invalid table (naming the row).

    Examples
    --------
    >>> text = "i;j;p;v;p_int_ub\\n0;0;1;0;1\\n1;0;0.5;-1;0.5\\n1;2;0.5;1;1\\n"
    >>> read_ptable(io.StringIO(text)).max_i
    1
    """
    _check_choice(format, "format", FORMATS, none_ok=True)
    _check_choice(kind, "kind", KINDS, none_ok=True)
    if isinstance(path_or_frame, PTable):
        return path_or_frame
    if isinstance(path_or_frame, pd.DataFrame):
        return frame_to_ptable(path_or_frame, format=format, kind=kind)
    text, source = _read_text(path_or_frame)
    first = text.lstrip().split("\n", 1)[0]
    sep = ";" if ";" in first else ","
    header = 0 if _has_header(first, sep) else None
    df = pd.read_csv(io.StringIO(text), sep=sep, header=header)
    if header is None:
        df = _name_headerless(df)
    detected = _detect_format(df, sep) if format is None else format
    frame_format: Literal["ons", "r"] = "ons" if detected == "ons" else "r"
    if kind is None and detected == "tau_argus" and "type" in df.columns:
        kind = "magnitudes"  # R pt_export writes `type` for these only
    pt = frame_to_ptable(df, format=frame_format, kind=kind)
    # params is a fresh dict made by frame_to_ptable; record the origin
    pt._params.update(source=source, format=detected)
    return pt


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------


def _check_ons_as_uniform(pt: PTable) -> None:
    """An ONS table can be written R-style only if nothing is lost."""
    K = pt.key_modulus
    if BOUND_SCALE % K:
        raise ParameterError(
            f"this ONS table has keys mod {K}; its intervals k/{K} have "
            f"more than {BOUND_DIGITS} decimals, so it can only be written "
            f"with format='ons'"
        )
    tail = pt._ons[-pt._cycle :]
    if not np.all(tail == tail[-1]):
        raise ParameterError(
            "this ONS table cycles through its last rows for large "
            "counts, which an R-style table (last row for all larger "
            "counts) cannot express; write it with format='ons'"
        )


def _decimal_text(x: pd.Series) -> pd.Series:
    """Targets of magnitude tables as short decimals (``0.25``, ``-1``)."""
    return x.map(lambda y: f"{y:.4f}".rstrip("0").rstrip("."))


def _r_style_frame(pt: PTable, format: str) -> pd.DataFrame:
    """The columns R ``pt_export`` writes for this table and format."""
    frame = pt.table
    if pt.kind == "magnitudes":
        frame["j"] = _decimal_text(frame["j"])
        frame["v"] = _decimal_text(frame["v"])
    if format == "r":
        return frame[TABLE_COLUMNS]
    if pt.kind == "magnitudes":
        return frame[_TAU_ARGUS_MAGNITUDES]
    return frame[_HEADERLESS[5]]


def write_ptable(
    pt: PTable,
    path: str | os.PathLike | io.TextIOBase,
    format: Literal["r", "tau_argus", "ons"] = "r",
    **ons_options: int,
) -> None:
    """Write ``pt`` as R-style, Tau-Argus or ONS text.

    Parameters
    ----------
    pt : PTable
    path : str, os.PathLike or text buffer
    format : {"r", "tau_argus", "ons"}
        ``"r"``: ``i,j,p,v,p_int_lb,p_int_ub,type``; ``"tau_argus"``:
        ``i;j;p;v;p_int_ub`` (counts) or ``i;j;p;v;p_int_ub;type``
        (magnitudes); ``"ons"``: ``pcv,ckey,pvalue`` (counts only).
    **ons_options : int
        ``modulus`` and ``max_pcv`` of :meth:`PTable.to_ons_frame`.

    Returns
    -------
    None

    Examples
    --------
    >>> from plotnine_private.mechanisms.ptable import create_num_ptable
    >>> buf = io.StringIO()
    >>> write_ptable(create_num_ptable(D=2, V=1, icat=[1, 2]), buf,
    ...              format="tau_argus")
    >>> buf.getvalue().splitlines()[3]
    '1;0.5;0.22642983;-0.5;0.45285966;all'
    """
    _check_choice(format, "format", FORMATS, none_ok=False)
    if format == "ons":
        pt.to_ons_frame(**ons_options).to_csv(path, index=False)
        return
    if ons_options:
        raise ParameterError(
            f"options {sorted(ons_options)} apply to format='ons' only"
        )
    if pt.key_kind == "integer":
        _check_ons_as_uniform(pt)
    sep = "," if format == "r" else ";"
    _r_style_frame(pt, format).to_csv(
        path, sep=sep, index=False, float_format="%.8f"
    )
