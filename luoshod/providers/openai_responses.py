"""``kind = "openai_responses"``: OpenAI's Responses API, through the official ``openai``
SDK: the way OpenAI's reasoning models keep their reasoning across tool calls.

Every request is stateless (``store: false``): the whole transcript goes as ``input`` and
nothing is kept on OpenAI's side, so a session continues on any daemon, after any crash,
from its checkpoint alone. ``include: ["reasoning.encrypted_content"]`` makes each
``reasoning`` item of an answer carry its reasoning encrypted; those items are kept with
the turn as received (R84) and sent back, before the turn's message and calls, when the
run continues.

Transcript → wire: the system messages joined into ``instructions``; user input as a
``message`` item; an assistant turn as its kept reasoning items, a ``message`` item with
its text (``output_text``) and one ``function_call`` item per call (``call_id`` is the
call's id, the arguments the JSON text the model wrote); each tool result as a
``function_call_output`` item, an error result marked with ``[tool error]`` since the
format has no flag for it. Wire → transcript: the ``output_text`` parts joined, each
``function_call`` a call, each ``reasoning`` item kept; usage with the cached input and
reasoning tokens. The agent's ``reasoning`` is sent as ``reasoning.effort``. With
``"stream": true`` each piece of text is reported, and each piece of a reasoning
summary as ``reasoning.delta``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import openai
from openai import AsyncOpenAI

from ..domain import Message, ReasoningBlock, Role, ToolCall, ToolSpec, Usage
from .base import ModelRequest, ModelResponse
from .openai_chat import ERROR_MARK, reasoning_effort
from .remote import (
    BOOLEAN,
    COMMON_SETTINGS,
    NUMBER,
    OBJECT,
    POSITIVE_INT,
    STRING,
    STRING_OR_OBJECT,
    IncompleteResponse,
    MalformedResponse,
    OnText,
    RemoteProvider,
    object_schema,
    passed_settings,
    raw_arguments,
)
from .retry import Failure, status_failure

NO_KEY = "no-key"
#: The kind named on the reasoning items this provider keeps (``ReasoningBlock.provider``).
KIND = "openai_responses"
#: Error codes of a failed response (``response.failed``, an ``error`` event) worth another
#: attempt.
TRANSIENT_CODES = {"server_error", "rate_limit_exceeded", "server_is_overloaded", "timeout"}


class FailedResponse(Exception):
    """The server reported the response failed (``response.failed`` or ``error``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class OpenAIResponsesProvider(RemoteProvider):
    CLIENT = AsyncOpenAI
    client: AsyncOpenAI
    kind = KIND
    SETTINGS = {
        **COMMON_SETTINGS,
        "temperature": NUMBER,
        "top_p": NUMBER,
        "max_output_tokens": POSITIVE_INT,
        "max_tokens": POSITIVE_INT,  # sent as max_output_tokens, as the other kinds take it
        "parallel_tool_calls": BOOLEAN,
        "tool_choice": STRING_OR_OBJECT,
        "text": OBJECT,
        "reasoning": OBJECT,
        "service_tier": STRING,
        "truncation": STRING,
        "user": STRING,
        "metadata": OBJECT,
    }

    async def _attempt(self, request: ModelRequest, on_text: OnText | None) -> ModelResponse:
        instructions, items = to_wire(request.messages)
        params: dict[str, Any] = {
            "model": request.model,
            "input": items,
            "store": False,  # stateless: the checkpoint holds the conversation
            "include": ["reasoning.encrypted_content"],
        }
        if instructions:
            params["instructions"] = instructions
        if request.agent.tools:
            params["tools"] = [tool_to_wire(t) for t in request.agent.tools]
        body = passed_settings(request.settings)
        if "max_tokens" in body:
            body.setdefault("max_output_tokens", body.pop("max_tokens"))
        if effort := reasoning_effort(request.agent):  # R84
            body["reasoning"] = {"effort": effort, **body.get("reasoning", {})}
        if request.agent.output_schema_json and "text" not in body:  # R83
            schema = json.loads(request.agent.output_schema_json)
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": "output",
                    "schema": schema,
                    "strict": False,
                }
            }
        if body:
            params["extra_body"] = body
        if on_text is None:
            return from_response(await self.client.responses.create(**params))
        stream = await self.client.responses.create(**params, stream=True)
        async with stream:  # the connection is released even when the call is aborted
            return await from_stream(stream, on_text, request.on_reasoning)

    def _classify(self, e: Exception) -> Failure | None:
        if isinstance(e, FailedResponse):
            return Failure(e.code in TRANSIENT_CODES, e.code or "response_failed", e.message)
        if isinstance(e, openai.APITimeoutError):
            return Failure(True, "timeout", f"no answer within {self.config.timeout_s:g}s")
        if isinstance(e, openai.APIConnectionError):
            return Failure(True, "connection_error", str(e.__cause__ or e))
        if isinstance(e, openai.APIStatusError):
            body = e.body if isinstance(e.body, dict) else {}
            message = body.get("message")
            detail = message if isinstance(message, str) else e.message
            return status_failure(e.status_code, e.response.headers, e.type or e.code, detail)
        if isinstance(e, openai.APIResponseValidationError):
            return Failure(False, "malformed_response", e.message, e.status_code)
        if isinstance(e, openai.APIError):  # an error in the middle of a stream
            return Failure(True, e.type or "stream_error", e.message)
        return None


def to_wire(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(instructions, input items) for the Responses API."""
    instructions = "\n\n".join(m.content for m in messages if m.role is Role.SYSTEM and m.content)
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role is Role.SYSTEM:
            continue
        if m.role is Role.USER:
            items.append({"type": "message", "role": "user", "content": m.content})
        elif m.role is Role.ASSISTANT:
            # R84: the turn's reasoning items first, as received, then its text and calls.
            items += [json.loads(b.raw_json) for b in m.reasoning if b.provider == KIND]
            if m.content:
                items.append(
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": m.content}],
                    }
                )
            items += [call_to_wire(c) for c in m.tool_calls]
        else:
            output = ERROR_MARK + m.content if m.is_error else m.content
            items.append(
                {"type": "function_call_output", "call_id": m.tool_call_id, "output": output}
            )
    return instructions, items


def call_to_wire(c: ToolCall) -> dict[str, Any]:
    try:
        json.loads(c.arguments_json or "{}")
        text = c.arguments_json or "{}"
    except ValueError:  # bad arguments a model wrote earlier (their error result says why)
        text = json.dumps({"_unparsed": c.arguments_json})
    return {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": text}


def tool_to_wire(t: ToolSpec) -> dict[str, Any]:
    d: dict[str, Any] = {
        "type": "function",
        "name": t.name,
        "parameters": object_schema(t.input_schema_json),
        "strict": False,
    }
    if t.description:
        d["description"] = t.description
    return d


def _fields(item: Any) -> dict[str, Any]:
    """An item of the SDK's answer as the fields the server sent (none added or dropped)."""
    if isinstance(item, dict):
        return item
    return dict(item.to_dict(mode="json", exclude_unset=True))


def _usage(u: Any) -> Usage:
    if u is None:
        return Usage()
    input_details = getattr(u, "input_tokens_details", None)
    output_details = getattr(u, "output_tokens_details", None)
    return Usage(
        prompt_tokens=getattr(u, "input_tokens", None) or 0,
        completion_tokens=getattr(u, "output_tokens", None) or 0,
        cached_input_tokens=getattr(input_details, "cached_tokens", None) or 0,
        reasoning_tokens=getattr(output_details, "reasoning_tokens", None) or 0,
    )


def kept_item(item: dict[str, Any]) -> ReasoningBlock:
    """A reasoning item as kept with its turn: its JSON, and its summary as the text."""
    summary = item.get("summary") or []
    text = "\n\n".join(s.get("text", "") for s in summary if isinstance(s, dict) and s.get("text"))
    return ReasoningBlock(KIND, json.dumps(item, ensure_ascii=False, separators=(",", ":")), text)


def from_response(resp: Any) -> ModelResponse:
    status = getattr(resp, "status", None)
    if status == "failed":
        error = getattr(resp, "error", None)
        raise FailedResponse(
            getattr(error, "code", "") or "response_failed",
            getattr(error, "message", "") or "the response failed",
        )
    output = getattr(resp, "output", None)
    if output is None:
        raise MalformedResponse("the response has no output")
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningBlock] = []
    for raw in output:
        item = _fields(raw)
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or ():
                if part.get("type") == "output_text":
                    text.append(part.get("text", ""))
                elif part.get("type") == "refusal":
                    text.append(part.get("refusal", ""))
        elif kind == "function_call":
            calls.append(
                ToolCall(
                    item.get("call_id") or "",
                    item.get("name") or "",
                    raw_arguments(item.get("arguments")),
                )
            )
        elif kind == "reasoning":
            reasoning.append(kept_item(item))
    return ModelResponse(
        "".join(text),
        tuple(calls),
        _usage(getattr(resp, "usage", None)),
        getattr(resp, "model", "") or "",
        tuple(reasoning),
    )


async def from_stream(
    stream: Any, on_text: OnText, on_reasoning: OnText | None = None
) -> ModelResponse:
    """Report the text and the reasoning summary as they stream; the turn is the whole
    response that ``response.completed`` carries."""
    async for event in stream:
        match event.type:
            case "response.output_text.delta":
                await on_text(event.delta)
            case "response.reasoning_summary_text.delta" | "response.reasoning_text.delta":
                if on_reasoning is not None:
                    await on_reasoning(event.delta)
            case "response.completed" | "response.incomplete":
                return from_response(event.response)
            case "response.failed":
                return from_response(event.response)  # raises FailedResponse
            case "error":
                raise FailedResponse(
                    getattr(event, "code", "") or "stream_error",
                    getattr(event, "message", "") or "the stream failed",
                )
    raise IncompleteResponse("the stream ended before response.completed")


__all__ = ["OpenAIResponsesProvider"]
