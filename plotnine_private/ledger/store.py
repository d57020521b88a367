"""The persistent privacy ledger of a data set (a SQLite file).

``pp.use_ledger("ledger.sqlite", dataset="hospital", cap_eps=3)`` makes
every release of this process a row of the ledger, charged to the data set
*before* its noise is drawn:

* **one row per release**: data set, release identity, the data digest
  keyed by the secret, privacy unit and bound, family, mechanism, eps,
  delta, adjacency, source, the public name of the released cells, when,
  its label (``label=``, ``pp.label``) and the statement that made it
  (seeds hidden);
* **the data decide the data set**: a release drawn from
  ``pp.source(..., dataset="flights")`` is charged to ``flights`` (the
  session's :class:`~plotnine_private.mechanisms.session.ReleaseTags`,
  set by the door and the tables around each release); the data set
  given here takes the releases of data that name none;
* **the same release is free**: re-drawing the same query on the same data
  under the same secret finds its row (same identity and keyed digest) and
  charges nothing; a new query, or the same query on changed data, is a
  new row;
* **the cap**: a release that would take the data set's total past
  ``cap_eps`` or ``cap_delta`` raises
  :class:`~plotnine_private.exceptions.BudgetExceededError` and draws
  nothing; the figure is not drawn and no file is written;
* **one transaction**: the check and the charge run inside ``BEGIN
  IMMEDIATE`` (SQLite's write lock), so processes drawing at once queue
  and never spend more than the cap together.

A ledger needs a key file (an error naming ``create_key`` otherwise):
without one the seed is the only secret, and the identity and digest
kept to recognise a repeated release would let whoever holds the file
test guessed seeds. The key file records which ledger each data set is
charged to (:mod:`.ledger_binding`): a deleted, moved, copied or
truncated ledger is refused before anything is drawn. A ledger written
by an earlier version is migrated when first opened (``_prepare``).

The release engine calls :func:`_charge_releases` through its charge hook
(installed as every session's default hook,
:func:`~plotnine_private.mechanisms.session.install_charge_hook`); the
mechanisms core knows nothing of SQLite. The ledger in use, whether it is
suspended and the releases charged so far are fields of the session
(:mod:`~plotnine_private.mechanisms.session`): each thread or asyncio
task has its own. Nothing here reads the data: the
rows hold public facts and a keyed digest.

The environment variable ``PLOTNINE_PRIVATE_LEDGER`` selects a ledger when
:func:`use_ledger` was not called: ``PATH?dataset=NAME&cap_eps=X&
cap_delta=Y`` (the query part as in a URL; ``dataset`` is required, the
caps are optional).
"""

from __future__ import annotations

import math
import os
import sqlite3
import sys
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from ..exceptions import BudgetExceededError, PlotninePrivateError
from ..mechanisms.release.engine import Charge
from ..mechanisms.session import (
    UNSET,
    current_session,
    install_charge_hook,
    update_session,
)
from ..mechanisms.streams.keys import current_key_path
from ..report.composition import fmt, shortfalls
from ..statements import redact_seeds, statement_at
from .binding import (
    Spent,
    check_binding,
    record_binding,
    recorded,
)
from .file import (
    _MIGRATED as _MIGRATED,
)
from .file import (
    _SCHEMA as _SCHEMA,
)
from .file import (
    _TIMEOUT as _TIMEOUT,
)
from .file import (
    _VERSION as _VERSION,
)
from .file import (
    _check_cap as _check_cap,
)
from .file import (
    _connect as _connect,
)
from .file import (
    _damaged as _damaged,
)
from .file import (
    _dataset_name as _dataset_name,
)
from .file import (
    _ledger_id as _ledger_id,
)
from .file import (
    _now as _now,
)
from .file import (
    _prepare as _prepare,
)
from .file import (
    _register as _register,
)
from .file import (
    _skeleton as _skeleton,
)
from .file import (
    _Transaction as _Transaction,
)

__all__ = [
    "COLUMNS",
    "LEDGER_ENV",
    "suspended",
    "use_ledger",
]

#: environment variable naming a ledger: PATH?dataset=NAME&cap_eps=X
LEDGER_ENV = "PLOTNINE_PRIVATE_LEDGER"

COLUMNS = [
    "id",
    "dataset",
    "identity",
    "digest",
    "unit",
    "bound",
    "family",
    "mechanism",
    "eps",
    "delta",
    "adjacency",
    "source",
    "cells",
    "at",
    "label",
    "what",
]


# --------------------------------------------------------------------------
# the active ledger
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Active:
    path: Path
    dataset: str
    # the caps when it was opened: a file deleted since then is made
    # again with them, never without a cap
    cap_eps: float | None = None
    cap_delta: float | None = None


# The session's fields (mechanisms/session.py): ``ledger``, the ledger
# chosen with use_ledger() (an _Active; None: none; UNSET: the
# environment's); ``suspended``, open suspended() blocks (inside
# noise_interval(): builds that show no released value charge nothing);
# ``recent``, identity -> keyed digest of the releases charged (or found)
# in this session: which ledger rows a bundle of a build copies.


class use_ledger:  # noqa: N801 - a function to the user, a context too
    """Charge every release of this session to a data set's ledger.

    ``pp.use_ledger("ledger.sqlite", dataset="hospital", cap_eps=3)``;
    ``pp.use_ledger(None)`` stops charging. As a context manager
    (``with pp.use_ledger(...):``) the previous choice comes back at the
    end of the block.

    Parameters
    ----------
    path
        The SQLite file (created if missing), or ``None``.
    dataset
        The name of the data set the releases are drawn from; its releases
        and its cap are kept apart from other data sets in the same file.
        A release from a source that names another data set
        (``pp.source(..., dataset=...)``) is charged to that one.
    cap_eps, cap_delta
        The most the data set may spend over all its releases, recorded
        in the file on first use (later calls may omit them; a different
        value is refused: change it with
        :meth:`~plotnine_private.LedgerBook.set_cap`).
        ``cap_delta`` defaults to 0 when ``cap_eps`` is given. Without
        caps the ledger records and never refuses.

    A release under a ledger needs a key file (:func:`create_key`,
    :func:`use_key`), which records the ledger each data set is charged
    to: a release whose ledger was deleted, moved, copied or truncated
    since is refused before anything is drawn (see
    :func:`~plotnine_private.rebind_ledger`). Data set names are
    compared after folding case and spaces.

    Raises
    ------
    PlotninePrivateError
        A missing ``dataset``, a bad cap, a cap other than the file's, or
        a name that differs from one in the file in punctuation only.
    """

    def __init__(
        self,
        path: str | os.PathLike | None,
        *,
        dataset: str | None = None,
        cap_eps: float | None = None,
        cap_delta: float | None = None,
    ):
        chosen = opened_ledger(path, dataset, cap_eps, cap_delta)
        self._previous = update_session(ledger=chosen).ledger

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        update_session(ledger=self._previous)

    def __repr__(self) -> str:
        a = _current()
        return "use_ledger(None)" if a is None else f"<ledger {a.dataset!r}>"


def opened_ledger(
    path: str | os.PathLike | None,
    dataset: str | None = None,
    cap_eps: float | None = None,
    cap_delta: float | None = None,
    where: str = "use_ledger",
) -> _Active | None:
    """The session's record of the ledger ``use_ledger(path, ...)``
    chooses (checked and registered now), or ``None``."""
    if path is None:
        return None
    return _open(Path(path), dataset, cap_eps, cap_delta, where)


def _open(
    path: Path,
    dataset: Any,
    cap_eps: Any,
    cap_delta: Any,
    where: str,
) -> _Active:
    if not isinstance(dataset, str) or not dataset.strip():
        raise PlotninePrivateError(
            f"{where}: dataset must name the data set the releases come "
            f"from (e.g. dataset='hospital episodes 2024'), got {dataset!r}."
        )
    eps = _check_cap("cap_eps", cap_eps)
    delta = _check_cap("cap_delta", cap_delta)
    if delta is not None and delta >= 1:
        raise PlotninePrivateError(
            f"{where}: cap_delta must be below 1, got {cap_delta!r}."
        )
    if path.exists() and path.is_dir():
        raise PlotninePrivateError(
            f"{where}: the ledger path {path.name!r} is a folder; give a "
            "file such as 'ledger.sqlite'."
        )
    key = current_key_path()
    rec = None if key is None else recorded(key, dataset)
    # a data set new to this file takes the cap its key recorded
    known = None if rec is None else _Active(path, dataset, *_caps_of(rec))
    with closing(_connect(path)) as con, _Transaction(con, path):
        dataset = _dataset_name(con, dataset, path, where)
        caps = _register(con, dataset, eps, delta, path, known)
    return _Active(path.resolve(), dataset, *caps)


def _from_environment() -> _Active | None:
    value = os.environ.get(LEDGER_ENV)
    if not value:
        return None
    path, _, query = value.partition("?")
    fields = {k: v[-1] for k, v in parse_qs(query).items()}
    unknown = sorted(set(fields) - {"dataset", "cap_eps", "cap_delta"})
    if unknown:
        raise PlotninePrivateError(
            f"{LEDGER_ENV}: unknown field(s) {', '.join(unknown)}; the "
            "format is PATH?dataset=NAME&cap_eps=X&cap_delta=Y."
        )

    def number(name: str) -> float | None:
        if name not in fields:
            return None
        try:
            return float(fields[name])
        except ValueError:
            raise PlotninePrivateError(
                f"{LEDGER_ENV}: {name} must be a number, got {fields[name]!r}."
            ) from None

    return _open(
        Path(path),
        fields.get("dataset"),
        number("cap_eps"),
        number("cap_delta"),
        f"{LEDGER_ENV}={value!r}",
    )


def remember_caps(
    path: Path, dataset: str, cap_eps: float | None, cap_delta: float | None
) -> None:
    """A cap changed in the file (``set_cap``) is the active ledger's cap
    from now on (in this session)."""
    a = current_session().ledger
    if isinstance(a, _Active) and (a.path, a.dataset) == (
        path.resolve(),
        dataset,
    ):
        update_session(ledger=_Active(a.path, a.dataset, cap_eps, cap_delta))


def _current() -> _Active | None:
    active = current_session().ledger
    if active is UNSET:
        active = _from_environment()
        update_session(ledger=active)
    return active


class suspended:  # noqa: N801 - a context manager
    """Charge nothing inside the block: for builds whose output is public
    parameters only (``noise_interval``), never for a figure or table.
    It suspends the current session only (this thread or task)."""

    def __enter__(self) -> None:
        update_session(suspended=current_session().suspended + 1)

    def __exit__(self, *exc: object) -> None:
        update_session(suspended=current_session().suspended - 1)


def _suspended() -> bool:
    return current_session().suspended > 0


def recent_charges() -> dict[str, str]:
    """identity -> keyed digest of the releases this session charged (or
    found) in its ledger."""
    return current_session().recent


# --------------------------------------------------------------------------
# the charge
# --------------------------------------------------------------------------
# frames of these packages are machinery: the statement that made a
# release is the first frame outside them
_MACHINERY = (
    "plotnine",
    "plotnine_private",
    "matplotlib",
    "pandas",
    "numpy",
    "IPython",
    "ipykernel",
    "multiprocessing",
    "concurrent",
    "threading",
    "runpy",
    "importlib",
)


def _what() -> str:
    """The statement that made the release, seeds hidden (which figure or
    table it belongs to)."""
    import linecache

    frame = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.split(".")[0] not in _MACHINERY:
            name = frame.f_code.co_filename
            lines = linecache.getlines(name, frame.f_globals)
            text = statement_at("".join(lines), frame.f_lineno)
            if not text:
                text = linecache.getline(name, frame.f_lineno).strip()
            if not text:
                return "<source not available>"
            # parsed and written back with its seeds hidden, then on one
            # line; cut after that, so no cut can hide a seed from parsing
            return " ".join(redact_seeds(text).split())[:300]
        frame = frame.f_back  # type: ignore[assignment]
    return "<source not available>"


def _charge_releases(charges: Sequence[Charge]) -> None:
    """The release engine's charge hook: record the new releases, each in
    its data set (the one its source names, else the active ledger's),
    or refuse them all, in one transaction."""
    if _suspended():
        return
    active = _current()
    if active is None:
        return
    key = _key_for(active)
    if not active.path.exists():
        # a bound ledger that is gone is refused before a new file is made
        check_binding(key, active.path, active.dataset, None, Spent(0, 0, 0))
    plans: list[_Plan] = []
    with closing(_connect(active.path)) as con, _Transaction(con, active.path):
        ledger_id = _ledger_id(con)
        groups: dict[str, tuple[_Active, list[Charge]]] = {}
        for c in charges:
            target = _target(con, active, key, c.dataset)
            groups.setdefault(target.dataset, (target, []))[1].append(c)
        # every data set is checked before any row is written: a release
        # of several data sets is recorded whole or not at all
        for target, group in groups.values():
            caps = _register(
                con, target.dataset, None, None, active.path, target
            )
            before = _spent(con, target.dataset)
            bound = check_binding(
                key, active.path, target.dataset, ledger_id, before
            )
            new: list[Charge] = []
            for c in group:
                seen = con.execute(
                    "SELECT id, label FROM releases WHERE dataset = ? AND "
                    "identity = ? AND digest = ?",
                    (target.dataset, c.identity, c.digest),
                ).fetchone()
                if seen is None and c not in new:
                    new.append(c)
                elif seen is not None and c.label and c.label != seen[1]:
                    # relabelled: the same release, free, under its new
                    # label
                    con.execute(
                        "UPDATE releases SET label = ? WHERE id = ?",
                        (c.label, seen[0]),
                    )
            if new:
                _refuse_over_cap(active, target.dataset, before, new, caps)
            plans.append(_Plan(target.dataset, caps, before, bound, new))
        for plan in plans:
            if plan.new:
                _insert(con, plan.dataset, plan.new)
                plan.after = _spent(con, plan.dataset)
    recent = current_session().recent
    for c in charges:
        recent[c.identity] = c.digest
    for plan in plans:
        if plan.bound is None or plan.new:
            # after the commit: a key that lags behind its ledger only
            # makes the next check weaker, never a false refusal
            record_binding(
                key,
                active.path,
                plan.dataset,
                ledger_id,
                plan.after or plan.before,
                plan.caps,
            )


@dataclass
class _Plan:
    """One data set's part of a charge: its caps, what it had spent, its
    binding in the key (None: not yet bound), the new releases and what
    it has spent after them."""

    dataset: str
    caps: tuple[float | None, float | None]
    before: Spent
    bound: Any
    new: list[Charge]
    after: Spent | None = None


def _target(
    con: sqlite3.Connection, active: _Active, key: Path, dataset: str | None
) -> _Active:
    """The data set a release is charged to: the active ledger's, or the
    one its source names (``pp.source(..., dataset=...)``), which the
    ledger (or the key's record of it) must know already, with its cap:
    a data set first met in a release would have no cap."""
    if dataset is None:
        return active
    where = f"pp.source(..., dataset={dataset!r})"
    name = _dataset_name(con, dataset, active.path, where)
    if name == active.dataset:
        return active
    known = con.execute(
        "SELECT 1 FROM datasets WHERE dataset = ?", (name,)
    ).fetchone()
    if known is not None:
        return _Active(active.path, name)
    rec = recorded(key, name)
    if rec is not None:
        # the key charged it elsewhere: check_binding says where
        return _Active(active.path, name, *_caps_of(rec))
    raise PlotninePrivateError(
        f"{where}: the ledger {active.path.name!r} has no data set "
        f"{name!r}, so it has no cap yet (the ledger was selected for "
        f"{active.dataset!r}). Add it once with its cap: pp.ledger("
        f"{active.path.name!r}).add_dataset({name!r}, eps=..., "
        "delta=...) (or eps=None for no cap), or give the source no "
        f"dataset= to charge {active.dataset!r}. Nothing was drawn."
    )


def _refuse_over_cap(
    active: _Active,
    dataset: str,
    before: Spent,
    new: Sequence[Charge],
    caps: tuple[float | None, float | None],
) -> None:
    """Raise :class:`BudgetExceededError` when ``new`` would take the data
    set past its cap, naming each quantity that is short (eps, delta),
    its numbers, and the fix for it."""
    cap_eps, cap_delta = caps
    eps = math.fsum(c.eps or 0.0 for c in new)
    delta = math.fsum(c.delta for c in new)
    short = shortfalls(
        (before.eps, before.delta), (eps, delta), (cap_eps, cap_delta)
    )
    if not short:
        return
    families = sorted({c.family for c in new})
    eps_short = any(s.startswith("eps") for s in short)
    delta_short = any(s.startswith("delta") for s in short)
    fixes = []
    if eps_short:
        left = max((cap_eps or 0.0) - before.eps, 0.0)
        redraw = (
            "re-draw a release already in the ledger (same query, seed "
            "and data), which is free"
        )
        fixes.append(
            f"lower the eps of this release to at most {fmt(left)}, or "
            + redraw
            if left > 0
            else f"nothing is left: {redraw}"
        )
    if delta_short:
        why = (
            "a private PCA always spends delta"
            if any(f.startswith("pca") for f in families)
            else "a layer spends delta when it thresholds the cells of "
            "an undeclared domain: declare the levels (a Categorical "
            "with categories=[...]) or give public breaks/limits to "
            "spend none"
        )
        fixes.append(why)
    need_eps = before.eps + eps if eps_short else cap_eps
    need_delta = before.delta + delta if delta_short else cap_delta
    fixes.append(
        "or raise the cap deliberately: pp.ledger("
        f"{active.path.name!r}).set_cap({dataset!r}, eps={fmt(need_eps)}, "
        f"delta={fmt(need_delta)}) (set_cap sets both)"
    )
    quantity = " and ".join(
        q for q, hit in (("eps", eps_short), ("delta", delta_short)) if hit
    )
    raise BudgetExceededError(
        f"ledger budget exceeded: the data set {dataset!r} is short of "
        f"{quantity} for this release ({', '.join(families)}): "
        f"{'; '.join(short)}. Nothing was drawn. To draw it: "
        f"{'; '.join(fixes)}."
    )


def _insert(
    con: sqlite3.Connection, dataset: str, new: Sequence[Charge]
) -> None:
    at, what = _now(), _what()
    con.executemany(
        "INSERT INTO releases (dataset, identity, digest, unit, bound, "
        "family, mechanism, eps, delta, adjacency, source, cells, at, "
        "what, label) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                dataset,
                c.identity,
                c.digest,
                c.unit,
                c.bound,
                c.family,
                c.mechanism,
                c.eps,
                c.delta,
                c.adjacency,
                c.source,
                c.cells,
                at,
                what,
                c.label,
            )
            for c in new
        ],
    )


def _caps_of(rec: dict[str, Any]) -> tuple[float | None, float | None]:
    """The caps a key file recorded for a data set."""
    eps, delta = rec.get("cap_eps"), rec.get("cap_delta")
    return (
        None if eps is None else float(eps),
        None if delta is None else float(delta),
    )


def _spent(con: sqlite3.Connection, dataset: str) -> Spent:
    eps, delta, n = con.execute(
        "SELECT COALESCE(SUM(eps), 0), COALESCE(SUM(delta), 0), COUNT(*) "
        "FROM releases WHERE dataset = ?",
        (dataset,),
    ).fetchone()
    return Spent(float(eps), float(delta), int(n))


def _key_for(active: _Active) -> Path:
    """The key file in use; a ledger refuses to charge without one.

    Without a key file a seed is the only secret, and whatever the
    ledger kept to recognise a repeated release (an identity, a digest)
    would be a function of the seed and the public query: whoever holds
    the file could test guessed seeds against it. A key file also
    records which ledger each data set is charged to (see
    :mod:`.ledger_binding`)."""
    key = current_key_path()
    if key is None:
        raise PlotninePrivateError(
            f"ledger {active.path.name!r} (data set {active.dataset!r}): a "
            "ledger needs a key file, and none is in use. Without one the "
            "seed is the only secret, and what the ledger keeps to "
            "recognise a repeated release would let whoever holds the "
            "file test guessed seeds. Create a key once and keep it apart "
            "from the code and the ledger: pp.create_key('~/.plotnine_"
            "private.key'), then pp.use_key(that path) or set "
            "PLOTNINE_PRIVATE_KEY_FILE. Nothing was drawn."
        )
    return key


class _LedgerHook:
    """The charge hook (:func:`_charge_releases`), which tells the engine
    when it records nothing (no active ledger, or suspended): then the
    engine builds no charge. A charge names its cells only when its
    row is written (a declared domain of 10**6 labels takes some 0.08
    s): a re-draw found in the ledger never names them."""

    def __call__(self, charges: Sequence[Charge]) -> None:
        _charge_releases(charges)

    def listening(self) -> bool:
        return not _suspended() and _current() is not None


install_charge_hook(_LedgerHook())
