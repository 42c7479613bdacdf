"""What every driver's :meth:`~.base.Store.import_session` shares: the checks of what is
imported, what of it is kept, and which checkpoints share a message log."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ...domain import AppliedRequest, Approval, Checkpoint, HistoryEntry, Message, StoredEvent
from . import codec, tasklog
from .capabilities import Capability

T = TypeVar("T")


class Declares(Protocol):
    """A store as :func:`check_import` sees it: what it declares it keeps."""

    @property
    def capabilities(self) -> frozenset[Capability]: ...


def check_import(
    store: Declares,
    session_id: str,
    latest: Checkpoint | None,
    history: Sequence[HistoryEntry],
    approvals: Sequence[Approval] = (),
    events: Sequence[StoredEvent] = (),
    requests: Sequence[AppliedRequest] = (),
) -> None:
    """The checks of :meth:`Store.import_session` (``ValueError``, and
    ``NotImplementedError`` for what ``store`` does not declare), for every driver."""
    if approvals and Capability.APPROVALS not in store.capabilities:
        raise NotImplementedError(f"{type(store).__name__} keeps no approvals")
    if events and Capability.EVENT_LOG not in store.capabilities:
        raise NotImplementedError(f"{type(store).__name__} keeps no event log")
    if approvals and latest is None:
        raise ValueError(f"pending approvals of {session_id!r} imported without a checkpoint")
    if requests and latest is None:
        raise ValueError(f"request records of {session_id!r} imported without a checkpoint")
    request_ids = [r.id for r in requests]
    if len(set(request_ids)) != len(request_ids):
        raise ValueError(f"a request record of {session_id!r} is imported twice")
    ids = [a.approval_id for a in approvals]
    if len(set(ids)) != len(ids):
        raise ValueError(f"an approval of {session_id!r} is imported twice: {ids}")
    for a in approvals:
        if a.session_id != session_id:
            raise ValueError(f"approval of {a.session_id!r} imported into {session_id!r}")
    previous = 0
    for e in events:
        if e.seq <= previous:
            raise ValueError(
                f"event seqs of {session_id!r} must be positive and increasing: "
                f"{e.seq} after {previous}"
            )
        previous = e.seq
    for cp in [h.checkpoint for h in history] + ([latest] if latest else []):
        if cp.session_id != session_id:
            raise ValueError(f"checkpoint of {cp.session_id!r} imported into {session_id!r}")
    for h in history:
        cp = h.checkpoint
        if (h.step, h.status, h.saved_at) != (cp.step_index, cp.status, cp.updated_at):
            raise ValueError(
                f"history entry of {session_id!r} differs from its checkpoint: "
                f"step/status/saved_at {(h.step, h.status.value, h.saved_at)} vs "
                f"{(cp.step_index, cp.status.value, cp.updated_at)}"
            )


def newest(items: Sequence[T], limit: int) -> list[T]:
    """The newest ``limit`` of ``items`` (oldest first), none when ``limit`` is 0."""
    return list(items[max(0, len(items) - limit) :]) if limit else []


@dataclass(frozen=True, slots=True)
class LogStep:
    """How one imported checkpoint's log is written: ``bodies`` (encoded records)
    appended at ``start`` of the previous checkpoint's log, or of a new log (``new_log``,
    ``start`` 0, every record); its header then reads the first ``count`` records."""

    new_log: bool
    start: int
    bodies: list[bytes]
    count: int


def log_steps(checkpoints: Sequence[Checkpoint]) -> list[LogStep]:
    """The logs of checkpoints written one after the other (an import's history, oldest
    first, then its latest): one whose transcripts (the lead's and its tasks') extend the
    previous one's shares its log, as saves do; any other starts a new log."""
    steps = []
    previous: Checkpoint | None = None
    start = 0
    for cp in checkpoints:
        bodies = tasklog.bodies_after(previous, cp)
        if bodies is not None:
            count = start + len(bodies)
            steps.append(LogStep(False, start, bodies, count))
        else:
            bodies = tasklog.all_bodies(cp, codec.agent_text(cp))
            count = len(bodies)
            steps.append(LogStep(True, 0, bodies, count))
        previous, start = cp, count
    return steps


def extends(prefix: Sequence[Message], messages: Sequence[Message]) -> bool:
    """Whether ``messages`` starts with ``prefix`` (then they can share a message log)."""
    n = len(prefix)
    return len(messages) >= n and list(messages[:n]) == list(prefix)
