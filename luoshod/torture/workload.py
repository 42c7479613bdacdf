"""What torture runs and remembers: the scripted agent, where it kills, and what each
session's client saw and promised itself to check (:class:`Session`, :class:`Violation`)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import grpc

from luosho.v1 import agent_pb2 as pb

#: Where the client kills: right after it sees one of these (``accepted``: a
#: ``SubmitToolResult`` answered ``ACCEPTED``).
BOUNDARIES = (
    "run.start",
    "step.start",
    "model.turn",
    "tool.call",
    "accepted",
    "tool.result",
    "run.done",
    "approval.requested",
    "resolved",
    "input.queued",
    # Inside a queued input's own run (its run.start names a queued request id), after the
    # save that applied the input: the kill a restarted daemon must resume that run on
    # its own from, neither dropping the input nor merging it with the next one (R69).
    "queued step.start",
    "queued model.turn",
    "queued step.start",
)
#: How many of each a session's run sees at most (the script: 4 steps of 2 calls, then text).
PER_RUN = {
    "run.start": 1,
    "run.done": 1,
    "step.start": 5,
    "model.turn": 5,
    "approval.requested": 1,
    "resolved": 1,
    "input.queued": 1,
    "queued step.start": 2,
    "queued model.turn": 2,
}
TOOL_STEPS = 4
#: Queued input (R68, R69): the share of a session's runs that send input with
#: ``if_busy=ENQUEUE`` while they are active (at one of their first tool calls; a second
#: input right after the first is acknowledged, some of the time), and at most how many a
#: session sends. Each queued input's run is two more turns of the script: one call of
#: ``add``, then text.
QUEUE_SHARE = 0.35
MAX_QUEUED = 4
INPUT_QUEUED = "input.queued"
#: The share of queued inputs whose caller goes away once they are acknowledged and never
#: sends them again: the daemon must run them by itself (R69), and the session's client,
#: as an app watching the session would, answers their runs' tool calls through ``Watch``.
ABANDON_SHARE = 0.5
#: How long the session's watcher waits for an event before it looks at the store.
WATCH_IDLE_S = 1.5
#: How long a session waiting for the daemon to run its abandoned inputs may not move
#: before its client gives up on it for this cycle.
ABANDONED_WAIT_S = 2.5
#: A queued input's stream that brings no event for this long is sent again (a retry, the
#: same request id): it may follow a run that died in the other daemon, which nobody
#: resumes until a client does (the retry runs it here once the dead one's lease is gone).
FOLLOW_IDLE_S = 2.0
#: The seq of a hand-out answered from the log (which hand-out the run waited for is unknown).
UNKNOWN_SEQ = 1 << 62


#: The step whose turn is ``[pay (needs approval), add]``: the run pauses on ``pay`` with
#: ``add`` remaining (R27, R28) until the client resolves it.
GATED_STEP = 1
START_TIMEOUT_S = 30.0
#: Violations printed (lost saves first); the JSON report has them all.
SHOWN = 20
#: How long the clients of a cycle may take (a cycle's runs take about a second): past it they give
#: up on the cycle, counted (`cycles cut short: clients timed out`).
RUN_TIMEOUT_S = 20.0
#: How long a check's ``Watch`` may wait on a run the daemon still holds (see check_events).
LIVE_RUN_WAIT_S = 10.0
#: How long the second daemon may make no progress while the first is stopped before the
#: takeover counts as stalled (a stopped process can hold a store's write lock: LMDB's
#: writer mutex, a SQLite write transaction) and the stopped one is let go on.
STALL_S = 8.0


@dataclass
class Violation:
    rule: str
    session_id: str
    cycle: int
    message: str
    events: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "session_id": self.session_id,
            "cycle": self.cycle,
            "message": self.message,
            "events": self.events,
        }


@dataclass
class Session:
    """What one session's client saw, knows and promised itself to check."""

    sid: str
    concurrency: int
    accepted: dict[str, str] = field(default_factory=dict)  # call id -> result ACCEPTED
    accepted_in: dict[str, int] = field(default_factory=dict)  # call id -> cycle
    ran: dict[str, str] = field(default_factory=dict)  # call id -> result (ran, maybe not saved)
    names: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    seen: dict[int, str] = field(default_factory=dict)  # seq -> type, every event received
    trail: list[str] = field(default_factory=list)  # "cycle:seq:type" for reproductions
    durable_turns: int = 0  # assistant turns known to be saved (R22)
    version: int = 0
    keys: list[tuple[Any, ...]] = field(default_factory=list)  # the stored transcript
    stored_results: set[str] = field(default_factory=set)
    pending: list[str] = field(default_factory=list)  # calls of the last turn without result
    finished: bool = False
    settled: bool = False  # finished, and checked so since: rechecked only at the end
    # Approvals (R27-R33): the gated call -> its approval; the approval pending in the store
    # (or announced by approval.requested); the decisions sent for an approval; the one
    # known recorded (a Resolve stream delivered run.start, which comes after the save
    # that claims the approval); the decided approvals a second Resolve was tried on.
    gated: dict[str, str] = field(default_factory=dict)
    awaiting: str = ""
    sent: dict[str, set[bool]] = field(default_factory=dict)
    decided: dict[str, bool] = field(default_factory=dict)
    decided_in: dict[str, int] = field(default_factory=dict)
    retried: set[str] = field(default_factory=set)
    # Calls: the seq of the tool.call event answered ACCEPTED; the log's last seq at the
    # last check (a tool.call at or before it is history, not a new hand-out).
    accepted_seq: dict[str, int] = field(default_factory=dict)
    checked_seq: int = 0
    # Queued input (R68, R69): the ENQUEUE requests sent, by request id in send order; those
    # acknowledged (input.queued), in the order acknowledged, with their cycle; those seen
    # in the transcript after their stream ended (nothing left to follow). ``followers``:
    # this drive's tasks that follow queued inputs.
    queued: dict[str, pb.ExecuteRequest] = field(default_factory=dict)
    acked: dict[str, int] = field(default_factory=dict)
    completed: set[str] = field(default_factory=set)
    followers: list[asyncio.Future[None]] = field(default_factory=list)
    # Abandoned queued inputs: their caller left once they were acknowledged and never
    # retries; ``watcher``: the task answering their runs' tool calls through Watch.
    abandoned: set[str] = field(default_factory=set)
    watcher: asyncio.Future[None] | None = None
    gave_up: bool = False  # the watcher saw nothing move for ABANDONED_WAIT_S
    run_rid: str = ""  # the request id of the run whose run.start was seen last
    outline: list[str] = field(default_factory=list)  # the log's runs, at the last check
    # The phases' sessions (:mod:`.phases`): "" for the scripted workload's, else
    # "interrupt", "rollback", "subagents" or "daemon-tools"; their number in the run.
    kind: str = ""
    index: int = 0
    # A redirect session's one redirect: the step at or after which it is sent, its request
    # id and request, the step whose model call was in flight when it was sent, the kill
    # count then (no kill until its run started: ``redirect_clean``), whether a check saw
    # the rollback applied, and R6 checked.
    redirect_at: int = 0
    redirect_rid: str = ""
    redirect_req: pb.ExecuteRequest | None = None
    redirect_step: int = 0
    redirect_serial: int = 0
    redirect_clean: bool = False
    rolled: bool = False
    r6_checked: bool = False
    # Sub-agents: model turns known saved per level (R59), each level's stored transcript at
    # the last check, the usage roll-up checked (R56). Daemon tools: a call's attempts when
    # its result was first seen recorded (R71).
    level_turns: dict[str, int] = field(default_factory=dict)
    nested_keys: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)
    usage_checked: bool = False
    mcp_done: dict[str, int] = field(default_factory=dict)

    def outstanding(self) -> list[str]:
        """Queued inputs sent and not yet seen in the transcript whose caller still follows
        them (an abandoned one only until it is acknowledged)."""
        return [
            rid
            for rid in self.queued
            if rid not in self.completed and not (rid in self.abandoned and rid in self.acked)
        ]

    def left_to_daemon(self) -> list[str]:
        """Abandoned inputs, acknowledged and not yet seen in the transcript: the daemon
        alone must run them."""
        return [
            rid
            for rid in self.queued
            if rid in self.abandoned and rid in self.acked and rid not in self.completed
        ]

    @property
    def done(self) -> bool:
        return self.finished and not self.outstanding() and not self.left_to_daemon()

    def may_enqueue(self) -> bool:
        """One more queued input: under the cap, every earlier one acknowledged (or run),
        so the acknowledgements' order is the queue's."""
        return len(self.queued) < MAX_QUEUED and all(
            r in self.acked or r in self.completed for r in self.queued
        )


def queued_text(rid: str) -> str:
    return f"queued input {rid}"


def spec_for(concurrency: int) -> pb.AgentSpec:
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {
                    "name": "pay" if k == GATED_STEP and j == 0 else "add",
                    "arguments": {"a": k, "b": j},
                }
                for j in range(2)
            ]
        }
        for k in range(TOOL_STEPS)
    ]
    script.append({"text": "done"})
    for q in range(MAX_QUEUED):  # the runs of queued inputs: a call, then text
        script += [
            {"tool_calls": [{"name": "add", "arguments": {"a": 10 + q, "b": 1}}]},
            {"text": "queued done"},
        ]
    return pb.AgentSpec(
        model="scripted:torture",
        instructions="Add the numbers.",
        tools=[
            pb.ToolSpec(name="add", input_schema_json='{"type": "object"}'),
            pb.ToolSpec(name="pay", input_schema_json='{"type": "object"}', needs_approval=True),
        ],
        model_settings_json=json.dumps({"script": script}),
        tool_concurrency=concurrency,
    )


def tool_result(call_id: str, arguments_json: str) -> str:
    args = json.loads(arguments_json or "{}")
    return json.dumps({"sum": args.get("a", 0) + args.get("b", 0), "call": call_id})


class Idle(Exception):
    """A stream brought no event for ``FOLLOW_IDLE_S``."""


def checkpoint_of(got: pb.GetSessionResponse) -> pb.Checkpoint | None:
    """The session's checkpoint as ``GetSession`` answered it, ``None`` when it has none.
    A session with queued input and no checkpoint is answered, not NOT_FOUND (R69: the
    queue is shown): a ROLLBACK of the session's first run leaves it so until the redirect's
    own run saves. Read as an empty checkpoint, every result the rolled-back run saved
    looked lost (R54)."""
    return got.checkpoint if got.HasField("checkpoint") else None


def shape(cp: pb.Checkpoint) -> str:
    """The transcript in short: ``A2`` a turn of two calls, ``T`` a result, ``A`` text,
    ``u`` user input, ``q<n>`` queued input n."""
    out = []
    for m in cp.messages:
        if m.role == pb.ROLE_ASSISTANT:
            out.append(f"A{len(m.tool_calls)}" if m.tool_calls else "A")
        elif m.role == pb.ROLE_TOOL:
            out.append("T")
        elif m.role == pb.ROLE_USER:
            rid = m.content.removeprefix("queued input ")
            out.append("q" + rid.rpartition("-q")[2] if rid != m.content else "u")
    return "[" + " ".join(out) + "]"


def _reason(e: grpc.aio.AioRpcError) -> str:
    """The ErrorInfo reason of a failed call, or ""."""
    from google.rpc import error_details_pb2, status_pb2

    for key, value in e.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info.reason
    return ""
