"""Fake model servers speaking the OpenAI chat-completions, the OpenAI Responses and the
Anthropic Messages wire formats over real HTTP on loopback (aiohttp), so the providers are
tested through their real SDKs, not mocks of them.

Reasoning (R84): a turn's ``thinking`` is sent when the request asks for reasoning, as the
real APIs do: Anthropic's signed ``thinking`` blocks (an HMAC of the text with the fake's
own secret; ``redacted:`` texts become ``redacted_thinking`` blocks with sealed data) and
the Responses API's ``reasoning`` items with sealed ``encrypted_content``. A request whose
turn that called tools comes back without those blocks exactly as they were sent (one
dropped, reordered, altered or with a forged signature) is refused with HTTP 400 and
recorded as a violation, as the real APIs refuse it.

A fake plays a script of :class:`Turn` s, choosing the turn like the scripted provider does,
by the number of assistant turns in the request: a retried or resumed call gets the same
answer. :class:`Fault` s queued in ``faults`` are served first, one per request. Every
request is checked to be a valid transcript of its format (R23); a violation is recorded
in ``violations`` and answered with HTTP 400, and the ``fake`` fixture fails the test when
any was recorded. ``requests`` keeps every request, so tests count model calls.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

END_OF_SCRIPT = "(end of script)"


@dataclass
class Turn:
    text: str = ""
    #: (tool name, arguments): a dict is sent as JSON, a str as it is (malformed on purpose).
    calls: list[tuple[str, Any]] = field(default_factory=list)
    usage: tuple[int, int] = (10, 5)  # prompt, completion
    #: Of the prompt tokens: read from and written to the prompt cache (answers without
    #: streaming report them, each wire in its own way).
    cache: tuple[int, int] = (0, 0)
    #: Of the completion tokens: reasoning (OpenAI's wire only).
    reasoning: int = 0
    #: A cost the server reports with its usage (OpenAI's wire, as OpenRouter does).
    cost: float | None = None
    #: R84: the reasoning the model sends first when the request asks for reasoning, one
    #: block (or item) per text; a text starting ``redacted:`` is sent redacted.
    thinking: tuple[str, ...] = ()


REDACTED = "redacted:"


def turn(
    text: str = "",
    *calls: tuple[str, Any],
    usage: tuple[int, int] = (10, 5),
    cache: tuple[int, int] = (0, 0),
    reasoning: int = 0,
    cost: float | None = None,
    thinking: tuple[str, ...] = (),
) -> Turn:
    return Turn(text, list(calls), usage, cache, reasoning, cost, thinking)


@dataclass
class Fault:
    status: int = 500
    error_type: str = "server_error"
    retry_after: str | None = None
    hang: bool = False  # never answer: the client's timeout fires
    reset: bool = False  # close the connection without an answer
    echo_key: bool = False  # the error message quotes the key the request carried
    message: str = ""  # the error's message (default: "injected <status>")
    mid_stream: str = ""  # streaming: send some text, then "error" (an error event) or "cut"


@dataclass
class Seen:
    body: dict[str, Any]
    headers: dict[str, str]
    at: float
    turn: int
    fault: Fault | None = None
    status: int = 200


class FakeServer:
    kind = ""
    path = ""

    def __init__(self, key: str = "test-key-0123456789") -> None:
        self.key = key
        self.script: list[Turn] = []
        self.faults: list[Fault] = []
        self.requests: list[Seen] = []
        self.violations: list[str] = []
        self.arrived = asyncio.Event()  # set by every request
        #: Called with every valid, authenticated request: a ``Fault`` to serve instead
        #: of the script (e.g. refuse every continuation), or ``None``.
        self.rule: Callable[[Seen], Fault | None] | None = None
        #: Chooses the turn of the script a valid request gets, instead of its number of
        #: assistant turns (a transcript that compaction shortened, R85).
        self.choose: Callable[[Seen], int] | None = None
        self.base_url = ""
        #: R84: the secret that signs the reasoning this fake sends, and the reasoning
        #: blocks (items) it sent with each turn, by turn number.
        self.secret = os.urandom(16)
        self.thought: dict[int, list[dict[str, Any]]] = {}
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> FakeServer:
        app = web.Application()
        app.router.add_post(self.path, self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.base_url = self._base_url(f"http://127.0.0.1:{port}")
        return self

    async def close(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()

    # -- what tests read ---------------------------------------------------------------

    def answered(self) -> list[int]:
        """The turn number of every request answered with a model turn."""
        return [s.turn for s in self.requests if s.fault is None and s.status == 200]

    # -- serving -----------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen = Seen(body, dict(request.headers), time.monotonic(), self.assistant_turns(body))
        self.requests.append(seen)
        self.arrived.set()
        problems = self.check(body, request.headers)
        if problems:
            self.violations.extend(f"request {len(self.requests)}: {p}" for p in problems)
            seen.status = 400
            return self.error_response(400, "invalid_request_error", "; ".join(problems))
        received = self.received_key(request.headers)
        if received != self.key:
            seen.status = 401
            return self.error_response(
                401, "authentication_error", f"Incorrect API key provided: {received}"
            )
        if self.faults:
            seen.fault = fault = self.faults.pop(0)
            return await self._fault(request, fault, seen)
        if self.rule is not None and (fault := self.rule(seen)) is not None:
            seen.fault = fault
            return await self._fault(request, fault, seen)
        if self.choose is not None:
            seen.turn = self.choose(seen)
        t = self.script[seen.turn] if seen.turn < len(self.script) else turn(END_OF_SCRIPT)
        if body.get("stream"):
            return await self._stream(request, t, seen.turn, body, None)
        return web.json_response(self.answer(t, seen.turn, body))

    async def _fault(self, request: web.Request, fault: Fault, seen: Seen) -> web.StreamResponse:
        if fault.hang:
            await self._closing.wait()
            return web.Response(status=599)
        if fault.reset:
            assert request.transport is not None
            request.transport.abort()
            raise web.HTTPInternalServerError()  # never written: the connection is gone
        if fault.mid_stream:
            t = self.script[seen.turn] if seen.turn < len(self.script) else turn(END_OF_SCRIPT)
            return await self._stream(request, t, seen.turn, seen.body, fault)
        seen.status = fault.status
        message = fault.message or f"injected {fault.status}"
        if fault.echo_key:
            message = f"Incorrect API key provided: {self.received_key(request.headers)}"
        headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
        return self.error_response(fault.status, fault.error_type, message, headers)

    async def _stream(
        self, request: web.Request, t: Turn, turn_no: int, body: dict[str, Any], fault: Fault | None
    ) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        events = self.stream_events(t, turn_no, body)
        # With a fault: the answer up to its first piece of text, then the failure.
        fail_at = next(
            (
                i
                for i, e in enumerate(events)
                if '"text_delta"' in e or '"content": "' in e or "output_text.delta" in e
            ),
            0,
        )
        for i, event in enumerate(events):
            await resp.write(event.encode())
            if fault is not None and i == fail_at:
                if fault.mid_stream == "cut":
                    assert request.transport is not None
                    request.transport.abort()
                    return resp
                await resp.write(self.stream_error(fault).encode())
                await resp.write_eof()
                return resp
        await resp.write_eof()
        return resp

    @staticmethod
    def pieces(text: str, size: int = 4) -> list[str]:
        return [text[i : i + size] for i in range(0, len(text), size)]

    def seal(self, text: str) -> str:
        """``text`` sealed with the fake's secret: only this fake makes (and reads) it."""
        mac = hmac.new(self.secret, text.encode(), hashlib.sha256).hexdigest()
        return base64.b64encode(f"{mac}.{text}".encode()).decode()

    def unseal(self, sealed: Any) -> str | None:
        """The text of a seal this fake made; ``None`` for anything else."""
        try:
            mac, _, text = base64.b64decode(str(sealed).encode()).decode().partition(".")
        except ValueError:
            return None
        good = hmac.new(self.secret, text.encode(), hashlib.sha256).hexdigest()
        return text if hmac.compare_digest(mac, good) else None

    def check_kept(self, turn_no: int, sent: list[Any], where: str) -> list[str]:
        """R84: the reasoning this fake sent with turn ``turn_no`` is ``sent`` back exactly."""
        kept = self.thought.get(turn_no)
        if not kept or sent == kept:
            return []
        return [
            f"{where}: the reasoning of turn {turn_no} was not sent back as it was received "
            f"(sent {len(kept)} blocks, got {len(sent)}, dropped, reordered or altered)"
        ]

    # -- per wire format ---------------------------------------------------------------

    def _base_url(self, root: str) -> str:
        raise NotImplementedError

    def assistant_turns(self, body: dict[str, Any]) -> int:
        return sum(
            1
            for m in body.get("messages", ())
            if isinstance(m, dict) and m.get("role") == "assistant"
        )

    def received_key(self, headers: Any) -> str:
        raise NotImplementedError

    def check(self, body: dict[str, Any], headers: Any) -> list[str]:
        raise NotImplementedError

    def error_response(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        raise NotImplementedError

    def answer(self, t: Turn, turn_no: int, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def stream_events(self, t: Turn, turn_no: int, body: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def stream_error(self, fault: Fault) -> str:
        raise NotImplementedError


def _args_text(args: Any) -> str:
    return args if isinstance(args, str) else json.dumps(args)


# -- OpenAI chat completions -----------------------------------------------------------------


class FakeOpenAI(FakeServer):
    kind = "openai"
    path = "/v1/chat/completions"

    def _base_url(self, root: str) -> str:
        return f"{root}/v1"

    def received_key(self, headers: Any) -> str:
        return headers.get("Authorization", "").removeprefix("Bearer ")

    def check(self, body: dict[str, Any], headers: Any) -> list[str]:
        return check_openai(body)

    def error_response(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        body = {"error": {"message": message, "type": error_type, "param": None, "code": None}}
        return web.json_response(body, status=status, headers=headers)

    def _calls(self, t: Turn, turn_no: int) -> list[dict[str, Any]]:
        return [
            {
                "id": f"call_{turn_no}_{n}",
                "type": "function",
                "function": {"name": name, "arguments": _args_text(args)},
            }
            for n, (name, args) in enumerate(t.calls)
        ]

    def answer(self, t: Turn, turn_no: int, body: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": t.text or None}
        if t.calls:
            message["tool_calls"] = self._calls(t, turn_no)
        prompt, completion = t.usage
        return {
            "id": f"chatcmpl-{turn_no}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if t.calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                **self._details(t),
            },
        }

    @staticmethod
    def _details(t: Turn) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if any(t.cache):
            extra["prompt_tokens_details"] = {
                "cached_tokens": t.cache[0],
                "cache_write_tokens": t.cache[1],
            }
        if t.reasoning:
            extra["completion_tokens_details"] = {"reasoning_tokens": t.reasoning}
        if t.cost is not None:
            extra["cost"] = t.cost
        return extra

    def stream_events(self, t: Turn, turn_no: int, body: dict[str, Any]) -> list[str]:
        def chunk(choices: list[dict[str, Any]], **extra: Any) -> str:
            data = {
                "id": f"chatcmpl-{turn_no}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body["model"],
                "choices": choices,
                **extra,
            }
            return f"data: {json.dumps(data)}\n\n"

        def delta(d: dict[str, Any], finish: str | None = None) -> str:
            return chunk([{"index": 0, "delta": d, "finish_reason": finish}])

        events = [delta({"role": "assistant", "content": piece}) for piece in self.pieces(t.text)]
        for n, call in enumerate(self._calls(t, turn_no)):
            args = call["function"]["arguments"]
            half = len(args) // 2  # the arguments arrive in two pieces
            first = {
                "index": n,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": args[:half]},
            }
            events.append(delta({"tool_calls": [first]}))
            events.append(
                delta({"tool_calls": [{"index": n, "function": {"arguments": args[half:]}}]})
            )
        events.append(delta({}, "tool_calls" if t.calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            prompt, completion = t.usage
            events.append(
                chunk(
                    [],
                    usage={
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                    },
                )
            )
        events.append("data: [DONE]\n\n")
        return events

    def stream_error(self, fault: Fault) -> str:
        body = json.dumps({"error": {"message": "injected stream error", "type": fault.error_type}})
        return f"data: {body}\n\n"


def check_openai(body: dict[str, Any]) -> list[str]:
    """What a strict chat-completions server (vLLM) would refuse, R23 first."""
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model is required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return problems + ["messages must be a non-empty list"]
    pending: list[str] = []  # ids of the last tool-call turn still without a result
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            cid = m.get("tool_call_id")
            if cid not in pending:
                problems.append(
                    f"messages[{i}]: tool result {cid!r} does not answer the tool-call turn right "
                    "before it"
                )
            else:
                pending.remove(cid)
            if not isinstance(m.get("content"), str):
                problems.append(f"messages[{i}]: tool content must be a string")
            continue
        if pending:
            problems.append(f"messages[{i}]: {role} message before the results of {pending}")
            pending = []
        if role in ("system", "developer", "user"):
            if not isinstance(m.get("content"), str):
                problems.append(f"messages[{i}]: content must be a string")
        elif role == "assistant":
            calls = m.get("tool_calls")
            content = m.get("content")
            if content is None and not calls:
                problems.append(f"messages[{i}]: an assistant message needs content or tool_calls")
            elif content is not None and not isinstance(content, str):
                problems.append(f"messages[{i}]: assistant content must be a string or null")
            for c in calls or ():
                fn = c.get("function") or {}
                if not c.get("id") or c.get("type") != "function" or not fn.get("name"):
                    problems.append(
                        f"messages[{i}]: a tool call needs id, type function and a name"
                    )
                try:
                    json.loads(fn.get("arguments"))
                except (TypeError, ValueError):
                    problems.append(f"messages[{i}]: tool call arguments are not a JSON string")
            ids = [c.get("id") for c in calls or ()]
            if len(set(ids)) != len(ids):
                problems.append(f"messages[{i}]: duplicate tool call ids")
            pending = ids
        else:
            problems.append(f"messages[{i}]: unknown role {role!r}")
    if pending:
        problems.append(f"the transcript ends before the results of {pending}")
    if messages[-1].get("role") not in ("user", "tool"):
        problems.append("the last message must be user input or a tool result")
    for t in body.get("tools") or ():
        fn = t.get("function") or {}
        if (
            t.get("type") != "function"
            or not fn.get("name")
            or (fn.get("parameters") or {}).get("type") != "object"
        ):
            problems.append(f"tool {fn.get('name')!r} is not a function with an object schema")
    if "stream_options" in body and not body.get("stream"):
        problems.append("stream_options without stream")
    return problems


# -- Anthropic Messages ----------------------------------------------------------------------


class FakeAnthropic(FakeServer):
    kind = "anthropic"
    path = "/v1/messages"

    def _base_url(self, root: str) -> str:
        return root

    def received_key(self, headers: Any) -> str:
        # anthropic 2.x sends the key as a bearer token; older SDKs as x-api-key.
        return headers.get("x-api-key") or headers.get("Authorization", "").removeprefix("Bearer ")

    def check(self, body: dict[str, Any], headers: Any) -> list[str]:
        problems = check_anthropic(body)
        if not headers.get("anthropic-version"):
            problems.append("the anthropic-version header is missing")
        return problems + self.check_thinking(body)

    def check_thinking(self, body: dict[str, Any]) -> list[str]:
        """R84 as the Messages API enforces it: each thinking block signed by this fake,
        redacted data sealed by it, and the blocks of a turn that called tools sent back
        first in that turn, all of them, in order, unaltered."""
        problems: list[str] = []
        thinking = body.get("thinking")
        if thinking is not None:
            budget = thinking.get("budget_tokens") if isinstance(thinking, dict) else None
            if thinking.get("type") != "enabled" or not isinstance(budget, int) or budget < 1024:
                problems.append("thinking: type enabled with budget_tokens >= 1024 required")
            elif budget >= body.get("max_tokens", 0):
                problems.append("thinking.budget_tokens must be less than max_tokens")
            if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
                problems.append("Thinking may not be enabled when tool_choice forces tool use.")
        for i, m in enumerate(body.get("messages") or ()):
            content = m.get("content")
            if m.get("role") != "assistant" or not isinstance(content, list):
                continue
            lead = 0
            while lead < len(content) and content[lead].get("type") in THINKING_TYPES:
                lead += 1
            for j, b in enumerate(content):
                if b.get("type") in THINKING_TYPES and j >= lead:
                    problems.append(f"messages[{i}].content[{j}]: thinking must come first")
                if b.get("type") == "thinking" and self.unseal(b.get("signature")) != b.get(
                    "thinking"
                ):
                    problems.append(f"messages[{i}].content[{j}]: invalid signature in thinking")
                if b.get("type") == "redacted_thinking" and self.unseal(b.get("data")) is None:
                    problems.append(f"messages[{i}].content[{j}]: invalid redacted_thinking data")
            turns = {
                int(match.group(1))
                for b in content
                if b.get("type") == "tool_use"
                and (match := re.fullmatch(r"toolu_(\d+)_\d+", str(b.get("id"))))
            }
            for n in turns:
                problems += self.check_kept(n, content[:lead], f"messages[{i}]")
        return problems

    def error_response(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        body = {"type": "error", "error": {"type": error_type, "message": message}}
        return web.json_response(body, status=status, headers=headers)

    def _thinking(self, t: Turn, turn_no: int, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The turn's thinking blocks, when the request asks for thinking; kept to check
        the continuation (R84)."""
        if not t.thinking or (body.get("thinking") or {}).get("type") != "enabled":
            return []
        blocks: list[dict[str, Any]] = []
        for text in t.thinking:
            if text.startswith(REDACTED):
                blocks.append({"type": "redacted_thinking", "data": self.seal(text)})
            else:
                blocks.append({"type": "thinking", "thinking": text, "signature": self.seal(text)})
        self.thought[turn_no] = [dict(b) for b in blocks]
        return blocks

    def _blocks(self, t: Turn, turn_no: int, body: dict[str, Any]) -> list[dict[str, Any]]:
        blocks = list(self._thinking(t, turn_no, body))  # a copy: the fake keeps its own
        blocks += [{"type": "text", "text": t.text}] if t.text else []
        for n, (name, args) in enumerate(t.calls):
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{turn_no}_{n}", "name": name, "input": args}
            )
        return blocks

    def answer(self, t: Turn, turn_no: int, body: dict[str, Any]) -> dict[str, Any]:
        assert all(isinstance(a, dict) for _, a in t.calls), (
            "the Messages API sends tool input as an object"
        )
        prompt, completion = t.usage
        return {
            "id": f"msg_{turn_no}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": self._blocks(t, turn_no, body),
            "stop_reason": "tool_use" if t.calls else "end_turn",
            "stop_sequence": None,
            # The Messages API counts cached prompt tokens apart from input_tokens.
            "usage": {
                "input_tokens": prompt - t.cache[0] - t.cache[1],
                "output_tokens": completion,
                "cache_read_input_tokens": t.cache[0],
                "cache_creation_input_tokens": t.cache[1],
            },
        }

    def stream_events(self, t: Turn, turn_no: int, body: dict[str, Any]) -> list[str]:
        def event(name: str, data: dict[str, Any]) -> str:
            return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

        prompt, completion = t.usage
        message = {
            "id": f"msg_{turn_no}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": 1},
        }
        events = [event("message_start", {"message": message}), event("ping", {})]
        for index, block in enumerate(self._blocks(t, turn_no, body)):
            if block["type"] == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
                events.append(
                    event("content_block_start", {"index": index, "content_block": start})
                )
                for piece in self.pieces(block["thinking"]):
                    events.append(
                        event(
                            "content_block_delta",
                            {
                                "index": index,
                                "delta": {"type": "thinking_delta", "thinking": piece},
                            },
                        )
                    )
                events.append(
                    event(
                        "content_block_delta",
                        {
                            "index": index,
                            "delta": {"type": "signature_delta", "signature": block["signature"]},
                        },
                    )
                )
            elif block["type"] == "redacted_thinking":
                events.append(
                    event("content_block_start", {"index": index, "content_block": block})
                )
            elif block["type"] == "text":
                events.append(
                    event(
                        "content_block_start",
                        {"index": index, "content_block": {"type": "text", "text": ""}},
                    )
                )
                for piece in self.pieces(block["text"]):
                    events.append(
                        event(
                            "content_block_delta",
                            {"index": index, "delta": {"type": "text_delta", "text": piece}},
                        )
                    )
            else:
                start = {**block, "input": {}}
                events.append(
                    event("content_block_start", {"index": index, "content_block": start})
                )
                args = _args_text(block["input"])
                for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
                    events.append(
                        event(
                            "content_block_delta",
                            {
                                "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": piece},
                            },
                        )
                    )
            events.append(event("content_block_stop", {"index": index}))
        stop = "tool_use" if t.calls else "end_turn"
        events.append(
            event(
                "message_delta",
                {
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": completion},
                },
            )
        )
        events.append(event("message_stop", {}))
        return events

    def stream_error(self, fault: Fault) -> str:
        data = {
            "type": "error",
            "error": {"type": fault.error_type, "message": "injected stream error"},
        }
        return f"event: error\ndata: {json.dumps(data)}\n\n"


THINKING_TYPES = ("thinking", "redacted_thinking")


def check_anthropic(body: dict[str, Any]) -> list[str]:
    """What the Messages API would refuse: roles alternate starting with user, each
    tool_use answered by a tool_result block at the start of the very next user turn."""
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model is required")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        problems.append("max_tokens is required")
    if "system" in body and (not isinstance(body["system"], str) or not body["system"]):
        problems.append("system must be a non-empty string")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return problems + ["messages must be a non-empty list"]
    expect_role = "user"
    pending: list[str] = []
    for i, m in enumerate(messages):
        role, content = m.get("role"), m.get("content")
        if role != expect_role:
            problems.append(f"messages[{i}]: expected a {expect_role} turn, got {role!r}")
        expect_role = "assistant" if role == "user" else "user"
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list) or not blocks:
            problems.append(f"messages[{i}]: content must be a non-empty string or list of blocks")
            continue
        answered: list[str] = []
        seen_other = False
        for b in blocks:
            kind = b.get("type")
            if kind == "text":
                seen_other = True
                if not isinstance(b.get("text"), str) or not b["text"]:
                    problems.append(f"messages[{i}]: text blocks must be non-empty")
            elif kind == "tool_result" and role == "user":
                if seen_other:
                    problems.append(f"messages[{i}]: tool_result blocks must come first")
                answered.append(b.get("tool_use_id"))
                if not isinstance(b.get("content"), str | list):
                    problems.append(
                        f"messages[{i}]: tool_result content must be a string or blocks"
                    )
                if "is_error" in b and not isinstance(b["is_error"], bool):
                    problems.append(f"messages[{i}]: is_error must be a boolean")
            elif kind in THINKING_TYPES and role == "assistant":
                pass  # checked by FakeAnthropic.check_thinking (R84)
            elif kind == "tool_use" and role == "assistant":
                seen_other = True
                if not b.get("id") or not b.get("name") or not isinstance(b.get("input"), dict):
                    problems.append(f"messages[{i}]: tool_use needs id, name and an input object")
            else:
                problems.append(f"messages[{i}]: a {kind!r} block in a {role} turn")
        if role == "user":
            if sorted(answered) != sorted(pending) or len(set(answered)) != len(answered):
                problems.append(
                    f"messages[{i}]: tool results {answered} do not answer the calls {pending} of "
                    "the turn before"
                )
            pending = []
        else:
            pending = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
    if messages[-1].get("role") != "user":
        problems.append("the last message must be a user turn")
    for t in body.get("tools") or ():
        if not t.get("name") or (t.get("input_schema") or {}).get("type") != "object":
            problems.append(f"tool {t.get('name')!r} needs a name and an object input_schema")
    return problems


# -- OpenAI Responses ------------------------------------------------------------------------


def _assistant_item(item: dict[str, Any]) -> bool:
    kind = item.get("type")
    return kind in ("reasoning", "function_call") or (
        kind == "message" and item.get("role") == "assistant"
    )


class FakeResponses(FakeServer):
    kind = "openai_responses"
    path = "/v1/responses"

    def _base_url(self, root: str) -> str:
        return f"{root}/v1"

    def received_key(self, headers: Any) -> str:
        return headers.get("Authorization", "").removeprefix("Bearer ")

    def assistant_turns(self, body: dict[str, Any]) -> int:
        """The runs of assistant items (reasoning, message, function calls) in the input."""
        turns, inside = 0, False
        for item in body.get("input") or ():
            mine = isinstance(item, dict) and _assistant_item(item)
            turns += mine and not inside
            inside = mine
        return turns

    def check(self, body: dict[str, Any], headers: Any) -> list[str]:
        return check_responses(body) + self.check_reasoning(body)

    def check_reasoning(self, body: dict[str, Any]) -> list[str]:
        """R84 as the Responses API enforces it for ``store: false``: each reasoning item's
        encrypted content sealed by this fake, followed by the item that came after it, and
        the items of a turn that called tools sent back before its calls, all of them, in
        order, unaltered."""
        problems: list[str] = []
        items = [i for i in body.get("input") or () if isinstance(i, dict)]
        for k, item in enumerate(items):
            if item.get("type") != "reasoning":
                continue
            if self.unseal(item.get("encrypted_content")) is None:
                problems.append(
                    f"input[{k}]: reasoning item {item.get('id')!r} cannot be decrypted"
                )
            after = items[k + 1] if k + 1 < len(items) else {}
            if not _assistant_item(after):
                problems.append(
                    f"input[{k}]: item {item.get('id')!r} of type reasoning was provided without "
                    "its required following item"
                )
        seen_turns: set[int] = set()
        for k, item in enumerate(items):
            match = re.fullmatch(r"call_(\d+)_\d+", str(item.get("call_id")))
            if item.get("type") != "function_call" or match is None:
                continue
            n = int(match.group(1))
            if n in seen_turns:
                continue
            seen_turns.add(n)
            start = k
            while (
                start > 0
                and items[start - 1].get("type") == "message"
                and items[start - 1].get("role") == "assistant"
            ):
                start -= 1
            first = start
            while first > 0 and items[first - 1].get("type") == "reasoning":
                first -= 1
            problems += self.check_kept(n, items[first:start], f"input[{k}]")
        return problems

    def error_response(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        body = {"error": {"message": message, "type": error_type, "param": None, "code": None}}
        return web.json_response(body, status=status, headers=headers)

    def _items(self, t: Turn, turn_no: int, body: dict[str, Any]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if t.thinking and (body.get("reasoning") or {}).get("effort"):
            for k, text in enumerate(t.thinking):
                redacted = text.startswith(REDACTED)
                item: dict[str, Any] = {
                    "id": f"rs_{turn_no}_{k}",
                    "type": "reasoning",
                    "summary": [] if redacted else [{"type": "summary_text", "text": text}],
                }
                if "reasoning.encrypted_content" in (body.get("include") or ()):
                    item["encrypted_content"] = self.seal(text)
                items.append(item)
            self.thought[turn_no] = [dict(i) for i in items]
        if t.text:
            items.append(
                {
                    "id": f"msg_{turn_no}",
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": t.text, "annotations": []}],
                }
            )
        for n, (name, args) in enumerate(t.calls):
            items.append(
                {
                    "id": f"fc_{turn_no}_{n}",
                    "type": "function_call",
                    "status": "completed",
                    "call_id": f"call_{turn_no}_{n}",
                    "name": name,
                    "arguments": _args_text(args),
                }
            )
        return items

    def _response(self, t: Turn, turn_no: int, body: dict[str, Any]) -> dict[str, Any]:
        prompt, completion = t.usage
        return {
            "id": f"resp_{turn_no}",
            "object": "response",
            "created_at": 0,
            "status": "completed",
            "model": body["model"],
            "output": self._items(t, turn_no, body),
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "incomplete_details": None,
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": t.cache[0]},
                "output_tokens": completion,
                "output_tokens_details": {"reasoning_tokens": t.reasoning},
                "total_tokens": prompt + completion,
            },
        }

    def answer(self, t: Turn, turn_no: int, body: dict[str, Any]) -> dict[str, Any]:
        return self._response(t, turn_no, body)

    def stream_events(self, t: Turn, turn_no: int, body: dict[str, Any]) -> list[str]:
        seq = iter(range(1_000_000))

        def event(name: str, **data: Any) -> str:
            payload = {"type": name, "sequence_number": next(seq), **data}
            return f"event: {name}\ndata: {json.dumps(payload)}\n\n"

        whole = self._response(t, turn_no, body)
        started = {**whole, "status": "in_progress", "output": []}
        events = [event("response.created", response=started)]
        for index, item in enumerate(whole["output"]):
            if item["type"] == "reasoning":
                events.append(
                    event(
                        "response.output_item.added",
                        output_index=index,
                        item={**item, "summary": []},
                    )
                )
                for s, part in enumerate(item["summary"]):
                    for piece in self.pieces(part["text"]):
                        events.append(
                            event(
                                "response.reasoning_summary_text.delta",
                                item_id=item["id"],
                                output_index=index,
                                summary_index=s,
                                delta=piece,
                            )
                        )
            elif item["type"] == "message":
                events.append(
                    event(
                        "response.output_item.added",
                        output_index=index,
                        item={**item, "content": []},
                    )
                )
                for piece in self.pieces(t.text):
                    events.append(
                        event(
                            "response.output_text.delta",
                            item_id=item["id"],
                            output_index=index,
                            content_index=0,
                            delta=piece,
                        )
                    )
            else:
                events.append(
                    event(
                        "response.output_item.added",
                        output_index=index,
                        item={**item, "arguments": ""},
                    )
                )
                args = item["arguments"]
                for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
                    events.append(
                        event(
                            "response.function_call_arguments.delta",
                            item_id=item["id"],
                            output_index=index,
                            delta=piece,
                        )
                    )
            events.append(event("response.output_item.done", output_index=index, item=item))
        events.append(event("response.completed", response=whole))
        return events

    def stream_error(self, fault: Fault) -> str:
        data = {
            "type": "error",
            "code": fault.error_type,
            "message": "injected stream error",
            "param": None,
            "sequence_number": 999,
        }
        return f"event: error\ndata: {json.dumps(data)}\n\n"


def check_responses(body: dict[str, Any]) -> list[str]:
    """What the Responses API would refuse of a stateless request: each function call
    answered by one output after it and before the next input, outputs only for calls."""
    problems: list[str] = []
    if not isinstance(body.get("model"), str) or not body["model"]:
        problems.append("model is required")
    if body.get("store") is not False:
        problems.append("store must be false: the fake serves stateless requests only")
    if "previous_response_id" in body:
        problems.append("previous_response_id needs stored responses")
    if "messages" in body:
        problems.append("unknown parameter: messages")
    items = body.get("input")
    if not isinstance(items, list) or not items:
        return problems + ["input must be a non-empty list"]
    pending: list[str] = []
    for k, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call_output":
            cid = item.get("call_id")
            if cid not in pending:
                problems.append(f"input[{k}]: no function call found for output {cid!r}")
            else:
                pending.remove(cid)
            if not isinstance(item.get("output"), str):
                problems.append(f"input[{k}]: output must be a string")
            continue
        if kind == "function_call":
            if not item.get("call_id") or not item.get("name"):
                problems.append(f"input[{k}]: a function call needs call_id and name")
            try:
                json.loads(item.get("arguments"))
            except (TypeError, ValueError):
                problems.append(f"input[{k}]: function call arguments are not a JSON string")
            if item.get("call_id") in pending:
                problems.append(f"input[{k}]: duplicate call_id")
            pending.append(item.get("call_id"))
            continue
        if kind == "reasoning":
            continue
        if pending and not (kind == "message" and item.get("role") == "assistant"):
            problems.append(f"input[{k}]: no tool output found for function calls {pending}")
            pending = []
        if kind != "message":
            problems.append(f"input[{k}]: unknown item type {kind!r}")
        elif item.get("role") not in ("user", "assistant", "system", "developer"):
            problems.append(f"input[{k}]: unknown role {item.get('role')!r}")
        elif not isinstance(item.get("content"), str | list) or not item.get("content"):
            problems.append(f"input[{k}]: content must be a non-empty string or list")
    if pending:
        problems.append(f"no tool output found for function calls {pending}")
    last = items[-1]
    if not (
        last.get("type") == "function_call_output"
        or (last.get("type", "message") == "message" and last.get("role") == "user")
    ):
        problems.append("the last input item must be user input or a function call output")
    for t in body.get("tools") or ():
        if (
            t.get("type") != "function"
            or not t.get("name")
            or (t.get("parameters") or {}).get("type") != "object"
        ):
            problems.append(f"tool {t.get('name')!r} is not a function with an object schema")
    return problems


WIRES: dict[str, type[FakeServer]] = {
    "openai": FakeOpenAI,
    "anthropic": FakeAnthropic,
    "openai_responses": FakeResponses,
}
