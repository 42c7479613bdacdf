"""``kind = "openai"``: the chat-completions wire format, through the official ``openai``
SDK. OpenAI speaks it, and so do the compatible servers (vLLM, Ollama, LiteLLM, llama.cpp):
``base_url`` picks the server.

Transcript → wire: system and user messages as they are; an assistant turn with its
``tool_calls`` (type ``function``, the arguments as the JSON text the model wrote); each
tool result as a ``tool`` message with its ``tool_call_id``, an error result marked with
``[tool error]`` since the format has no flag for it. Wire → transcript: the first
choice's text and tool calls, with the arguments kept as the raw string, so bad JSON and
unknown tool names reach the engine's checks and become error results the model can read
(R25). With ``"stream": true`` the answer is streamed and each piece of text reported.
The agent's ``reasoning`` (R84) is sent as ``reasoning_effort`` (an effort from a budget
when only a budget is given); this wire returns no reasoning to keep, only its token count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import openai
from openai import AsyncOpenAI

from ..domain import AgentSpec, Message, Role, ToolCall, ToolSpec, Usage
from .base import ModelRequest, ModelResponse
from .remote import (
    BOOLEAN,
    COMMON_SETTINGS,
    INTEGER,
    NUMBER,
    OBJECT,
    POSITIVE_INT,
    STRING,
    STRING_OR_OBJECT,
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

ERROR_MARK = "[tool error] "


class OpenAIChatProvider(RemoteProvider):
    CLIENT = AsyncOpenAI
    client: AsyncOpenAI
    kind = "openai"
    SETTINGS = {
        **COMMON_SETTINGS,
        "temperature": NUMBER,
        "top_p": NUMBER,
        "max_tokens": POSITIVE_INT,
        "max_completion_tokens": POSITIVE_INT,
        "stop": STRINGS,
        "seed": INTEGER,
        "presence_penalty": NUMBER,
        "frequency_penalty": NUMBER,
        "logit_bias": OBJECT,
        "parallel_tool_calls": BOOLEAN,
        "tool_choice": STRING_OR_OBJECT,
        "response_format": OBJECT,
        "reasoning_effort": STRING,
        "service_tier": STRING,
        "verbosity": STRING,
        "user": STRING,
        "metadata": OBJECT,
    }

    async def _attempt(self, request: ModelRequest, on_text: OnText | None) -> ModelResponse:
        params: dict[str, Any] = {"model": request.model, "messages": to_wire(request.messages)}
        if request.agent.tools:
            params["tools"] = [tool_to_wire(t) for t in request.agent.tools]
        # Settings go in the body as they are, not as SDK keywords: the allow-list is
        # ours, and an SDK release that drops a keyword cannot break a run.
        body = passed_settings(request.settings)
        if (effort := reasoning_effort(request.agent)) and "reasoning_effort" not in body:
            body["reasoning_effort"] = effort  # R84
        if request.agent.output_schema_json and "response_format" not in body:
            params["response_format"] = response_format(request.agent.output_schema_json)
        if body:
            params["extra_body"] = body
        if on_text is None:
            return from_completion(await self.client.chat.completions.create(**params))
        stream = await self.client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}
        )
        async with stream:  # the connection is released even when the call is aborted
            return await from_stream(stream, on_text)

    def _classify(self, e: Exception) -> Failure | None:
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
        if isinstance(e, openai.APIError):  # an error event in the middle of a stream
            return Failure(True, e.type or "stream_error", e.message)
        return None


def reasoning_effort(agent: AgentSpec) -> str:
    """The effort of the agent's reasoning setting (R84), derived from its budget when it
    names none; "" when the agent has none."""
    r = agent.reasoning
    if r is None:
        return ""
    if r.effort:
        return r.effort
    budget = r.budget_tokens or 0
    return "low" if budget < 4096 else "medium" if budget < 16384 else "high"


def to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role is Role.ASSISTANT:
            d: dict[str, Any] = {"role": "assistant", "content": m.content}
            if m.tool_calls:
                d["content"] = m.content or None
                d["tool_calls"] = [call_to_wire(c) for c in m.tool_calls]
            out.append(d)
        elif m.role is Role.TOOL:
            content = ERROR_MARK + m.content if m.is_error else m.content
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": content})
        else:
            out.append({"role": m.role.value, "content": m.content})
    return out


def call_to_wire(c: ToolCall) -> dict[str, Any]:
    args, ok = arguments_object(c.arguments_json)
    text = c.arguments_json if ok else json.dumps(args)
    return {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": text}}


def response_format(schema_json: str) -> dict[str, Any]:
    """Native structured output for an agent's output schema (R83). Not ``strict``: a
    strict request is refused for a schema outside OpenAI's subset of JSON Schema, and the
    daemon validates the answer itself."""
    return {
        "type": "json_schema",
        "json_schema": {"name": "output", "schema": json.loads(schema_json), "strict": False},
    }


def tool_to_wire(t: ToolSpec) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": t.name, "parameters": object_schema(t.input_schema_json)}
    if t.description:
        fn["description"] = t.description
    return {"type": "function", "function": fn}


def _usage(u: Any) -> Usage:
    if u is None:  # some compatible servers send none
        return Usage()
    prompt_details = getattr(u, "prompt_tokens_details", None)
    completion_details = getattr(u, "completion_tokens_details", None)
    cost = getattr(u, "cost", None)  # a server that reports what the call cost (OpenRouter)
    return Usage(
        prompt_tokens=u.prompt_tokens or 0,
        completion_tokens=u.completion_tokens or 0,
        cost_usd=float(cost)
        if isinstance(cost, int | float) and not isinstance(cost, bool)
        else 0.0,
        cached_input_tokens=getattr(prompt_details, "cached_tokens", None) or 0,
        cache_write_tokens=getattr(prompt_details, "cache_write_tokens", None) or 0,
        reasoning_tokens=getattr(completion_details, "reasoning_tokens", None) or 0,
    )


def from_completion(resp: Any) -> ModelResponse:
    if not getattr(resp, "choices", None):
        raise MalformedResponse("the response has no choices")
    msg = resp.choices[0].message
    calls = tuple(
        ToolCall(tc.id or "", tc.function.name or "", raw_arguments(tc.function.arguments))
        for tc in msg.tool_calls or ()
        if getattr(tc, "function", None) is not None
    )
    return ModelResponse(
        msg.content or msg.refusal or "", calls, _usage(resp.usage), getattr(resp, "model", "")
    )


async def from_stream(stream: Any, on_text: OnText) -> ModelResponse:
    """Assemble a streamed answer: text pieces in order (each reported), tool calls by
    their index (id and name from the first piece, the arguments concatenated)."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    usage = None
    finished = False
    model = ""
    async for chunk in stream:
        model = model or getattr(chunk, "model", "") or ""
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            finished = finished or choice.finish_reason is not None
            delta = choice.delta
            if piece := (delta.content or delta.refusal):
                text.append(piece)
                await on_text(piece)
            for tc in delta.tool_calls or ():
                index = tc.index if tc.index is not None else len(calls)
                slot = calls.setdefault(index, {"id": "", "name": "", "args": []})
                slot["id"] = slot["id"] or tc.id or ""
                if tc.function is not None:
                    slot["name"] = slot["name"] or tc.function.name or ""
                    slot["args"].append(tc.function.arguments or "")
    if not finished:
        raise IncompleteResponse("the stream ended before the model finished its turn")
    tool_calls = tuple(
        ToolCall(s["id"], s["name"], raw_arguments("".join(s["args"])))
        for _, s in sorted(calls.items())
    )
    return ModelResponse("".join(text), tool_calls, _usage(usage), model)


__all__ = ["OpenAIChatProvider"]
