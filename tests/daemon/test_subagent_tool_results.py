"""``SubmitToolResult`` for a sub-agent's call by its qualified id (R58) when no run waits
for it, on memory, an SQLite file and LMDB: a result already recorded — in an unfinished
sub-agent or in a finished task — is a harmless duplicate (R26) as for the lead's calls,
never "no such tool call"; an id that names no call is still ``TOOL_CALL_NOT_FOUND``."""

from __future__ import annotations

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import Harness, agent, error_info


def task_call(name: str, id_: str) -> dict:
    return {"name": "task", "arguments": {"agent": name, "prompt": "p"}, "id": id_}


def spec() -> pb.AgentSpec:
    helper = agent(
        [
            {"tool_calls": [{"name": "lookup", "arguments": {}, "id": "l-1"}]},
            {"tool_calls": [{"name": "delete", "arguments": {}, "id": "d-1"}]},
            {"text": "helped"},
        ],
        ["lookup"],
    )
    helper.tools.append(pb.ToolSpec(name="delete", input_schema_json="{}", needs_approval=True))
    researcher = agent([{"tool_calls": [task_call("helper", "h-1")]}, {"text": "researched"}], [])
    researcher.subagents.add(name="helper", description="helps", agent=helper)
    lead = agent(
        [{"tool_calls": [task_call("researcher", "c-1")]}, {"text": "done"}],
        ["note"],
        max_subagent_depth=2,
    )
    lead.subagents.add(name="researcher", description="researches", agent=researcher)
    return lead


async def test_r26_a_subagents_recorded_result_submitted_again_is_a_duplicate(h: Harness) -> None:
    log = await h.run("dup-1", "go", spec(), {"lookup": lambda a: {"ok": 1}})
    assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL, log.error
    # Unfinished: the helper waits on its `delete`, its `lookup` result is recorded.
    assert await h.submit("dup-1", "c-1/h-1/l-1", '{"ok": 2}') == pb.SUBMIT_OUTCOME_DUPLICATE
    with pytest.raises(grpc.aio.AioRpcError) as err:  # gated, not run: nobody waits for it
        await h.submit("dup-1", "c-1/h-1/d-1", '{"ok": 2}')
    assert error_info(err.value)[:2] == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "TOOL_CALL_NOT_PENDING",
    )
    done = [
        r.event
        async for r in h.stub.Resolve(
            pb.ResolveRequest(approval_id=log.done.approval_id, approved=False)
        )
    ]
    assert done[-1].run_done.finish_reason == pb.FINISH_REASON_STOP
    # Finished: found through the task ids the `task` results name.
    assert await h.submit("dup-1", "c-1/h-1/l-1", '{"ok": 3}') == pb.SUBMIT_OUTCOME_DUPLICATE
    assert await h.submit("dup-1", "c-1/h-1/d-1", '{"ok": 3}') == pb.SUBMIT_OUTCOME_DUPLICATE
    for unknown in ("c-1/h-1/nope", "c-9/h-1/l-1", "c-1/nope/l-1"):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.submit("dup-1", unknown, "{}")
        assert error_info(err.value)[:2] == (grpc.StatusCode.NOT_FOUND, "TOOL_CALL_NOT_FOUND"), (
            unknown
        )
    cp = await h.get("dup-1")
    helper = next(t for t in cp.tasks if t.name == "helper")
    assert [m.content for m in helper.messages if m.tool_call_id == "l-1"] == [
        '{"ok": 1}'
    ]  # unchanged
