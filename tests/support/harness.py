"""Test helpers: build agents and drive runs over real gRPC with the raw stubs, so a test
can stop a stream at any event (a client crash) or answer tools in any order."""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc

UNSET: Any = object()
ToolFn = Callable[[dict[str, Any]], Any]


def user(text: str) -> pb.Message:
    return pb.Message(role=pb.ROLE_USER, content=text)


def system(text: str) -> pb.Message:
    return pb.Message(role=pb.ROLE_SYSTEM, content=text)


def calls(*names_args: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    """One scripted turn calling tools."""
    return {"text": text, "tool_calls": [{"name": n, "arguments": a} for n, a in names_args]}


def agent(
    script: list[dict[str, Any]],
    tools: list[str] | dict[str, dict[str, Any]] = ("add",),
    *,
    instructions: str = "You add numbers.",
    model: str = "scripted:test",
    **kw: Any,
) -> pb.AgentSpec:
    if not isinstance(tools, dict):
        tools = {name: {"type": "object"} for name in tools}
    return pb.AgentSpec(
        model=model,
        instructions=instructions,
        tools=[pb.ToolSpec(name=n, input_schema_json=json.dumps(s)) for n, s in tools.items()],
        model_settings_json=json.dumps({"script": script}),
        **kw,
    )


async def a_run_waiting_on_a_tool(h: Any, session_id: str = "first") -> tuple[Any, Any]:
    """Start a run in ``session_id`` that waits for the result of its tool call ``add``
    (so it stays active); its call and the stream, read up to that ``tool.call``."""
    waiting = h.stub.Execute(
        pb.ExecuteRequest(
            session_id=session_id,
            input=[user("go")],
            agent=agent([calls(("add", {"a": 1})), {"text": "done"}]),
        )
    )
    stream = aiter(waiting)
    while (await anext(stream)).event.type != "tool.call":
        pass
    return waiting, stream


def error_info(err: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """(code, ErrorInfo.reason, metadata) of a failed call."""
    for key, value in err.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    assert info.domain == "luosho.dev"
                    return err.code(), info.reason, dict(info.metadata)
    return err.code(), "", {}


@dataclass
class RunLog:
    events: list[pb.Event] = field(default_factory=list)
    error: grpc.aio.AioRpcError | None = None
    dropped: bool = False

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    @property
    def done(self) -> pb.RunDone | None:
        return next((e.run_done for e in self.events if e.type == "run.done"), None)

    def of(self, type_: str) -> list[pb.Event]:
        return [e for e in self.events if e.type == type_]

    @property
    def reason(self) -> str:
        return error_info(self.error)[1] if self.error else ""


class Harness:
    """A client of one daemon under test."""

    def __init__(
        self,
        address: str,
        daemon: Any = None,
        call_log: Path | None = None,
        *,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self.daemon = daemon
        self.call_log = call_log
        self.channel = channel or grpc.aio.insecure_channel(address)
        self.stub = pb_grpc.AgentServiceStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    def model_calls(self, session_id: str | None = None) -> int:
        """Scripted model calls the daemon made (counted across restarts)."""
        if not self.call_log or not self.call_log.exists():
            return 0
        lines = [json.loads(x) for x in self.call_log.read_text().splitlines()]
        return sum(1 for x in lines if session_id is None or x["session_id"] == session_id)

    async def run(
        self,
        session_id: str,
        input: str | list[pb.Message] | None = None,
        agent: pb.AgentSpec | None = None,
        tools: dict[str, ToolFn] | None = None,
        *,
        business_state: Any = UNSET,
        stop_at: Callable[[pb.Event], bool] | None = None,
        resume: bool = False,
        history_limit: int | None = None,
        on_event: Callable[[pb.Event], Awaitable[None] | None] | None = None,
    ) -> RunLog:
        """Execute (or Resume) and answer tool calls with ``tools``. ``stop_at`` drops the
        stream (a client crash) at the first event it accepts, before acting on it."""
        if resume:
            call = self.stub.Resume(pb.ResumeRequest(session_id=session_id, agent=agent))
        else:
            msgs = [user(input)] if isinstance(input, str) else list(input or [])
            req = pb.ExecuteRequest(session_id=session_id, input=msgs, agent=agent)
            if business_state is not UNSET:
                req.business_state_json = json.dumps(business_state)
            if history_limit is not None:
                req.history_limit = history_limit
            call = self.stub.Execute(req)
        return await self.follow(call, session_id, tools, stop_at=stop_at, on_event=on_event)

    async def follow(
        self,
        call: Any,
        session_id: str,
        tools: dict[str, ToolFn] | None = None,
        *,
        stop_at: Callable[[pb.Event], bool] | None = None,
        on_event: Callable[[pb.Event], Awaitable[None] | None] | None = None,
        answer_in_turn: bool = False,
    ) -> RunLog:
        """Read a run's stream ``call`` into a RunLog, answering tool calls with ``tools``
        (in tasks of their own, or before reading on with ``answer_in_turn``). ``stop_at``
        drops the stream (a client crash) at the first event it accepts."""
        tools = tools or {}
        log = RunLog()
        pending: set[asyncio.Task[None]] = set()
        try:
            async for resp in call:
                e = resp.event
                if stop_at and stop_at(e):
                    log.dropped = True
                    call.cancel()
                    break
                log.events.append(e)
                if on_event:
                    r = on_event(e)
                    if inspect.isawaitable(r):
                        await r
                if e.type == "tool.call":
                    answer = self._answer(session_id or e.session_id, e.tool_call.call, tools)
                    if answer_in_turn:
                        await answer
                        continue
                    t = asyncio.create_task(answer)
                    pending.add(t)
                    t.add_done_callback(pending.discard)
        except grpc.aio.AioRpcError as err:
            log.error = err
        for t in list(pending):
            t.cancel()
        return log

    async def _answer(self, session_id: str, c: pb.ToolCall, tools: dict[str, ToolFn]) -> None:
        fn = tools.get(c.name)
        if fn is None:
            return  # the test answers this call itself
        try:
            result = fn(json.loads(c.arguments_json))
            if inspect.isawaitable(result):
                result = await result
            body, is_error = json.dumps(result), False
        except Exception as e:  # noqa: BLE001
            body, is_error = json.dumps({"error": str(e)}), True
        await self.submit(session_id, c.id, body, is_error)

    async def submit(
        self, session_id: str, call_id: str, result_json: str, is_error: bool = False
    ) -> int:
        resp = await self.stub.SubmitToolResult(
            pb.SubmitToolResultRequest(
                session_id=session_id,
                tool_call_id=call_id,
                result_json=result_json,
                is_error=is_error,
            )
        )
        return resp.outcome

    async def get(self, session_id: str) -> pb.Checkpoint:
        return (await self.stub.GetSession(pb.GetSessionRequest(session_id=session_id))).checkpoint

    async def idle(self, session_id: str) -> None:
        """Wait until no run of ``session_id`` is active in the in-process daemon."""
        run = self.daemon.runs.get(session_id)
        if run is not None:
            await asyncio.wait_for(run.done.wait(), 10)


def assert_valid_transcript(cp: pb.Checkpoint) -> None:
    """R20/R23: every tool call has exactly one result, directly after its turn, in call
    order; only the last turn of an unfinished run may still lack some."""
    msgs = list(cp.messages)
    all_ids: list[str] = []
    i = 0
    while i < len(msgs):
        m = msgs[i]
        assert m.role != pb.ROLE_TOOL, f"tool result without its call at {i}"
        i += 1
        if m.role == pb.ROLE_ASSISTANT and m.tool_calls:
            ids = [c.id for c in m.tool_calls]
            got = []
            while i < len(msgs) and msgs[i].role == pb.ROLE_TOOL:
                got.append(msgs[i].tool_call_id)
                i += 1
            if i < len(msgs) or cp.status == pb.CHECKPOINT_STATUS_FINISHED:
                assert got == ids, f"results {got} do not answer turn {ids}"
            else:
                assert got == ids[: len(got)], f"results {got} out of order for {ids}"
            all_ids += ids
    assert len(all_ids) == len(set(all_ids)), "duplicate tool call ids"


async def watch(
    h: Harness, sid: str, after: int = 0, *, stop_after: int | None = None, follow: bool = False
) -> list[pb.Event]:
    out = []
    call = h.stub.Watch(pb.WatchRequest(session_id=sid, after_seq=after, follow=follow))
    async for resp in call:
        out.append(resp.event)
        if stop_after is not None and len(out) >= stop_after:
            call.cancel()
            break
    return out


# -- busy sessions and their queue (if_busy, R68, R69) ------------------------------------


async def execute_if_busy(
    h: Harness,
    sid: str,
    text: str,
    spec: pb.AgentSpec,
    if_busy: int,
    *,
    request_id: str = "",
    tools: dict[str, Any] | None = None,
    queued: asyncio.Event | None = None,
) -> RunLog:
    """Execute with ``if_busy``; answers tool calls with ``tools``; sets ``queued`` at the
    ``input.queued`` event."""
    log = RunLog()
    call = h.stub.Execute(
        pb.ExecuteRequest(
            session_id=sid, input=[user(text)], agent=spec, if_busy=if_busy, request_id=request_id
        )
    )
    try:
        async for resp in call:
            e = resp.event
            log.events.append(e)
            if e.type == "input.queued" and queued is not None:
                queued.set()
            if e.type == "tool.call" and tools and e.tool_call.call.name in tools:
                result = tools[e.tool_call.call.name](json.loads(e.tool_call.call.arguments_json))
                await h.submit(sid, e.tool_call.call.id, json.dumps(result))
    except grpc.aio.AioRpcError as err:
        log.error = err
    return log


async def queue_one(
    h: Harness, sid: str, text: str, spec: pb.AgentSpec, if_busy: int, **kw: Any
) -> asyncio.Task[RunLog]:
    """Start an Execute that gets queued; return once it is (its stream keeps following)."""
    queued = asyncio.Event()
    task = asyncio.create_task(execute_if_busy(h, sid, text, spec, if_busy, queued=queued, **kw))
    waiter = asyncio.create_task(queued.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED, timeout=20)
    waiter.cancel()
    assert queued.is_set(), (await task).error if task.done() else "not queued"
    return task


async def busy_with_a_tool(
    h: Harness, sid: str, spec: pb.AgentSpec
) -> tuple[asyncio.Task[RunLog], pb.ToolCall]:
    """Start a run that waits for its tool call (answered by the test)."""
    call: asyncio.Future[pb.ToolCall] = asyncio.get_running_loop().create_future()

    def seen(e: pb.Event) -> None:
        if e.type == "tool.call" and not call.done():
            call.set_result(e.tool_call.call)

    task = asyncio.create_task(h.run(sid, "one", spec, {}, on_event=seen))
    return task, await asyncio.wait_for(call, 20)


def users(cp: pb.Checkpoint) -> list[str]:
    return [m.content for m in cp.messages if m.role == pb.ROLE_USER]


async def until(
    check: Callable[[], object],
    timeout: float = 30,
    what: object = "",
) -> None:
    """Poll ``check`` (a function, or one returning an awaitable) every 50 ms until it is
    true; fail after ``timeout`` seconds naming ``what`` (a value, or a function called then
    to describe the state)."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if inspect.isawaitable(got):
            got = await got
        if got:
            return
        assert time.monotonic() < deadline, (
            f"timed out waiting for {what() if callable(what) else what}"
        )
        await asyncio.sleep(0.05)


class AheadClock:
    """A clock ``ahead`` seconds after the real one: set as a daemon's ``engine.clock`` it
    moves the engine's one clock (stored run times, deadlines, tool timeouts) without
    waiting."""

    def __init__(self, ahead: float = 0.0) -> None:
        self.ahead = ahead

    def __call__(self) -> float:
        return time.time() + self.ahead
