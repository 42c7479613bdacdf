"""A run interrupted after each of its steps in turn, forked from every kept step, each
fork run to completion with R20–R24 intact."""

from __future__ import annotations

from collections import Counter

from luosho.v1 import agent_pb2 as pb

from support import Harness, agent, assert_valid_transcript, calls

SCRIPT = [calls(("add", {"a": k}), ("add", {"a": -k})) for k in range(4)] + [{"text": "done"}]


async def test_interrupt_after_every_step_then_fork_every_kept_step(h: Harness) -> None:
    spec = agent(SCRIPT, tool_concurrency=2)
    executed: Counter[str] = Counter()

    def add(args):
        return args["a"]

    # Interrupt (a client crash) in each step in turn, at its second tool call, resuming
    # each time: every step is left once with a call answered and one not.
    for step in range(1, 5):
        def stop(e: pb.Event, step=step) -> bool:
            return e.type == "tool.call" and e.tool_call.call.id == f"call_{step - 1}_1"

        log = await h.run("src", "go" if step == 1 else [], spec, {"add": add}, stop_at=stop)
        await h.idle("src")
        for e in log.of("tool.call"):
            executed[e.tool_call.call.id] += 1
        assert_valid_transcript(await h.get("src"))
    final = await h.run("src", [], spec, {"add": add})
    assert final.done.finish_reason == pb.FINISH_REASON_STOP
    source = await h.get("src")

    history = (await h.stub.History(pb.HistoryRequest(session_id="src"))).entries
    steps = sorted({e.step for e in history})
    assert steps == [1, 2, 3, 4, 5]
    for step in steps[:-1]:  # step 5 is the finished text turn: nothing left to replay
        fork = await h.stub.Fork(pb.ForkRequest(session_id="src", from_step=step))
        before = {m.tool_call_id for m in fork.checkpoint.messages if m.role == pb.ROLE_TOOL}
        handed: list[str] = []
        log = await h.run(
            fork.session_id, [], tools={"add": add},
            on_event=lambda e: handed.append(e.tool_call.call.id) if e.type == "tool.call" else None,
        )
        assert log.done.finish_reason == pb.FINISH_REASON_STOP, (step, log.types, log.reason)
        cp = await h.get(fork.session_id)
        assert_valid_transcript(cp)  # R20, R23
        assert not before & set(handed)  # R21: recorded results never re-run
        results = [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL]
        assert results == [f"call_{k}_{j}" for k in range(4) for j in range(2)]
        assert [m.content for m in cp.messages] == [m.content for m in source.messages]
        assert cp.step_index == 5  # R44: the step count carried over
    assert (await h.get("src")) == source  # forks never touch the source
