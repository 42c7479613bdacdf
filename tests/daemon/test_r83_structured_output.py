"""R83: structured output with the scripted provider over real gRPC: the answer validated
against the agent's output schema, one repair turn, OUTPUT_INVALID, a bad schema refused."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.engine.output import REPAIR_PREFIX
from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness, agent, error_info

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city", "population"],
}


def structured(*answers: str, **kw: object) -> pb.AgentSpec:
    return agent([{"text": a} for a in answers], [], output_schema_json=json.dumps(SCHEMA), **kw)


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    d = Daemon(Config(listen=["127.0.0.1:0"], store="memory://"))
    await d.start()
    harness = Harness(d.addresses[0], d)
    try:
        yield harness
    finally:
        await harness.close()
        await d.stop()


async def test_r83_a_valid_answer_ends_stop_with_its_canonical_json(h: Harness) -> None:
    log = await h.run("ok", "where?", structured('{ "population": 2100000, "city": "Paris" }'))
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert log.done.output_json == '{"city":"Paris","population":2100000}'
    assert list(log.done.output_errors) == []
    assert log.done.step_index == 1


async def test_r83_an_invalid_answer_gets_one_repair_turn_naming_the_errors(h: Harness) -> None:
    log = await h.run(
        "repair", "where?", structured('{"city": "Paris"}', '{"city": "Paris", "population": 2}')
    )
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert json.loads(log.done.output_json) == {"city": "Paris", "population": 2}
    assert log.done.step_index == 2
    assert log.done.usage.model_calls == 2  # the repair turn is a model call like any
    cp = await h.get("repair")
    repair = [m for m in cp.messages if m.content.startswith(REPAIR_PREFIX)]
    assert len(repair) == 1 and repair[0].role == pb.ROLE_USER
    assert "'population' is a required property" in repair[0].content
    assert [m.role for m in cp.messages][-3:] == [
        pb.ROLE_ASSISTANT,
        pb.ROLE_USER,
        pb.ROLE_ASSISTANT,
    ]


async def test_r83_invalid_twice_ends_output_invalid_with_the_errors(h: Harness) -> None:
    log = await h.run("bad", "where?", structured("Paris, I think", '{"city": 7, "population": 1}'))
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_OUTPUT_INVALID
    assert log.done.output_json == ""
    assert list(log.done.output_errors) == ["city: 7 is not of type 'string'"]
    assert log.done.step_index == 2  # one repair turn, not two
    cp = await h.get("bad")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert cp.finish_reason == pb.FINISH_REASON_OUTPUT_INVALID
    first_repair = next(m for m in cp.messages if m.content.startswith(REPAIR_PREFIX))
    assert "the answer is not JSON" in first_repair.content


async def test_r83_the_repair_turn_counts_against_max_steps(h: Harness) -> None:
    log = await h.run("steps", "where?", structured('"Paris"', "{}", max_steps=1))
    assert log.done.finish_reason == pb.FINISH_REASON_MAX_STEPS
    assert log.done.step_index == 1


async def test_r83_each_run_of_a_session_has_its_own_repair_turn(h: Harness) -> None:
    spec = structured(
        "no", '{"city": "A", "population": 1}', "no", '{"city": "B", "population": 2}'
    )
    first = await h.run("two", "first?", spec)
    assert json.loads(first.done.output_json)["city"] == "A"
    second = await h.run("two", "second?", spec)
    assert second.done.finish_reason == pb.FINISH_REASON_STOP
    assert json.loads(second.done.output_json)["city"] == "B"


async def test_r83_a_free_text_agent_has_no_output_json(h: Harness) -> None:
    log = await h.run("free", "hi", agent([{"text": "not JSON"}], []))
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert log.done.output_json == ""


@pytest.mark.parametrize(
    ("schema", "reason"),
    [("{not json", "INVALID_JSON"), ('{"type": "nope"}', "INVALID_OUTPUT_SCHEMA")],
)
async def test_r83_a_bad_output_schema_is_refused_before_the_run(
    h: Harness, schema: str, reason: str
) -> None:
    log = await h.run("refused", "hi", agent([{"text": "{}"}], [], output_schema_json=schema))
    assert log.error is not None
    code, got, meta = error_info(log.error)
    assert (code, got) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    assert log.events == []


async def test_r83_a_retried_request_replays_the_output_json(h: Harness) -> None:
    req = pb.ExecuteRequest(
        session_id="retry",
        input=[pb.Message(role=pb.ROLE_USER, content="where?")],
        agent=structured('{"city": "Rome"}', '{"city": "Rome", "population": 3}'),
        request_id="req-1",
    )
    first = await h.follow(h.stub.Execute(req), "retry")
    again = await h.follow(h.stub.Execute(req), "retry")
    assert first.done.output_json == '{"city":"Rome","population":3}'
    assert again.done.output_json == first.done.output_json
    assert again.done.step_index == 2
