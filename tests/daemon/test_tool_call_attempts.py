"""A tool call's attempt and its reconcile (docs/reference/rules.md R77) through the gRPC
API, on every store of ``h`` (memory, an SQLite file, LMDB): a client that leaves while a
call is handed out, then resumes, is handed the same call again with the next attempt —
or, for a tool with ``reconcile``, is asked first (``tool.reconcile``) and answers DONE,
NOT_STARTED or UNKNOWN through ``SubmitToolResult``. The daemon killed with ``kill -9`` is
in tests/processes/test_tool_call_attempts_after_crash.py."""

from __future__ import annotations

import json

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import (
    AheadClock,
    Harness,
    agent,
    assert_valid_transcript,
    calls,
    error_info,
)

pytestmark = pytest.mark.asyncio

SCRIPT = [calls(("pay", {"amount": 5})), {"text": "paid"}]


def pay_agent(*, reconcile: bool, **kw: object) -> pb.AgentSpec:
    spec = agent(SCRIPT, ["pay"], **kw)
    spec.tools[0].reconcile = reconcile
    return spec


async def reconcile_answer(
    h: Harness, sid: str, call_id: str, outcome: int, result: object = None
) -> pb.SubmitToolResultResponse:
    return await h.stub.SubmitToolResult(
        pb.SubmitToolResultRequest(
            session_id=sid,
            tool_call_id=call_id,
            reconcile=outcome,
            result_json=json.dumps(result) if outcome == pb.RECONCILE_OUTCOME_DONE else "",
        )
    )


async def handed_out_then_left(h: Harness, sid: str, spec: pb.AgentSpec) -> pb.Event:
    """Execute until the first tool.call, then drop the stream (the client goes away with
    the call handed out and no result); the run stops, its checkpoint intact."""
    log = await h.run(sid, "go", spec, stop_at=lambda e: e.type == "tool.call")
    assert log.dropped
    await h.idle(sid)
    cp = await h.get(sid)
    assert cp.attempts == {"call_0_0": 1}  # saved with the hand-out
    calls_ = [e for e in await _events(h, sid) if e.type == "tool.call"]
    assert [(e.tool_call.attempt, e.tool_call.reconciled) for e in calls_] == [
        (1, pb.RECONCILE_OUTCOME_UNSPECIFIED)
    ]
    return calls_[0]


async def _events(h: Harness, sid: str) -> list[pb.Event]:
    out = []
    async for resp in h.stub.Watch(pb.WatchRequest(session_id=sid)):
        out.append(resp.event)
    return out


async def test_r77_a_call_handed_out_again_after_a_resume_carries_attempt_2(h: Harness) -> None:
    await handed_out_then_left(h, "again", pay_agent(reconcile=False))
    ran: list[int] = []

    def seen(e: pb.Event) -> None:
        if e.type == "tool.call":
            ran.append(e.tool_call.attempt)

    log = await h.run("again", None, resume=True, tools={"pay": lambda a: "ok"}, on_event=seen)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert ran == [2] and not log.of("tool.reconcile")  # no reconcile without the flag
    cp = await h.get("again")
    assert_valid_transcript(cp)
    assert [(r.call.id, r.attempts) for r in cp.tool_calls] == [("call_0_0", 2)]


async def test_r77_each_resume_that_hands_the_call_out_counts_one_more(h: Harness) -> None:
    await handed_out_then_left(h, "thrice", pay_agent(reconcile=False))
    # Resumed, handed out again (attempt 2: saved by that hand-out), and left again.
    log = await h.run("thrice", None, resume=True, stop_at=lambda e: e.type == "tool.call")
    assert log.dropped
    await h.idle("thrice")
    assert (await h.get("thrice")).attempts == {"call_0_0": 2}
    log = await h.run("thrice", None, resume=True, tools={"pay": lambda a: "ok"})
    assert [e.tool_call.attempt for e in log.of("tool.call")] == [3]
    cp = await h.get("thrice")
    assert [r.attempts for r in cp.tool_calls] == [3]
    # A new run of the session (a next user turn) counts its own calls only.
    spec = pay_agent(reconcile=False)
    spec.model_settings_json = json.dumps({"script": SCRIPT + SCRIPT})
    log = await h.run("thrice", "again", spec, {"pay": lambda a: "ok"})
    assert [e.tool_call.call.id for e in log.of("tool.call")] == ["call_2_0"]
    assert (await h.get("thrice")).attempts == {"call_2_0": 1}


async def test_r77_done_records_the_result_without_handing_the_call_out_again(
    h: Harness,
) -> None:
    first = await handed_out_then_left(h, "done", pay_agent(reconcile=True))

    async def answer(e: pb.Event) -> None:
        if e.type == "tool.reconcile":
            assert e.tool_reconcile.call == first.tool_call.call
            assert e.tool_reconcile.attempt == 1 and e.tool_reconcile.timeout_ms > 0
            resp = await reconcile_answer(
                h, "done", e.tool_reconcile.call.id, pb.RECONCILE_OUTCOME_DONE, {"paid": 5}
            )
            assert resp.outcome == pb.SUBMIT_OUTCOME_ACCEPTED and resp.attempt == 0

    log = await h.run("done", None, resume=True, on_event=answer)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert log.types[:3] == ["run.start", "tool.reconcile", "tool.result"]
    assert not log.of("tool.call")  # the tool never ran again
    cp = await h.get("done")
    assert json.loads(cp.messages[3].content) == {"paid": 5}
    assert [r.attempts for r in cp.tool_calls] == [1]


@pytest.mark.parametrize(
    "outcome", [pb.RECONCILE_OUTCOME_NOT_STARTED, pb.RECONCILE_OUTCOME_UNKNOWN], ids=str
)
async def test_r77_not_started_and_unknown_hand_the_call_out_again_marked(
    h: Harness, outcome: int
) -> None:
    await handed_out_then_left(h, "again", pay_agent(reconcile=True))
    answers: list[pb.SubmitToolResultResponse] = []

    async def answer(e: pb.Event) -> None:
        if e.type == "tool.reconcile":
            answers.append(await reconcile_answer(h, "again", e.tool_reconcile.call.id, outcome))
            # The same answer again (a client's retry) changes nothing.
            again = await reconcile_answer(h, "again", e.tool_reconcile.call.id, outcome)
            assert again.outcome == pb.SUBMIT_OUTCOME_DUPLICATE

    log = await h.run("again", None, resume=True, tools={"pay": lambda a: "ok"}, on_event=answer)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert [(a.outcome, a.attempt) for a in answers] == [(pb.SUBMIT_OUTCOME_ACCEPTED, 2)]
    [call] = log.of("tool.call")
    assert (call.tool_call.attempt, call.tool_call.reconciled) == (2, outcome)
    assert log.types.index("tool.reconcile") < log.types.index("tool.call")
    assert [r.attempts for r in (await h.get("again")).tool_calls] == [2]


async def test_r77_a_plain_result_answers_a_reconcile_as_done(h: Harness) -> None:
    await handed_out_then_left(h, "plain", pay_agent(reconcile=True))

    async def answer(e: pb.Event) -> None:
        if e.type == "tool.reconcile":
            await h.submit("plain", e.tool_reconcile.call.id, json.dumps("paid before"))

    log = await h.run("plain", None, resume=True, on_event=answer)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP and not log.of("tool.call")
    assert json.loads((await h.get("plain")).messages[3].content) == "paid before"


async def test_r77_no_answer_within_the_timeout_hands_the_call_out_as_unknown(
    h: Harness,
) -> None:
    spec = pay_agent(reconcile=True, tool_timeout_ms=400)
    await handed_out_then_left(h, "old", spec)
    # A client that does not know tool.reconcile: it only answers tool.call.
    log = await h.run("old", None, resume=True, tools={"pay": lambda a: "ok"})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    [call] = log.of("tool.call")
    assert (call.tool_call.attempt, call.tool_call.reconciled) == (2, pb.RECONCILE_OUTCOME_UNKNOWN)


async def test_r77_not_started_for_a_call_not_being_reconciled_is_refused(h: Harness) -> None:
    stream = h.stub.Execute(
        pb.ExecuteRequest(
            session_id="ask",
            input=[pb.Message(role=pb.ROLE_USER, content="go")],
            agent=pay_agent(reconcile=True),
        )
    )
    async for resp in stream:
        if resp.event.type == "tool.call":
            cid = resp.event.tool_call.call.id
            assert resp.event.tool_call.attempt == 1
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await reconcile_answer(h, "ask", cid, pb.RECONCILE_OUTCOME_NOT_STARTED)
            code, reason, _ = error_info(caught.value)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "RECONCILE_NOT_ASKED")
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await reconcile_answer(h, "ask", cid, 9)
            assert error_info(caught.value)[:2] == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_RECONCILE_OUTCOME",
            )
            await h.submit("ask", cid, json.dumps("ok"))
    cp = await h.get("ask")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert [r.attempts for r in cp.tool_calls] == [1]


async def test_r77_a_watch_that_reconnects_sees_the_same_attempt(h: Harness) -> None:
    stream = h.stub.Execute(
        pb.ExecuteRequest(
            session_id="watch",
            input=[pb.Message(role=pb.ROLE_USER, content="go")],
            agent=pay_agent(reconcile=True),
        )
    )
    it = aiter(stream)
    while (e := (await anext(it)).event).type != "tool.call":
        pass
    for _ in range(2):  # a watcher that connects twice: no new hand-out, no new attempt
        watched = h.stub.Watch(pb.WatchRequest(session_id="watch"))
        async for r in watched:  # the live run's events so far, then it waits: leave
            if r.event.type == "tool.call":
                assert r.event.tool_call.attempt == 1
                watched.cancel()
                break
    await h.submit("watch", e.tool_call.call.id, json.dumps("ok"))
    async for _ in it:
        pass
    assert [r.attempts for r in (await h.get("watch")).tool_calls] == [1]


async def test_r77_a_subagents_call_is_reconciled_by_its_qualified_id(h: Harness) -> None:
    sub_spec = agent([calls(("pay", {"amount": 7})), {"text": "sub paid"}], ["pay"])
    sub_spec.tools[0].reconcile = True
    spec = agent(
        [
            calls(("task", {"agent": "payer", "prompt": "pay 7", "description": "d"})),
            {"text": "ok"},
        ],
        ["add"],
    )
    spec.subagents.append(pb.SubAgent(name="payer", description="pays", agent=sub_spec))
    log = await h.run("sub", "go", spec, stop_at=lambda e: e.type == "tool.call")
    assert log.dropped
    await h.idle("sub")
    qid = "call_0_0/call_0_0"
    assert (await h.get("sub")).attempts == {qid: 1}
    executed: list[int] = []

    async def answer(e: pb.Event) -> None:
        if e.type == "tool.reconcile":
            assert e.tool_reconcile.call.id == qid and e.subagent.name == "payer"
            await reconcile_answer(h, "sub", qid, pb.RECONCILE_OUTCOME_UNKNOWN)
        elif e.type == "tool.call":
            executed.append(e.tool_call.attempt)
            assert e.tool_call.reconciled == pb.RECONCILE_OUTCOME_UNKNOWN
            await h.submit("sub", qid, json.dumps("checked: paid once"))

    log = await h.run("sub", None, resume=True, on_event=answer)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP, log.error
    assert executed == [2]
    cp = await h.get("sub")
    assert_valid_transcript(cp)
    assert cp.attempts == {qid: 2}


async def test_r77_a_fork_hands_its_pending_call_out_as_the_same_call_again(h: Harness) -> None:
    await handed_out_then_left(h, "src", pay_agent(reconcile=True))
    forked = await h.stub.Fork(pb.ForkRequest(session_id="src", from_step=1, new_session_id="fk"))
    assert forked.checkpoint.attempts == {"call_0_0": 1}  # the same call, by the same id

    async def answer(e: pb.Event) -> None:
        if e.type == "tool.reconcile":
            await reconcile_answer(h, "fk", e.tool_reconcile.call.id, pb.RECONCILE_OUTCOME_UNKNOWN)

    log = await h.run("fk", None, resume=True, tools={"pay": lambda a: "ok"}, on_event=answer)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert [e.tool_call.attempt for e in log.of("tool.call")] == [2]
    assert (await h.get("src")).attempts == {"call_0_0": 1}  # the source is unchanged


# -- R81: a call's tool timeout counts from its stored first hand-out ----------------------


async def test_r81_a_call_handed_out_again_waits_only_what_is_left_of_its_timeout(
    h: Harness,
) -> None:
    await handed_out_then_left(h, "left-half", pay_agent(reconcile=False, tool_timeout_ms=600_000))
    cp = await h.get("left-half")
    assert set(cp.attempts) == {"call_0_0"}
    h.daemon.engine.clock = AheadClock(400)  # 400 s of the 600 s timeout went by, nobody waiting
    waited: list[int] = []

    def seen(e: pb.Event) -> None:
        if e.type == "tool.call":
            waited.append(e.tool_call.timeout_ms)

    log = await h.run("left-half", None, resume=True, tools={"pay": lambda a: "ok"}, on_event=seen)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert len(waited) == 1 and 190_000 < waited[0] <= 200_000, waited


async def test_r81_a_call_whose_timeout_passed_while_nobody_waited_times_out_at_once(
    h: Harness,
) -> None:
    await handed_out_then_left(h, "left-long", pay_agent(reconcile=False, tool_timeout_ms=60_000))
    h.daemon.engine.clock = AheadClock(3600)  # an hour later: its minute is long gone
    ran: list[object] = []
    log = await h.run(
        "left-long", None, resume=True, tools={"pay": lambda a: ran.append(a) or "ok"}
    )
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert not log.of("tool.call") and ran == []  # not handed out again, not run
    results = [e.tool_result for e in log.of("tool.result")]
    assert [(r.tool_call_id, r.is_error) for r in results] == [("call_0_0", True)]
    assert "tool timeout" in results[0].result_json
    assert_valid_transcript(await h.get("left-long"))


async def test_r81_a_header_keeps_the_hand_out_times_of_the_calls_still_waiting_only(
    h: Harness,
) -> None:
    """A call's first hand-out time (R81) is saved with its hand-out and dropped with its
    result, and so is its count (R77) when it was handed out once: a run's header does not
    grow by one entry a tool call (each save writes it). The counts read as before."""
    seen: list[dict[str, float]] = []
    counted: list[dict[str, int]] = []

    async def look(e: pb.Event) -> None:
        if e.type == "tool.call":  # saved by now: the save that handed it out
            cp = await h.daemon.store.load("times")
            seen.append(dict(cp.handed_out_at))
            counted.append(dict(cp.attempts))

    spec = agent([calls(("add", {"a": i})) for i in range(4)] + [{"text": "done"}], ["add"])
    log = await h.run("times", "go", spec, {"add": lambda a: a["a"]}, on_event=look)
    assert log.done is not None and log.done.final_text == "done"
    assert [sorted(s) for s in seen] == [[f"call_{i}_0"] for i in range(4)]
    cp = await h.daemon.store.load("times")
    assert cp.handed_out_at == {}
    assert counted == [{f"call_{i}_0": 1} for i in range(4)]  # the one waiting, alone
    assert cp.attempts == {} and cp.attempts_once
    assert cp.hand_out_counts() == {f"call_{i}_0": 1 for i in range(4)}
    assert [r.attempts for r in (await h.get("times")).tool_calls] == [1, 1, 1, 1]
    assert (await h.get("times")).attempts == {f"call_{i}_0": 1 for i in range(4)}


# -- R77: a settled call's count in the header only when it is not 1 ---------------------


async def test_r77_a_settled_call_keeps_an_entry_only_when_not_handed_out_once(
    h: Harness,
) -> None:
    """Of a run's calls with a result, the header holds the count of those handed out
    other than once — twice (a resume), never (refused before any hand-out: 0) — and
    nothing for those handed out once; every count reads as it did."""
    script = [
        calls(("pay", {"amount": 5})),
        calls(("refund", {})),  # not a declared tool: refused, never handed out (R25)
        calls(("pay", {"amount": 6})),
        {"text": "paid"},
    ]
    spec = agent(script, ["pay"])
    log = await h.run("settled", "go", spec, stop_at=lambda e: e.type == "tool.call")
    assert log.dropped
    await h.idle("settled")
    log = await h.run("settled", None, resume=True, tools={"pay": lambda a: "ok"})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.daemon.store.load("settled")
    assert cp.attempts_once and cp.attempts == {"call_0_0": 2, "call_1_0": 0}
    got = await h.get("settled")
    assert_valid_transcript(got)
    assert [(r.call.id, r.attempts) for r in got.tool_calls] == [
        ("call_0_0", 2),
        ("call_1_0", 0),
        ("call_2_0", 1),
    ]
    assert got.attempts == {"call_0_0": 2, "call_2_0": 1}


async def test_r77_a_header_without_attempts_once_reads_as_it_was_written(h: Harness) -> None:
    """A checkpoint saved before ``attempts_once`` (every handed-out call with its entry,
    none for a call never handed out) reads the same counts, and keeps its way until the
    session's next run begins, which counts by exception."""
    script = [calls(("pay", {"amount": 5})), calls(("refund", {})), {"text": "paid"}]
    log = await h.run("old", "go", agent(script, ["pay"]), {"pay": lambda a: "ok"})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.daemon.store.load("old")
    assert cp is not None and cp.attempts == {"call_1_0": 0}
    # As an older luoshod saved it: the entries of every handed-out call, no mark.
    cp.attempts, cp.attempts_once = {"call_0_0": 1}, False
    cp.version += 1
    await h.daemon.store.save(cp, stored_messages=len(cp.messages))
    assert "attempts_once" not in cp.header_dict()
    got = await h.get("old")
    assert [r.attempts for r in got.tool_calls] == [1, 0]
    assert got.attempts == {"call_0_0": 1}
    spec = agent(script + script, ["pay"])
    log = await h.run("old", "again", spec, {"pay": lambda a: "ok"})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    cp = await h.daemon.store.load("old")
    assert cp.attempts_once and cp.attempts == {"call_4_0": 0}
    assert (await h.get("old")).attempts == {"call_3_0": 1}


async def test_r77_a_fork_that_rewrites_the_transcript_keeps_every_count(h: Harness) -> None:
    """A fork whose patch rewrites the transcript (or records a call's result) spells
    every count out first: its results no longer say which calls were handed out. A call
    whose result the fork drops is handed out again as the same call, attempt 2."""
    script = [calls(("pay", {"amount": 5})), calls(("pay", {"amount": 6})), {"text": "paid"}]
    log = await h.run("src2", "go", agent(script, ["pay"]), {"pay": lambda a: "ok"})
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    src = await h.get("src2")
    assert src.attempts == {"call_0_0": 1, "call_1_0": 1}
    patch = pb.ForkPatch(replace_messages=True, messages=src.messages[:-2])  # call_1_0 open
    forked = await h.stub.Fork(
        pb.ForkRequest(
            session_id="src2", from_step=src.step_index, new_session_id="fk2", patch=patch
        )
    )
    assert forked.checkpoint.attempts == {"call_0_0": 1, "call_1_0": 1}
    cp = await h.daemon.store.load("fk2")
    assert not cp.attempts_once and cp.attempts == {"call_0_0": 1, "call_1_0": 1}
    log = await h.run("fk2", None, resume=True, tools={"pay": lambda a: "ok"})
    assert [(e.tool_call.call.id, e.tool_call.attempt) for e in log.of("tool.call")] == [
        ("call_1_0", 2)
    ]
    assert [r.attempts for r in (await h.get("fk2")).tool_calls] == [1, 2]
