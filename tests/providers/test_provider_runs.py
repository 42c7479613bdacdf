"""Real providers through the daemon's gRPC API, against fake servers of each wire format
(every test runs once per provider): tool calling, usage and cost, streaming, settings."""

from __future__ import annotations

import json

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import Harness, assert_valid_transcript, error_info
from tests.support.model_fakes import FakeServer, turn
from tests.support.providers import MODEL, PRICE, StartDaemon, add, llm_agent

pytestmark = pytest.mark.asyncio


def tool_results(body: dict, kind: str) -> list[tuple[str, str]]:
    """(call id, content) of every tool result in a request body, in order."""
    if kind == "openai":
        return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]
    if kind == "openai_responses":
        return [
            (i["call_id"], i["output"])
            for i in body["input"]
            if i.get("type") == "function_call_output"
        ]
    return [
        (b["tool_use_id"], b["content"])
        for m in body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    ]


def cost(prompt: int, completion: int) -> float:
    return (prompt * PRICE["prompt_per_mtok"] + completion * PRICE["completion_per_mtok"]) / 1e6


async def test_multi_step_tool_calling_run(fake: FakeServer, llm: Harness) -> None:
    fake.script = [
        turn("Adding first.", ("add", {"a": 1, "b": 2})),
        turn("", ("add", {"a": 3, "b": 4})),
        turn("1+2=3 and 3+4=7."),
    ]
    log = await llm.run("multi", "add 1+2 then 3+4", llm_agent(), {"add": add})
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert log.done.final_text == "1+2=3 and 3+4=7."
    assert log.done.step_index == 3
    cp = await llm.get("multi")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert_valid_transcript(cp)
    assert [m.role for m in cp.messages] == [
        pb.ROLE_SYSTEM,
        pb.ROLE_USER,
        pb.ROLE_ASSISTANT,
        pb.ROLE_TOOL,
        pb.ROLE_ASSISTANT,
        pb.ROLE_TOOL,
        pb.ROLE_ASSISTANT,
    ]
    assert cp.messages[2].content == "Adding first."
    assert json.loads(cp.messages[2].tool_calls[0].arguments_json) == {"a": 1, "b": 2}
    assert [json.loads(m.content) for m in cp.messages if m.role == pb.ROLE_TOOL] == [3, 7]
    # Three model calls, each seeing the results of the turn before (checked valid by the fake).
    assert fake.answered() == [0, 1, 2]
    last = fake.requests[-1].body
    assert [c for _, c in tool_results(last, fake.kind)] == ["3", "7"]
    if fake.kind == "anthropic":
        assert last["system"] == "You add numbers with the tools."
        assert all(m["role"] != "system" for m in last["messages"])
        assert last["tools"][0]["input_schema"]["properties"]["a"] == {"type": "number"}
    elif fake.kind == "openai_responses":
        assert last["instructions"] == "You add numbers with the tools."
        assert last["store"] is False and all(i.get("role") != "system" for i in last["input"])
        assert last["tools"][0]["parameters"]["properties"]["a"] == {"type": "number"}
    else:
        assert last["messages"][0] == {
            "role": "system",
            "content": "You add numbers with the tools.",
        }
        assert last["tools"][0]["function"]["parameters"]["properties"]["a"] == {"type": "number"}


async def test_parallel_tool_calls(fake: FakeServer, llm: Harness) -> None:
    fake.script = [
        turn("", ("add", {"a": 1}), ("add", {"a": 2}), ("add", {"a": 3})),
        turn("6"),
    ]
    handed: list[pb.ToolCall] = []

    async def answer_in_reverse(e: pb.Event) -> None:
        if e.type == "tool.call":
            handed.append(e.tool_call.call)
            if len(handed) == 3:
                for c in reversed(handed):
                    await llm.submit("par", c.id, json.dumps(json.loads(c.arguments_json)["a"]))

    log = await llm.run("par", "go", llm_agent(tool_concurrency=3), on_event=answer_in_reverse)
    assert log.done.final_text == "6"
    ids = [c.id for c in handed]
    assert len(set(ids)) == 3
    cp = await llm.get("par")
    assert_valid_transcript(cp)
    assert [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL] == ids  # call order
    # The second request carries all three results right after the turn (for Anthropic:
    # one user turn of three tool_result blocks, which the fake checks).
    body = fake.requests[-1].body
    assert [cid for cid, _ in tool_results(body, fake.kind)] == ids
    if fake.kind == "anthropic":
        assert [b["type"] for b in body["messages"][-1]["content"]] == ["tool_result"] * 3


async def test_malformed_tool_calls_become_error_results_the_model_reads(
    fake: FakeServer, llm: Harness
) -> None:
    # Bad JSON arguments and an undeclared tool: recorded as error results, never handed
    # to the client, and the run goes on (R25). The Messages API sends tool input as an
    # object, so broken JSON can only come from a stream there.
    settings = {"stream": True} if fake.kind == "anthropic" else None
    fake.script = [
        turn("", ("add", '{"a": 1,'), ("delete_everything", {"path": "/"}), ("add", {"a": 2})),
        turn("recovered"),
    ]
    handed: list[str] = []
    log = await llm.run(
        "bad",
        "go",
        llm_agent(settings=settings),
        {"add": add},
        on_event=lambda e: handed.append(e.tool_call.call.name) if e.type == "tool.call" else None,
    )
    assert log.error is None, log.error
    assert log.done.final_text == "recovered"
    assert handed == ["add"]  # only the valid call reached the client
    cp = await llm.get("bad")
    assert_valid_transcript(cp)
    results = [m for m in cp.messages if m.role == pb.ROLE_TOOL]
    assert [r.is_error for r in results] == [True, True, False]
    assert "not valid JSON" in json.loads(results[0].content)["error"]
    assert "unknown tool 'delete_everything'" in json.loads(results[1].content)["error"]
    # The raw arguments are kept in the transcript as the model wrote them.
    assert cp.messages[2].tool_calls[0].arguments_json == '{"a": 1,'
    # The model reads the errors in its next request (marked as errors on the wire).
    sent = tool_results(fake.requests[-1].body, fake.kind)
    assert "not valid JSON" in sent[0][1] and "unknown tool" in sent[1][1]


async def test_usage_and_cost_per_run_and_per_session(fake: FakeServer, llm: Harness) -> None:
    fake.script = [
        turn("", ("add", {"a": 1}), usage=(11, 7)),
        turn("", ("add", {"a": 2}), usage=(13, 5)),
        turn("done", usage=(17, 3)),
        turn("again", usage=(19, 2)),
    ]
    first = await llm.run("usage", "go", llm_agent(), {"add": add})
    u = first.done.usage
    assert (u.prompt_tokens, u.completion_tokens, u.total_tokens, u.model_calls) == (41, 15, 56, 3)
    assert u.cost_usd == pytest.approx(cost(41, 15))
    turn_usage = [e.model_turn.usage for e in first.of("model.turn")]
    assert [(t.prompt_tokens, t.completion_tokens) for t in turn_usage] == [
        (11, 7),
        (13, 5),
        (17, 3),
    ]
    # R14: a finished session continued counts the new run's usage from zero; the
    # session's total keeps growing.
    second = await llm.run("usage", "once more", llm_agent())
    u2 = second.done.usage
    assert (u2.prompt_tokens, u2.completion_tokens, u2.model_calls) == (19, 2, 1)
    cp = await llm.get("usage")
    assert (
        cp.total_usage.prompt_tokens,
        cp.total_usage.completion_tokens,
        cp.total_usage.model_calls,
    ) == (60, 17, 4)
    assert cp.total_usage.cost_usd == pytest.approx(cost(60, 17))
    # R78: each turn records the model that produced it and that call's usage and cost.
    said = [m for m in cp.messages if m.role == pb.ROLE_ASSISTANT]
    assert {m.model for m in said} == {llm_agent().model}
    assert [(m.usage.prompt_tokens, m.usage.completion_tokens) for m in said] == [
        (11, 7),
        (13, 5),
        (17, 3),
        (19, 2),
    ]
    assert said[0].usage.cost_usd == pytest.approx(cost(11, 7))


async def test_no_price_for_the_model_means_no_cost(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    h = await llm_daemon(prices={"another-model": PRICE})
    fake.script = [turn("hi", usage=(100, 100))]
    log = await h.run("free", "hi", llm_agent())
    assert log.done.usage.prompt_tokens == 100 and log.done.usage.cost_usd == 0


async def test_streaming_sends_text_deltas_and_records_whole_turns(
    fake: FakeServer, llm: Harness
) -> None:
    fake.script = [
        turn("Let me add those numbers.", ("add", {"a": 20, "b": 22}), usage=(30, 12)),
        turn("The answer is 42, as computed.", usage=(40, 9)),
    ]
    log = await llm.run("stream", "20+22?", llm_agent(settings={"stream": True}), {"add": add})
    assert log.error is None, log.error
    deltas = log.of("text.delta")
    assert len(deltas) > 4  # the fakes send four characters at a time
    by_step: dict[int, str] = {}
    for e in deltas:
        assert e.WhichOneof("payload") == "text_delta"
        by_step[e.text_delta.step] = by_step.get(e.text_delta.step, "") + e.text_delta.text
    assert by_step == {1: "Let me add those numbers.", 2: "The answer is 42, as computed."}
    # Deltas of a step come between its step.start and its model.turn.
    types = [(e.type, e.text_delta.step if e.type == "text.delta" else None) for e in log.events]
    assert types.index(("text.delta", 1)) > log.types.index("step.start")
    assert max(i for i, t in enumerate(types) if t == ("text.delta", 1)) < log.types.index(
        "model.turn"
    )
    seqs = [e.seq for e in log.events if e.type != "text.delta"]  # deltas are progress only
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # The checkpoint holds whole turns only; streamed tool arguments were reassembled.
    cp = await llm.get("stream")
    assistant = [m for m in cp.messages if m.role == pb.ROLE_ASSISTANT]
    assert [m.content for m in assistant] == [
        "Let me add those numbers.",
        "The answer is 42, as computed.",
    ]
    assert json.loads(assistant[0].tool_calls[0].arguments_json) == {"a": 20, "b": 22}
    assert (cp.usage.prompt_tokens, cp.usage.completion_tokens) == (70, 21)  # usage from the stream
    assert all(r.body.get("stream") is True for r in fake.requests)


async def test_no_deltas_unless_the_agent_asks_for_streaming(
    fake: FakeServer, llm: Harness
) -> None:
    fake.script = [turn("a whole answer at once")]
    log = await llm.run("nostream", "hi", llm_agent())
    assert log.done.final_text == "a whole answer at once"
    assert "text.delta" not in log.types
    assert "stream" not in fake.requests[0].body


async def test_model_settings_are_passed_through(fake: FakeServer, llm: Harness) -> None:
    fake.script = [turn("ok")]
    settings = {
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 77,
        "stop": ["END"],
        "extra_body": {"seed_hint": 5},
    }
    responses = fake.kind == "openai_responses"
    if responses:  # the Responses API has no stop sequences
        del settings["stop"]
    log = await llm.run("settings", "hi", llm_agent(settings=settings))
    assert log.error is None, log.error
    body = fake.requests[0].body
    limit = body["max_output_tokens" if responses else "max_tokens"]
    assert (body["temperature"], body["top_p"], limit, body["seed_hint"]) == (
        0.2,
        0.9,
        77,
        5,
    )
    if not responses:
        assert body["stop_sequences" if fake.kind == "anthropic" else "stop"] == ["END"]
    assert body["model"] == MODEL


@pytest.mark.parametrize(
    "settings, bad",
    [
        ({"temperatur": 0.2}, "temperatur"),
        ({"script": []}, "script"),
        ({"temperature": "hot"}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"stream": "yes"}, "stream"),
        ({"extra_body": {"messages": []}}, "messages"),
    ],
    ids=[
        "typo",
        "scripted-only",
        "wrong-type",
        "not-positive",
        "stream-not-bool",
        "reserved-field",
    ],
)
async def test_bad_model_settings_are_refused_before_any_call(
    fake: FakeServer, llm: Harness, settings: dict, bad: str
) -> None:
    log = await llm.run("refused", "hi", llm_agent(settings=settings))
    code, reason, meta = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_MODEL_SETTINGS")
    assert bad in log.error.details()
    assert fake.requests == []
    assert log.events == []


async def test_an_unconfigured_provider_name_is_refused(fake: FakeServer, llm: Harness) -> None:
    spec = llm_agent()
    spec.model = "nope:test-model"
    log = await llm.run("unknown", "hi", spec)
    code, reason, _ = error_info(log.error)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_PROVIDER")
    assert "llm" in log.error.details() and "scripted" in log.error.details()
