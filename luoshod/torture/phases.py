"""Torture's phases beside the scripted sessions of :mod:`.workload`: sessions a client
redirects with ``if_busy`` ``INTERRUPT`` or ``ROLLBACK`` (R68), sessions whose lead hands a
task to a sub-agent that hands one to its own (depth 2, R55–R59), and sessions whose agent
calls daemon tools (of an MCP server torture runs, R70–R71). Each cycle drives one
unfinished session of each phase beside the others, with the same kill plan; kills can be
aimed at their own moments (:data:`PHASE_BOUNDARIES`). What each phase checks is in
``docs/guides/torture.md``; the checks are :meth:`Phases.check_phase`'s."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc

from .workload import (
    FOLLOW_IDLE_S,
    RUN_TIMEOUT_S,
    START_TIMEOUT_S,
    Idle,
    Session,
    _reason,
    checkpoint_of,
    shape,
)

PHASES = ("redirect", "subagents", "daemon-tools")
#: The kinds of session the phases drive ("redirect" is either of the first two).
KINDS = {"interrupt": "redirect", "rollback": "redirect", "subagents": "subagents"}
KINDS["daemon-tools"] = "daemon-tools"
#: Where kills aimed at the phases land, and how many of each a session's run sees at most.
PHASE_BOUNDARIES = {
    # The redirect (INTERRUPT or ROLLBACK) acknowledged: queued first, the run it aborts
    # about to end (or ended): a restarted daemon must run it, once, with its effect.
    "redirect input.queued": 1,
    # The interrupted (or rolled back) run's end, and the redirect's own run starting.
    "aborted run.done": 1,
    "redirect run.start": 1,
    # Inside the sub-agent of the sub-agent: its turn saved, one of its calls handed out.
    "depth-2 model.turn": 3,
    "depth-2 tool.call": 3,
    "depth-1 model.turn": 2,
    # A daemon tool's call handed out: the MCP server is running it (``slow`` takes
    # SLOW_MS), and the kill lands while it is in flight.
    "daemon tool.call": 2,
}
BOUNDARY_PHASE = {
    "redirect input.queued": "redirect",
    "aborted run.done": "redirect",
    "redirect run.start": "redirect",
    "depth-2 model.turn": "subagents",
    "depth-2 tool.call": "subagents",
    "depth-1 model.turn": "subagents",
    "daemon tool.call": "daemon-tools",
}
#: How long the daemon tool ``slow`` takes: the window a kill after ``daemon tool.call`` hits.
SLOW_MS = 150
#: The redirect sessions' model turns take this long: an INTERRUPT sent at a ``step.start``
#: arrives while the model call is in flight (aborted as by Cancel, R3: the call stops, the
#: run keeps its last checkpoint, R6).
TURN_DELAY_MS = 60
#: Usage of each level's scripted turns (prompt, completion): R56's roll-up is checked
#: against their sums.
USAGE = {"lead": (300, 30), "mid": (20, 2), "leaf": (3, 1)}
#: Turns of each level's script (the lead: task, text; mid: task, text; leaf: two calls,
#: one call, text).
TURNS = {"lead": 2, "mid": 2, "leaf": 3}
LEVELS = ("lead", "mid", "leaf")


def redirect_text(rid: str) -> str:
    return f"redirect {rid}"


def _usage(level: str) -> dict[str, int]:
    p, c = USAGE[level]
    return {"prompt_tokens": p, "completion_tokens": c}


def _agent(model: str, script: list[dict[str, Any]], **kw: Any) -> pb.AgentSpec:
    return pb.AgentSpec(
        model=f"scripted:{model}",
        instructions="Add the numbers.",
        tools=[pb.ToolSpec(name="add", input_schema_json='{"type": "object"}')],
        model_settings_json=json.dumps({"script": script}),
        **kw,
    )


def redirect_spec(redirected: bool) -> pb.AgentSpec:
    """The redirect sessions' agent: four steps of two ``add`` calls then text, each turn
    ``TURN_DELAY_MS`` long; the redirect's request carries the same agent (same model,
    tools, instructions: no drift) with a script of text turns only, so the run that
    answers the redirect is one turn, whatever the number of turns before it."""
    if redirected:
        return _agent("torture", [{"text": "redirected"}] * 16)
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [{"name": "add", "arguments": {"a": k, "b": j}} for j in range(2)],
            "delay_ms": TURN_DELAY_MS,
        }
        for k in range(4)
    ]
    script.append({"text": "done", "delay_ms": TURN_DELAY_MS})
    return _agent("torture", script)


def subagent_spec() -> pb.AgentSpec:
    """lead -> mid -> leaf: the lead's one ``task`` call (id ``L``) runs ``mid``, whose one
    ``task`` call (``M``) runs ``leaf``, whose calls (``a0``, ``a1``, then ``a2``) reach the
    client as ``L/M/a0`` … (R58); each level a model name of its own, so the call log says
    whose turn each model call was."""

    def task(agent: str, cid: str) -> dict[str, Any]:
        return {
            "name": "task",
            "arguments": {"agent": agent, "prompt": f"work, {agent}", "description": agent},
            "id": cid,
        }

    leaf = _agent(
        "leaf",
        [
            {
                "tool_calls": [
                    {"name": "add", "arguments": {"a": 1, "b": j}, "id": f"a{j}"} for j in range(2)
                ],
                "usage": _usage("leaf"),
            },
            {
                "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 2}, "id": "a2"}],
                "usage": _usage("leaf"),
            },
            {"text": "leaf done", "usage": _usage("leaf")},
        ],
        tool_concurrency=2,
    )
    mid = _agent(
        "mid",
        [
            {"tool_calls": [task("leaf", "M")], "usage": _usage("mid")},
            {"text": "mid done", "usage": _usage("mid")},
        ],
    )
    mid.subagents.add(name="leaf", description="adds", agent=leaf)
    lead = _agent(
        "lead",
        [
            {"tool_calls": [task("mid", "L")], "usage": _usage("lead")},
            {"text": "lead done", "usage": _usage("lead")},
        ],
        max_subagent_depth=2,
    )
    lead.subagents.add(name="mid", description="delegates", agent=mid)
    return lead


def daemon_tool_spec(n: int) -> pb.AgentSpec:
    """Daemon tools of the MCP server ``tt`` (:mod:`.mcptool`) beside a client tool: a turn
    of ``tt__slow`` and ``add``, a turn of ``tt__add``, then text. The call ids name the
    session (``d0x<n>``): they are the idempotency keys the server records."""
    spec = _agent(
        "dt",
        [
            {
                "tool_calls": [
                    {"name": "tt__slow", "arguments": {"ms": SLOW_MS}, "id": f"d0x{n}"},
                    {"name": "add", "arguments": {"a": 1, "b": 2}, "id": f"c0x{n}"},
                ]
            },
            {"tool_calls": [{"name": "tt__add", "arguments": {"a": 2, "b": 3}, "id": f"d1x{n}"}]},
            {"text": "tools done"},
        ],
        tool_concurrency=2,
    )
    spec.mcp_servers.add(name="tt")
    return spec


class McpServer:
    """Torture's MCP server (:mod:`.mcptool`), one for the run, over streamable HTTP on a
    loopback port; ``config`` is the daemons' configuration naming it ``tt``."""

    def __init__(self, work: Path) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.attempts = work / "mcp-attempts.jsonl"
        self.config = work / "luoshod.toml"
        self.config.write_text(f'[mcp_servers.tt]\nurl = "http://127.0.0.1:{self.port}/mcp"\n')
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "luoshod.torture.mcptool", "http", str(self.port)],
            env={**os.environ, "TORTURE_MCP_ATTEMPTS": str(self.attempts)},
            stdout=subprocess.DEVNULL,
            stderr=(work / "mcp-server.err").open("wb"),
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.close()
        raise RuntimeError(
            f"torture's MCP server did not listen: {(work / 'mcp-server.err').read_text()[-2000:]}"
        )

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def valid_transcript(msgs: list[pb.Message], *, finished: bool) -> list[tuple[str, str]]:
    """R20/R23 of one transcript (a sub-agent's): each call one result, directly after its
    turn, in call order; none open once it finished."""
    found: list[tuple[str, str]] = []
    open_turn: list[str] = []
    seen: set[str] = set()
    for m in msgs:
        if m.role == pb.ROLE_ASSISTANT:
            if open_turn:
                found.append(("R20", f"calls {open_turn} have no result before the next turn"))
            open_turn = [c.id for c in m.tool_calls]
        elif m.role == pb.ROLE_TOOL:
            if m.tool_call_id in seen:
                found.append(("R20", f"call {m.tool_call_id} has two results"))
            elif not open_turn or open_turn[0] != m.tool_call_id:
                found.append(
                    ("R23", f"result for {m.tool_call_id} out of place (expected {open_turn[:1]})")
                )
            else:
                open_turn.pop(0)
            seen.add(m.tool_call_id)
        elif open_turn and m.role != pb.ROLE_SYSTEM:
            found.append(("R23", f"a {pb.Role.Name(m.role)} message between calls and results"))
    if finished and open_turn:
        found.append(("R20", f"finished with calls {open_turn} unanswered"))
    return found


def _keys(msgs: Any) -> list[tuple[Any, ...]]:
    return [
        (m.role, m.content, m.tool_call_id, tuple(c.id for c in m.tool_calls))
        for m in msgs
        if m.role != pb.ROLE_SYSTEM
    ]


#: A finished task's prefix of qualified call ids, by depth (its call id is not stored).
TASK_PREFIX = {1: "L", 2: "L/M"}


def nested_results(cp: pb.Checkpoint) -> dict[str, str]:
    """The sub-agents' stored results, by qualified call id (R58)."""
    out: dict[str, str] = {}
    for st in list(cp.subagents) + list(cp.tasks):
        prefix = st.call_id or TASK_PREFIX.get(st.depth, "")
        for m in st.messages:
            if m.role == pb.ROLE_TOOL and prefix:
                out[f"{prefix}/{m.tool_call_id}"] = m.content
    return out


class Phases:
    """The phases' drives and checks: mixed into :class:`.runner.Torture`, whose streams,
    tool answers and checks they share."""

    # Provided by Torture.
    o: Any
    rng: Any
    work: Path
    cycle: int
    stats: Counter[str]
    kill_serial: int

    def phase_sessions(self, prefix: str, existing: list[Session]) -> list[Session]:
        """One live session of each phase asked for (new ones as the old ones finish)."""
        live = [s for s in existing if not s.done]
        for phase in self.o.phases:
            if any(KINDS[s.kind] == phase for s in live):
                continue
            kind = phase
            if phase == "redirect":
                kind = "rollback" if self.rng.random() < self.o.rollback_share else "interrupt"
            s = Session(f"{prefix}-{kind}-{len(existing)}", 1, kind=kind, index=len(existing))
            s.redirect_at = self.rng.randint(2, 5)
            existing.append(s)
            live.append(s)
        return live

    def spec_of(self, s: Session) -> pb.AgentSpec:
        from .workload import spec_for

        if s.kind in ("interrupt", "rollback"):
            return redirect_spec(False)
        if s.kind == "subagents":
            return subagent_spec()
        if s.kind == "daemon-tools":
            return daemon_tool_spec(s.index)
        return spec_for(s.concurrency)

    # -- the boundaries a phase's events add -------------------------------------------------

    def phase_kinds(self, s: Session, e: pb.Event) -> list[str]:
        out = []
        if e.type == "run.done" and e.run_done.finish_reason == pb.FINISH_REASON_ABORTED:
            out.append("aborted run.done")
        if e.type == "run.start" and s.redirect_rid and e.run_start.request_id == s.redirect_rid:
            out.append("redirect run.start")
            if self.kill_serial == s.redirect_serial:
                s.redirect_clean = True  # no kill between the redirect's send and its run
        depth = e.subagent.depth if e.HasField("subagent") else 0
        if e.type in ("model.turn", "tool.call") and depth:
            out.append(f"depth-{depth} {e.type}")
        if e.type == "tool.call" and e.tool_call.executor == pb.TOOL_EXECUTOR_DAEMON:
            out.append("daemon tool.call")
        if e.type == "tool.call" and depth:
            self.stats[f"sub-agent tool calls handed out (depth {depth})"] += 1
            want = "L/M/" if depth == 2 else "L/"
            if not e.tool_call.call.id.startswith(want) or e.tool_call.call.id.count("/") != depth:
                self.violate(  # type: ignore[attr-defined]
                    "R58",
                    s,
                    f"a depth-{depth} sub-agent's call came as {e.tool_call.call.id!r}, not "
                    f"qualified by its path ({want}…)",
                )
        return out

    # -- the redirect sessions' client -------------------------------------------------------

    async def drive_redirect(
        self, s: Session, daemon: Any, stub: pb_grpc.AgentServiceStub, boundary: Any
    ) -> None:
        """The client of a redirect session: it runs ``go`` (retried after kills, R13) and,
        at the ``step.start`` of step ``redirect_at`` or later (that step's model call in
        flight), sends its one redirect, ``if_busy`` INTERRUPT or ROLLBACK, with a request id;
        from then on it never sends ``go`` again and only follows the redirect (its retries
        the same request, R74), answering the calls of the runs it sees, until the redirect
        has been answered and the session finished."""
        for _attempt in range(30):
            if s.finished or daemon.stopped:
                return
            try:
                if s.redirect_rid:
                    await self.follow_redirect(s, daemon, stub, boundary)
                    if not s.finished:
                        return  # the daemon died, or nothing moved: next cycle
                    continue
                await self.go_redirected(s, daemon, stub, boundary)
                if not s.redirect_rid and s.finished:
                    self.stats["redirect sessions that ended before their redirect"] += 1
            except grpc.aio.AioRpcError as e:
                if not await self.rpc_failed(s, e):
                    return

    async def go_redirected(
        self, s: Session, daemon: Any, stub: pb_grpc.AgentServiceStub, boundary: Any
    ) -> None:
        """One ``go`` run, its redirect sent at the chosen ``step.start`` and followed by a
        task of its own (its stream gets ``input.queued``, then the redirect's run)."""
        follower: list[asyncio.Future[None]] = []

        def at_step(e: pb.Event) -> None:
            if e.type == "step.start" and not s.redirect_rid and e.step_start.step >= s.redirect_at:
                self.send_redirect(s, e.step_start.step)
                follower.append(
                    asyncio.ensure_future(self.follow_redirect(s, daemon, stub, boundary))
                )

        request = pb.ExecuteRequest(
            session_id=s.sid,
            input=[pb.Message(role=pb.ROLE_USER, content="go")],
            agent=self.spec_of(s),
        )
        try:
            await self.stream(  # type: ignore[attr-defined]
                s, daemon, stub, lambda: stub.Execute(request), boundary, set(), on_event=at_step
            )
        finally:
            if follower:
                await asyncio.gather(*follower, return_exceptions=True)

    def send_redirect(self, s: Session, step: int) -> None:
        rid = f"{s.sid}-r"
        s.redirect_rid, s.redirect_step = rid, step
        s.redirect_serial = self.kill_serial
        mode = pb.IF_BUSY_ROLLBACK if s.kind == "rollback" else pb.IF_BUSY_INTERRUPT
        s.redirect_req = pb.ExecuteRequest(
            session_id=s.sid,
            input=[pb.Message(role=pb.ROLE_USER, content=redirect_text(rid))],
            agent=redirect_spec(True),
            request_id=rid,
            if_busy=mode,
        )
        self.stats[f"redirects sent (if_busy {pb.IfBusy.Name(mode).removeprefix('IF_BUSY_')})"] += 1

    async def follow_redirect(
        self, s: Session, daemon: Any, stub: pb_grpc.AgentServiceStub, boundary: Any
    ) -> None:
        """Send (or send again) the redirect and follow its run; done once the session has
        finished with it in the transcript."""

        assert s.redirect_req is not None
        req = s.redirect_req
        for _attempt in range(12):
            if daemon.stopped or s.finished:
                return
            try:
                with contextlib.suppress(Idle):
                    await self.stream(  # type: ignore[attr-defined]
                        s,
                        daemon,
                        stub,
                        lambda: stub.Execute(req),
                        boundary,
                        set(),
                        queued=s.redirect_rid,
                        idle_s=FOLLOW_IDLE_S,
                    )
                cp = await self.stored(stub, s)  # type: ignore[attr-defined]
            except grpc.aio.AioRpcError as e:
                if not await self.rpc_failed(s, e):
                    return
                continue
            if (
                cp is not None
                and cp.status == pb.CHECKPOINT_STATUS_FINISHED
                and any(m.content == redirect_text(s.redirect_rid) for m in cp.messages)
            ):
                s.finished = True
                return
            await asyncio.sleep(0.1)

    async def rpc_failed(self, s: Session, e: grpc.aio.AioRpcError) -> bool:
        """What a phase's client does on an error: True to go on (after a pause), False
        when its daemon died or the error is a violation (reported)."""

        reason = _reason(e)
        if e.code() == grpc.StatusCode.ABORTED and "SESSION_BUSY" in reason:
            await asyncio.sleep(0.1)
            return True
        if e.code() in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.CANCELLED,
            grpc.StatusCode.DEADLINE_EXCEEDED,
        ) or ("LEASE_LOST" in reason):
            return False
        self.violate(  # type: ignore[attr-defined]
            "errors", s, f"the run failed with {e.code().name} {reason}: {e.details()}"
        )
        return False

    # -- the checks --------------------------------------------------------------------------

    async def check_phase(
        self, stub: pb_grpc.AgentServiceStub, s: Session, daemon: Any, *, final: bool = False
    ) -> None:
        try:
            got = await stub.GetSession(
                pb.GetSessionRequest(session_id=s.sid), timeout=RUN_TIMEOUT_S
            )
            cp = checkpoint_of(got)  # None too while only queued input is there
            queue = [q.request_id for q in got.queue]
        except grpc.aio.AioRpcError as e:
            if e.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                self.stats["checks put off: GetSession unanswered for 20 s"] += 1
                return
            if e.code() != grpc.StatusCode.NOT_FOUND:
                raise
            cp, queue = None, []
        rid = s.redirect_rid
        acked = bool(rid) and rid in s.acked
        # Rolled back: acknowledged, or queued by a request whose stream a kill cut before
        # input.queued (not queued, it ran as a plain Execute, R12: after the run).
        if s.kind == "rollback" and rid and not s.rolled:
            msgs = [m for m in cp.messages if m.role != pb.ROLE_SYSTEM] if cp else []
            if (cp is None and rid in queue) or (
                msgs and msgs[0].role == pb.ROLE_USER and msgs[0].content == redirect_text(rid)
            ):
                # Rolled back (R68): the session as before the run (a new session: none), then
                # the redirect's own run. What the rolled-back run saved is gone on purpose.
                # No checkpoint is a rollback only with the redirect still queued: it leaves
                # the queue after its own run's save, which makes the checkpoint again, and
                # a redirect that never reached a daemon leaves the aborted run's saves.
                s.rolled = True
                s.keys, s.version, s.accepted, s.stored_results, s.pending = [], 0, {}, set(), []
                s.durable_turns, s.seen, s.checked_seq = 0, {}, 0
                s.level_turns = {}
                self.stats["rollbacks seen applied (R68)"] += 1
                if cp is None:
                    self.stats["rollbacks seen applied, the redirect's run not saved yet"] += 1
        if cp is None:
            if s.accepted or s.durable_turns:
                self.violate(  # type: ignore[attr-defined]
                    "R54",
                    s,
                    f"lost save: the session has no checkpoint, but the client saw "
                    f"{s.durable_turns} of its model turns saved",
                )
            if acked and rid not in queue:
                self.violate(  # type: ignore[attr-defined]
                    "R69",
                    s,
                    f"lost redirect: {rid}, acknowledged, is in no checkpoint and not queued "
                    f"(seed {self.o.seed})",
                )
            return
        self.check_checkpoint(s, cp)  # type: ignore[attr-defined]
        started = await self.check_events(stub, s, daemon)  # type: ignore[attr-defined]
        finished = cp.status == pb.CHECKPOINT_STATUS_FINISHED
        if s.kind in ("interrupt", "rollback"):
            self.check_redirect(s, cp, queue, started, final=final)
        elif s.kind == "subagents":
            self.check_subagents(s, cp, finished=finished)
        elif s.kind == "daemon-tools":
            self.check_daemon_tools(s, cp, final=final)
        if final and not finished:
            self.stats[f"{s.kind} sessions unfinished at the end"] += 1

    def check_redirect(
        self,
        s: Session,
        cp: pb.Checkpoint,
        queue: list[str],
        started: set[str],
        *,
        final: bool,
    ) -> None:
        rid, seed = s.redirect_rid, self.o.seed
        if not rid:
            return
        msgs = [m for m in cp.messages if m.role != pb.ROLE_SYSTEM]
        at = [
            i
            for i, m in enumerate(msgs)
            if m.role == pb.ROLE_USER and m.content == redirect_text(rid)
        ]
        finished = cp.status == pb.CHECKPOINT_STATUS_FINISHED
        mode = "ROLLBACK" if s.kind == "rollback" else "INTERRUPT"

        if len(at) > 1:
            self.violate(  # type: ignore[attr-defined]
                "R68",
                s,
                f"the {mode} input {rid} is in the transcript {len(at)} times (applied "
                f"twice): {shape(cp)} (seed {seed})",
            )
        if not at:
            if rid in s.acked and (final or (rid not in queue and rid not in started)):
                self.violate(  # type: ignore[attr-defined]
                    "R69",
                    s,
                    f"lost {mode} input: {rid}, acknowledged (input.queued), is "
                    + (
                        "not in the transcript at the end"
                        if final
                        else "neither applied nor queued"
                    )
                    + f" (queue {queue}, status {pb.CheckpointStatus.Name(cp.status)}; "
                    f"seed {seed})",
                )
            return
        i = at[0]
        after = msgs[i + 1 :]
        answer_ok = (
            (len(after) == 1 and after[0].role == pb.ROLE_ASSISTANT and not after[0].tool_calls)
            if finished
            else not after
        )
        if not answer_ok:
            self.violate(  # type: ignore[attr-defined]
                "R68",
                s,
                f"the {mode} input {rid} is not answered by one run of its own: "
                f"{shape(cp)} (seed {seed})",
            )
        before = msgs[:i]
        if s.kind == "rollback" and (rid in s.acked or not before):
            if before:
                self.violate(  # type: ignore[attr-defined]
                    "R68",
                    s,
                    f"ROLLBACK {rid} did not put back the session as before the run it aborted "
                    f"(a new session: nothing): {shape(cp)} (seed {seed})",
                )
            return
        if not before or before[0].content != "go":
            self.violate(  # type: ignore[attr-defined]
                "R12",
                s,
                f"the {mode} input {rid} is not after the run it interrupted: {shape(cp)} "
                f"(seed {seed})",
            )
        turns = sum(1 for m in before if m.role == pb.ROLE_ASSISTANT)
        if rid in s.acked and s.redirect_clean and not s.r6_checked:
            # The INTERRUPT came at step k's step.start, its model call in flight: the abort
            # (as by Cancel, R3) stops that call or finds it answered, and the run keeps its
            # last checkpoint (R6): the k - 1 turns saved before, and turn k only if its
            # answer was saved whole (its calls each with a result, checked above).
            s.r6_checked = True
            k = s.redirect_step
            self.stats[
                "interrupts during a model call: "
                + ("its answer saved first" if turns >= k else "the call stopped, nothing saved")
            ] += 1
            if turns < k - 1:
                self.violate(  # type: ignore[attr-defined]
                    "R6",
                    s,
                    f"the INTERRUPT {rid} came at step {k}'s model call, after {k - 1} turn(s) "
                    f"were saved, and the interrupted run kept {turns}: {shape(cp)} "
                    f"(seed {seed})",
                )

    def check_subagents(self, s: Session, cp: pb.Checkpoint, *, finished: bool) -> None:
        seed = self.o.seed
        states = [(st, False) for st in cp.subagents] + [(st, True) for st in cp.tasks]
        for st, done in states:
            level = LEVELS[st.depth] if st.depth < len(LEVELS) else str(st.depth)
            for rule, message in valid_transcript(list(st.messages), finished=done):
                self.violate(  # type: ignore[attr-defined]
                    rule, s, f"sub-agent {level} (depth {st.depth}): {message} (seed {seed})"
                )
            keys = _keys(st.messages)
            old = s.nested_keys.get(level, [])
            if keys[: len(old)] != old:
                self.violate(  # type: ignore[attr-defined]
                    "R59",
                    s,
                    f"sub-agent {level}'s stored transcript is not an extension of the one "
                    f"stored before (its saved state was not resumed) (seed {seed})",
                )
            s.nested_keys[level] = keys
            turns = sum(1 for m in st.messages if m.role == pb.ROLE_ASSISTANT)
            s.level_turns[level] = max(s.level_turns.get(level, 0), turns)
        if not finished:
            return
        if s.usage_checked:
            return
        s.usage_checked = True
        tasks = {LEVELS[t.depth]: t for t in cp.tasks if t.depth < len(LEVELS)}
        for level in ("mid", "leaf"):
            t = tasks.get(level)
            n = sum(1 for m in t.messages if m.role == pb.ROLE_ASSISTANT) if t else 0
            if n != TURNS[level]:
                self.violate(  # type: ignore[attr-defined]
                    "R59",
                    s,
                    f"sub-agent {level} finished with {n} model turn(s) in its transcript, its "
                    f"script has {TURNS[level]} (a turn lost or repeated) (seed {seed})",
                )
        lead_result = next(
            (m.content for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_call_id == "L"),
            "",
        )
        if f"[sub-agent 'mid': {TURNS['mid']} step(s)" not in lead_result:
            self.violate(  # type: ignore[attr-defined]
                "R56",
                s,
                f"the task's result has no footer of {TURNS['mid']} step(s): "
                f"{lead_result[-120:]!r}",
            )
        sub = LEVELS[1:]
        want_d = (
            sum(USAGE[lvl][0] * TURNS[lvl] for lvl in sub),
            sum(USAGE[lvl][1] * TURNS[lvl] for lvl in sub),
            sum(TURNS[lvl] for lvl in sub),
        )
        lead = (USAGE["lead"][0] * TURNS["lead"], USAGE["lead"][1] * TURNS["lead"], TURNS["lead"])
        want_u = tuple(a + b for a, b in zip(lead, want_d, strict=True))
        d, u = cp.delegated_usage, cp.usage
        got_d = (d.prompt_tokens, d.completion_tokens, d.model_calls)
        got_u = (u.prompt_tokens, u.completion_tokens, u.model_calls)
        self.stats["sub-agent sessions finished and their usage checked (R56)"] += 1
        if got_d != want_d or got_u != want_u:
            self.violate(  # type: ignore[attr-defined]
                "R56",
                s,
                f"usage roll-up: delegated (prompt, completion, calls) {got_d}, expected "
                f"{want_d}; the run's {got_u}, expected {want_u} (a sub-agent turn counted "
                f"twice or lost) (seed {seed})",
            )

    def mcp_attempts(self) -> Counter[str]:
        path = self.work / "mcp-attempts.jsonl"
        counts: Counter[str] = Counter()
        if not path.exists():
            return counts
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                counts[json.loads(line)["key"]] += 1
        return counts

    def check_daemon_tools(self, s: Session, cp: pb.Checkpoint, *, final: bool) -> None:
        """R71 (R21 for daemon tools): a daemon call whose result is recorded is never run
        again — the server's attempts with its key do not grow after the check that first
        saw it recorded; and every recorded result came from an attempt."""
        seed = self.o.seed
        counts = self.mcp_attempts()
        daemon_calls = {
            c.id
            for m in cp.messages
            if m.role == pb.ROLE_ASSISTANT
            for c in m.tool_calls
            if c.name.startswith("tt__")
        }
        stored = {m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL}
        stored |= {m.tool_call_id for m in cp.early_results}
        for cid in sorted(daemon_calls & stored):
            n = counts.get(cid, 0)
            if cid not in s.mcp_done:
                s.mcp_done[cid] = n
                self.stats["daemon tool calls seen recorded"] += 1
                if n > 1:
                    self.stats["daemon tool calls run again after a kill (R71, same key)"] += 1
                if n == 0:
                    self.violate(  # type: ignore[attr-defined]
                        "R71",
                        s,
                        f"daemon tool call {cid} has a recorded result, but the MCP server never "
                        f"ran it (seed {seed})",
                    )
            elif n > s.mcp_done[cid]:
                self.violate(  # type: ignore[attr-defined]
                    "R71",
                    s,
                    f"daemon tool call {cid} ran again (attempt {n}) after its result was "
                    f"recorded (seed {seed})",
                )
                s.mcp_done[cid] = n

    def forget_mcp_attempts(self) -> int:
        """Attempts a daemon woken without its lease made (a thawed SIGSTOPped one): not a
        resumed run's; counted apart, not checked."""
        counts = self.mcp_attempts()
        n = 0
        for s in getattr(self, "phase", []):
            for cid, was in s.mcp_done.items():
                n += max(0, counts.get(cid, 0) - was)
                s.mcp_done[cid] = max(was, counts.get(cid, 0))
        return n
