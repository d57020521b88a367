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

import pandas as pd

from ..errors import ParameterError
from .frames import ONS_COLUMNS
from .table import PTable
from .table import _unpickle_ptable as _unpickle_ptable  # older pickles
from .values import (
    FORMATS,
    KINDS,
    TABLE_COLUMNS,
    TAU_ARGUS_COLUMNS,
    TAU_ARGUS_MAGNITUDES,
    check_choice,
)

__all__ = [
    "frame_to_ptable",
    "is_ptable_source",
    "ptable_type_message",
    "read_ptable",
    "write_ptable",
]

#: Column names of header-less exports, by number of columns (R
#: ``pt_export``: Tau-Argus and SAS flavours, counts and magnitudes).
_HEADERLESS = {
    3: ONS_COLUMNS,
    5: TAU_ARGUS_COLUMNS,
    6: ["i", "j", "p", "v", "p_int_lb", "p_int_ub"],
    7: TABLE_COLUMNS,
}


# ---------------------------------------------------------------------------
# Public readers
# ---------------------------------------------------------------------------


def frame_to_ptable(
    df: pd.DataFrame,
    format: Literal["r", "tau_argus", "ons"] | None = None,
    kind: Literal["counts", "magnitudes"] | None = None,
) -> PTable:
    """Validate a p-table given as a DataFrame (:meth:`PTable.from_frame`).

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
    return PTable.from_frame(df, format=format, kind=kind)


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
        names = TAU_ARGUS_MAGNITUDES  # i;j;p;v;p_int_ub;type
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
    check_choice(format, "format", FORMATS, none_ok=True)
    check_choice(kind, "kind", KINDS, none_ok=True)
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
    pt.to_csv(path, format=format, **ons_options)
