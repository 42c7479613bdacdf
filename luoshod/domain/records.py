"""What the store keeps beside checkpoints: events, leases, session summaries, history
and queued inputs."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from .agent import Drift
from .checkpoint import Checkpoint, FinishReason, Status
from .messages import Usage


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event of a session's log: its seq and its encoded form (opaque to the store)."""

    seq: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to write one session, held by one daemon (R51/R52).

    ``token`` is the fencing token: per session it only ever increases (never reused, even
    after a release or a delete), and every save made under the lease carries it, so a
    holder that lost the lease (paused, then taken over) cannot write. ``expires_at`` is in
    seconds since the epoch, by the store's clock. ``address`` is where the holder answers
    for the session (R89: another daemon forwards a request for it there), "" when the
    holder published none.
    """

    session_id: str
    owner: str
    token: int
    expires_at: float
    address: str = ""


@dataclass(frozen=True, slots=True)
class EventPage:
    """What ``Store.read_events`` returns. ``first_kept`` and ``last`` are 0 when the log
    is empty."""

    events: list[StoredEvent]
    first_kept: int
    last: int


@dataclass(frozen=True, slots=True)
class SessionSummary:
    session_id: str
    status: Status
    finish_reason: FinishReason
    step_index: int
    message_count: int
    approval_id: str
    updated_at: float
    last_drift: Drift | None = None
    #: Usage over the session's whole life (the checkpoint's ``total_usage``, R78).
    total_usage: Usage = field(default_factory=Usage)
    #: R86: when a sleeping session wakes; ``None`` unless it sleeps.
    wake_at: float | None = None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    step: int
    saved_at: float
    status: Status
    checkpoint: Checkpoint


@dataclass(frozen=True, slots=True)
class QueuedInput:
    """An input waiting for its session to be free (R68, R69): queued under the request id
    that will apply it (R74), at ``position`` (the store's order, smallest first), with the
    request as the caller sent it (``data``: opaque bytes, the service's encoding)."""

    session_id: str
    request_id: str
    position: int
    data: bytes
    enqueued_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "request_id": self.request_id,
            "position": self.position,
            "data": base64.b64encode(self.data).decode(),
            "enqueued_at": self.enqueued_at,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> QueuedInput:
        return cls(
            d["session_id"],
            d["request_id"],
            d["position"],
            base64.b64decode(d["data"]),
            d["enqueued_at"],
        )


@dataclass(frozen=True, slots=True)
class StoredSchedule:
    """A schedule as a store keeps it (R87): its unique ``name``, a ``version`` raised by
    each write (1 when created), and its definition and firing state (``data``: opaque
    bytes, the daemon's encoding). Every change is a compare-and-set on ``version``
    (``Store.update_schedule``), so of daemons racing to claim one fire exactly one wins."""

    name: str
    version: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Enqueue:
    """An input a write queues in the same transaction (``Store.save`` and
    ``Store.append_events``, ``enqueue=``): last in the queue of ``session_id`` (a session,
    or a key of the daemon's own such as the webhooks' outbox), under ``request_id``,
    idempotent by it as ``Store.enqueue_input`` is. A notification written this way is
    durable exactly when the event that causes it is: no crash falls between the two."""

    session_id: str
    request_id: str
    data: bytes
    enqueued_at: float
