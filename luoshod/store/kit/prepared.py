"""A save or an event append as the durable drivers queue it for group commit: encoded on
the caller's thread or task, before it is queued, so the database side only writes. A
message body is the binary form of :mod:`.codec`; an approval is compact JSON, and so is
a header, or its compact form (:func:`.codec.compact_header`, bytes) for a driver that
declares ``compact_headers``: compressed here too, not on the database thread."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...domain import (
    DEFAULT_REQUEST_ID_LIMIT,
    AppliedRequest,
    Approval,
    Checkpoint,
    Enqueue,
    Lease,
    StoredEvent,
)
from ...errors import ApprovalNotFound, LeaseLost
from . import chain, codec, tasklog
from .base import Store, check_enqueue
from .leases import lease_lost


# Not frozen: a frozen dataclass sets each of its 19 fields through
# ``object.__setattr__``, which cost more than a microsecond a save. Nothing changes one
# once built but the plan's ``outcome``.
@dataclass(slots=True)
class PreparedSave:
    """A save, encoded: the header and the bodies of the log records past the
    ``stored_log`` the store holds (``messages[stored_messages:]``, and each task's new
    messages: :mod:`.tasklog`); with
    its events, the approval to store (and its JSON), the approval to claim and the lease
    it is made under, and the applied request records it upserts (``requests``, each
    encoded as JSON in ``request_bodies``), keeping the session's newest
    ``request_limit``, and the inputs it queues (``enqueue``).

    ``agent_text`` is its agent record's text (:func:`.codec.agent_text`); ``agents``
    how many agent records the log holds once it is appended to (``stored_agent`` and
    the one ``new_bodies`` may start with); ``outcome`` is set by the plan
    (:func:`.planning.plan_batch`): the agent records the log holds once committed."""

    checkpoint: Checkpoint
    stored_messages: int
    history_limit: int
    header: str | bytes
    new_bodies: list[bytes]
    events: tuple[StoredEvent, ...] = ()
    event_log_limit: int = 0
    approval: Approval | None = None
    approval_body: str = ""
    claim: str | None = None
    lease: Lease | None = None
    requests: tuple[AppliedRequest, ...] = ()
    request_bodies: tuple[str, ...] = ()
    request_limit: int = DEFAULT_REQUEST_ID_LIMIT
    stored_log: int = 0
    enqueue: tuple[Enqueue, ...] = ()
    agent_text: str = ""
    agents: int = 0
    outcome: list[int] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return self.checkpoint.session_id

    @property
    def log_count(self) -> int:
        """How many records the log holds once ``new_bodies`` are appended to the
        ``stored_log`` it holds (a new log's: ``tasklog.all_bodies``)."""
        return self.stored_log + len(self.new_bodies)


@dataclass(slots=True, frozen=True)
class PreparedEvents:
    """Events to append to a session's log, queued with the saves (``append_events``)."""

    session_id: str
    events: tuple[StoredEvent, ...]
    event_log_limit: int
    lease: Lease | None = None
    enqueue: tuple[Enqueue, ...] = ()


Prepared = PreparedSave | PreparedEvents


def prepare(
    checkpoint: Checkpoint,
    stored_messages: int,
    history_limit: int,
    *,
    events: Sequence[StoredEvent] = (),
    event_log_limit: int = 0,
    approval: Approval | None = None,
    claim: str | None = None,
    lease: Lease | None = None,
    requests: Sequence[AppliedRequest] = (),
    request_limit: int = DEFAULT_REQUEST_ID_LIMIT,
    enqueue: Sequence[Enqueue] = (),
    compact_header: bool = False,
    header: dict[str, Any] | None = None,
) -> PreparedSave:
    """``checkpoint``'s save, encoded; its header as JSON text, or in its compact form
    (bytes) when ``compact_header``. ``header``: its ``header_dict(with_agent=False,
    with_tasks=False)`` when the caller has it already (changed here)."""
    text = codec.agent_text(checkpoint)
    bodies = tasklog.new_bodies(checkpoint, stored_messages, text)
    agents = tasklog.agents_in(bodies) + (checkpoint.stored_agent[0] if stored_messages else 0)
    return PreparedSave(
        checkpoint,
        stored_messages,
        history_limit,
        codec.encode_compact_header(checkpoint, header)
        if compact_header
        else codec.encode_header(checkpoint, header),
        bodies,
        tuple(events),
        event_log_limit,
        approval,
        codec.encode_json(approval.to_dict()) if approval is not None else "",
        claim,
        lease,
        tuple(requests),
        tuple(codec.encode_json(r.to_dict()) for r in requests),
        max(0, request_limit),
        tasklog.stored_count(checkpoint, stored_messages),
        tuple(enqueue),
        text,
        agents,
    )


def refusal(
    p: Prepared,
    *,
    token: int | None,
    pending: dict[str, str],
    stored_version: int,
) -> LeaseLost | ApprovalNotFound | None:
    """Why a queued write is refused (:func:`write_refusal`), its claim checked against
    the ``pending`` approvals (id → session). ``None``: it goes through."""
    if isinstance(p, PreparedEvents):
        return write_refusal(p.session_id, lease=p.lease, token=token)
    return write_refusal(
        p.session_id,
        lease=p.lease,
        token=token,
        claim=p.claim,
        claimed_for=pending.get(p.claim) if p.claim is not None else None,
        version=p.checkpoint.version,
        stored_version=stored_version,
    )


def write_refusal(
    session_id: str,
    *,
    lease: Lease | None,
    token: int | None,
    claim: str | None = None,
    claimed_for: str | None = None,
    version: int | None = None,
    stored_version: int = 0,
) -> LeaseLost | ApprovalNotFound | None:
    """Why a write of ``session_id`` is refused, checked in the contract's order
    (``Store.save``): its ``lease`` against the session's current fencing ``token``, then
    its ``claim`` (the session the approval is pending for: ``claimed_for``), then its
    ``version`` (a save's) against the ``stored_version``. ``None``: it goes through."""
    if lease is not None and token != lease.token:
        return lease_lost(lease, token)
    if claim is not None and claimed_for != session_id:
        return ApprovalNotFound(
            f"approval {claim!r} is not pending", approval_id=claim, session_id=session_id
        )
    if version is not None and version != stored_version + 1:
        return LeaseLost(
            f"session {session_id!r} was saved by another writer",
            session_id=session_id,
            stored_version=stored_version,
            version=version,
        )
    return None


class _Queue(Protocol):
    async def submit(self, payload: Prepared) -> None: ...


class QueuedWrites(Store):
    """``save`` and ``append_events`` of a driver that hands :class:`Prepared` writes to
    its group commit (``self._saves``): encoded here, on the caller's side, then queued
    and acknowledged once committed. :meth:`_before_write` may refuse a write first (a
    store that is not open, an id the driver cannot store)."""

    _saves: _Queue

    def _before_write(self, what: str, payload: Prepared) -> None:
        """Raise (``StoreError``, ``InvalidArgument``) when ``payload`` cannot be queued
        now; by default every write can."""

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
        previous = checkpoint.chain
        # The header as a dict once for both the chain's link (without ``chain``) and the
        # stored header (with the new link, last, as ``header_dict`` puts it).
        header = checkpoint.header_dict(with_agent=False, with_tasks=False)
        header.pop("chain", None)
        checkpoint.chain = chain.link_save(checkpoint, stored_messages, header)  # R91
        header["chain"] = checkpoint.chain
        try:
            prepared = prepare(
                checkpoint,
                stored_messages,
                self.history_limit_for(checkpoint),
                events=events,
                event_log_limit=self.event_log_limit,
                approval=approval,
                claim=claim,
                lease=lease,
                requests=requests,
                request_limit=request_limit,
                enqueue=check_enqueue(self, enqueue),
                compact_header=self.compact_headers,
                header=header,
            )
            self._before_write("save", prepared)
            await self._saves.submit(prepared)
        except BaseException:
            checkpoint.chain = previous  # not saved: the next try links to the same save
            raise
        # What the log holds of the agent now, for the next save (O(new records)): as
        # the plan found it (a driver writing its own plan: as appended).
        agents = prepared.outcome[-1] if prepared.outcome else prepared.agents
        checkpoint.stored_agent = (agents, prepared.agent_text)

    async def append_events(
        self,
        session_id: str,
        events: Sequence[StoredEvent],
        *,
        lease: Lease | None = None,
        enqueue: Sequence[Enqueue] = (),
    ) -> None:
        queued = check_enqueue(self, enqueue)
        if not events and not queued:
            return
        prepared = PreparedEvents(session_id, tuple(events), self.event_log_limit, lease, queued)
        self._before_write("append_events", prepared)
        # Through the group commit: one transaction with the saves.
        await self._saves.submit(prepared)
