"""SEMANTICS.md R35–R45: history, fork and compare over the gRPC API."""

from __future__ import annotations

import json

import grpc
import pytest
from luosho.v1 import agent_pb2 as pb

from support import Harness, agent, assert_valid_transcript, calls, error_info

SCRIPT = [calls(("add", {"a": 1})), calls(("add", {"a": 2})), {"text": "done"}]


def add(args):
    return args["a"] * 10


async def history(h: Harness, sid: str, **kw) -> list[pb.HistoryEntry]:
    return list((await h.stub.History(pb.HistoryRequest(session_id=sid, **kw))).entries)


async def test_r35_every_save_appends_newest_first(h: Harness) -> None:
    await h.run("r35", "go", agent(SCRIPT), {"add": add})
    entries = await history(h, "r35", include_checkpoint=True)
    # R1 + result for step 1, R1 + result for step 2, finished at step 3
    assert [e.step for e in entries] == [3, 2, 2, 1, 1]
    assert entries[0].status == pb.CHECKPOINT_STATUS_FINISHED
    assert [e.version for e in entries] == [5, 4, 3, 2, 1]
    assert all(e.checkpoint.session_id == "r35" for e in entries)
    assert entries[0].saved_at.ToNanoseconds() >= entries[-1].saved_at.ToNanoseconds()
    assert entries[0].checkpoint.messages == (await h.get("r35")).messages
    bare = await history(h, "r35")
    assert not bare[0].HasField("checkpoint") and bare[0].message_count == len(entries[0].checkpoint.messages)


async def test_r35_per_session_history_limit_and_negative_refused(h: Harness) -> None:
    await h.run("lim", "go", agent(SCRIPT), {"add": add}, history_limit=2)
    assert len(await history(h, "lim")) == 2
    await h.run("none", "go", agent(SCRIPT), {"add": add}, history_limit=0)
    assert await history(h, "none") == []
    log = await h.run("neg", "go", agent(SCRIPT), history_limit=-1)
    assert error_info(log.error)[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_HISTORY_LIMIT")


async def test_r35_the_daemon_limit_applies_by_default(daemon, h: Harness) -> None:
    await h.run("dflt", "go", agent([calls(("add", {"a": k})) for k in range(30)], max_steps=40), {"add": add})
    assert len(await history(h, "dflt", page_size=1000)) == daemon.config.history_limit == 50


async def test_r36_r37_same_step_twice_and_the_limit_drops_the_oldest(h: Harness) -> None:
    await h.run("r36", "go", agent(SCRIPT), {"add": add}, history_limit=3)
    entries = await history(h, "r36")
    assert [e.step for e in entries] == [3, 2, 2]  # limit 3: the oldest went
    assert [e.step for e in await history(h, "r36", page_size=1)] == [3]
    page = await h.stub.History(pb.HistoryRequest(session_id="r36", page_size=2))
    rest = await h.stub.History(pb.HistoryRequest(session_id="r36", page_size=2, page_token=page.next_page_token))
    assert [e.version for e in [*page.entries, *rest.entries]] == [e.version for e in entries]
    assert rest.next_page_token == ""
    assert await history(h, "nobody") == []  # R37


async def test_r38_sessions_apart_and_delete_with_keep_history(h: Harness) -> None:
    await h.run("r38a", "go", agent(SCRIPT), {"add": add})
    await h.run("r38b", "go", agent([{"text": "hi"}]))
    assert len(await history(h, "r38b")) == 1
    await h.stub.DeleteSession(pb.DeleteSessionRequest(session_id="r38b"))
    assert await history(h, "r38b") == []
    await h.stub.DeleteSession(pb.DeleteSessionRequest(session_id="r38a", keep_history=True))
    kept = await history(h, "r38a")
    assert len(kept) == 5
    await h.run("r38a", "again", agent([{"text": "fresh"}]))
    grown = await history(h, "r38a")
    assert grown[0].step == 1 and [e.version for e in grown[1:]] == [e.version for e in kept]
    assert [m.content for m in (await h.get("r38a")).messages if m.role == pb.ROLE_USER] == ["again"]


async def test_r39_load_returns_only_the_latest(h: Harness) -> None:
    await h.run("r39", "go", agent(SCRIPT), {"add": add})
    cp = await h.get("r39")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED and cp.version == 5


async def fork(h: Harness, sid: str, step: int, **kw) -> pb.ForkResponse:
    return await h.stub.Fork(pb.ForkRequest(session_id=sid, from_step=step, **kw))


async def test_r40_r42_r44_fork_from_a_step_and_resume_it(h: Harness) -> None:
    await h.run("trip", "go", agent(SCRIPT), {"add": add})
    source = await h.get("trip")
    forked = await fork(h, "trip", 1, patch=pb.ForkPatch(tool_result=pb.ToolResultPatch(tool_call_id="call_0_0", result_json="999")))
    assert forked.session_id == "trip.fork-1" and forked.step == 1  # R42
    cp = forked.checkpoint
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS and cp.step_index == 1  # R44
    assert [m.content for m in cp.messages if m.role == pb.ROLE_TOOL] == ["999"]
    assert (await h.get("trip")) == source  # R40: the source is unchanged
    second = await fork(h, "trip", 1)
    assert second.session_id == "trip.fork-2"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await fork(h, "trip", 1, new_session_id="trip.fork-1")
    assert error_info(err.value)[:2] == (grpc.StatusCode.ALREADY_EXISTS, "SESSION_EXISTS")
    calls_seen: list[str] = []
    log = await h.run("trip.fork-1", [], tools={"add": add}, on_event=lambda e: calls_seen.append(e.tool_call.call.id) if e.type == "tool.call" else None)
    assert calls_seen == ["call_1_0"]  # recorded results are not re-run
    assert log.done.step_index == 3
    assert_valid_transcript(await h.get("trip.fork-1"))


async def test_r41_unknown_session_or_step_lists_the_kept_steps(h: Harness) -> None:
    await h.run("r41", "go", agent(SCRIPT), {"add": add})
    for sid, step in (("r41", 7), ("ghost", 1)):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await fork(h, sid, step)
        code, reason, meta = error_info(err.value)
        assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "CHECKPOINT_NOT_FOUND")
    assert "kept steps: [1, 2, 3]" in (await _details(h, "r41", 7))


async def _details(h: Harness, sid: str, step: int) -> str:
    try:
        await fork(h, sid, step)
    except grpc.aio.AioRpcError as err:
        return err.details()
    return ""


async def test_r43_patch_order_messages_state_result_then_input(h: Harness) -> None:
    await h.run("r43", "go", agent(SCRIPT), {"add": add}, business_state={"v": 1})
    entry = (await history(h, "r43", include_checkpoint=True))[-1]  # step 1, before its result
    assert entry.step == 1 and not any(m.role == pb.ROLE_TOOL for m in entry.checkpoint.messages)
    msgs = list(entry.checkpoint.messages)
    msgs[1] = pb.Message(role=pb.ROLE_USER, content="rewritten question")
    patch = pb.ForkPatch(
        replace_messages=True,
        messages=msgs,
        business_state_json='{"v": 2}',
        tool_result=pb.ToolResultPatch(tool_call_id="call_0_0", result_json='"patched"'),
        append_input="then go on",
    )
    cp = (await fork(h, "r43", 1, patch=patch, new_session_id="r43-x")).checkpoint
    assert cp.messages[1].content == "rewritten question"
    assert json.loads(cp.business_state_json) == {"v": 2}
    assert cp.messages[-2].tool_call_id == "call_0_0" and cp.messages[-2].content == '"patched"'
    assert cp.messages[-2].tool_name == "add"
    assert cp.messages[-1].role == pb.ROLE_USER and cp.messages[-1].content == "then go on"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await fork(h, "r43", 1, patch=pb.ForkPatch(tool_result=pb.ToolResultPatch(tool_call_id="nope", result_json="1")))
    assert error_info(err.value)[1] == "UNKNOWN_TOOL_CALL"


async def test_r43_input_is_queued_after_pending_calls(h: Harness) -> None:
    await h.run("r43q", "go", agent(SCRIPT), {"add": add})
    forked = await fork(h, "r43q", 2, patch=pb.ForkPatch(append_input="also this"))
    first_step2 = (await history(h, "r43q", include_checkpoint=True))
    del first_step2
    await h.run(forked.session_id, [], tools={"add": add})
    cp = await h.get(forked.session_id)
    roles = [m.role for m in cp.messages]
    i = roles.index(pb.ROLE_USER, 2)
    assert cp.messages[i].content == "also this"
    assert cp.messages[i - 1].role == pb.ROLE_TOOL  # after the pending call's result
    assert_valid_transcript(cp)


async def test_r45_compare_finds_where_a_fork_diverged(h: Harness) -> None:
    await h.run("cmp", "go", agent(SCRIPT), {"add": add})
    forked = await fork(h, "cmp", 1, patch=pb.ForkPatch(tool_result=pb.ToolResultPatch(tool_call_id="call_0_0", result_json="-1")))
    other = agent([calls(("add", {"a": 1})), calls(("add", {"a": 5})), {"text": "done"}])
    await h.run(forked.session_id, [], other, {"add": add})
    same = await h.stub.Compare(pb.CompareRequest(session_id_a="cmp", session_id_b="cmp"))
    assert not same.HasField("diverged_at")
    diff = await h.stub.Compare(pb.CompareRequest(session_id_a="cmp", session_id_b=forked.session_id))
    assert diff.diverged_at == 0  # the first step's result differs
    assert [len(diff.a), len(diff.b)] == [3, 3]
    assert list(diff.drift.tool_order_a) == ["add", "add"] and not diff.drift.tool_order_changed
    (arg,) = diff.drift.arguments
    assert (arg.step, json.loads(arg.arguments_json_a), json.loads(arg.arguments_json_b)) == (1, {"a": 2}, {"a": 5})
    assert diff.drift.finish_reason_a == diff.drift.finish_reason_b == pb.FINISH_REASON_STOP
