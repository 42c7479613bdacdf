"""``luoshod store verify``: check the hash chain of a session's saves (R91), of some
sessions or of a whole store, opening the store directly (a daemon may be serving it).

Each kept save (the session's history entries, oldest first, and its latest checkpoint)
is read back through the store as a checkpoint, its link recomputed from the entry
before it (:mod:`.kit.chain`) and compared with the ``chain`` its header recorded. The
first save whose link does not match is named, with what it covers: an edit of a stored
message changes the records of the save that added it, an edit of a header field (usage,
status, …) that save's header. The saves after it still link to the value it recorded,
so only the first changed save is named.

What cannot be checked is said, not reported as bad: a session saved before the chain
existed ("no chain recorded"), and the oldest kept save of a session whose older saves
the history limit pruned (its link to them is gone: the check starts there). A store
without history checks only that its latest checkpoint has a chain.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from ..domain import Checkpoint, HistoryEntry, Message
from ..errors import LuoshoError
from . import store_from_url
from .kit import chain
from .kit.base import Capability, Store

PAGE_SIZE = 500


@dataclass
class Finding:
    """The first bad save of a session."""

    version: int
    step: int
    what: str


@dataclass
class SessionReport:
    """How one session's chain checked out. ``state``: ``ok``, ``bad``, ``no-chain``
    (nothing recorded to check), ``missing`` (a session named that the store does not
    hold) or ``no-saves`` (a session of the store with no checkpoint nor history: only
    events or queued input)."""

    session_id: str
    state: str
    checked: int = 0  # saves whose link was recomputed and matched
    first_version: int = 0  # the oldest kept save
    last_version: int = 0
    notes: list[str] = field(default_factory=list)
    bad: Finding | None = None
    #: The latest save's chain value: kept elsewhere (a ticket, another system), it lets a
    #: later check tell that nothing was rewritten since, chain values included.
    head: str = ""

    def line(self) -> str:
        span = f"versions {self.first_version}-{self.last_version}"
        if self.state == "bad" and self.bad is not None:
            b = self.bad
            return f"{self.session_id}: BAD at version {b.version} (step {b.step}): {b.what}"
        if self.state == "missing":
            return f"{self.session_id}: no such session"
        if self.state == "no-saves":
            return f"{self.session_id}: no saves kept (only events or queued input)"
        if self.state == "no-chain":
            return f"{self.session_id}: no chain recorded ({span} saved before the chain existed)"
        notes = "".join(f"; {n}" for n in self.notes)
        return f"{self.session_id}: ok, {self.checked} saves checked ({span}){notes}"


def _extends(prefix: Sequence[Message], items: Sequence[Message]) -> bool:
    n = len(prefix)
    return len(items) >= n and list(items[:n]) == list(prefix)


def _bases(before: Checkpoint | None, cp: Checkpoint) -> list[tuple[int, dict[str, int]]]:
    """The (lead base, task bases) a save of ``cp`` may have hashed its records from,
    most likely first: past what ``before`` held (a save that went on with the log), then
    its lead's so but every task's whole (a task transcript an older header held
    inline), then everything (a save that started a new log)."""
    whole: tuple[int, dict[str, int]] = (0, {})
    if before is None:
        return [whole]
    held = {t.task_id: t.messages for t in before.all_tasks()}
    tasks = {
        t.task_id: len(held[t.task_id])
        for t in cp.all_tasks()
        if t.task_id in held and _extends(held[t.task_id], t.messages)
    }
    lead = len(before.messages) if _extends(before.messages, cp.messages) else 0
    found = [(lead, tasks), (lead, {}), whole]
    return [b for i, b in enumerate(found) if b not in found[:i]]


def _linked(prev: str, before: Checkpoint | None, cp: Checkpoint) -> bool:
    header = chain.header_bytes(cp)
    for lead, tasks in _bases(before, cp):
        pairs = [(t, tasks.get(t.task_id, 0)) for t in cp.all_tasks()]
        if chain.link(prev, header, chain.records(cp.messages, pairs, lead)) == cp.chain:
            return True
    return False


def _added(before: Checkpoint | None, cp: Checkpoint) -> str:
    """What a save added, as a report names it."""
    lead, tasks = _bases(before, cp)[0]
    parts = []
    if len(cp.messages) > lead:
        first, last = lead + 1, len(cp.messages)
        parts.append(f"message {first}" if first == last else f"messages {first}-{last}")
    for t in cp.all_tasks():
        n = tasks.get(t.task_id, 0)
        if len(t.messages) > n:
            parts.append(f"{t.task_id} messages {n + 1}-{len(t.messages)}")
    return ", ".join(parts) or "no messages"


def _differs(a: Checkpoint, b: Checkpoint) -> list[str]:
    """The header fields (and ``messages``) in which two checkpoints of one version differ."""
    ha = a.header_dict(with_tasks=False)
    hb = b.header_dict(with_tasks=False)
    keys = [k for k in {**ha, **hb} if ha.get(k) != hb.get(k)]
    if a.messages != b.messages:
        keys.append("messages")
    if [t.messages for t in a.all_tasks()] != [t.messages for t in b.all_tasks()]:
        keys.append("task messages")
    return keys


def _columns(entry: HistoryEntry) -> str:
    """How a history entry's own step, status and time (columns of their own in SQLite
    and PostgreSQL, which ``History`` shows) differ from its checkpoint's; ``""``: not."""
    cp = entry.checkpoint
    found = [
        f"{name} {mine!r} where its header has {theirs!r}"
        for name, mine, theirs in (
            ("step", entry.step, cp.step_index),
            ("status", str(entry.status), str(cp.status)),
            ("time", entry.saved_at, cp.updated_at),
        )
        if mine != theirs
    ]
    return "its history row says " + ", ".join(found) if found else ""


def check(
    session_id: str,
    saves: Sequence[Checkpoint],
    latest: Checkpoint | None,
    rows: Sequence[str] = (),
) -> SessionReport:
    """Check the chain of ``saves`` (the kept history, oldest first) and ``latest``;
    ``rows[i]``, when given and not empty, says how the history row of ``saves[i]``
    differs from its checkpoint (:func:`_columns`): that save is bad too."""
    if latest is not None and (not saves or saves[-1].version < latest.version):
        saves = [*saves, latest]  # a store without history (or none kept)
    if not saves:
        return SessionReport(session_id, "missing")
    report = SessionReport(session_id, "ok", 0, saves[0].version, saves[-1].version)

    def bad(cp: Checkpoint, what: str) -> SessionReport:
        report.state, report.bad = "bad", Finding(cp.version, cp.step_index, what)
        return report

    before: Checkpoint | None = None
    chained = False
    for i, cp in enumerate(saves):
        if i < len(rows) and rows[i]:
            return bad(cp, rows[i])
        if not cp.chain:
            if chained:
                return bad(cp, "no chain recorded, after saves that recorded one")
            before = cp
            continue
        if before is not None and cp.version == before.version + 1:
            prev, base = before.chain, before
        elif cp.version == 1:
            prev, base = cp.chain_from, None  # a new session's, or a fork's first save
        elif i == 0:
            report.notes.append(
                f"version {cp.version} is the oldest kept save: its link to the pruned "
                "saves before it is not checked"
            )
            before, chained = cp, True
            continue
        else:
            prior = before.version if before is not None else 0
            return bad(cp, f"the save before it is missing (versions jump from {prior})")
        if not _linked(prev, base, cp):
            return bad(
                cp,
                "its header or the records it added "
                f"({_added(base, cp)}) do not match its recorded chain value: "
                "changed after it was saved",
            )
        report.checked += 1
        before, chained = cp, True
    if not chained:
        report.state = "no-chain"
        return report
    report.head = saves[-1].chain
    if latest is not None and saves[-1] is not latest and saves[-1].version == latest.version:
        entry = saves[-1]
        fields = _differs(entry, latest)
        if fields:
            return bad(
                latest,
                "the latest checkpoint differs from its history entry in "
                + ", ".join(fields)
                + (
                    " (the history entry matches its chain value)"
                    if entry.chain == latest.chain
                    else ""
                ),
            )
    return report


async def verify_session(store: Store, session_id: str) -> SessionReport:
    """Read ``session_id``'s kept saves from ``store`` and check them."""
    latest = await store.load(session_id)
    entries: list[HistoryEntry] = []
    if Capability.HISTORY in store.capabilities:
        entries = list(reversed(await store.history(session_id)))
    saves = [e.checkpoint for e in entries]
    return check(session_id, saves, latest, [_columns(e) for e in entries])


async def _every_session(store: Store) -> list[str]:
    ids: list[str] = []
    token = ""
    while True:
        page, token = await store.session_ids(page_size=PAGE_SIZE, page_token=token)
        ids += page
        if not token:
            return ids


async def verify_store(url: str, session_ids: Sequence[str]) -> list[SessionReport]:
    """Check ``session_ids`` of the store at ``url`` (every session when none). Raises
    ``ValueError`` for a malformed URL or a store that does not exist."""
    store = store_from_url(url)
    if not store.exists():
        raise ValueError(f"the store {url} does not exist: there is nothing to verify")
    await store.open()
    try:
        if session_ids:
            return [await verify_session(store, sid) for sid in session_ids]
        reports = []
        for sid in await _every_session(store):  # some hold only events or queued input
            report = await verify_session(store, sid)
            if report.state == "missing":
                report.state = "no-saves"
            reports.append(report)
        return reports
    finally:
        await store.close()


def run_verify(url: str, session_ids: Sequence[str], as_json: bool) -> int:
    """``luoshod store verify``: print one line per session (or JSON); the exit status:
    0 when every chain checks out, 1 when a save is bad, 2 for a usage or store error
    (a named session the store does not hold included)."""
    try:
        reports = asyncio.run(verify_store(url, session_ids))
    except (ValueError, LuoshoError) as e:
        print(f"luoshod store verify: {e}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps({"sessions": [asdict(r) for r in reports]}, indent=2))
    else:
        for r in reports:
            print(r.line(), file=sys.stderr if r.state in ("bad", "missing") else sys.stdout)
    if any(r.state == "bad" for r in reports):
        return 1
    return 2 if any(r.state == "missing" for r in reports) else 0
