"""A run interrupted after each of its steps in turn, forked from every kept step, each
fork run to completion with R20–R24 intact."""

from __future__ import annotations

from luoshod.domain import FinishReason
from tests.support.engine_harness import (
    EngineHarness,
    agent,
    assert_valid_transcript,
    calls,
    tool_results,
)

SCRIPT = [calls(("add", {"a": k}), ("add", {"a": -k})) for k in range(4)] + [{"text": "done"}]


def add(args):
    return args["a"]


async def test_r20_r44_interrupt_after_every_step_then_fork_every_kept_step(
    h: EngineHarness,
) -> None:
    spec = agent(SCRIPT, tool_concurrency=2)
    # Interrupt (a client crash) in each step in turn, at its second tool call, resuming
    # each time: every step is left once with a call answered and one not.
    for step in range(1, 5):

        def stop(e, step=step) -> bool:
            return e.type == "tool.call" and e.data["call"].id == f"call_{step - 1}_1"

        log = await h.run("src", "go" if step == 1 else [], spec, {"add": add}, stop_at=stop)
        assert log.dropped
        assert_valid_transcript(await h.get("src"))
    final = await h.run("src", [], spec, {"add": add})
    assert final.done["finish_reason"] is FinishReason.STOP
    source = await h.get("src")

    steps = sorted({e.step for e in await h.history("src")})
    assert steps == [1, 2, 3, 4, 5]
    for step in steps[:-1]:  # step 5 is the finished text turn: nothing left to replay
        fork = await h.fork("src", step)
        before = {m.tool_call_id for m in tool_results(fork.checkpoint)}
        log = await h.run(fork.session_id, resume=True, tools={"add": add})
        assert log.done["finish_reason"] is FinishReason.STOP, (step, log.types, log.reason)
        handed = {c["call"].id for c in log.of("tool.call")}
        cp = await h.get(fork.session_id)
        assert_valid_transcript(cp)  # R20, R23
        assert not before & handed  # R21: recorded results never re-run
        assert [m.tool_call_id for m in tool_results(cp)] == [
            f"call_{k}_{j}" for k in range(4) for j in range(2)
        ]
        assert [m.content for m in cp.messages] == [m.content for m in source.messages]
        assert cp.step_index == 5  # R44: the step count carried over
    assert await h.get("src") == source  # forks never touch the source
