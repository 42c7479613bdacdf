"""R74: ``request_id`` on Execute, Resume and Resolve is an idempotency key within the
session, through the gRPC API on memory, SQLite and LMDB (the ``h`` fixture), and across
two daemons on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import (
    Harness,
    RunLog,
    ToolFn,
    agent,
    assert_valid_transcript,
    calls,
    error_info,
    user,
)

SPEC = agent([calls(("add", {"a": 1}), ("add", {"a": 2})), {"text": "3"}])
ADD: dict[str, ToolFn] = {"add": lambda a: a["a"]}


async def send(
    h: Harness,
    request: pb.ExecuteRequest | pb.ResumeRequest | pb.ResolveRequest,
    tools: dict[str, ToolFn] | None = None,
    *,
    stop_at: Callable[[pb.Event], bool] | None = None,
) -> RunLog:
    """One attempt of a request: its events, answering tool calls with ``tools``;
    ``stop_at`` drops the stream (the client lost it) at the first event it accepts."""
    method = {
        pb.ExecuteRequest: h.stub.Execute,
        pb.ResumeRequest: h.stub.Resume,
        pb.ResolveRequest: h.stub.Resolve,
    }[type(request)]
    return await h.follow(
        method(request),
        getattr(request, "session_id", ""),
        tools,
        stop_at=stop_at,
        answer_in_turn=True,
    )


def execute(sid: str, text: str, request_id: str, spec: pb.AgentSpec = SPEC) -> pb.ExecuteRequest:
    return pb.ExecuteRequest(session_id=sid, input=[user(text)], agent=spec, request_id=request_id)


def replayed(log: RunLog) -> list[pb.Event]:
    """The events of a replay, each marked as replayed, without the mark."""
    assert log.events and all(e.replayed for e in log.events)
    out = []
    for e in log.events:
        e = pb.Event.FromString(e.SerializeToString())
        e.replayed = False
        out.append(e)
    return out


def user_turns(cp: pb.Checkpoint) -> list[str]:
    return [m.content for m in cp.messages if m.role == pb.ROLE_USER]


async def test_r74_retry_of_an_unfinished_run_resumes_it(h: Harness) -> None:
    first = await send(
        h, execute("s", "add", "req-1"), ADD, stop_at=lambda e: e.type == "tool.call"
    )
    assert first.dropped
    await h.idle("s")
    assert h.model_calls("s") == 1

    retry = await send(h, execute("s", "add", "req-1"), ADD)
    assert retry.error is None and retry.done is not None and retry.done.final_text == "3"
    start = retry.of("run.start")[0].run_start
    assert start.mode == pb.RUN_MODE_RESUME and start.request_id == "req-1"
    assert retry.of("run.start")[0].run_id == first.events[0].run_id  # the same run
    cp = await h.get("s")
    assert user_turns(cp) == ["add"]  # the input once
    assert h.model_calls("s") == 2  # the checkpointed turn is not generated again (R22)
    assert_valid_transcript(cp)


async def test_r74_retry_after_the_run_finished_replays_it(h: Harness) -> None:
    first = await send(h, execute("s", "add", "req-1"), ADD)
    assert first.done is not None and first.done.final_text == "3"
    later = await send(h, execute("s", "add again", "req-2"), ADD)  # another run after it
    assert later.done is not None
    calls_before, cp_before = h.model_calls("s"), await h.get("s")

    retry = await send(h, execute("s", "add", "req-1"), ADD)
    assert retry.error is None
    assert replayed(retry) == first.events  # the same events, seqs and all, ending as it ended
    again = await send(h, execute("s", "add again", "req-2"), ADD)
    assert replayed(again) == later.events
    assert h.model_calls("s") == calls_before  # nothing ran
    assert await h.get("s") == cp_before  # nothing appended, nothing saved
    assert user_turns(cp_before) == ["add", "add again"]


async def test_r74_retry_of_a_run_that_paused_replays_the_pause(h: Harness) -> None:
    spec = agent([calls(("pay", {"eur": 5})), {"text": "paid"}], ["pay"])
    spec.tools[0].needs_approval = True
    first = await send(h, execute("s", "pay", "req-1", spec))
    assert first.done is not None and first.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    retry = await send(h, execute("s", "pay", "req-1", spec))
    assert retry.error is None and replayed(retry) == first.events  # not SESSION_AWAITING_APPROVAL


async def test_r74_same_id_with_another_body_is_refused(h: Harness) -> None:
    first = await send(h, execute("s", "add", "req-1"), ADD)
    assert first.done is not None
    cp_before = await h.get("s")
    for other in (
        execute("s", "add twice", "req-1"),  # other input
        execute("s", "add", "req-1", agent([{"text": "x"}])),  # another agent
        pb.ResumeRequest(session_id="s", request_id="req-1"),  # another RPC
    ):
        log = await send(h, other, ADD)
        assert log.error is not None and log.events == []
        code, reason, meta = error_info(log.error)
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
        assert meta["request_id"] == "req-1" and meta["session_id"] == "s"
    assert await h.get("s") == cp_before
    assert h.model_calls("s") == 2


async def test_r74_a_new_id_runs_as_before(h: Harness) -> None:
    await send(h, execute("s", "add", "req-1"), ADD)
    log = await send(h, execute("s", "add", "req-2"), ADD)  # the same text, a new id: R16
    assert log.done is not None and log.of("run.start")[0].run_start.mode == pb.RUN_MODE_CONTINUE
    assert user_turns(await h.get("s")) == ["add", "add"]
    assert h.model_calls("s") == 3  # the script's last turn answers the new one
    other = await send(h, execute("t", "add", "req-1"), ADD)  # ids are per session
    assert other.done is not None and user_turns(await h.get("t")) == ["add"]


async def test_r74_new_input_for_an_unfinished_run_is_applied_once(h: Harness) -> None:
    """The input queued behind a pending call (R12) is saved with the request's id, so a
    retry after any loss of the stream neither drops it nor appends it twice."""
    spec = agent([calls(("add", {"a": 1})), {"text": "one"}, {"text": "two"}])
    first = await send(
        h, execute("s", "start", "req-1", spec), stop_at=lambda e: e.type == "tool.call"
    )
    assert first.dropped
    await h.idle("s")
    # The redirect: the pending call runs first, then the input; the stream is lost as
    # soon as the call's result is recorded, wherever the run then is.
    lost = await send(
        h, execute("s", "redirect", "req-2", spec), ADD, stop_at=lambda e: e.type == "tool.result"
    )
    assert lost.dropped
    await h.idle("s")
    retry = await send(h, execute("s", "redirect", "req-2", spec), ADD)
    assert retry.error is None and retry.done is not None
    cp = await h.get("s")
    assert user_turns(cp) == ["start", "redirect"]
    assert_valid_transcript(cp)


async def test_r74_resolve_retry_resumes_or_replays_the_run(h: Harness) -> None:
    spec = agent([calls(("pay", {"eur": 5}), ("add", {"a": 1})), {"text": "paid"}], ["pay", "add"])
    spec.tools[0].needs_approval = True
    paused = await send(h, execute("s", "pay", "req-1", spec))
    approval_id = paused.of("approval.requested")[0].approval_requested.approval.approval_id
    resolve = pb.ResolveRequest(
        approval_id=approval_id, approved=True, request_id="dec-1", session_id="s"
    )
    tools: dict[str, ToolFn] = {"pay": lambda a: "ok", "add": lambda a: a["a"]}
    lost = await send(
        h,
        resolve,
        tools,
        stop_at=lambda e: e.type == "tool.call" and e.tool_call.call.name == "add",
    )
    assert lost.dropped
    await h.idle("s")
    resumed = await send(h, resolve, tools)  # the approval is claimed: the retry resumes
    assert resumed.error is None and resumed.done is not None and resumed.done.final_text == "paid"
    assert resumed.of("run.start")[0].run_start.request_id == "dec-1"
    assert [e.tool_call.call.name for e in resumed.of("tool.call")] == ["add"]  # pay ran once

    again = await send(h, resolve, tools)  # the run ended: the retry replays it
    assert again.error is None and replayed(again)[-1] == resumed.events[-1]
    assert replayed(again)[0] == lost.events[0]  # from the request's own run.start
    assert h.model_calls("s") == 2

    other = pb.ResolveRequest(
        approval_id=approval_id, approved=False, request_id="dec-1", session_id="s"
    )
    log = await send(h, other, tools)
    assert error_info(log.error)[1] == "REQUEST_ID_REUSED"
    without_session = pb.ResolveRequest(approval_id=approval_id, approved=True, request_id="dec-1")
    log = await send(h, without_session, tools)  # the daemon cannot tell which session
    assert error_info(log.error)[1] == "APPROVAL_NOT_FOUND"
    cp = await h.get("s")
    assert_valid_transcript(cp)
    assert sum(1 for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_name == "pay") == 1


# -- trimmed event logs ---------------------------------------------------------------------


@pytest.fixture
async def daemon_with(store_url: str, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """Starts a daemon on the test's store with some settings changed."""
    started: list[tuple[Daemon, Harness]] = []

    async def start(**changes: Any) -> Harness:
        cfg = Config(
            listen=["127.0.0.1:0"],
            store=store_url,
            scripted_call_log=tmp_path / "calls.jsonl",
            tool_timeout_s=30,
            drain_timeout_s=5,
            **changes,
        )
        d = Daemon(cfg)
        await d.start()
        started.append((d, Harness(d.addresses[0], d, cfg.scripted_call_log)))
        return started[-1][1]

    try:
        yield start
    finally:
        for d, harness in started:
            await harness.close()
            await d.stop()


async def test_r74_retry_after_the_events_were_trimmed_ends_as_the_run_ended(
    daemon_with: Any,
) -> None:
    h = await daemon_with(event_log_limit=6)  # short enough to trim a run's events away
    first = await send(h, execute("s", "add", "req-1"), ADD)
    assert len(first.events) == 12
    partly = await send(h, execute("s", "add", "req-1"), ADD)
    assert replayed(partly) == first.events[-6:]  # what the log keeps, ending with run.done
    for i in range(2):
        await send(h, execute("s", f"more {i}", f"req-{i + 2}"), ADD)
    retry = await send(h, execute("s", "add", "req-1"), ADD)
    assert retry.error is None
    assert replayed(retry) == [first.events[-1]]  # only run.done, as the run ended
    assert user_turns(await h.get("s")) == ["add", "more 0", "more 1"]


async def test_r83_a_retry_after_the_events_were_trimmed_replays_the_output_json(
    daemon_with: Any,
) -> None:
    h = await daemon_with(event_log_limit=4)
    answers = ['"one"', '{"n": 1}', '{"n": 2}', '{"n": 3}']  # the first answer gets a repair
    spec = agent(
        [{"text": t} for t in answers],
        [],
        output_schema_json='{"type": "object", "required": ["n"]}',
    )
    first = await send(h, execute("s", "count", "req-1", spec))
    assert first.done.output_json == '{"n":1}'
    for i in range(2):
        await send(h, execute("s", f"more {i}", f"req-{i + 2}", spec))
    retry = await send(h, execute("s", "count", "req-1", spec))
    assert replayed(retry) == [first.events[-1]]  # run.done rebuilt from the checkpoint
    assert retry.done.output_json == '{"n":1}'


async def test_r74_a_session_keeps_the_newest_request_ids(daemon_with: Any) -> None:
    h = await daemon_with(request_id_limit=2)
    for i in (1, 2, 3):
        assert (await send(h, execute("s", f"turn {i}", f"req-{i}"), ADD)).done is not None
    calls_before = h.model_calls("s")
    kept = await send(h, execute("s", "turn 2", "req-2"), ADD)
    assert (
        kept.of("run.start")[0].run_start.request_id == "req-2"
        and h.model_calls("s") == calls_before
    )
    dropped = await send(h, execute("s", "turn 1", "req-1"), ADD)  # no longer kept: runs anew
    assert dropped.of("run.start")[0].run_start.mode == pb.RUN_MODE_CONTINUE
    assert user_turns(await h.get("s")) == ["turn 1", "turn 2", "turn 3", "turn 1"]


async def test_r74_a_request_id_over_128_characters_is_refused(h: Harness) -> None:
    log = await send(h, execute("s", "add", "r" * 129), ADD)
    assert error_info(log.error)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST_ID")
    log = await send(h, execute("s", "add", "r" * 128), ADD)
    assert log.done is not None


# -- two daemons on PostgreSQL --------------------------------------------------------------


@pytest.fixture
async def pg_daemons(postgres_url: str, tmp_path: Path) -> AsyncIterator[tuple[Harness, Harness]]:
    daemons, harnesses = [], []
    for _ in range(2):
        cfg = Config(
            listen=["127.0.0.1:0"],
            store=postgres_url,
            scripted_call_log=tmp_path / "calls.jsonl",
            tool_timeout_s=30,
            drain_timeout_s=5,
        )
        d = Daemon(cfg)
        await d.start()
        daemons.append(d)
        harnesses.append(Harness(d.addresses[0], d, cfg.scripted_call_log))
    try:
        yield harnesses[0], harnesses[1]
    finally:
        for hh in harnesses:
            await hh.close()
        for d in daemons:
            await d.stop()


async def test_r74_across_two_daemons_on_postgresql(pg_daemons: tuple[Harness, Harness]) -> None:
    a, b = pg_daemons
    lost = await send(a, execute("s", "add", "req-1"), ADD, stop_at=lambda e: e.type == "tool.call")
    assert lost.dropped
    await a.idle("s")
    resumed = await send(b, execute("s", "add", "req-1"), ADD)  # retried on the other daemon
    assert (
        resumed.done is not None and resumed.of("run.start")[0].run_start.mode == pb.RUN_MODE_RESUME
    )
    again = await send(a, execute("s", "add", "req-1"), ADD)
    assert replayed(again)[-1] == resumed.events[-1] and replayed(again)[0] == lost.events[0]
    refused = await send(b, execute("s", "other", "req-1"), ADD)
    assert error_info(refused.error)[1] == "REQUEST_ID_REUSED"
    fresh = await send(b, execute("s", "add", "req-2"), ADD)
    assert fresh.done is not None
    cp = await a.get("s")
    assert user_turns(cp) == ["add", "add"]
    assert a.model_calls("s") == 3
    assert_valid_transcript(cp)
