"""R84 against fake servers of the wires that return reasoning to keep (Anthropic's signed
thinking, the Responses API's encrypted reasoning items): the reasoning of a turn that
calls tools goes back with that turn exactly as received, whatever happens in between (a
kill -9 of the daemon, an approval pause, a fork), streams as ``reasoning.delta`` and never
as text, and counts in usage. The fakes sign what they send and refuse (HTTP 400, a
recorded violation that fails the test) a continuation that drops, reorders or alters it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, assert_valid_transcript, error_info
from tests.support.model_fakes import REDACTED, FakeServer, turn
from tests.support.providers import KEY_ENV, add, llm_agent, provider_toml

pytestmark = pytest.mark.asyncio

THINKING = ("The user wants 1+2; the add tool does that.", f"{REDACTED}hidden step")
REASONING_WIRES = pytest.mark.parametrize("fake", ["anthropic", "openai_responses"], indirect=True)


def thinking_agent(**kw: Any) -> pb.AgentSpec:
    spec = llm_agent(**kw)
    spec.reasoning.effort = "low"
    return spec


def sent_back(fake: FakeServer, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The reasoning a request sends back with the first turn, as it is on the wire."""
    if fake.kind == "anthropic":
        turn0 = next(m for m in body["messages"] if m["role"] == "assistant")
        return [b for b in turn0["content"] if b["type"] in ("thinking", "redacted_thinking")]
    return [i for i in body["input"] if i.get("type") == "reasoning"]


def kept(cp: pb.Checkpoint) -> list[dict[str, Any]]:
    """The reasoning the checkpoint keeps on its first assistant turn."""
    turn0 = next(m for m in cp.messages if m.role == pb.ROLE_ASSISTANT)
    return [json.loads(b.raw_json) for b in turn0.reasoning]


def assert_carried(fake: FakeServer, cp: pb.Checkpoint) -> None:
    """The continuation sent turn 0's reasoning as the fake sent it, and the checkpoint
    keeps it so; never as text."""
    assert fake.thought[0] and len(fake.thought[0]) == 2
    assert kept(cp) == fake.thought[0]
    assert sent_back(fake, fake.requests[-1].body) == fake.thought[0]
    wire = json.dumps(fake.requests[-1].body)
    assert wire.count(THINKING[0]) == 1  # once: in its block
    assert all(THINKING[0] not in m.content for m in cp.messages)


@REASONING_WIRES
@pytest.mark.parametrize("stream", [False, True])
async def test_r84_the_thinking_of_a_tool_calling_turn_goes_back_as_received(
    fake: FakeServer, llm: Harness, stream: bool
) -> None:
    fake.script = [turn("", ("add", {"a": 1, "b": 2}), thinking=THINKING), turn("3")]
    spec = thinking_agent(settings={"stream": True} if stream else None)
    log = await llm.run("think", "add 1 and 2", spec, {"add": add})
    assert log.error is None, log.error
    assert log.done.final_text == "3"
    assert fake.answered() == [0, 1]
    first = fake.requests[0].body
    if fake.kind == "anthropic":
        assert first["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        assert first["max_tokens"] > 2048
    else:
        assert first["reasoning"] == {"effort": "low"} and first["store"] is False
        assert first["include"] == ["reasoning.encrypted_content"]
    cp = await llm.get("think")
    assert_valid_transcript(cp)
    assert_carried(fake, cp)
    turn0 = next(m for m in cp.messages if m.role == pb.ROLE_ASSISTANT)
    assert [b.provider for b in turn0.reasoning] == [fake.kind] * 2
    assert [b.text for b in turn0.reasoning] == [THINKING[0], ""]  # the redacted one unread


@REASONING_WIRES
async def test_r84_reasoning_streams_as_reasoning_delta_never_as_text(
    fake: FakeServer, llm: Harness
) -> None:
    fake.script = [turn("", ("add", {"a": 1, "b": 2}), thinking=THINKING), turn("It is 3.")]
    log = await llm.run("deltas", "add", thinking_agent(settings={"stream": True}), {"add": add})
    assert log.error is None, log.error
    reasoning = "".join(e.reasoning_delta.text for e in log.of("reasoning.delta"))
    text = "".join(e.text_delta.text for e in log.of("text.delta"))
    assert reasoning == THINKING[0]  # the readable part, as it streamed
    assert text == "It is 3." and log.done.final_text == "It is 3."
    assert all(e.seq == 0 for e in log.of("reasoning.delta"))  # progress only, never kept
    watched = [
        r.event.type
        async for r in llm.stub.Watch(pb.WatchRequest(session_id="deltas", follow=False))
    ]
    assert "reasoning.delta" not in watched and "model.turn" in watched


async def test_r84_reasoning_tokens_are_counted_in_usage(fake: FakeServer, llm: Harness) -> None:
    if fake.kind == "anthropic":
        pytest.skip("the Messages API counts thinking within output_tokens, not apart")
    fake.script = [turn("", ("add", {"a": 1}), usage=(50, 40), reasoning=30), turn("1")]
    log = await llm.run("tokens", "add", thinking_agent(), {"add": add})
    assert log.error is None, log.error
    assert log.done.usage.reasoning_tokens == 30
    assert log.done.usage.completion_tokens == 45  # reasoning within the output tokens
    turns = [e.model_turn for e in log.of("model.turn")]
    assert [t.usage.reasoning_tokens for t in turns] == [30, 0]
    if fake.kind == "openai":
        assert fake.requests[0].body["reasoning_effort"] == "low"


@REASONING_WIRES
async def test_r84_across_an_approval_pause(fake: FakeServer, llm: Harness) -> None:
    fake.script = [turn("", ("add", {"a": 1, "b": 2}), thinking=THINKING), turn("3")]
    spec = thinking_agent()
    spec.tools[0].needs_approval = True
    log = await llm.run("gate", "add", spec, {"add": add})
    assert log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    approval_id = log.of("approval.requested")[0].approval_requested.approval.approval_id
    done = None
    async for resp in llm.stub.Resolve(pb.ResolveRequest(approval_id=approval_id, approved=True)):
        e = resp.event
        if e.type == "tool.call":
            await llm.submit("gate", e.tool_call.call.id, "3")
        if e.type == "run.done":
            done = e.run_done
    assert done is not None and done.final_text == "3"
    assert_carried(fake, await llm.get("gate"))


@REASONING_WIRES
async def test_r84_a_fork_continues_with_the_turns_reasoning(
    fake: FakeServer, llm: Harness
) -> None:
    fake.script = [turn("", ("add", {"a": 1, "b": 2}), thinking=THINKING), turn("3")]
    log = await llm.run("src", "add", thinking_agent(), {"add": add})
    assert log.done.final_text == "3"
    patch = pb.ForkPatch(tool_result=pb.ToolResultPatch(tool_call_id=_call0(fake), result_json="4"))
    forked = await llm.stub.Fork(pb.ForkRequest(session_id="src", from_step=1, patch=patch))
    assert kept(forked.checkpoint) == fake.thought[0]
    log = await llm.run(forked.session_id, None, resume=True)
    assert log.error is None, log.error
    assert fake.answered() == [0, 1, 1]
    assert_carried(fake, await llm.get(forked.session_id))


def _call0(fake: FakeServer) -> str:
    return "toolu_0_0" if fake.kind == "anthropic" else "call_0_0"


async def test_r84_an_unknown_effort_or_a_budget_under_one_is_refused(llm: Harness) -> None:
    for reasoning in (pb.Reasoning(effort="max"), pb.Reasoning(budget_tokens=0)):
        spec = llm_agent()
        spec.reasoning.CopyFrom(reasoning)
        log = await llm.run("bad-reasoning", "hi", spec)
        code, reason = error_info(log.error)[:2]
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REASONING")


@REASONING_WIRES
async def test_r84_the_fakes_refuse_reasoning_dropped_reordered_altered_or_forged(
    fake: FakeServer, llm: Harness
) -> None:
    """The check the tests above rely on can fail: a continuation of a turn with reasoning,
    sent by hand to a fake of its own, is refused for each way of not sending it back."""
    fake.script = [turn("", ("add", {"a": 1, "b": 2}), thinking=THINKING), turn("3")]
    log = await llm.run("good", "add", thinking_agent(), {"add": add})
    assert log.error is None, log.error
    good = fake.requests[-1].body
    probe = await type(fake)().start()
    probe.secret, probe.thought = fake.secret, {0: fake.thought[0]}
    try:
        async with aiohttp.ClientSession() as http:

            async def status(body: dict[str, Any]) -> int:
                url = f"{probe.base_url.removesuffix('/v1')}{probe.path}"
                headers = {"Authorization": f"Bearer {probe.key}", "anthropic-version": "1"}
                async with http.post(url, json=body, headers=headers) as r:
                    return r.status

            assert await status(good) == 200
            for name, change in _breakages(fake).items():
                body = json.loads(json.dumps(good))
                change(_blocks_of(fake, body))
                assert await status(body) == 400, name
    finally:
        await probe.close()
    assert len({v.split(":")[0] for v in probe.violations}) == 4  # each refused request


def _blocks_of(fake: FakeServer, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The list holding turn 0's reasoning in a request body (changed in place)."""
    if fake.kind == "anthropic":
        return next(m for m in body["messages"] if m["role"] == "assistant")["content"]
    return body["input"]


def _breakages(fake: FakeServer) -> dict[str, Any]:
    kinds = ("thinking", "redacted_thinking", "reasoning")

    def at(items: list[dict[str, Any]]) -> list[int]:
        return [i for i, b in enumerate(items) if b.get("type") in kinds]

    def drop(items: list[dict[str, Any]]) -> None:
        del items[at(items)[1]]

    def reorder(items: list[dict[str, Any]]) -> None:
        i, j = at(items)
        items[i], items[j] = items[j], items[i]

    def alter(items: list[dict[str, Any]]) -> None:
        block = items[at(items)[0]]
        if "thinking" in block:
            block["thinking"] += " (edited)"
        else:
            block["summary"][0]["text"] += " (edited)"

    def forge(items: list[dict[str, Any]]) -> None:
        block = items[at(items)[0]]
        key = "signature" if "signature" in block else "encrypted_content"
        block[key] = block[key][:-4] + "AAAA"

    return {"drop": drop, "reorder": reorder, "alter": alter, "forge": forge}


@REASONING_WIRES
async def test_r84_kill9_between_a_thinking_turn_and_its_continuation(
    fake: FakeServer, tmp_path: Path
) -> None:
    config = tmp_path / "luoshod.toml"
    config.write_text(provider_toml(fake))
    args = ("--store", db_url(tmp_path), "--config", str(config), "--lease-owner", "d1")
    env = {KEY_ENV: fake.key}
    fake.script = [turn("", ("add", {"a": 1, "b": 2}), thinking=THINKING), turn("3")]
    first = DaemonProcess(*args, env=env).start()
    killed: list[str] = []
    try:
        h = Harness(first.address)

        async def kill_at_the_tool_call(e: pb.Event) -> None:
            if e.type == "tool.call" and not killed:  # the turn is durable (R1), no result yet
                killed.append(e.tool_call.call.id)
                first.kill9()

        log = await h.run("crash", "add", thinking_agent(), on_event=kill_at_the_tool_call)
        assert killed and log.error is not None
        await h.close()
    finally:
        first.stop()
    assert fake.answered() == [0]

    second = DaemonProcess(*args, env=env).start()
    try:
        h = Harness(second.address)
        cp = await h.get("crash")
        assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
        assert kept(cp) == fake.thought[0]  # read back from the store as received
        log = await h.run("crash", None, resume=True, tools={"add": add})
        assert log.error is None, log.error
        assert log.done.final_text == "3"
        assert fake.answered() == [0, 1]  # the thinking turn was not asked again (R22)
        assert_carried(fake, await h.get("crash"))
        await h.close()
    finally:
        second.stop()


async def test_r84_reasoning_of_one_provider_kind_is_not_sent_to_another() -> None:
    """A turn's reasoning goes back only to the kind of provider that made it (a fallback
    or a changed model of another kind is sent the turn without it)."""
    from luoshod.domain import Message, ReasoningBlock, Role, ToolCall
    from luoshod.providers import anthropic_messages, openai_chat, openai_responses

    thinking = {"type": "thinking", "thinking": "t", "signature": "s"}
    item = {"id": "rs_0", "type": "reasoning", "summary": [], "encrypted_content": "e"}
    turn0 = Message(
        Role.ASSISTANT,
        "",
        (ToolCall("c1", "add", "{}"),),
        reasoning=(
            ReasoningBlock("anthropic", json.dumps(thinking), "t"),
            ReasoningBlock("openai_responses", json.dumps(item)),
        ),
    )
    transcript = [Message(Role.USER, "go"), turn0, Message(Role.TOOL, "1", (), "c1", "add")]
    _, messages = anthropic_messages.to_wire(transcript)
    assert messages[1]["content"][0] == thinking and len(messages[1]["content"]) == 2
    _, items = openai_responses.to_wire(transcript)
    assert [i["type"] for i in items] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert items[1] == item
    assert "reasoning" not in json.dumps(openai_chat.to_wire(transcript))


async def test_r84_input_reasoning_must_be_an_assistants_json_blocks(llm: Harness) -> None:
    """Reasoning given with input (a transcript a client carries over) is checked when the
    request arrives: only on assistant messages, each block a JSON object."""
    block = pb.ReasoningBlock(provider="anthropic", raw_json='{"type":"thinking"}', text="t")
    bad_role = pb.Message(role=pb.ROLE_USER, content="hi", reasoning=[block])
    bad_json = pb.Message(
        role=pb.ROLE_ASSISTANT,
        content="ok",
        reasoning=[pb.ReasoningBlock(provider="anthropic", raw_json="not json")],
    )
    for n, messages in enumerate(
        ([bad_role], [pb.Message(role=pb.ROLE_USER, content="hi"), bad_json])
    ):
        log = await llm.run(f"input-reasoning-{n}", messages, llm_agent())
        code, reason = error_info(log.error)[:2]
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_MESSAGE")


@pytest.mark.parametrize("fake", ["anthropic"], indirect=True)
async def test_r84_thinking_with_an_output_schema_forces_no_tool(
    fake: FakeServer, llm: Harness
) -> None:
    """The Messages API refuses a forced tool with thinking: the answer tool (R83) is
    offered without forcing it, and the answer still comes back validated."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    fake.script = [turn("", ("final_answer", {"n": 3}), thinking=THINKING[:1])]
    spec = thinking_agent(output_schema_json=json.dumps(schema))
    log = await llm.run("schema", "three", spec, {"add": add})
    assert log.error is None, log.error
    assert log.done.output_json == '{"n":3}'
    body = fake.requests[0].body
    assert "tool_choice" not in body and body["thinking"]["type"] == "enabled"
    assert [t["name"] for t in body["tools"]] == ["add", "final_answer"]
