"""Approvals, history, fork, compare and watch, against the real daemon.

The other client tests use the null server; these calls need the engine and the store,
so the daemon itself is started in-process as ``tests/conftest.py`` does (``Daemon(
Config(...))``, ``start()``, ``addresses[0]``, ``stop()``, memory store), except that it is
served by an event loop in a thread of its own: the blocking client would otherwise block
the loop that serves it.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

import luosho.client as lc
from luosho.client import Agent, AsyncClient, Client, Tool, ToolResultPatch
from luosho.v1 import agent_pb2
from luoshod.server.app import Config, Daemon

PAY_SCRIPT = [{"tool_calls": [{"name": "pay", "arguments": {"amount": 5}}]}, {"text": "paid"}]
PAY = Agent(
    "scripted:x",
    tools=[Tool("pay", input_schema={"type": "object"}, needs_approval=True)],
    model_settings={"script": PAY_SCRIPT},
)
ADD_SCRIPT = [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, {"text": "done"}]
ADD = Agent("scripted:x", tools=[Tool("add")], model_settings={"script": ADD_SCRIPT})


def add(args: dict[str, int]) -> dict[str, int]:
    return {"sum": args["a"] + args["b"]}


class DaemonThread:
    """A real daemon (memory store) served by an event loop running in a daemon thread."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="luoshod", daemon=True)
        self._daemon: Daemon | None = None

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(60)

    async def _start(self) -> Daemon:
        daemon = Daemon(self._config)
        await daemon.start()
        return daemon

    def start(self) -> str:
        self._thread.start()
        self._daemon = self._run(self._start())
        return self._daemon.addresses[0]

    def stop(self) -> None:
        if self._daemon is not None:
            self._run(self._daemon.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


@pytest.fixture
def start_daemon() -> Iterator[Callable[..., str]]:
    """start_daemon(**config) -> "host:port" of a fresh daemon, stopped after the test."""
    started: list[DaemonThread] = []

    def start(**config: Any) -> str:
        server = DaemonThread(
            Config(listen=["127.0.0.1:0"], store="memory://", drain_timeout_s=2, **config)
        )
        started.append(server)
        return server.start()

    try:
        yield start
    finally:
        for server in reversed(started):
            server.stop()


@pytest.fixture
def address(start_daemon: Callable[..., str]) -> str:
    return start_daemon()


class Counter:
    """A tool that records its calls."""

    def __init__(self, result: Any = "ok") -> None:
        self.calls: list[dict[str, Any]] = []
        self.result = result

    def __call__(self, args: dict[str, Any]) -> Any:
        self.calls.append(args)
        return self.result


def types(events: list[agent_pb2.Event]) -> list[str]:
    return [e.type for e in events]


# ---- approvals ---------------------------------------------------------------------------


async def test_a_gated_tool_pauses_the_run_with_its_approval(address: str) -> None:
    pay = Counter()
    async with AsyncClient(address) as client:
        result = await client.execute("order-1", "pay me", agent=PAY, tools={"pay": pay})
        listed = [a async for a in client.approvals()]
        of_session = [a async for a in client.approvals("order-1")]
        of_other = [a async for a in client.approvals("order-2")]
        checkpoint = await client.get_session("order-1")
        with pytest.raises(lc.SessionAwaitingApprovalError) as again:
            await client.execute("order-1", "hurry", agent=PAY)

    assert (result.finish_reason, result.status) == ("awaiting_approval", "awaiting_approval")
    assert types(result.events)[-2:] == ["approval.requested", "run.done"]
    assert pay.calls == []
    approval = result.approval
    assert approval is not None and approval.approval_id == result.approval_id
    assert approval == result.events[-2].approval_requested.approval
    assert approval.session_id == "order-1" and approval.step == 1
    assert approval.tool_call.name == "pay"
    assert json.loads(approval.tool_call.arguments_json) == {"amount": 5}
    assert not approval.HasField("expires_at")
    assert listed == of_session == [approval]
    assert of_other == []
    assert checkpoint.status == agent_pb2.CHECKPOINT_STATUS_AWAITING_APPROVAL
    assert checkpoint.approval_id == result.approval_id
    assert again.value.approval_id == result.approval_id


async def test_approved_the_tool_runs_once_and_the_run_goes_on(address: str) -> None:
    pay = Counter({"receipt": "r-1"})
    async with AsyncClient(address) as client:
        paused = await client.execute("order-1", "pay me", agent=PAY)
        run = client.resolve(paused.approval_id, True, tools={"pay": pay}, request_id="rq-9")
        assert run.session_id == ""
        events = [event async for event in run]
        result = await run
        pending = [a async for a in client.approvals()]
        with pytest.raises(lc.ApprovalNotFoundError) as second:
            await client.resolve(paused.approval_id, True, tools={"pay": pay})

    assert pay.calls == [{"amount": 5}]
    assert run.session_id == result.session_id == "order-1"
    assert events[0].run_start.request_id == "rq-9"
    assert "tool.call" in types(events)
    (recorded,) = [e.tool_result for e in events if e.type == "tool.result"]
    assert (json.loads(recorded.result_json), recorded.is_error) == ({"receipt": "r-1"}, False)
    assert (result.finish_reason, result.status, result.final_text) == ("stop", "finished", "paid")
    assert result.approval is None and result.approval_id == ""
    assert pending == []
    err = second.value
    assert (err.code, err.reason) == (grpc.StatusCode.NOT_FOUND, "APPROVAL_NOT_FOUND")
    assert err.approval_id == paused.approval_id


async def test_rejected_the_tool_gets_a_rejection_result(address: str) -> None:
    pay = Counter()
    async with AsyncClient(address) as client:
        paused = await client.execute("order-1", "pay me", agent=PAY)
        result = await client.resolve(
            paused.approval_id, False, note="over budget", tools={"pay": pay}
        )
        checkpoint = await client.get_session("order-1")

    assert pay.calls == []
    assert "tool.call" not in types(result.events)
    (recorded,) = [e.tool_result for e in result.events if e.type == "tool.result"]
    assert recorded.is_error and recorded.tool_name == "pay"
    rejection = json.loads(recorded.result_json)
    assert rejection["rejected"] is True and rejection["note"] == "over budget"
    assert (result.finish_reason, result.final_text) == ("stop", "paid")
    (tool_message,) = [m for m in checkpoint.messages if m.role == agent_pb2.ROLE_TOOL]
    assert tool_message.is_error and json.loads(tool_message.content) == rejection


def test_approvals_round_trip_sync(address: str) -> None:
    pay = Counter("ok")
    with Client(address) as client:
        first = client.execute("order-a", "pay", agent=PAY, tools={"pay": pay}).result()
        second = client.execute("order-b", "pay", agent=PAY, tools={"pay": pay}).result()
        listed = list(client.approvals(page_size=1))

        with client.resolve(first.approval_id, True, tools={"pay": pay}) as run:
            seen = types(list(run))
        approved = run.result()
        rejected = client.resolve(second.approval_id, False, note="no").result()
        with pytest.raises(lc.ApprovalNotFoundError):
            client.resolve(second.approval_id, True).result()
        left = list(client.approvals())

    assert [a.approval_id for a in listed] == [first.approval_id, second.approval_id]
    assert first.approval == listed[0] and second.approval == listed[1]
    assert "tool.call" in seen and seen[-1] == "run.done"
    assert pay.calls == [{"amount": 5}]
    assert (approved.session_id, approved.final_text) == ("order-a", "paid")
    assert rejected.session_id == "order-b"
    assert [e.tool_result.is_error for e in rejected.events if e.type == "tool.result"] == [True]
    assert left == []


async def test_approval_timeout_sets_the_expiry(address: str) -> None:
    agent = Agent(
        "scripted:x",
        tools=[Tool("pay", needs_approval=True)],
        model_settings={"script": PAY_SCRIPT},
        approval_timeout_ms=60_000,
    )
    async with AsyncClient(address) as client:
        result = await client.execute("order-1", "pay", agent=agent)
        with pytest.raises(lc.InvalidArgumentError) as invalid:
            await client.execute("order-2", "pay", agent=Agent("scripted:x", approval_timeout_ms=0))

    approval = result.approval
    assert approval is not None and approval.HasField("expires_at")
    expires = approval.expires_at.ToMilliseconds() - approval.created_at.ToMilliseconds()
    assert expires == pytest.approx(60_000, abs=2)
    assert invalid.value.reason == "INVALID_APPROVAL_TIMEOUT"


# ---- history -------------------------------------------------------------------------------


async def test_history_pages_newest_first(address: str) -> None:
    async with AsyncClient(address) as client:
        await client.execute("h-1", "go", agent=ADD, tools={"add": add})
        everything = [e async for e in client.history("h-1")]
        paged = [e async for e in client.history("h-1", page_size=2)]
        full = [e async for e in client.history("h-1", include_checkpoint=True, page_size=1)]
        unknown = [e async for e in client.history("nobody")]

    assert len(everything) >= 3
    versions = [e.version for e in everything]
    assert versions == sorted(versions, reverse=True)
    assert paged == everything
    assert all(not e.HasField("checkpoint") for e in everything)
    assert [e.version for e in full] == versions
    assert all(e.checkpoint.version == e.version for e in full)
    assert full[0].checkpoint.status == agent_pb2.CHECKPOINT_STATUS_FINISHED
    assert [len(e.checkpoint.messages) for e in full] == [e.message_count for e in everything]
    assert unknown == []


def test_history_limit_and_paging_sync(address: str) -> None:
    with Client(address) as client:
        client.execute("h-2", "go", agent=ADD, tools={"add": add}, history_limit=2).result()
        entries = list(client.history("h-2", page_size=1))
        with pytest.raises(lc.InvalidArgumentError) as invalid:
            client.execute("h-3", "go", agent=ADD, history_limit=-1).result()

    assert len(entries) == 2
    assert entries[0].status == agent_pb2.CHECKPOINT_STATUS_FINISHED
    assert entries[0].version > entries[1].version
    assert invalid.value.reason == "INVALID_HISTORY_LIMIT"


# ---- fork and compare ------------------------------------------------------------------------


async def test_fork_with_a_patched_result_resumes_and_compares(address: str) -> None:
    tool = Counter()
    async with AsyncClient(address) as client:
        source = await client.execute("trip", "add", agent=ADD, tools={"add": add})
        forked = await client.fork(
            "trip",
            1,
            new_session_id="trip-b",
            business_state={"branch": "b"},
            tool_result=ToolResultPatch("call_0_0", {"sum": 99}),
        )
        resumed = await client.resume("trip-b", tools={"add": tool})
        same = await client.compare("trip", "trip")
        diff = await client.compare("trip", "trip-b")
        source_after = await client.get_session("trip")

    assert (forked.session_id, forked.step) == ("trip-b", 1)
    checkpoint = forked.checkpoint
    assert checkpoint.status == agent_pb2.CHECKPOINT_STATUS_IN_PROGRESS
    assert json.loads(checkpoint.business_state_json) == {"branch": "b"}
    assert json.loads(checkpoint.messages[-1].content) == {"sum": 99}
    # The recorded (patched) result is not run again: the fork goes on with the model.
    assert tool.calls == [] and "tool.call" not in types(resumed.events)
    assert (resumed.session_id, resumed.final_text) == ("trip-b", "done")
    assert source.final_text == "done"
    assert source_after.status == agent_pb2.CHECKPOINT_STATUS_FINISHED

    assert not same.HasField("diverged_at")
    assert diff.HasField("diverged_at") and diff.diverged_at == 1
    assert json.loads(diff.a[0].calls[0].result_json) == {"sum": 3}
    assert json.loads(diff.b[0].calls[0].result_json) == {"sum": 99}
    assert list(diff.drift.tool_order_a) == list(diff.drift.tool_order_b) == ["add"]
    assert not diff.drift.tool_order_changed


def test_fork_defaults_and_errors_sync(address: str) -> None:
    with Client(address) as client:
        client.execute("trip", "add", agent=ADD, tools={"add": add}).result()
        first = client.fork("trip", 1, messages=["start over"], append_input="and then?")
        second = client.fork("trip", 1, tool_result=("call_0_0", {"sum": 4}, True))
        with pytest.raises(lc.SessionExistsError) as exists:
            client.fork("trip", 1, new_session_id="trip")
        with pytest.raises(lc.CheckpointNotFoundError) as no_step:
            client.fork("trip", 7)
        with pytest.raises(lc.InvalidArgumentError) as unknown_call:
            client.fork("trip", 1, tool_result=("call_9_9", None))
        resumed = client.resume(first.session_id).result()

    assert (first.session_id, second.session_id) == ("trip.fork-1", "trip.fork-2")
    assert [(m.role, m.content) for m in first.checkpoint.messages] == [
        (agent_pb2.ROLE_USER, "start over"),
        (agent_pb2.ROLE_USER, "and then?"),
    ]
    assert second.checkpoint.messages[-1].is_error
    assert exists.value.code is grpc.StatusCode.ALREADY_EXISTS
    assert exists.value.reason == "SESSION_EXISTS"
    assert no_step.value.metadata["kept_steps"] == "1,2"
    assert unknown_call.value.reason == "UNKNOWN_TOOL_CALL"
    # The rewritten transcript has no assistant turn yet: the script starts from turn 0,
    # whose tool call the resumed run (given no tools) answers with an error result.
    assert resumed.session_id == "trip.fork-1" and resumed.status == "finished"


# ---- watch ---------------------------------------------------------------------------------


async def test_watch_replays_and_resumes_from_a_cursor(address: str) -> None:
    async with AsyncClient(address) as client:
        result = await client.execute("w-1", "go", agent=ADD, tools={"add": add})
        async with client.watch("w-1") as watch:
            replay = [event async for event in watch]
        cursor = 4
        rest = [event async for event in client.watch("w-1", after_seq=cursor)]
        tail = client.watch("w-1", after_seq=watch.last_seq)
        nothing = [event async for event in tail]
        unknown = [event async for event in client.watch("nobody")]

    assert replay == result.events
    assert [e.seq for e in replay] == list(range(1, len(replay) + 1))
    assert watch.last_seq == replay[-1].seq
    assert rest == replay[cursor:]
    assert nothing == [] and tail.last_seq == watch.last_seq
    assert unknown == []


async def test_watch_follows_a_live_run(address: str) -> None:
    gate = asyncio.Event()

    async def slow_add(args: dict[str, int]) -> dict[str, int]:
        await gate.wait()
        return add(args)

    async with AsyncClient(address) as client:
        run = client.execute("w-2", "go", agent=ADD, tools={"add": slow_add})
        async for event in run:
            if event.type == "tool.call":
                break
        # The run waits for the tool: a watch now replays, then follows to run.done. The
        # daemon subscribes a watch before it replays, so once the first replayed event is
        # here the rest of the run can only reach the watch live.
        replayed = asyncio.Event()
        events: list[agent_pb2.Event] = []

        async def follow() -> None:
            async for event in client.watch("w-2", after_seq=1):
                events.append(event)
                replayed.set()

        watched = asyncio.create_task(follow())
        await asyncio.wait_for(replayed.wait(), 10)
        gate.set()
        result = await run
        await asyncio.wait_for(watched, 10)

    assert events == result.events[1:]
    assert events[-1].type == "run.done"


async def test_a_following_watch_spans_runs_until_closed(address: str) -> None:
    async with AsyncClient(address) as client:
        first = await client.execute("w-3", "go", agent=ADD, tools={"add": add})
        # From one before the first run's last event: that one is replayed, and the daemon
        # subscribes a watch before it replays, so the second run can only come live.
        watch = client.watch("w-3", after_seq=first.events[-1].seq - 1, follow=True)
        received: list[agent_pb2.Event] = []
        subscribed = asyncio.Event()
        second_done = asyncio.Event()

        async def follow() -> None:
            async for event in watch:
                received.append(event)
                subscribed.set()
                if event.type == "run.done" and len(received) > 1:
                    second_done.set()

        task = asyncio.create_task(follow())
        await asyncio.wait_for(subscribed.wait(), 10)
        second = await client.execute("w-3", "again", agent=ADD, tools={"add": add})
        await asyncio.wait_for(second_done.wait(), 10)
        await watch.aclose()  # from another task: its loop just ends
        await asyncio.wait_for(task, 10)

    assert received == [first.events[-1], *second.events]
    assert watch.last_seq == second.events[-1].seq


def test_watch_sync_and_close_from_another_thread(address: str) -> None:
    with Client(address) as client:
        result = client.execute("w-4", "go", agent=ADD, tools={"add": add}).result()
        with client.watch("w-4", after_seq=2) as watch:
            replay = list(watch)
        following = client.watch("w-4", after_seq=result.events[-1].seq, follow=True)
        closer = threading.Timer(0.2, following.close)
        closer.start()
        tail = list(following)  # blocks until closed, then ends quietly
        closer.join()

    assert replay == result.events[2:] and watch.last_seq == result.events[-1].seq
    assert tail == [] and following.last_seq == result.events[-1].seq


def test_watch_cursor_older_than_the_kept_log(start_daemon: Callable[..., str]) -> None:
    address = start_daemon(event_log_limit=5)
    with Client(address) as client:
        result = client.execute("w-5", "go", agent=ADD, tools={"add": add}).result()
        last = result.events[-1].seq
        with pytest.raises(lc.EventsOutOfRangeError) as caught:
            list(client.watch("w-5", after_seq=1))
        kept = list(client.watch("w-5", after_seq=caught.value.oldest_kept_seq - 1))

    err = caught.value
    assert (err.code, err.reason) == (grpc.StatusCode.OUT_OF_RANGE, "EVENTS_OUT_OF_RANGE")
    assert err.oldest_kept_seq == last - 4
    assert kept == result.events[-5:]


# ---- tool calls nobody waits for ---------------------------------------------------------------


async def test_a_result_for_a_call_no_run_waits_for(address: str) -> None:
    async def never(args: dict[str, Any]) -> None:
        await asyncio.Event().wait()

    async with AsyncClient(address) as client:
        async with client.execute("t-1", "go", agent=ADD, tools={"add": never}) as run:
            async for event in run:
                if event.type == "tool.call":
                    break
        # Leaving the run stopped it; a watch ends once the daemon has let the run go.
        [event async for event in client.watch("t-1")]
        with pytest.raises(lc.ToolCallNotPendingError) as caught:
            await client.submit_tool_result("t-1", "call_0_0", {"sum": 3})
        resumed = await client.resume("t-1", tools={"add": add})

    assert caught.value.code is grpc.StatusCode.FAILED_PRECONDITION
    assert caught.value.metadata["tool_call_id"] == "call_0_0"
    assert resumed.final_text == "done"


# ---- the README's approvals example ------------------------------------------------------------

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_block(section: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {section}\n")
    match = re.search(r"^```python\n(.*?)^```", text[start:], re.DOTALL | re.MULTILINE)
    assert match, f"README.md has no python block under {section!r}"
    return match.group(1)


async def test_readme_approvals_example(address: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {"__name__": "readme_approvals"}
    exec(compile(readme_block("Approvals"), str(README), "exec"), namespace)

    async with AsyncClient(address) as client:
        await namespace["checkout"](client)
        await namespace["review"](client, limit=1000)
        await client.execute("order-8", "Pay", agent=namespace["agent"])
        await namespace["review"](client)
        order_8 = await client.get_session("order-8")

    assert capsys.readouterr().out.splitlines() == [
        'waiting: pay {"amount": 250}',
        "order-7 approved Done.",
        "order-8 rejected Done.",
    ]
    assert json.loads(order_8.messages[-2].content)["note"] == "over 100"
