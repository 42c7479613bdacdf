"""``kind = "anthropic"``: the Messages API, through the official ``anthropic`` SDK.

Transcript → wire: the system messages joined into the ``system`` field; an assistant turn
as a ``text`` block and one ``tool_use`` block per call (``input`` is the arguments
object); the tool results of a turn, which the transcript holds as consecutive messages,
as ``tool_result`` blocks of one user turn (``is_error`` kept), with any user input that
follows them (R12) appended to that same turn, since roles must alternate. Wire →
transcript: the text blocks joined, each ``tool_use`` block a call. Streamed tool input
is kept as the raw JSON text the model wrote, so a broken one becomes an error result
the model can read (R25). With ``"stream": true`` each piece of text is reported.

Reasoning (R84): the agent's ``reasoning`` becomes ``thinking: {type: enabled,
budget_tokens}`` (a budget from the effort when none is given, ``max_tokens`` raised above
it). The ``thinking`` and ``redacted_thinking`` blocks of an answer are kept with the turn
as received (their JSON, signature included) and sent back first in that assistant turn,
in their order, as the API requires when a tool-using turn is continued. Streamed
thinking is reported piece by piece (``reasoning.delta``), never as text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anthropic
import httpx2
from anthropic import AsyncAnthropic

from ..domain import AgentSpec, Message, ReasoningBlock, Role, ToolCall, ToolSpec, Usage
from .base import ModelRequest, ModelResponse
from .remote import (
    COMMON_SETTINGS,
    NUMBER,
    OBJECT,
    POSITIVE_INT,
    STRING,
    STRINGS,
    IncompleteResponse,
    MalformedResponse,
    OnText,
    RemoteProvider,
    arguments_object,
    object_schema,
    passed_settings,
    raw_arguments,
)
from .retry import Failure, status_failure

#: The Messages API requires max_tokens; used when the agent's settings do not give one.
DEFAULT_MAX_TOKENS = 4096
NO_KEY = "no-key"
#: Error types of an ``error`` event in the middle of a stream worth another attempt.
TRANSIENT_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
#: R84: the thinking budget of an effort, when the agent gives no budget (the API's least is
#: 1024 tokens).
EFFORT_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}
#: The kind named on the reasoning blocks this provider keeps (``ReasoningBlock.provider``).
KIND = "anthropic"
THINKING_TYPES = ("thinking", "redacted_thinking")


class AnthropicProvider(RemoteProvider):
    CLIENT = AsyncAnthropic
    client: AsyncAnthropic
    kind = "anthropic"
    SETTINGS = {
        **COMMON_SETTINGS,
        "max_tokens": POSITIVE_INT,
        "temperature": NUMBER,
        "top_p": NUMBER,
        "top_k": POSITIVE_INT,
        "stop": STRINGS,
        "stop_sequences": STRINGS,
        "tool_choice": OBJECT,
        "metadata": OBJECT,
        "service_tier": STRING,
    }

    async def _attempt(self, request: ModelRequest, on_text: OnText | None) -> ModelResponse:
        system, messages = to_wire(request.messages)
        body = passed_settings(request.settings)
        max_tokens = body.pop("max_tokens", DEFAULT_MAX_TOKENS)
        if "stop" in body:
            stop = body.pop("stop")
            body["stop_sequences"] = [stop] if isinstance(stop, str) else stop
        params: dict[str, Any] = {
            "model": request.model,
            "max_tokens": max_tokens,
            "messages": messages,
        }
        if system:
            params["system"] = system
        if request.agent.tools:
            params["tools"] = [tool_to_wire(t) for t in request.agent.tools]
        if schema := request.agent.output_schema_json:  # R83: the answer as a forced tool
            params["tools"] = [*params.get("tools", ()), output_tool(schema)]
            if "tool_choice" not in body:
                params["tool_choice"] = (
                    {"type": "any"}  # the agent's tools stay usable; the answer is a tool too
                    if request.agent.tools
                    else {"type": "tool", "name": OUTPUT_TOOL}
                )
        # Settings go in the body as they are, not as SDK keywords: anthropic>=1 dropped
        # temperature/top_p/top_k from its signatures while the API still takes them.
        if (budget := thinking_budget(request.agent)) is not None:  # R84
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            if params["max_tokens"] <= budget:  # the answer needs room past the thinking
                params["max_tokens"] = budget + DEFAULT_MAX_TOKENS
            if params.get("tool_choice", {}).get("type") in ("any", "tool"):
                # The API refuses a forced tool with thinking: the answer tool stays
                # offered, and an answer given as text is validated the same (R83).
                del params["tool_choice"]
        if body:
            params["extra_body"] = body
        if on_text is None:
            resp = from_message(await self.client.messages.create(**params))
        else:
            stream = await self.client.messages.create(**params, stream=True)
            async with stream:  # the connection is released even when the call is aborted
                resp = await from_stream(stream, on_text, request.on_reasoning)
        schema = request.agent.output_schema_json
        return answer_of(resp, schema) if schema else resp

    def _classify(self, e: Exception) -> Failure | None:
        if isinstance(e, anthropic.APITimeoutError | httpx2.TimeoutException):
            return Failure(True, "timeout", f"no answer within {self.config.timeout_s:g}s")
        if isinstance(e, anthropic.APIConnectionError):
            return Failure(True, "connection_error", str(e.__cause__ or e))
        if isinstance(e, httpx2.TransportError):  # the connection broke mid-stream
            return Failure(True, "connection_error", f"{type(e).__name__}: {e}")
        if isinstance(e, anthropic.APIStatusError):
            detail = e.api_message or e.message
            if e.status_code < 400:  # an error event in the middle of a stream
                error_type = e.type or "stream_error"
                return Failure(error_type in TRANSIENT_STREAM_ERRORS, error_type, detail)
            return status_failure(e.status_code, e.response.headers, e.type, detail)
        if isinstance(e, anthropic.APIResponseValidationError):
            return Failure(False, "malformed_response", e.message, e.status_code)
        return None


def thinking_budget(agent: AgentSpec) -> int | None:
    """The thinking budget of the agent's reasoning setting; ``None``: no thinking."""
    r = agent.reasoning
    if r is None:
        return None
    if r.budget_tokens is not None:
        return max(r.budget_tokens, EFFORT_BUDGETS["minimal"])
    return EFFORT_BUDGETS.get(r.effort or "medium", EFFORT_BUDGETS["medium"])


def thinking_blocks(m: Message) -> list[dict[str, Any]]:
    """The turn's kept thinking blocks, each as it was received (R84)."""
    return [json.loads(b.raw_json) for b in m.reasoning if b.provider == KIND]


def kept_block(block: dict[str, Any]) -> ReasoningBlock:
    """A thinking or redacted_thinking block as kept with its turn."""
    return ReasoningBlock(
        KIND,
        json.dumps(block, ensure_ascii=False, separators=(",", ":")),
        block.get("thinking", "") if block.get("type") == "thinking" else "",
    )


def to_wire(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system, messages) for the Messages API; consecutive turns of one role merged."""
    system = "\n\n".join(m.content for m in messages if m.role is Role.SYSTEM and m.content)
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role is Role.SYSTEM:
            continue
        if m.role is Role.TOOL:
            role = "user"
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": m.tool_call_id,
                "content": m.content,
            }
            if m.is_error:
                block["is_error"] = True
            blocks = [block]
        else:
            role = m.role.value
            # R84: the thinking first, as received, then the text and the calls.
            blocks = thinking_blocks(m) if m.role is Role.ASSISTANT else []
            blocks += [{"type": "text", "text": m.content}] if m.content else []
            blocks += [tool_use(c) for c in m.tool_calls]
        if not blocks:  # the API refuses empty text
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return system, out


def tool_use(c: ToolCall) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": c.id,
        "name": c.name,
        "input": arguments_object(c.arguments_json)[0],
    }


#: The tool whose input is an agent's structured answer (R83).
OUTPUT_TOOL = "final_answer"


def _wrapped(schema: Any) -> bool:
    return not (isinstance(schema, dict) and schema.get("type") == "object")


def output_tool(schema_json: str) -> dict[str, Any]:
    schema = json.loads(schema_json)
    if _wrapped(schema):
        # A tool's input is an object: any other answer comes wrapped, and unwrapped below.
        schema = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
    return {
        "name": OUTPUT_TOOL,
        "description": "Give your final answer: its input is the answer.",
        "input_schema": schema,
    }


def answer_of(resp: ModelResponse, schema_json: str) -> ModelResponse:
    """The output tool's call becomes the turn's text (the answer, as JSON), which the
    engine then validates like any answer."""
    answers = [c for c in resp.tool_calls if c.name == OUTPUT_TOOL]
    if not answers:
        return resp
    text = answers[-1].arguments_json
    try:
        value = json.loads(text or "{}")
    except ValueError:
        pass  # kept as it came: the engine names the error to the model
    else:
        if _wrapped(json.loads(schema_json)) and isinstance(value, dict) and "value" in value:
            value = value["value"]
        text = json.dumps(value)
    others = tuple(c for c in resp.tool_calls if c.name != OUTPUT_TOOL)
    return ModelResponse(text, others, resp.usage, resp.model, resp.reasoning)


def tool_to_wire(t: ToolSpec) -> dict[str, Any]:
    d: dict[str, Any] = {"name": t.name, "input_schema": object_schema(t.input_schema_json)}
    if t.description:
        d["description"] = t.description
    return d


def _prompt_tokens(u: Any) -> int:
    # Cached prompt tokens are billed separately but are prompt tokens all the same.
    return (
        (getattr(u, "input_tokens", None) or 0)
        + (getattr(u, "cache_creation_input_tokens", None) or 0)
        + (getattr(u, "cache_read_input_tokens", None) or 0)
    )


def _usage(u: Any, completion: int | None = None) -> Usage:
    """Anthropic's usage: prompt tokens with the cache's read and written ones apart."""
    return Usage(
        _prompt_tokens(u),
        completion if completion is not None else (getattr(u, "output_tokens", None) or 0),
        cached_input_tokens=getattr(u, "cache_read_input_tokens", None) or 0,
        cache_write_tokens=getattr(u, "cache_creation_input_tokens", None) or 0,
    )


def from_message(msg: Any) -> ModelResponse:
    content = getattr(msg, "content", None)
    if content is None:
        raise MalformedResponse("the response has no content")
    text = "".join(b.text for b in content if b.type == "text")
    calls = tuple(
        ToolCall(b.id, b.name, json.dumps(b.input)) for b in content if b.type == "tool_use"
    )
    reasoning = tuple(kept_block(_fields(b)) for b in content if b.type in THINKING_TYPES)
    return ModelResponse(
        text,
        calls,
        _usage(msg.usage) if msg.usage else Usage(),
        getattr(msg, "model", "") or "",
        reasoning,
    )


def _fields(block: Any) -> dict[str, Any]:
    """A block of the SDK's answer as the fields the server sent (none added or dropped)."""
    to_dict = getattr(block, "to_dict", None)
    if to_dict is not None:
        return dict(to_dict(mode="json", exclude_unset=True))
    return dict(block.model_dump(mode="json", exclude_unset=True))


async def from_stream(
    stream: Any, on_text: OnText, on_reasoning: OnText | None = None
) -> ModelResponse:
    """Assemble a streamed message: text deltas in order (each reported), each tool_use
    block's input from its ``input_json_delta`` pieces, each thinking block from its
    ``thinking_delta`` pieces (each reported to ``on_reasoning``) and ``signature_delta``,
    a redacted_thinking block as it starts, usage from message_start and the cumulative
    counts of message_delta."""
    blocks: dict[int, dict[str, Any]] = {}
    usage, completion = Usage(), 0
    stopped = False
    model = ""
    async for event in stream:
        match event.type:
            case "message_start":
                usage = _usage(event.message.usage)
                completion = usage.completion_tokens
                model = getattr(event.message, "model", "") or ""
            case "content_block_start":
                cb = event.content_block
                blocks[event.index] = {
                    "type": cb.type,
                    "id": getattr(cb, "id", ""),
                    "name": getattr(cb, "name", ""),
                    "parts": [],
                    "signature": [],
                    "start": _fields(cb),
                }
                if cb.type == "thinking" and cb.thinking:
                    blocks[event.index]["parts"].append(cb.thinking)
                    if on_reasoning is not None:
                        await on_reasoning(cb.thinking)
                if cb.type == "text" and cb.text:
                    blocks[event.index]["parts"].append(cb.text)
                    await on_text(cb.text)
            case "content_block_delta":
                block = blocks.get(event.index)
                if block is None:
                    raise MalformedResponse(
                        f"a delta for content block {event.index}, which never started"
                    )
                if event.delta.type == "text_delta":
                    block["parts"].append(event.delta.text)
                    await on_text(event.delta.text)
                elif event.delta.type == "input_json_delta":
                    block["parts"].append(event.delta.partial_json)
                elif event.delta.type == "thinking_delta":
                    block["parts"].append(event.delta.thinking)
                    if on_reasoning is not None:
                        await on_reasoning(event.delta.thinking)
                elif event.delta.type == "signature_delta":
                    block["signature"].append(event.delta.signature)
            case "message_delta":
                if event.usage is not None:
                    completion = event.usage.output_tokens or completion
                    if event.usage.input_tokens is not None:
                        usage = _usage(event.usage)
            case "message_stop":
                stopped = True
    if not stopped:
        raise IncompleteResponse("the stream ended before message_stop")
    ordered = [b for _, b in sorted(blocks.items())]
    text = "".join("".join(b["parts"]) for b in ordered if b["type"] == "text")
    calls = tuple(
        ToolCall(b["id"], b["name"], raw_arguments("".join(b["parts"])))
        for b in ordered
        if b["type"] == "tool_use"
    )
    reasoning = tuple(_streamed_thinking(b) for b in ordered if b["type"] in THINKING_TYPES)
    usage.completion_tokens = completion
    return ModelResponse(text, calls, usage, model, reasoning)


def _streamed_thinking(b: dict[str, Any]) -> ReasoningBlock:
    """A streamed thinking block as the whole block the API would have sent: its start
    with the thinking and the signature the deltas carried."""
    block = dict(b["start"])
    if block.get("type") == "thinking":
        block["thinking"] = "".join(b["parts"])  # the start's piece, then the deltas
        block["signature"] = block.get("signature", "") + "".join(b["signature"])
    return kept_block(block)


__all__ = ["AnthropicProvider"]
