"""``kind = "anthropic"``: the Messages API, through the official ``anthropic`` SDK.

Transcript → wire: the system messages joined into the ``system`` field; an assistant turn
as a ``text`` block and one ``tool_use`` block per call (``input`` is the arguments
object); the tool results of a turn, which the transcript holds as consecutive messages,
as ``tool_result`` blocks of one user turn (``is_error`` kept), with any user input that
follows them (R12) appended to that same turn, since roles must alternate. Wire →
transcript: the text blocks joined, each ``tool_use`` block a call. Streamed tool input
is kept as the raw JSON text the model wrote, so a broken one becomes an error result
the model can read (R25). With ``"stream": true`` each piece of text is reported.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anthropic
import httpx2
from anthropic import AsyncAnthropic

from ..config import ProviderConfig
from ..domain import Message, Role, ToolCall, ToolSpec, Usage
from .base import ModelRequest, ModelResponse
from .guard import ModelGuard
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


class AnthropicProvider(RemoteProvider):
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

    def __init__(self, config: ProviderConfig, guard: ModelGuard | None = None) -> None:
        super().__init__(config, guard)
        self.client = AsyncAnthropic(
            api_key=config.api_key.reveal() if config.api_key else NO_KEY,
            base_url=config.base_url,
            timeout=config.timeout_s,
            max_retries=0,  # retries are ours (retry.py)
        )

    async def aclose(self) -> None:
        await self.client.close()

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
        # Settings go in the body as they are, not as SDK keywords: anthropic>=1 dropped
        # temperature/top_p/top_k from its signatures while the API still takes them.
        if body:
            params["extra_body"] = body
        if on_text is None:
            return from_message(await self.client.messages.create(**params))
        stream = await self.client.messages.create(**params, stream=True)
        async with stream:  # the connection is released even when the call is aborted
            return await from_stream(stream, on_text)

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
            blocks = [{"type": "text", "text": m.content}] if m.content else []
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
    return ModelResponse(
        text,
        calls,
        _usage(msg.usage) if msg.usage else Usage(),
        getattr(msg, "model", "") or "",
    )


async def from_stream(stream: Any, on_text: OnText) -> ModelResponse:
    """Assemble a streamed message: text deltas in order (each reported), each tool_use
    block's input from its ``input_json_delta`` pieces, usage from message_start and the
    cumulative counts of message_delta."""
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
                }
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
    usage.completion_tokens = completion
    return ModelResponse(text, calls, usage, model)


__all__ = ["AnthropicProvider"]
