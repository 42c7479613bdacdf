"""``memory://``: the in-process driver. Real, not a mock: the engine tests and the
scripted demo run on it. Nothing survives the process."""

from __future__ import annotations

import asyncio
import operator
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace

from ..domain import (
    DEFAULT_REQUEST_ID_LIMIT,
    AppliedRequest,
    Approval,
    Checkpoint,
    Enqueue,
    EventPage,
    HistoryEntry,
    Lease,
    Message,
    QueuedInput,
    SessionSummary,
    Status,
    StoredEvent,
    StoredSchedule,
)
from .kit import (
    CONTRACT_VERSION,
    DEFAULT_HISTORY_LIMIT,
    Capability,
    Renewal,
    Store,
    chain,
    check_enqueue,
    eventblocks,
    lease_busy,
    lease_lost,
    renewal_of,
)
from .kit.importing import extends
from .kit.prepared import write_refusal


@dataclass(slots=True)
class _Entry:
    """A saved header over a prefix of a message log (shared, never copied)."""

    header: Checkpoint  # messages left empty
    log: list[Message]
    count: int

    def checkpoint(self) -> Checkpoint:
        cp = _detached(self.header, self.log[: self.count])
        for task in cp.all_tasks():  # what the store holds of each, as a durable load says
            task.stored = len(task.messages)
        return cp


@dataclass(slots=True)
class _Session:
    latest: _Entry | None = None
    history: deque[_Entry] = field(default_factory=deque)
    events: deque[StoredEvent] = field(default_factory=deque)
    #: Applied request records by id, in the order first written (R74; records are
    #: immutable, so they are shared).
    requests: dict[str, AppliedRequest] = field(default_factory=dict)


class MemoryStore(Store):
    contract_version = CONTRACT_VERSION
    capabilities = frozenset(
        {
            Capability.HISTORY,
            Capability.APPROVALS,
            Capability.EVENT_LOG,
            Capability.LEASES,
            Capability.QUEUE,
            Capability.SCHEDULES,
        }
    )

    def __init__(self, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        super().__init__(history_limit=history_limit)
        self._sessions: dict[str, _Session] = {}
        self._approvals: dict[str, Approval] = {}
        # The latest lease of each session ever leased (kept after release and delete, so
        # tokens only increase); a released lease has expires_at 0.
        self._leases: dict[str, Lease] = {}
        # Each session's queued inputs in queue order (R69); a session's entry goes with
        # its last input.
        self._queues: dict[str, list[QueuedInput]] = {}
        self._schedules: dict[str, StoredSchedule] = {}
        # Saves are synchronous dict updates; the lock only orders them against each other.
        self._lock = asyncio.Lock()

    @classmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> MemoryStore:
        if url.rstrip("/") not in ("memory:", "memory:/", "memory://"):
            raise ValueError(f"memory store URL takes no path: {url!r}")
        return cls(history_limit=history_limit)

    def exists(self) -> bool:
        """Never: a memory:// store holds nothing before it is opened (nothing to copy)."""
        return False

    async def load(self, session_id: str) -> Checkpoint | None:
        s = self._sessions.get(session_id)
        return s.latest.checkpoint() if s and s.latest else None

    async def save(
        self,
        checkpoint: Checkpoint,
        *,
        stored_messages: int,
        events: Sequence[StoredEvent] = (),
        approval: Approval | None = None,
        claim: str | None = None,
        lease: Lease | None = None,
        requests: Sequence[AppliedRequest] = (),
        request_limit: int = DEFAULT_REQUEST_ID_LIMIT,
        enqueue: Sequence[Enqueue] = (),
    ) -> None:
        enqueue = check_enqueue(self, enqueue)
        link = chain.link_save(checkpoint, stored_messages)  # R91, before any await
        async with self._lock:
            sid = checkpoint.session_id
            s = self._sessions.get(sid) or _Session()
            pending = self._approvals.get(claim) if claim is not None else None
            refused = write_refusal(
                sid,
                lease=lease,
                token=self._token(sid),
                claim=claim,
                claimed_for=pending.session_id if pending else None,
                version=checkpoint.version,
                stored_version=s.latest.header.version if s.latest else 0,
            )
            if refused is not None:
                raise refused
            self._sessions[sid] = s
            if claim is not None:
                del self._approvals[claim]
            if approval is not None:
                self._approvals[approval.approval_id] = approval
            checkpoint.chain = link
            msgs = checkpoint.messages
            if s.latest is not None and stored_messages == s.latest.count == len(s.latest.log):
                log = s.latest.log
                log.extend(msgs[stored_messages:])
            else:
                log = list(msgs)  # a new session, or a rewritten transcript: a new log
            entry = _Entry(_detached(checkpoint, []), log, len(msgs))
            s.latest = entry
            s.history.append(entry)
            while len(s.history) > self.history_limit_for(checkpoint):
                s.history.popleft()
            self._append(s, events)
            if requests:
                s.requests.update((r.id, r) for r in requests)  # an update keeps its place
                while len(s.requests) > max(0, request_limit):
                    del s.requests[next(iter(s.requests))]
            for e in enqueue:
                self._queue(e.session_id, e.request_id, e.data, False, e.enqueued_at)

    async def find_request(self, session_id: str, request_id: str) -> AppliedRequest | None:
        s = self._sessions.get(session_id)
        return s.requests.get(request_id) if s else None

    async def requests(self, session_id: str) -> list[AppliedRequest]:
        s = self._sessions.get(session_id)
        return list(s.requests.values()) if s else []

    def _append(self, s: _Session, events: Sequence[StoredEvent]) -> None:
        """Append, then keep the events of the newest ``event_log_limit`` seqs (those
        above ``last - limit``), as the durable drivers do (:mod:`.kit.planning`); the
        memory store keeps no blocks: its rows are loose events (:mod:`.kit.eventblocks`)."""
        s.events.extend(eventblocks.loose_rows(events))
        floor = s.events[-1].seq - self.event_log_limit if s.events else 0
        while s.events and s.events[0].seq <= floor:
            s.events.popleft()

    async def append_events(
        self,
        session_id: str,
        events: Sequence[StoredEvent],
        *,
        lease: Lease | None = None,
        enqueue: Sequence[Enqueue] = (),
    ) -> None:
        enqueue = check_enqueue(self, enqueue)
        async with self._lock:
            self._fence(lease)
            for e in enqueue:
                self._queue(e.session_id, e.request_id, e.data, False, e.enqueued_at)
            s = self._sessions.get(session_id)
            if s is None:
                if not events or not self.event_log_limit:
                    return  # nothing to keep: no session either
                s = self._sessions[session_id] = _Session()
            self._append(s, events)

    def _token(self, session_id: str) -> int | None:
        held = self._leases.get(session_id)
        return held.token if held else None

    def _fence(self, lease: Lease | None) -> None:
        if lease is not None and self._token(lease.session_id) != lease.token:
            raise lease_lost(lease, self._token(lease.session_id))

    async def _acquire_lease(
        self, session_id: str, owner: str, ttl: float, address: str = ""
    ) -> Lease:
        async with self._lock:
            now = self.clock()
            held = self._leases.get(session_id)
            if held is not None and held.expires_at > now:
                raise lease_busy(session_id, held.owner, held.expires_at)
            token = held.token + 1 if held else 1
            lease = self._leases[session_id] = Lease(session_id, owner, token, now + ttl, address)
            return lease

    async def _renew_lease(self, lease: Lease, ttl: float) -> Lease:
        async with self._lock:
            self._fence(lease)
            renewed = self._leases[lease.session_id] = replace(lease, expires_at=self.clock() + ttl)
            return renewed

    async def _renew_leases(self, leases: list[Lease], ttl: float) -> Renewal:
        async with self._lock:
            expires_at = self.clock() + ttl
            current = {
                lease.session_id: t for lease in leases if (t := self._token(lease.session_id))
            }
            result = renewal_of(leases, current, expires_at)
            for lease in result.renewed:
                self._leases[lease.session_id] = lease
            return result

    async def _list_leases(self, owner: str | None, after: str, limit: int) -> list[Lease]:
        now = self.clock()
        live = (
            lease
            for s, lease in self._leases.items()
            if s > after and lease.expires_at > now and owner in (None, lease.owner)
        )
        return sorted(live, key=lambda lease: lease.session_id)[:limit]

    async def release_lease(self, lease: Lease) -> None:
        async with self._lock:
            held = self._leases.get(lease.session_id)
            if held is not None and held.token == lease.token:
                self._leases[lease.session_id] = replace(held, expires_at=0.0)

    async def release_leases_of(self, owner: str) -> int:
        async with self._lock:
            now = self.clock()
            mine = [
                s
                for s, lease in self._leases.items()
                if lease.owner == owner and lease.expires_at > now
            ]
            for sid in mine:
                self._leases[sid] = replace(self._leases[sid], expires_at=0.0)
            return len(mine)

    async def _read_events(self, session_id: str, after_seq: int, limit: int) -> EventPage:
        s = self._sessions.get(session_id)
        if s is None or not s.events:
            return EventPage([], 0, 0)
        page = [e for e in s.events if e.seq > after_seq][:limit]
        return EventPage(page, s.events[0].seq, s.events[-1].seq)

    async def get_approval(self, approval_id: str) -> Approval | None:
        return self._approvals.get(approval_id)

    async def _list_approvals(
        self, session_id: str | None, after: str, limit: int
    ) -> list[Approval]:
        found = sorted(
            (
                a
                for a in self._approvals.values()
                if a.approval_id > after and (session_id is None or a.session_id == session_id)
            ),
            key=lambda a: a.approval_id,
        )
        return found[:limit]

    async def delete(
        self, session_id: str, *, keep_history: bool = False, keep_queue: bool = False
    ) -> bool:
        async with self._lock:
            if not keep_queue:
                self._queues.pop(session_id, None)
            for aid in [a for a, ap in self._approvals.items() if ap.session_id == session_id]:
                del self._approvals[aid]
            s = self._sessions.get(session_id)
            existed = bool(s and s.latest)
            if s is None:
                return False
            if keep_history and (s.history or s.events):
                s.latest = None
                s.requests = {}
            else:
                del self._sessions[session_id]
            return existed

    async def _list_sessions(
        self, status: Status | None, after: str, limit: int
    ) -> list[SessionSummary]:
        ids = sorted(
            sid
            for sid, s in self._sessions.items()
            if s.latest and sid > after and (status is None or s.latest.header.status is status)
        )
        found = [self._sessions[sid].latest for sid in ids[:limit]]
        return [_summary(e) for e in found if e is not None]

    async def _list_sessions_in(
        self, status: Status | None, low: str, high: str, skip: str, limit: int
    ) -> list[SessionSummary]:
        ids = sorted(
            sid
            for sid, s in self._sessions.items()
            if s.latest
            and low <= sid < high
            and sid != skip
            and (status is None or s.latest.header.status is status)
        )
        found = [self._sessions[sid].latest for sid in ids[:limit]]
        return [_summary(e) for e in found if e is not None]

    async def _session_ids(self, after: str, limit: int) -> list[str]:
        return sorted(sid for sid in self._sessions if sid > after)[:limit]

    async def _import_session(
        self,
        session_id: str,
        latest: Checkpoint | None,
        history: list[Checkpoint],
        approvals: list[Approval],
        events: list[StoredEvent],
        requests: list[AppliedRequest],
    ) -> None:
        s = _Session()
        s.requests = {r.id: r for r in requests}
        log: list[Message] = []
        checkpoints = [*history, *([latest] if latest else [])]
        for cp in checkpoints:  # each extending the one before shares its log
            if not extends(log, cp.messages):
                log = []
            log.extend(cp.messages[len(log) :])
            s.history.append(_Entry(_detached(cp, []), log, len(cp.messages)))
        if latest is not None:
            s.latest = s.history.pop()
        s.events.extend(eventblocks.loose_rows(events))  # already trimmed, as given
        async with self._lock:
            for aid in [a for a, ap in self._approvals.items() if ap.session_id == session_id]:
                del self._approvals[aid]
            self._approvals.update((a.approval_id, a) for a in approvals)
            if s.latest is None and not s.history and not s.events:
                self._sessions.pop(session_id, None)
            else:
                self._sessions[session_id] = s

    async def _enqueue_input(
        self, session_id: str, request_id: str, data: bytes, front: bool, now: float
    ) -> QueuedInput:
        async with self._lock:
            return self._queue(session_id, request_id, data, front, now)

    def _queue(
        self, session_id: str, request_id: str, data: bytes, front: bool, now: float
    ) -> QueuedInput:
        """Queue one input (the caller holds the lock)."""
        queue = self._queues.setdefault(session_id, [])
        for q in queue:
            if q.request_id == request_id:
                return q
        position = 0 if not queue else queue[0].position - 1 if front else queue[-1].position + 1
        entry = QueuedInput(session_id, request_id, position, data, now)
        if front:
            queue.insert(0, entry)
        else:
            queue.append(entry)
        return entry

    async def _replace_queued_input(self, session_id: str, request_id: str, data: bytes) -> bool:
        async with self._lock:
            queue = self._queues.get(session_id, [])
            for i, q in enumerate(queue):
                if q.request_id == request_id:
                    queue[i] = QueuedInput(session_id, request_id, q.position, data, q.enqueued_at)
                    return True
            return False

    async def _queued_inputs(self, session_id: str) -> list[QueuedInput]:
        return list(self._queues.get(session_id, ()))

    async def _remove_queued_input(self, session_id: str, request_id: str) -> bool:
        async with self._lock:
            queue = self._queues.get(session_id, [])
            kept = [q for q in queue if q.request_id != request_id]
            if len(kept) == len(queue):
                return False
            if kept:
                self._queues[session_id] = kept
            else:
                del self._queues[session_id]
            return True

    async def _queued_sessions(self, after: str, limit: int) -> list[str]:
        return sorted(sid for sid in self._queues if sid > after)[:limit]

    async def _create_schedule(self, name: str, data: bytes) -> StoredSchedule | None:
        if name in self._schedules:
            return None
        self._schedules[name] = made = StoredSchedule(name, 1, data)
        return made

    async def _get_schedule(self, name: str) -> StoredSchedule | None:
        return self._schedules.get(name)

    async def _list_schedules(self) -> list[StoredSchedule]:
        return [self._schedules[n] for n in sorted(self._schedules)]

    async def _update_schedule(self, name: str, data: bytes, version: int) -> StoredSchedule | None:
        found = self._schedules.get(name)
        if found is None or found.version != version:
            return None
        self._schedules[name] = written = StoredSchedule(name, version + 1, data)
        return written

    async def _delete_schedule(self, name: str) -> bool:
        return self._schedules.pop(name, None) is not None

    async def _history(self, session_id: str, limit: int | None) -> list[HistoryEntry]:
        s = self._sessions.get(session_id)
        if s is None:
            return []
        entries = list(reversed(s.history))[:limit]
        return [
            HistoryEntry(e.header.step_index, e.header.updated_at, e.header.status, e.checkpoint())
            for e in entries
        ]


#: Every field of a checkpoint, read at once, in the order its constructor takes them
#: (all of them positional): a copy built from them costs a third of ``replace``'s,
#: which walks the fields and builds keyword arguments on every save.
_FIELD_VALUES = operator.attrgetter(*(f.name for f in fields(Checkpoint)))


def _detached(cp: Checkpoint, messages: list[Message]) -> Checkpoint:
    """A copy sharing no mutable part with ``cp`` (messages and specs are immutable)."""
    new = Checkpoint(*_FIELD_VALUES(cp))
    fp = cp.fingerprint
    new.messages = messages
    new.usage = cp.usage.copy()
    new.total_usage = cp.total_usage.copy()
    new.fingerprint = replace(fp, tool_schema_hashes=dict(fp.tool_schema_hashes)) if fp else None
    new.decisions = dict(cp.decisions)
    new.queued_input = list(cp.queued_input)
    new.run_requests = list(cp.run_requests)  # its records are immutable
    # Nested sub-agent states are mutable all the way down (a finished task's transcript
    # too: a task_id call continues it): copied level by level, their messages shared.
    new.subtasks = {k: v.copy() for k, v in cp.subtasks.items()}
    new.tasks = {k: v.copy() for k, v in cp.tasks.items()}
    new.delegated_usage = cp.delegated_usage.copy()
    new.early_results = dict(cp.early_results)  # its messages are immutable
    new.attempts = dict(cp.attempts)
    new.handed_out_at = dict(cp.handed_out_at)
    return new


def _summary(e: _Entry) -> SessionSummary:
    h = e.header
    return SessionSummary(
        h.session_id,
        h.status,
        h.finish_reason,
        h.step_index,
        e.count,
        h.approval_id,
        h.updated_at,
        h.last_drift,
        h.total_usage.copy(),
        h.wake_at,
    )
