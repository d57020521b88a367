"""The ledger's file: its schema, connections and transactions, and the
names and caps of its data sets (SQLite; :mod:`.store` activates a
ledger and charges releases to it)."""

from __future__ import annotations

import math
import secrets
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..exceptions import PlotninePrivateError
from ..report.composition import fmt
from .binding import normal_name

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    id TEXT NOT NULL,
    version INTEGER NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS datasets (
    dataset TEXT PRIMARY KEY,
    cap_eps REAL,
    cap_delta REAL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset TEXT NOT NULL REFERENCES datasets(dataset),
    identity TEXT NOT NULL,
    digest TEXT NOT NULL,
    unit TEXT NOT NULL,
    bound INTEGER NOT NULL,
    family TEXT NOT NULL,
    mechanism TEXT NOT NULL,
    eps REAL,
    delta REAL NOT NULL,
    adjacency TEXT,
    source TEXT NOT NULL,
    cells TEXT NOT NULL,
    at TEXT NOT NULL,
    what TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    UNIQUE (dataset, identity, digest)
);
"""

# a writer waits this long for another process's transaction
_TIMEOUT = 60.0


# --------------------------------------------------------------------------
# the file
# --------------------------------------------------------------------------
# the ledger's format: 2 has a ledger id and keeps nothing seed-derived
_VERSION = 2


def _connect(path: Path) -> sqlite3.Connection:
    # autocommit mode: every transaction is an explicit BEGIN IMMEDIATE
    try:
        con = sqlite3.connect(path, timeout=_TIMEOUT, isolation_level=None)
        # a row rewritten (a migration) leaves no old bytes in the file
        con.execute("PRAGMA secure_delete = ON")
    except sqlite3.DatabaseError as err:
        raise _damaged(path, err) from None
    con.row_factory = sqlite3.Row
    return con


def _damaged(path: Path, err: Exception) -> PlotninePrivateError:
    return PlotninePrivateError(
        f"the ledger {path.name!r} cannot be read as a ledger ({err}): it "
        "was truncated, overwritten or is not a ledger. Restore it from a "
        "backup; nothing was drawn."
    )


def _prepare(con: sqlite3.Connection) -> bool:
    """Make the tables (and the ledger's random id) if missing; migrate a
    ledger of an earlier version. Returns whether it migrated one."""
    tables = {
        r[0]
        for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='table'"
        )
    }
    for statement in _SCHEMA.split(";"):
        if statement.strip():
            con.execute(statement)
    if not has_label_column(con):
        # a ledger written before releases had labels: every row gets an
        # empty one
        con.execute(
            "ALTER TABLE releases ADD COLUMN label TEXT NOT NULL DEFAULT ''"
        )
    if con.execute("SELECT 1 FROM ledger").fetchone() is not None:
        return False
    con.execute(
        "INSERT INTO ledger VALUES (?, ?, ?)",
        (secrets.token_hex(16), _VERSION, _now()),
    )
    if "releases" not in tables:
        return False
    # version 1 kept identities and digests keyed by the secret (a seed's
    # scrypt without a key file) and statements whose seeds a pattern had
    # missed (loops, comprehensions), with no way left to trace them:
    # each row keeps its cost and gets a random identity (the release is
    # charged again if drawn again); its statement is not kept
    rows = con.execute("SELECT id FROM releases").fetchall()
    con.executemany(
        "UPDATE releases SET identity = ?, digest = '', what = ? WHERE id = ?",
        [("v1 " + secrets.token_hex(12), _MIGRATED, r["id"]) for r in rows],
    )
    return True


def has_label_column(con: sqlite3.Connection) -> bool:
    """Whether the file's releases have a ``label`` column (a ledger
    written before labels has none until its next transaction)."""
    cols = {r[1] for r in con.execute("PRAGMA table_info(releases)")}
    return "label" in cols


# the statement of a row written before version 2
_MIGRATED = "<written before version 2: statement not kept>"


def _ledger_id(con: sqlite3.Connection) -> str:
    return str(con.execute("SELECT id FROM ledger").fetchone()[0])


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an error): the
    write lock is taken before anything is read, so the check of the cap
    and the charge see and leave one consistent ledger."""

    def __init__(self, con: sqlite3.Connection, path: Path | None = None):
        self.con = con
        self.path = path
        self.migrated = False

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.con.execute("BEGIN IMMEDIATE")
            self.migrated = _prepare(self.con)
        except sqlite3.DatabaseError as err:
            if self.con.in_transaction:
                self.con.execute("ROLLBACK")
            raise _damaged(self.path or Path("?"), err) from None
        return self.con

    def __exit__(self, kind, value, tb) -> None:
        self.con.execute("ROLLBACK" if kind else "COMMIT")
        if self.migrated and not kind:
            self.con.execute("VACUUM")  # no old row's bytes stay behind


def _check_cap(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise PlotninePrivateError(
            f"use_ledger(): {name} must be a finite number >= 0 or None (no "
            f"cap), got {value!r}."
        )
    return float(value)


def _skeleton(dataset: str) -> str:
    return "".join(ch for ch in normal_name(dataset) if ch.isalnum())


def _dataset_name(
    con: sqlite3.Connection, dataset: str, path: Path, where: str
) -> str:
    """The name the ledger knows ``dataset`` by: a name already in the
    file that differs in case or spaces only is that name; one that
    differs in punctuation only (``hospital-2024``, ``hospital_2024``)
    is refused, as a likely second name for one data set (two names
    would be two budgets)."""
    names = [r[0] for r in con.execute("SELECT dataset FROM datasets")]
    for name in names:
        if normal_name(name) == normal_name(dataset):
            return str(name)
    near = [n for n in names if _skeleton(n) == _skeleton(dataset)]
    if near:
        raise PlotninePrivateError(
            f"{where}: dataset={dataset!r} differs from the data set "
            f"{near[0]!r} of the ledger {path.name!r} in punctuation only; "
            "two names for one data set would give it two budgets. Give "
            f"dataset={near[0]!r} if it is the same data set, or a name "
            "that differs in letters or digits if it is another."
        )
    return " ".join(dataset.split())


def _register(
    con: sqlite3.Connection,
    dataset: str,
    cap_eps: float | None,
    cap_delta: float | None,
    path: Path,
    opened: Any = None,
) -> tuple[float | None, float | None]:
    """The data set's caps: recorded on first use, then the file's
    (``opened``: the caps known when the ledger was selected, for a data
    set missing from the file at a charge)."""
    row = con.execute(
        "SELECT cap_eps, cap_delta FROM datasets WHERE dataset = ?",
        (dataset,),
    ).fetchone()
    if row is None and opened is not None:
        cap_eps, cap_delta = opened.cap_eps, opened.cap_delta
    if cap_eps is not None and cap_delta is None:
        cap_delta = 0.0  # as privacy_budget: pure eps-DP unless said
    if row is None:
        con.execute(
            "INSERT INTO datasets VALUES (?, ?, ?, ?)",
            (dataset, cap_eps, cap_delta, _now()),
        )
        return cap_eps, cap_delta
    stored = (row["cap_eps"], row["cap_delta"])
    given = (cap_eps, cap_delta)
    if cap_eps is not None and given != stored:
        raise PlotninePrivateError(
            f"use_ledger(): the ledger {path.name!r} records cap_eps="
            f"{fmt(stored[0])}, cap_delta={fmt(stored[1])} for the data "
            f"set {dataset!r}, not cap_eps={fmt(cap_eps)}, cap_delta="
            f"{fmt(cap_delta)}. The cap belongs to the data set: omit "
            "cap_eps to use the recorded one, or change it deliberately "
            "with pp.ledger(path).set_cap(dataset, eps=..., delta=...)."
        )
    return stored


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
