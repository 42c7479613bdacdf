"""Request ids as idempotency keys within a session (docs/reference/rules.md R74).

A request that carries a ``request_id`` is recorded when it is prepared: its record goes
to the store with the save that first writes what it applied (its input, its approval
claim, its resumed steps; ``Store.save(requests=...)``): no save applies a request
without recording it, and none records it without applying it. The store keeps the
records beside the checkpoint, the newest ``limit`` of a session (default
:data:`DEFAULT_REQUEST_ID_LIMIT`), and the engine looks an id up there
(``Store.find_request``), so a save costs O(new records). The checkpoint keeps only the
current run's records that have not ended (``run_requests``): the save that ends the run
writes them again, ended.

A request whose id is recorded appends nothing and starts nothing new. Its body must be
the one recorded (the same :func:`digest`), else ``REQUEST_ID_REUSED``. While the run it
started or resumed has not ended, the request resumes that run; once it ended, the
request is a :class:`Replay` of that run's events, ending as it ended.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ..domain import (
    DEFAULT_REQUEST_ID_LIMIT,
    AgentSpec,
    AppliedRequest,
    Checkpoint,
    FinishReason,
    Message,
    Role,
    RunEnd,
)
from ..errors import InvalidArgument
from ..store import Store
from . import events as ev
from . import output
from .events import Event

__all__ = [
    "DEFAULT_REQUEST_ID_LIMIT",
    "Replay",
    "check_same_body",
    "digest",
    "ended",
    "find",
    "record",
    "replay",
]


def digest(kind: str, **body: Any) -> str:
    """A short hash of a request's body: the RPC (``kind``) and what it asks, as canonical
    JSON. Messages and agents are hashed by their domain form, so the same request sent
    by any client (any language, any field order) has the same digest."""

    def plain(v: Any) -> Any:
        if isinstance(v, Message | AgentSpec):
            return v.to_dict()
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        return v

    text = json.dumps(
        {"kind": kind, **{k: plain(v) for k, v in body.items()}},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


async def find(store: Store, cp: Checkpoint | None, request_id: str) -> AppliedRequest | None:
    """The record of ``request_id`` applied to ``cp``'s session (none without a
    checkpoint: deleting a session deletes its records)."""
    if cp is None or not request_id:
        return None
    return await store.find_request(cp.session_id, request_id)


def check_same_body(cp: Checkpoint, applied: AppliedRequest, body_digest: str) -> None:
    if applied.digest != body_digest:
        raise InvalidArgument(
            f"request id {applied.id!r} was already used in session {cp.session_id!r} "
            "for a different request; a retry must send the same request, a new request a new id",
            reason="REQUEST_ID_REUSED",
            session_id=cp.session_id,
            request_id=applied.id,
        )


def record(cp: Checkpoint, request_id: str, body_digest: str, limit: int) -> list[AppliedRequest]:
    """Record ``request_id`` as applied by the run about to start (its ``run.start`` is
    ``cp.last_seq + 1``): the records for the run's next save to write (none without an
    id, or when no record is kept), the new one among the run's open ones."""
    if not request_id or limit <= 0:
        return []
    new = AppliedRequest(request_id, body_digest, cp.run_id, cp.last_seq + 1)
    cp.run_requests = [
        *(r for r in cp.run_requests if r.run_id == cp.run_id and r.id != request_id),
        new,
    ]
    return [new]


def ended(cp: Checkpoint, end: RunEnd) -> list[AppliedRequest]:
    """The current run ended (its ``run.done`` is ``end``): so did every recorded request
    of it that had not ended yet. Returns those records, ended, for the save that ends
    the run to write; the checkpoint keeps none open."""
    done = [
        AppliedRequest(r.id, r.digest, r.run_id, r.first_seq, end)
        for r in cp.run_requests
        if r.end is None and r.run_id == cp.run_id
    ]
    cp.run_requests = []
    return done


@dataclass(frozen=True, slots=True)
class Replay:
    """What a retry of a request whose run ended answers: the events of the session's
    log with seq from ``first_seq`` through ``end.seq`` that the log still keeps, then
    ``end`` (the run's ``run.done``) if the log no longer keeps it."""

    session_id: str
    request_id: str
    first_seq: int
    end: Event


def replay(cp: Checkpoint, applied: AppliedRequest) -> Replay:
    end = applied.end
    assert end is not None
    run_messages = cp.messages[end.run_start : end.message_count]
    final_text = next((m.content for m in reversed(run_messages) if m.role is Role.ASSISTANT), "")
    structured: dict[str, object] = {}
    schema = cp.agent.output_schema_json if cp.agent is not None else ""
    if schema and end.finish_reason in (FinishReason.STOP, FinishReason.OUTPUT_INVALID):
        verdict = output.judge(schema, final_text)  # R83: as the run judged it
        structured = {"output_json": verdict.output_json, "output_errors": list(verdict.errors)}
    done = Event(
        cp.session_id,
        applied.run_id,
        end.seq,
        end.time,
        ev.RUN_DONE,
        {
            "finish_reason": end.finish_reason,
            "status": end.status,
            "final_text": final_text,
            "step_index": end.step_index,
            "usage": end.usage.copy(),
            "approval_id": end.approval_id,
            "message_count": end.message_count,
            **structured,
        },
    )
    return Replay(cp.session_id, applied.id, applied.first_seq, done)
