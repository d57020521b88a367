"""A data set's ledger, bound to the key file that charged it.

A ledger file is easy to lose: deleted, renamed, copied, truncated, or
an older copy put back. Any of these would silently give the data set a
fresh budget. So the key file in use (a ledger needs one) records, for
each data set it charged, which ledger that was: the ledger's random id
(kept in the ledger's own ``ledger`` table), its path, and what the data
set had spent there when the key last charged it. A release whose ledger
is not that one, or has spent less, is refused before anything is drawn,
with the fix in the message; :func:`rebind` is the deliberate way to
move a data set to another ledger file, and it carries the spending
over.

This defends against accidents, not against an administrator: whoever
may edit the key file or the ledger (or make a new key) can reset a
budget. See ``docs/privacy-unit-and-budget.md``.
"""

from __future__ import annotations

import math
import sqlite3
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..exceptions import PlotninePrivateError
from ..mechanisms.streams.keys import key_records, update_key_records
from ..report.composition import fmt

__all__ = ["Spent", "check_binding", "normal_name", "record_binding"]


def normal_name(dataset: str) -> str:
    """A data set's name as names are compared: case and runs of spaces
    do not count (``"Hospital  Episodes"`` is ``"hospital episodes"``).

    >>> normal_name("  Hospital\\tEpisodes 2024 ")
    'hospital episodes 2024'
    """
    return " ".join(unicodedata.normalize("NFKC", dataset).casefold().split())


@dataclass(frozen=True)
class Spent:
    """What a data set has spent in a ledger."""

    eps: float
    delta: float
    releases: int

    def below(self, other: Spent) -> bool:
        """Whether this is less than ``other`` (rows were lost)."""
        return (
            self.releases < other.releases
            or _less(self.eps, other.eps)
            or _less(self.delta, other.delta)
        )

    def words(self) -> str:
        return (
            f"{self.releases} release(s), eps={fmt(self.eps)}, "
            f"delta={fmt(self.delta)}"
        )


def _less(a: float, b: float) -> bool:
    return a < b and not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def ledger_id_at(path: Path) -> str | None:
    """The id of the ledger at ``path`` (``None``: no file, or no ledger
    of this version there). Read only: nothing is created."""
    if not path.is_file():
        return None
    try:
        con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT id FROM ledger").fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def _record(key: Path, dataset: str) -> dict[str, Any] | None:
    found = key_records(key).get("ledgers", {}).get(normal_name(dataset))
    return found if isinstance(found, dict) else None


def check_binding(
    key: Path,
    path: Path,
    dataset: str,
    ledger_id: str | None,
    spent: Spent,
) -> dict[str, Any] | None:
    """Refuse a release of ``dataset`` charged to the ledger ``path``
    (its id ``ledger_id``, ``None`` if the file is missing; what the
    data set spent there ``spent``) when the key file binds the data set
    to another ledger, or recorded more spending than the ledger holds.
    Returns the key's record (``None`` the first time the key charges
    the data set)."""
    rec = _record(key, dataset)
    if rec is None:
        return None
    bound = Path(str(rec.get("path")))
    was = Spent(
        float(rec.get("eps", 0.0)),
        float(rec.get("delta", 0.0)),
        int(rec.get("releases", 0)),
    )
    head = (
        f"ledger of the data set {dataset!r}: the key file {key.name!r} "
        f"binds it to the ledger {str(bound)!r}"
    )
    rebind = (
        f"pp.rebind_ledger({str(path)!r}, {dataset!r}) makes this file "
        "the data set's ledger and carries the recorded spending into it"
    )
    same_file = rec.get("ledger") == ledger_id
    if same_file and bound == path and not spent.below(was):
        return rec  # the ledger the key charged last, and all of it
    # the recorded ledger is still where the key saw it
    original = bound != path and ledger_id_at(bound) == rec.get("ledger")
    if ledger_id is None and bound == path:
        problem = (
            f" (which held {was.words()}), and that file is missing: it "
            "was deleted or moved. Put it back; if it is lost, "
            f"{rebind}."
        )
    elif same_file and bound == path:
        problem = (
            f"; when it last charged it, that ledger held {was.words()}; it "
            f"now holds {spent.words()}: rows were removed, or an older "
            "copy was put back. Put the latest copy back; if it is lost, "
            f"{rebind}."
        )
    elif same_file and original:
        problem = (
            f"; {str(path)!r} is a copy of it (the same ledger id), and "
            "charging a copy would spend the budget twice. Select the "
            f"original: pp.use_ledger({str(bound)!r}, dataset={dataset!r})."
        )
    elif same_file:
        problem = (
            f", which is no longer there; {str(path)!r} is that ledger "
            "(the same ledger id), moved or renamed. If you moved it on "
            f"purpose, {rebind}."
        )
    elif bound == path:
        problem = (
            f" (which held {was.words()}), but the file there now is "
            "another ledger: it was deleted, replaced or truncated since. "
            f"Put it back from a backup; if it is lost, {rebind}."
        )
    elif original:
        problem = (
            f", not to {str(path)!r}. Select that ledger: pp.use_ledger("
            f"{str(bound)!r}, dataset={dataset!r}); or, to move the data "
            f"set to this file on purpose, {rebind}."
        )
    else:
        problem = (
            f" (which held {was.words()}), and that ledger is no longer "
            "there: it was deleted, moved or replaced. Put it back; if "
            f"it is lost, {rebind}."
        )
    raise PlotninePrivateError(
        f"{head}{problem} Nothing was drawn. (A ledger defends the "
        "budget against accidents; see 'The ledger and the key file' in "
        "the docs.)"
    )


def record_binding(
    key: Path,
    path: Path,
    dataset: str,
    ledger_id: str,
    spent: Spent,
    caps: tuple[float | None, float | None],
) -> None:
    """Record in the key file that ``dataset`` is charged to this ledger,
    and what it has spent there (never less than recorded before for
    the same ledger: processes that charge at once may record in any
    order)."""
    name = normal_name(dataset)

    def change(records: dict[str, Any]) -> dict[str, Any]:
        ledgers = records.setdefault("ledgers", {})
        old = ledgers.get(name)
        eps, delta, n = spent.eps, spent.delta, spent.releases
        if (
            isinstance(old, dict)
            and old.get("ledger") == ledger_id
            and old.get("path") == str(path)
        ):
            eps = max(eps, float(old.get("eps", 0.0)))
            delta = max(delta, float(old.get("delta", 0.0)))
            n = max(n, int(old.get("releases", 0)))
        ledgers[name] = {
            "dataset": dataset,
            "ledger": ledger_id,
            "path": str(path),
            "eps": eps,
            "delta": delta,
            "releases": n,
            "cap_eps": caps[0],
            "cap_delta": caps[1],
        }
        return records

    update_key_records(key, change)


def recorded(key: Path, dataset: str) -> dict[str, Any] | None:
    """The key file's record of ``dataset`` (``None`` if it has none)."""
    return _record(key, dataset)
