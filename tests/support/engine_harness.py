"""Drive the engine the way the service layer does, without gRPC or a disk.

The engine is handed a store (the in-memory driver), a provider registry (the scripted
provider) and, per run, a sink for its events, a tool port through which tool results
arrive, and a run control (luoshod/engine/control.py). :class:`EngineHarness` plays the
service's part: it answers ``tool.call`` events with Python functions, drops a run at any
event as a vanished client would (an interrupt: the run stops at its next boundary,
docs/reference/rules.md R6), aborts it (``Cancel``, R3), and reads the store directly.

Nothing here imports gRPC; ``test_no_grpc.py`` checks that.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from luoshod.domain import (
    AgentSpec,
    Checkpoint,
    HistoryEntry,
    Message,
    Role,
    Status,
    ToolSpec,
)
from luoshod.engine.comparison import Comparison, compare
from luoshod.engine.engine import (
    Engine,
    ResolveRequest,
    RunControl,
    RunInterrupted,
    RunRequest,
    ToolOutcome,
)
from luoshod.engine.events import Event
from luoshod.engine.forking import Forked, ForkPatch, fork
from luoshod.engine.lease import LeasePolicy
from luoshod.errors import LuoshoError
from luoshod.providers import ProviderRegistry, ScriptedProvider
from luoshod.store import Store
from luoshod.store.memory import MemoryStore

UNSET: Any = object()
ToolFn = Callable[[dict[str, Any]], Any]
#: Why a dropped run was interrupted (the service says "client disconnected").
CLIENT_GONE = "client gone"


def user(text: str) -> Message:
    return Message(Role.USER, text)


def system(text: str) -> Message:
    return Message(Role.SYSTEM, text)


def calls(*names_args: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    """One scripted turn calling tools."""
    return {"text": text, "tool_calls": [{"name": n, "arguments": a} for n, a in names_args]}


def agent(
    script: list[dict[str, Any]],
    tools: list[str] | tuple[str, ...] | dict[str, dict[str, Any]] = ("add",),
    *,
    instructions: str = "You add numbers.",
    model: str = "scripted:test",
    needs_approval: tuple[str, ...] = (),
    **kw: Any,
) -> AgentSpec:
    """A scripted agent; ``tools`` maps each tool's name to its JSON Schema."""
    if not isinstance(tools, dict):
        tools = {name: {"type": "object"} for name in tools}
    return AgentSpec(
        model=model,
        instructions=instructions,
        tools=tuple(
            ToolSpec(n, input_schema_json=json.dumps(s), needs_approval=n in needs_approval)
            for n, s in tools.items()
        ),
        model_settings_json=json.dumps({"script": script}),
        **kw,
    )


@dataclass
class RunLog:
    """What one engine call emitted, and how it ended."""

    events: list[Event] = field(default_factory=list)
    error: LuoshoError | None = None
    dropped: bool = False
    outcome: Any = None  # the engine's RunOutcome (None: nothing to run, or it failed)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    @property
    def done(self) -> dict[str, Any] | None:
        """The ``run.done`` event's data."""
        return next((e.data for e in self.events if e.type == "run.done"), None)

    def of(self, type_: str) -> list[dict[str, Any]]:
        """The data of every event of a type, in order."""
        return [e.data for e in self.events if e.type == type_]

    @property
    def reason(self) -> str:
        return self.error.reason if self.error else ""


class Tools:
    """The engine's ``ToolPort`` for one run: results arrive through :meth:`deliver`."""

    def __init__(self) -> None:
        self.waiting: dict[str, asyncio.Future[ToolOutcome]] = {}

    def expect(self, call_id: str, *, reconcile: bool = False) -> asyncio.Future[ToolOutcome]:
        fut: asyncio.Future[ToolOutcome] = asyncio.get_running_loop().create_future()
        self.waiting[call_id] = fut
        return fut

    def forget(self, call_id: str) -> None:
        self.waiting.pop(call_id, None)

    def deliver(
        self,
        call_id: str,
        result_json: str,
        is_error: bool = False,
        saved: asyncio.Future[None] | None = None,
    ) -> bool:
        """Hand a result to the waiting call; False when no call waits for it. ``saved``
        is settled once the result is durable (R54), as ``SubmitToolResult`` waits for."""
        fut = self.waiting.get(call_id)
        if fut is None or fut.done():
            return False
        fut.set_result(ToolOutcome(result_json, is_error, saved))
        return True


class _Sink:
    """The run's events, in order, acted on as a client would act on its stream."""

    def __init__(
        self,
        log: RunLog,
        control: RunControl,
        port: Tools,
        tools: dict[str, ToolFn],
        stop_at: Callable[[Event], bool] | None,
        on_event: Callable[[Event, Tools, RunControl], Awaitable[None] | None] | None,
    ) -> None:
        self.log, self.control, self.port, self.tools = log, control, port, tools
        self.stop_at, self.on_event = stop_at, on_event
        self.answering: set[asyncio.Task[None]] = set()

    async def emit(self, event: Event, encoded: bytes | None = None) -> None:
        if self.log.dropped:
            return  # the client is gone: nobody reads the rest
        if self.stop_at and self.stop_at(event):
            self.log.dropped = True
            self.control.interrupt(CLIENT_GONE)
            return
        self.log.events.append(event)
        if self.on_event:
            r = self.on_event(event, self.port, self.control)
            if inspect.isawaitable(r):
                await r
        if event.type == "tool.call":
            call = event.data["call"]
            fn = self.tools.get(call.name)
            if fn is not None:  # else the test answers it itself
                t = asyncio.create_task(self._answer(call.id, fn, call.arguments_json))
                self.answering.add(t)
                t.add_done_callback(self.answering.discard)

    async def _answer(self, call_id: str, fn: ToolFn, arguments_json: str) -> None:
        try:
            result = fn(json.loads(arguments_json))
            if inspect.isawaitable(result):
                result = await result
            body, is_error = json.dumps(result), False
        except Exception as e:  # noqa: BLE001 - the tool's failure is its result
            body, is_error = json.dumps({"error": str(e)}), True
        self.port.deliver(call_id, body, is_error)


class EngineHarness:
    """One engine on one store, as one daemon would hold it."""

    def __init__(
        self,
        store: Store | None = None,
        *,
        call_log: Path | None = None,
        tool_timeout_s: float = 30,
        owner: str = "engine-test",
        lease_ttl_s: float = 15,
        lease_renew_s: float = 5,
    ) -> None:
        """``store``: shared with another harness, it plays a second daemon (``owner``)."""
        self.store = store or MemoryStore()
        self.call_log = call_log
        self.engine = Engine(
            self.store,
            ProviderRegistry([ScriptedProvider(call_log=call_log)]),
            default_tool_timeout_s=tool_timeout_s,
            leases=LeasePolicy(owner, lease_ttl_s, lease_renew_s),
        )

    # -- runs -------------------------------------------------------------------------------

    async def run(
        self,
        session_id: str,
        input: str | list[Message] | None = None,
        agent: AgentSpec | None = None,
        tools: dict[str, ToolFn] | None = None,
        *,
        business_state: Any = UNSET,
        stop_at: Callable[[Event], bool] | None = None,
        resume: bool = False,
        history_limit: int | None = None,
        on_event: Callable[[Event, Tools, RunControl], Awaitable[None] | None] | None = None,
    ) -> RunLog:
        """Execute (``resume``: Resume) and answer tool calls with ``tools``. ``stop_at``
        drops the run at the first event it accepts, before acting on it (a client crash:
        the run is interrupted and stops at its next boundary). ``on_event`` sees every
        event with the run's tool port and control (to answer, abort, look around)."""
        msgs = [user(input)] if isinstance(input, str) else list(input or [])
        req = RunRequest(
            session_id,
            [] if resume else msgs,
            agent,
            None if business_state is UNSET else json.dumps(business_state),
            resume_only=resume,
            history_limit=history_limit,
        )
        return await self._drive(self.engine.run, req, tools, stop_at, on_event)

    async def resolve(
        self,
        approval_id: str,
        approved: bool,
        note: str = "",
        tools: dict[str, ToolFn] | None = None,
        *,
        agent: AgentSpec | None = None,
        on_event: Callable[[Event, Tools, RunControl], Awaitable[None] | None] | None = None,
    ) -> RunLog:
        """Decide an approval and continue its run, answering tool calls with ``tools``."""
        req = ResolveRequest(approval_id, approved, note, agent)
        return await self._drive(self.engine.resolve, req, tools, None, on_event)

    async def _drive(
        self,
        start: Callable[..., Awaitable[Any]],
        req: RunRequest | ResolveRequest,
        tools: dict[str, ToolFn] | None,
        stop_at: Callable[[Event], bool] | None,
        on_event: Callable[[Event, Tools, RunControl], Awaitable[None] | None] | None,
    ) -> RunLog:
        log, control, port = RunLog(), RunControl(), Tools()
        sink = _Sink(log, control, port, tools or {}, stop_at, on_event)
        try:
            log.outcome = await start(req, sink, port, control)
        except RunInterrupted:
            assert log.dropped, "interrupted, yet nobody dropped the run"
        except LuoshoError as e:
            log.error = e
        finally:
            for t in list(sink.answering):
                t.cancel()
        return log

    # -- what the unary RPCs read and write -------------------------------------------------

    async def get(self, session_id: str) -> Checkpoint:
        cp = await self.store.load(session_id)
        assert cp is not None, f"session {session_id!r} has no checkpoint"
        return cp

    async def history(self, session_id: str, limit: int | None = None) -> list[HistoryEntry]:
        return await self.store.history(session_id, **({} if limit is None else {"limit": limit}))

    async def fork(self, session_id: str, step: int, **kw: Any) -> Forked:
        patch = kw.pop("patch", None)
        return await fork(
            self.store, session_id, step, patch=patch or ForkPatch(), clock=self.engine.clock, **kw
        )

    async def compare(self, a: str, b: str) -> Comparison:
        return compare(await self.get(a), await self.get(b))

    async def delete(self, session_id: str, *, keep_history: bool = False) -> bool:
        return await self.engine.delete(session_id, keep_history=keep_history)

    def model_calls(self, session_id: str | None = None) -> int:
        """Scripted model calls made (the provider's call log)."""
        if not self.call_log or not self.call_log.exists():
            return 0
        lines = [json.loads(x) for x in self.call_log.read_text().splitlines()]
        return sum(1 for x in lines if session_id is None or x["session_id"] == session_id)


def tool_results(cp: Checkpoint) -> list[Message]:
    return [m for m in cp.messages if m.role is Role.TOOL]


def assert_valid_transcript(cp: Checkpoint) -> None:
    """R20/R23: every tool call has exactly one result, directly after its turn, in call
    order; only the last turn of an unfinished run may still lack some."""
    msgs = cp.messages
    all_ids: list[str] = []
    i = 0
    while i < len(msgs):
        m = msgs[i]
        assert m.role is not Role.TOOL, f"tool result without its call at {i}"
        i += 1
        if m.role is Role.ASSISTANT and m.tool_calls:
            ids = [c.id for c in m.tool_calls]
            got = []
            while i < len(msgs) and msgs[i].role is Role.TOOL:
                got.append(msgs[i].tool_call_id)
                i += 1
            if i < len(msgs) or cp.status is Status.FINISHED:
                assert got == ids, f"results {got} do not answer turn {ids}"
            else:
                assert got == ids[: len(got)], f"results {got} out of order for {ids}"
            all_ids += ids
    assert len(all_ids) == len(set(all_ids)), "duplicate tool call ids"
