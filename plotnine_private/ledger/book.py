"""Reading a ledger back: ``pp.ledger(path)`` and the rows a bundle copies.

The ledger itself (the file, the active data set, the charge made before
each release) is :mod:`plotnine_private.ledger.store`.
"""

from __future__ import annotations

import html
import math
import os
import secrets
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..exceptions import PlotninePrivateError
from ..mechanisms.streams.keys import current_key_path
from ..report.composition import fmt
from ..validation import validate_dataset
from .binding import record_binding, recorded
from .file import (
    _check_cap,
    _connect,
    _damaged,
    _dataset_name,
    _ledger_id,
    _now,
    _register,
    _Transaction,
    has_label_column,
)
from .store import (
    COLUMNS,
    _Active,
    _caps_of,
    _current,
    _spent,
    recent_charges,
    remember_caps,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LedgerBook", "ledger", "rebind_ledger", "rows_of"]


def rows_of(identities: Sequence[str]) -> dict[str, Any] | None:
    """The ledger rows of releases made in this session (a bundle copies
    those of its build), in whichever data set each was charged to, with
    each of those data sets' cap and total; ``None`` without an active
    ledger. ``dataset`` and ``data_set_total`` are the one data set of
    the rows (the active ledger's when the rows are of several, or
    none); ``data_set_totals`` lists every data set of the rows.

    The rows leave without their keyed ``digest``: it is a function of
    the true cells, so in a bundle it would tell whether the true cells
    of two published releases are equal (the ledger keeps it to find a
    re-draw on the same data, and never shows it either)."""
    active = _current()
    if active is None:
        return None
    recent = recent_charges()
    wanted = {i: recent[i] for i in identities if i in recent}
    book = LedgerBook(active.path)
    t = book.table
    hit = [wanted.get(i) == d for i, d in zip(t["identity"], t["digest"])]
    shown = t[hit].drop(columns=["digest"])
    rows = shown.astype(object).where(shown.notna(), None)
    names = list(dict.fromkeys(rows["dataset"]))
    main = names[0] if len(names) == 1 else active.dataset
    totals = book.total.astype(object)
    by_name = {r["dataset"]: r for r in totals.to_dict("records")}
    return {
        "file": active.path.name,
        "dataset": main,
        "rows": rows.to_dict("records"),
        "data_set_total": by_name.get(main),
        "data_set_totals": [by_name[n] for n in names if n in by_name],
        "notes": book.notes(),
    }


# --------------------------------------------------------------------------
# reading it back
# --------------------------------------------------------------------------
class LedgerBook:
    """A ledger file read back: ``pp.ledger("ledger.sqlite")``.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per release (columns :data:`COLUMNS`), oldest first.
    caps : dict
        ``{dataset: (cap_eps, cap_delta)}`` (``None`` for no cap).
    """

    def __init__(self, path: str | os.PathLike, dataset: str | None = None):
        self.path = Path(path)
        if not self.path.is_file():
            raise PlotninePrivateError(
                f"ledger(): no ledger file {self.path.name!r}; make one with "
                "pp.use_ledger(path, dataset=...)."
            )
        self.dataset = dataset
        self.refresh()

    def refresh(self) -> LedgerBook:
        """Read the file again (other processes may have charged it)."""
        import pandas as pd

        with closing(_connect(self.path)) as con:
            where, args = "", tuple[str, ...]()
            if self.dataset is not None:
                where, args = " WHERE dataset = ?", (self.dataset,)
            try:
                # a ledger written before labels reads with empty ones
                cols = [
                    "'' AS label"
                    if c == "label" and not has_label_column(con)
                    else c
                    for c in COLUMNS
                ]
                rows = con.execute(
                    f"SELECT {', '.join(cols)} FROM releases{where} "
                    "ORDER BY id",
                    args,
                ).fetchall()
                caps = con.execute(
                    f"SELECT dataset, cap_eps, cap_delta FROM datasets{where}",
                    args,
                ).fetchall()
            except sqlite3.DatabaseError as err:
                raise _damaged(self.path, err) from None
        self.table: pd.DataFrame = pd.DataFrame(
            [tuple(r) for r in rows], columns=COLUMNS
        )
        self.caps = {r[0]: (r[1], r[2]) for r in caps}
        return self

    @property
    def total(self) -> pd.DataFrame:
        """Spent eps and delta per data set, with its cap and what is
        left (``None`` without a cap)."""
        import pandas as pd

        out = []
        for name, (cap_eps, cap_delta) in sorted(self.caps.items()):
            rows = self.table[self.table["dataset"] == name]
            eps = math.fsum(rows["eps"].dropna())
            delta = math.fsum(rows["delta"].dropna())
            out.append(
                {
                    "dataset": name,
                    "releases": len(rows),
                    "eps": eps,
                    "delta": delta,
                    "cap_eps": cap_eps,
                    "cap_delta": cap_delta,
                    "remaining_eps": (
                        None if cap_eps is None else cap_eps - eps
                    ),
                    "remaining_delta": (
                        None if cap_delta is None else cap_delta - delta
                    ),
                }
            )
        return pd.DataFrame(out)

    def mixed(self) -> pd.DataFrame:
        """Releases whose cells were also released by the Cell Key
        Method in the same data set: the DP guarantee does not hold for
        those cells (CKM is not DP)."""
        t = self.table[self.table["cells"] != ""]
        both = t.groupby(["dataset", "cells"])["eps"].agg(
            lambda e: e.isna().any() and e.notna().any()
        )
        keys = set(both[both].index)
        hit = [(d, c) in keys for d, c in zip(t["dataset"], t["cells"])]
        return t[hit]

    def notes(self) -> list[str]:
        """What a reader must know (mixed protections)."""
        m = self.mixed()
        if m.empty:
            return []
        ids = ", ".join(str(i) for i in m["id"])
        return [
            "MIXED PROTECTION: the same cells were released with "
            "differential privacy and with the Cell Key Method (rows "
            f"{ids}). CKM is not DP: the DP guarantee does not hold for "
            "those cells, whatever eps the DP rows say."
        ]

    def set_cap(
        self,
        dataset: str,
        eps: float | None,
        delta: float | None = None,
    ) -> LedgerBook:
        """Change a data set's cap (a deliberate act: the new cap binds
        every later release in every process)."""
        e = _check_cap("cap_eps", eps)
        d = _check_cap("cap_delta", delta)
        if e is not None and d is None:
            d = 0.0
        with closing(_connect(self.path)) as con, _Transaction(con, self.path):
            dataset = _dataset_name(con, dataset, self.path, "set_cap()")
            found = con.execute(
                "UPDATE datasets SET cap_eps = ?, cap_delta = ? WHERE "
                "dataset = ?",
                (e, d, dataset),
            ).rowcount
        remember_caps(self.path, dataset, e, d)
        if not found:
            raise PlotninePrivateError(
                f"set_cap(): the ledger has no data set {dataset!r}; it "
                f"has {', '.join(map(repr, sorted(self.caps))) or 'none'}."
            )
        return self.refresh()

    def add_dataset(
        self,
        dataset: str,
        eps: float | None,
        delta: float | None = None,
    ) -> LedgerBook:
        """Add a data set and its cap to the ledger without selecting it:
        for a source that names it (``pp.source(df, dataset="flights")``)
        while the ledger is selected for another data set. ``eps=None``
        (no cap) records and never refuses; ``delta`` is 0 when ``eps``
        is given and ``delta`` is not. A data set already in the file
        keeps its cap (another cap is refused: :meth:`set_cap` changes
        it)."""
        name = validate_dataset("add_dataset", dataset)
        if name is None:
            raise PlotninePrivateError(
                "add_dataset(): dataset must name a data set (e.g. "
                "'flights 2024'), got None."
            )
        e = _check_cap("cap_eps", eps)
        d = _check_cap("cap_delta", delta)
        if d is not None and d >= 1:
            raise PlotninePrivateError(
                f"add_dataset(): delta must be below 1, got {delta!r}."
            )
        with closing(_connect(self.path)) as con, _Transaction(con, self.path):
            name = _dataset_name(con, name, self.path, "add_dataset()")
            _register(con, name, e, d, self.path)
        return self.refresh()

    def rebind(self, dataset: str) -> LedgerBook:
        """Make this file the data set's ledger for the key in use (a
        deliberate act, as :meth:`set_cap` is).

        The key file records which ledger each data set is charged to,
        and a release whose ledger is another file, a copy, or has lost
        rows is refused. After a deliberate move, or when the ledger is
        lost for good, ``rebind`` records this file instead. The
        spending the key recorded is never forgotten: what this file
        lacks of it is written here as one ``carried`` row (its eps and
        delta), and the cap the key recorded comes with it.

        Raises
        ------
        PlotninePrivateError
            Without a key file, or when the key has no ledger for
            ``dataset`` (nothing to rebind: select the ledger with
            :func:`~plotnine_private.use_ledger` and draw).
        """
        key = current_key_path()
        if key is None:
            raise PlotninePrivateError(
                "rebind(): no key file is in use; the key records the "
                "ledger of each data set. Select the key that charged "
                f"{dataset!r} with pp.use_key(path)."
            )
        rec = recorded(key, dataset)
        if rec is None:
            raise PlotninePrivateError(
                f"rebind(): the key file {key.name!r} has no ledger for "
                f"the data set {dataset!r}: nothing to rebind. Select "
                f"the ledger with pp.use_ledger(path, dataset={dataset!r})."
            )
        path = self.path.resolve()
        with closing(_connect(path)) as con, _Transaction(con, path):
            name = _dataset_name(con, str(rec["dataset"]), path, "rebind()")
            # the key's caps for a data set this file lacks, or has
            # without a cap
            kept = _caps_of(rec)
            caps = _register(
                con, name, None, None, path, _Active(path, name, *kept)
            )
            if caps == (None, None) and kept != caps:
                con.execute(
                    "UPDATE datasets SET cap_eps = ?, cap_delta = ? "
                    "WHERE dataset = ?",
                    (*kept, name),
                )
                caps = kept
            here = _spent(con, name)
            eps = max(float(rec.get("eps", 0.0)) - here.eps, 0.0)
            delta = max(float(rec.get("delta", 0.0)) - here.delta, 0.0)
            missing = max(int(rec.get("releases", 0)) - here.releases, 0)
            if eps > 0 or delta > 0 or missing:
                con.execute(
                    "INSERT INTO releases (dataset, identity, digest, unit, "
                    "bound, family, mechanism, eps, delta, adjacency, "
                    "source, cells, at, what) VALUES (?, ?, '', 'one row', "
                    "1, 'carried', 'rebind', ?, ?, NULL, '', '', ?, ?)",
                    (
                        name,
                        "carried " + secrets.token_hex(12),
                        eps,
                        delta,
                        _now(),
                        f"rebind(): spending the key recorded in the "
                        f"ledger {Path(str(rec['path'])).name!r} "
                        f"({missing} release(s)) and missing here",
                    ),
                )
            ledger_id = _ledger_id(con)
            after = _spent(con, name)
        record_binding(key, path, name, ledger_id, after, caps)
        return self.refresh()

    def __str__(self) -> str:
        shown = self.table.drop(columns=["digest", "identity"]).map(
            lambda v: "" if v is None else fmt(v)
        )
        lines = [f"Privacy ledger {self.path.name}"]
        lines.append(shown.to_string(index=False) if len(shown) else "(empty)")
        for _, t in self.total.iterrows():
            cap = (
                "no cap"
                if t["cap_eps"] is None
                else f"cap eps={fmt(t['cap_eps'])}, "
                f"delta={fmt(t['cap_delta'])}"
            )
            lines.append(
                f"data set {t['dataset']!r}: {t['releases']} release(s), "
                f"spent eps={fmt(t['eps'])}, delta={fmt(t['delta'])}; {cap}"
            )
        lines.extend(self.notes())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        parts = [
            f"<div><strong>Privacy ledger {html.escape(self.path.name)}"
            "</strong>",
            self.table.drop(columns=["digest"]).to_html(index=False),
            self.total.to_html(index=False),
        ]
        parts.extend(
            f"<p><strong>{html.escape(n)}</strong></p>" for n in self.notes()
        )
        parts.append("</div>")
        return "".join(parts)


def rebind_ledger(path: str | os.PathLike, dataset: str) -> LedgerBook:
    """Make the ledger file ``path`` (created if missing) the data set's
    ledger for the key in use, carrying over what the key recorded it
    spent: :meth:`LedgerBook.rebind`, for a file that may not exist
    yet (the recorded one was lost)."""
    path = Path(path)
    with closing(_connect(path)) as con, _Transaction(con, path):
        pass  # the tables and the ledger's id, if missing
    return LedgerBook(path).rebind(dataset)


def ledger(path: str | os.PathLike, dataset: str | None = None) -> LedgerBook:
    """Read a ledger file back.

    Parameters
    ----------
    path
        The SQLite file written under :func:`use_ledger`.
    dataset
        Only this data set's rows (default: all).

    Returns
    -------
    LedgerBook
        ``.table`` (one row per release), ``.total`` (spent, cap and what
        is left per data set), ``.mixed()`` and ``.notes()`` (cells
        released by both DP and CKM); prints as a table and shows as HTML
        in a notebook.
    """
    return LedgerBook(path, dataset)
