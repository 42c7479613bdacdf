"""Checkpoints, approvals and events to save, and a writer that saves a session the way
the engine does."""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence

from luoshod.domain import (
    AgentSpec,
    AppliedRequest,
    Approval,
    Checkpoint,
    Drift,
    DriftPolicy,
    Enqueue,
    Fingerprint,
    FinishReason,
    Lease,
    Message,
    Role,
    Status,
    StoredEvent,
    ToolCall,
    ToolSpec,
    Usage,
)
from luoshod.store import SaveOptions, Store


def message(i: int, tag: str = "m", *, size: int = 0) -> Message:
    """The ``i``-th message of a plain transcript: user and assistant turns alternate."""
    role = Role.USER if i % 2 == 0 else Role.ASSISTANT
    return Message(role, f"{tag}-{i} " + "x" * size)


def rich_checkpoint(session_id: str = "rich", *, version: int = 1) -> Checkpoint:
    """A checkpoint with every field away from its default, to catch a dropped field."""
    call = ToolCall("call-1", "lookup", '{"q": "naïve café",  "n": 2}')
    return Checkpoint(
        session_id=session_id,
        messages=[
            Message(Role.SYSTEM, "be brief"),
            Message(Role.USER, "héllo 👋\nline two"),
            Message(Role.ASSISTANT, "", (call, ToolCall("call-2", "fail"))),
            Message(Role.TOOL, '{"hits": [1, 2]}', tool_call_id="call-1", tool_name="lookup"),
            Message(Role.TOOL, "boom", tool_call_id="call-2", tool_name="fail", is_error=True),
        ],
        step_index=3,
        usage=Usage(11, 22, 33, 2, 0.125),
        total_usage=Usage(111, 222, 333, 7, 1.5),
        business_state_json='{"cart": ["a",  "b"], "total": 1.10}',
        status=Status.AWAITING_APPROVAL,
        approval_id="appr-9",
        finish_reason=FinishReason.AWAITING_APPROVAL,
        fingerprint=Fingerprint("fp", "model-x", {"lookup": "h1", "fail": "h2"}, "ih"),
        agent=AgentSpec(
            model="model-x",
            instructions="help",
            tools=(ToolSpec("lookup", "finds", '{"type": "object"}', True), ToolSpec("fail")),
            max_steps=7,
            tool_concurrency=3,
            on_agent_drift=DriftPolicy.ERROR,
            model_settings_json='{"temperature": 0}',
            tool_timeout_ms=2500,
        ),
        run_id="run-42",
        run_start=1,
        updated_at=1_700_000_000.25,
        version=version,
        last_seq=17,
        run_requests=[AppliedRequest("req-open-é", "0" * 32, "run-42", 12)],
        last_drift=Drift("model-w", "model-x", ("lookup",), ("gone",), ("fail",), True),
    )


def approval(approval_id: str, session_id: str, *, step: int = 1) -> Approval:
    """A pending approval with every field away from its default."""
    call = ToolCall(f"call-{approval_id}", "transfer", '{"amount": 12.5, "to": "bob"}')
    return Approval(
        approval_id,
        session_id,
        call,
        (ToolCall("later-1", "lookup", '{"q": "ünïcode"}'), ToolCall("later-2", "fail")),
        step,
        Fingerprint("fp", "model-x", {"transfer": "h1", "lookup": "h2"}, "ih"),
        created_at=1_700_000_000.5,
        expires_at=1_700_003_600.0,
        question="Which account? «ünïcode»",  # R88: a question's text, stored with it
    )


def event_range(first: int, last: int, tag: str = "e") -> list[StoredEvent]:
    """Events ``first..last`` (inclusive), each with distinct bytes (a NUL, non-ASCII)."""
    return [
        StoredEvent(seq, f"{tag}-{seq}\0é".encode() + bytes([seq % 256]))
        for seq in range(first, last + 1)
    ]


class SessionWriter:
    """Saves one session as the engine does: the next version, only the new messages.

    ``snapshots`` holds a deep copy of every checkpoint saved, oldest first, which is what
    the history must give back. ``history_limit`` is the session's own (``None``: the
    store's).
    """

    def __init__(
        self,
        store: Store,
        session_id: str,
        *,
        tag: str | None = None,
        history_limit: int | None = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.tag = tag or session_id
        self.history_limit = history_limit
        self.messages: list[Message] = []
        self.version = 0
        self.stored = 0
        self.snapshots: list[Checkpoint] = []

    async def save(
        self,
        *,
        add: int = 1,
        step: int | None = None,
        status: Status = Status.IN_PROGRESS,
        size: int = 0,
        events: Sequence[StoredEvent] = (),
        approval: Approval | None = None,
        claim: str | None = None,
        lease: Lease | None = None,
        enqueue: Sequence[Enqueue] = (),
    ) -> Checkpoint:
        start = len(self.messages)
        self.messages.extend(message(start + k, self.tag, size=size) for k in range(add))
        n = len(self.snapshots)
        cp = Checkpoint(
            self.session_id,
            list(self.messages),
            step_index=n if step is None else step,
            status=status,
            approval_id=(
                approval.approval_id
                if approval
                else "appr"
                if status is Status.AWAITING_APPROVAL
                else ""
            ),
            updated_at=1000.0 + n,
            version=self.version + 1,
            history_limit=self.history_limit,
        )
        extra: SaveOptions = {}
        if events:
            extra["events"] = events
        if approval is not None:
            extra["approval"] = approval
        if claim is not None:
            extra["claim"] = claim
        if lease is not None:
            extra["lease"] = lease
        if enqueue:
            extra["enqueue"] = enqueue
        await self.store.save(cp, stored_messages=self.stored, **extra)
        self.version += 1
        self.stored = len(self.messages)
        self.snapshots.append(copy.deepcopy(cp))
        return cp

    def rewrite(self, keep: int, tag: str) -> None:
        """Replace every message after the first ``keep`` (the store holds ``keep`` of them)."""
        old = len(self.messages)
        self.messages = self.messages[:keep] + [message(i, tag) for i in range(keep, old)]
        self.stored = min(self.stored, keep)

    def restart(self) -> None:
        """After a delete: the session starts again at version 1 with nothing stored."""
        self.version = 0
        self.stored = 0


class FakeClock:
    """A clock for ``Store.clock`` that moves only when told: ``clock.now += ttl``
    expires a lease without waiting for it."""

    def __init__(self, now: float | None = None) -> None:
        self.now = time.time() if now is None else now

    def __call__(self) -> float:
        return self.now
