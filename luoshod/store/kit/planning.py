"""The plan of a batch of queued writes: which are refused, and what the others write.

Every durable driver commits a batch of saves and appends (:mod:`.prepared`, queued by
:mod:`.groupcommit`) in one transaction the same way: it reads, inside that transaction,
what the batch is checked against (:func:`reads` says which keys), hands it to
:func:`plan_batch` as :class:`Stored`, and writes the :class:`Plan` it gets back. The plan
is pure: no I/O, so the rules live here once and each driver only translates rows.

The rules, in queue order, each write checked against what is stored and the writes of the
batch before it:

- refused (``item.error`` set, nothing of it written): a write under a lease whose token
  is not the session's current one (``LeaseLost``), then a save claiming an approval that
  is not pending for its session (``ApprovalNotFound``), then a save whose version is not
  the stored one + 1 (``LeaseLost``) — :func:`.prepared.refusal`;
- a save whose ``stored_log`` (``stored_messages`` and its tasks' stored messages,
  :mod:`.tasklog`) is what the session's log holds appends the new records to that log;
  any other (a new session, one recreated after a delete, a rewritten transcript) starts
  a new log with all its records;
- each session's history is pruned to the limit of its last save;
- a claimed approval is removed, a save's approval stored;
- an event is appended when its seq is above the log's last (else it is already logged);
  a log keeps the events of its newest ``event_log_limit`` seqs (those above ``last -
  limit``: its newest ``limit`` events, seqs being numbered without gaps), and each range
  of :data:`.eventblocks.BLOCK` seqs the batch completes inside what it keeps is sealed
  into a block (:mod:`.eventblocks`);
- a save's applied request records are upserted by id: a stored one keeps its number, a
  new one gets the session's next (numbers are dense, 1, 2, … in the order records were
  first written), and the session keeps the newest ``request_limit``: the records
  numbered up to ``last - request_limit`` go, found from the start of the number index,
  O(records dropped);
- the inputs a write queues (``enqueue``) are queued in batch order, each as
  ``Store.enqueue_input`` would (the driver's own enqueue, in the same transaction).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ...domain import AppliedRequest, Enqueue, StoredEvent
from . import eventblocks, tasklog
from .groupcommit import Queued
from .prepared import Prepared, PreparedEvents, PreparedSave, refusal


class Reads(NamedTuple):
    """The keys a batch is checked against (each sorted, without repeats)."""

    #: Sessions written under a lease: their fencing tokens.
    fenced: list[str]
    #: Sessions saved: their latest checkpoint (version, message count, log).
    saved: list[str]
    #: Approvals claimed: the session each is pending for, if it is.
    claims: list[str]
    #: Sessions given events: their event log (events kept, last seq).
    logged: list[str]
    #: Sessions given request records: the highest record number they keep.
    requested: list[str]
    #: (session, request id) of the records upserted: their number, if stored.
    request_keys: list[tuple[str, str]]


def reads(batch: Sequence[Queued[Prepared]]) -> Reads:
    """What a driver reads, in its write transaction, before :func:`plan_batch`."""
    writes = [item.payload for item in batch]
    saves = [p for p in writes if isinstance(p, PreparedSave)]
    return Reads(
        sorted({p.session_id for p in writes if p.lease is not None}),
        sorted({p.session_id for p in saves}),
        sorted({p.claim for p in saves if p.claim is not None}),
        sorted({p.session_id for p in writes if p.events}),
        sorted({p.session_id for p in saves if p.requests}),
        sorted({(p.session_id, r.id) for p in saves for r in p.requests}),
    )


@dataclass(frozen=True, slots=True)
class Head:
    """What a session's latest stored checkpoint says of its log."""

    version: int
    #: How many records of its log it reads.
    count: int


@dataclass(slots=True)
class Stored:
    """What the store holds for the keys of :func:`reads`; a key it has nothing of is
    left out."""

    #: Session → its current fencing token.
    tokens: dict[str, int] = field(default_factory=dict)
    #: Session → its latest checkpoint.
    heads: dict[str, Head] = field(default_factory=dict)
    #: Approval → the session it is pending for.
    pending: dict[str, str] = field(default_factory=dict)
    #: Session → (events its log keeps, the last seq; 0 for none).
    event_logs: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Session → the highest number of its request records (absent: it keeps none).
    request_last: dict[str, int] = field(default_factory=dict)
    #: (session, request id) → the number of that stored record.
    request_numbers: dict[tuple[str, str], int] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class PlannedRequest:
    """An applied request record to write (insert, or update in place when ``stored``)
    under its number ``n``: ``body`` is its JSON."""

    session_id: str
    request_id: str
    n: int
    body: str
    stored: bool


@dataclass(slots=True, frozen=True)
class PlannedSave:
    """A save that goes through: write ``bodies`` at ``start`` of the session's log (a new
    log when ``new_log``, else the one its latest checkpoint reads), then its header,
    which reads the log's first ``count`` records."""

    save: PreparedSave
    new_log: bool
    start: int
    bodies: list[bytes]
    count: int


@dataclass(slots=True, frozen=True)
class PlannedEvents:
    """What a session's event log becomes: ``new`` appended (as loose rows,
    :func:`.eventblocks.loose_rows`), then its rows with keys up to ``floor`` deleted (a
    block holding ``floor`` and newer seqs stays whole), then each range of ``seal``
    sealed (:func:`.eventblocks.seal`). ``kept`` is how many events it keeps (0: the log
    is gone, and ``existed`` says whether it had a row to remove); exact for a log
    numbered without gaps, else an upper bound (an imported log may have gaps: its seq
    floor then keeps fewer than ``limit`` events)."""

    session_id: str
    new: list[StoredEvent]
    floor: int
    kept: int
    existed: bool
    seal: list[tuple[int, int]] = field(default_factory=list)


@dataclass(slots=True)
class Plan:
    #: The saves that go through, in queue order.
    saves: list[PlannedSave] = field(default_factory=list)
    #: Sessions that start a new log over an older one (which may fall out of use).
    rewritten: set[str] = field(default_factory=set)
    #: Session → the history limit of its last save (its history is pruned to it).
    history_limits: dict[str, int] = field(default_factory=dict)
    #: Approval → (its session, its JSON), or (its session, ``None``): claimed, removed.
    approvals: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    #: The event logs that change.
    events: list[PlannedEvents] = field(default_factory=list)
    #: The request records to write, one per (session, id), in the order they are
    #: numbered; written before the drops of ``request_floors``.
    requests: list[PlannedRequest] = field(default_factory=list)
    #: Session → the records numbered up to it are dropped (only when > 0).
    request_floors: dict[str, int] = field(default_factory=dict)
    #: The inputs to queue, in batch order (each idempotent by its request id).
    enqueue: list[Enqueue] = field(default_factory=list)


def plan_batch(batch: Sequence[Queued[Prepared]], stored: Stored) -> Plan:
    """The plan of ``batch`` against ``stored`` (see the module's rules); sets
    ``item.error`` on each refused write (``None`` on the others)."""
    plan = Plan()
    heads = dict(stored.heads)
    pending = dict(stored.pending)
    logs = _EventLogs(stored.event_logs)
    records = _Requests(stored)
    for item in batch:
        p = item.payload
        head = heads.get(p.session_id)
        item.error = refusal(
            p,
            token=stored.tokens.get(p.session_id),
            pending=pending,
            stored_version=head.version if head else 0,
        )
        if item.error is not None:
            continue
        plan.enqueue += p.enqueue
        if isinstance(p, PreparedEvents):
            logs.add(p.session_id, p.events, p.event_log_limit)
            continue
        cp, sid = p.checkpoint, p.session_id
        if (
            head is not None
            and p.stored_log == head.count
            and p.stored_messages <= len(cp.messages)
        ):
            count = p.log_count
            plan.saves.append(PlannedSave(p, False, p.stored_log, p.new_bodies, count))
            p.outcome[:] = [p.agents]
        else:
            # With nothing stored its bodies are already all of them.
            bodies = p.new_bodies if not p.stored_log else tasklog.all_bodies(cp, p.agent_text)
            count = len(bodies)
            plan.saves.append(PlannedSave(p, True, 0, bodies, count))
            p.outcome[:] = [tasklog.agents_in(bodies)]
            if head is not None:
                plan.rewritten.add(sid)
        heads[sid] = Head(cp.version, count)
        plan.history_limits[sid] = p.history_limit
        if p.claim is not None:
            del pending[p.claim]
            plan.approvals[p.claim] = (sid, None)
        if p.approval is not None:
            pending[p.approval.approval_id] = sid
            plan.approvals[p.approval.approval_id] = (sid, p.approval_body)
        if p.events:
            logs.add(sid, p.events, p.event_log_limit)
        if p.requests:
            records.add(sid, p.requests, p.request_bodies, p.request_limit)
    plan.events = logs.planned()
    plan.requests = list(records.planned.values())
    plan.request_floors = records.floors
    return plan


class _Requests:
    """The request records of a batch as it goes, numbered against what is stored."""

    def __init__(self, stored: Stored) -> None:
        self.last = dict(stored.request_last)
        self.numbers = dict(stored.request_numbers)
        self.stored = stored.request_numbers
        self.planned: dict[tuple[str, str], PlannedRequest] = {}
        self.floors: dict[str, int] = {}

    def add(
        self, sid: str, records: Sequence[AppliedRequest], bodies: Sequence[str], limit: int
    ) -> None:
        for r, body in zip(records, bodies):
            key = (sid, r.id)
            n = self.numbers.get(key)
            if n is None:
                n = self.numbers[key] = self.last[sid] = self.last.get(sid, 0) + 1
            self.planned.pop(key, None)  # the last write of a record wins, in its order
            self.planned[key] = PlannedRequest(sid, key[1], n, body, key in self.stored)
        floor = self.last.get(sid, 0) - limit
        if floor > 0:
            self.floors[sid] = max(floor, self.floors.get(sid, 0))


class _EventLogs:
    """The event logs of a batch as it goes: each checked against its last seq."""

    def __init__(self, stored: dict[str, tuple[int, int]]) -> None:
        self.stored = stored
        self.last = {sid: last for sid, (_, last) in stored.items()}
        self.new: dict[str, list[StoredEvent]] = {}
        self.limits: dict[str, int] = {}

    def add(self, sid: str, events: Sequence[StoredEvent], limit: int) -> None:
        last = self.last.get(sid, 0)
        new = self.new.setdefault(sid, [])
        for e in events:
            if e.seq > last:  # else already logged
                new.append(e)
                last = e.seq
        self.last[sid] = last
        self.limits[sid] = limit

    def planned(self) -> list[PlannedEvents]:
        planned = []
        for sid, new in self.new.items():
            limit = self.limits[sid]
            stored_kept = self.stored.get(sid, (0, 0))[0]
            last = self.last[sid]
            # The log keeps the seqs above the floor: its newest ``limit`` when numbered
            # without gaps (a log that keeps nothing has no last: any seq went in).
            floor = max(0, last - limit) if stored_kept or new else 0
            new = [e for e in new if e.seq > floor]  # the rest go at once
            kept = min(limit, stored_kept + len(new))
            seal = eventblocks.seal_ranges((e.seq for e in new), floor)
            planned.append(
                PlannedEvents(
                    sid, eventblocks.loose_rows(new), floor, kept, sid in self.stored, seal
                )
            )
        return planned
