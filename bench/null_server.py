#!/usr/bin/env python3
"""The null server: luosho.v1.AgentService with no engine and no storage.

It answers Execute with the same message pattern as the real daemon, driven by the
scripted provider's script in ``agent.model_settings_json``::

    {"script": [{"tool_calls": [{"name": "work", "arguments": {"i": 0}}]}, {"text": "done"}]}

    run.start
    per turn:  step.start, model.turn,
               per tool call: tool.call … (SubmitToolResult) … tool.result,
               step.done
    run.done   (finish reason STOP, status FINISHED)

Tool calls are handed out ``agent.tool_concurrency`` at a time (default 1), with ids
``call_{turn_index}_{j}``. So benchmarks can measure the ceiling of Python gRPC itself,
and the client's tests run against a real server. Resume streams nothing (with no storage,
every session looks finished); the other unary RPCs answer "nothing here".

A session id prefix makes the server fail the way the daemon does, as a google.rpc.Status
with an ErrorInfo (domain luosho.dev): see ``SCRIPTED_ERRORS``.

    python bench/null_server.py --port 50051       # or import start_null_server()
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import signal
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

try:  # the generated stubs: installed (luosho-client) or straight from the repository
    from luosho.v1 import agent_pb2, agent_pb2_grpc
except ImportError:  # pragma: no cover - running from a checkout without the install
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "clients/python/src"))
    from luosho.v1 import agent_pb2, agent_pb2_grpc

__all__ = ["SCRIPTED_ERRORS", "NullAgentService", "start_null_server"]

DEFAULT_TOOL_TIMEOUT_MS = 30_000

# Session id prefix -> (code, ErrorInfo reason or "" for a bare status, extra metadata).
SCRIPTED_ERRORS: dict[str, tuple[grpc.StatusCode, str, dict[str, str]]] = {
    "busy-": (grpc.StatusCode.ABORTED, "SESSION_BUSY", {}),
    "awaiting-": (
        grpc.StatusCode.FAILED_PRECONDITION,
        "SESSION_AWAITING_APPROVAL",
        {"approval_id": "appr-1"},
    ),
    "invalid-": (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_SESSION_ID", {}),
    "down-": (grpc.StatusCode.UNAVAILABLE, "", {}),
}


async def _abort(
    context: grpc.aio.ServicerContext,
    code: grpc.StatusCode,
    reason: str,
    message: str,
    metadata: dict[str, str],
) -> NoReturn:
    """End the call the way the daemon does: a Status with one ErrorInfo (if a reason)."""
    if not reason:
        await context.abort(code, message)
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="luosho.dev", metadata=metadata))
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    await context.abort_with_status(rpc_status.to_status(status))
    raise AssertionError("unreachable: abort_with_status() raises")  # grpc is untyped


async def _abort_if_scripted(session_id: str, context: grpc.aio.ServicerContext) -> None:
    for prefix, (code, reason, extra) in SCRIPTED_ERRORS.items():
        if session_id.startswith(prefix):
            message = f"scripted {reason or code.name} for session {session_id}"
            await _abort(context, code, reason, message, {"session_id": session_id, **extra})


def _script(agent: agent_pb2.AgentSpec) -> list[dict[str, Any]]:
    settings = json.loads(agent.model_settings_json) if agent.model_settings_json else {}
    return list(settings.get("script", []))


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class NullAgentService(agent_pb2_grpc.AgentServiceServicer):
    """AgentService answering from the request's script alone."""

    def __init__(self) -> None:
        # (session_id, tool_call_id) -> the future a run awaits; done ones stay until the
        # run ends, so a second submit reports DUPLICATE as the daemon does.
        self._calls: dict[tuple[str, str], asyncio.Future[agent_pb2.SubmitToolResultRequest]] = {}

    async def Execute(
        self, request: agent_pb2.ExecuteRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[agent_pb2.ExecuteResponse]:
        await _abort_if_scripted(request.session_id, context)
        try:
            script = _script(request.agent)
        except ValueError as exc:
            await _abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_JSON",
                f"model_settings_json: {exc}",
                {"field": "agent.model_settings_json"},
            )
        async for response in self._run(request, script):
            yield response

    async def Resume(
        self, request: agent_pb2.ResumeRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[agent_pb2.ResumeResponse]:
        await _abort_if_scripted(request.session_id, context)
        return
        yield  # an async generator that ends at once: "finished, nothing to run"

    async def SubmitToolResult(
        self, request: agent_pb2.SubmitToolResultRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.SubmitToolResultResponse:
        future = self._calls.get((request.session_id, request.tool_call_id))
        if future is None:
            await _abort(
                context,
                grpc.StatusCode.NOT_FOUND,
                "TOOL_CALL_NOT_FOUND",
                f"no run of session {request.session_id} waits for tool call "
                f"{request.tool_call_id}",
                {"session_id": request.session_id, "tool_call_id": request.tool_call_id},
            )
        if future.done():
            return agent_pb2.SubmitToolResultResponse(outcome=agent_pb2.SUBMIT_OUTCOME_DUPLICATE)
        future.set_result(request)
        return agent_pb2.SubmitToolResultResponse(outcome=agent_pb2.SUBMIT_OUTCOME_ACCEPTED)

    async def Cancel(
        self, request: agent_pb2.CancelRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.CancelResponse:
        return agent_pb2.CancelResponse(cancelled=False)

    async def GetSession(
        self, request: agent_pb2.GetSessionRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.GetSessionResponse:
        await _abort_if_scripted(request.session_id, context)
        await _abort(
            context,
            grpc.StatusCode.NOT_FOUND,
            "CHECKPOINT_NOT_FOUND",
            f"session {request.session_id} has no checkpoint",
            {"session_id": request.session_id},
        )

    async def ListSessions(
        self, request: agent_pb2.ListSessionsRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.ListSessionsResponse:
        return agent_pb2.ListSessionsResponse()

    async def DeleteSession(
        self, request: agent_pb2.DeleteSessionRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.DeleteSessionResponse:
        return agent_pb2.DeleteSessionResponse(deleted=False)

    async def _run(
        self,
        request: agent_pb2.ExecuteRequest,
        script: list[dict[str, Any]],
    ) -> AsyncIterator[agent_pb2.ExecuteResponse]:
        session_id = request.session_id
        agent = request.agent
        run_id = uuid.uuid4().hex
        seq = itertools.count(1)
        concurrency = max(1, agent.tool_concurrency) if agent.HasField("tool_concurrency") else 1
        timeout_ms = (
            agent.tool_timeout_ms if agent.HasField("tool_timeout_ms") else DEFAULT_TOOL_TIMEOUT_MS
        )
        loop = asyncio.get_running_loop()
        keys: list[tuple[str, str]] = []

        def event(type_: str, **payload: Any) -> agent_pb2.ExecuteResponse:
            ev = agent_pb2.Event(
                session_id=session_id, run_id=run_id, seq=next(seq), type=type_, **payload
            )
            ev.time.GetCurrentTime()
            return agent_pb2.ExecuteResponse(event=ev)

        message_count = len(request.input)
        final_text = ""
        yield event(
            "run.start",
            run_start=agent_pb2.RunStart(
                mode=agent_pb2.RUN_MODE_NEW, request_id=request.request_id
            ),
        )
        try:
            for index, turn in enumerate(script):
                step = index + 1
                yield event("step.start", step_start=agent_pb2.StepStart(step=step))
                calls = [
                    agent_pb2.ToolCall(
                        id=f"call_{index}_{j}",
                        name=c["name"],
                        arguments_json=_dumps(c.get("arguments", {})),
                    )
                    for j, c in enumerate(turn.get("tool_calls", []))
                ]
                text = turn.get("text", "")
                message_count += 1
                if turn.get("delay_ms"):  # a slow model, as the scripted provider plays it
                    await asyncio.sleep(turn["delay_ms"] / 1000)
                yield event(
                    "model.turn",
                    model_turn=agent_pb2.ModelTurn(
                        step=step,
                        message=agent_pb2.Message(
                            role=agent_pb2.ROLE_ASSISTANT, content=text, tool_calls=calls
                        ),
                        usage=agent_pb2.Usage(model_calls=1),
                    ),
                )
                for start in range(0, len(calls), concurrency):
                    batch = calls[start : start + concurrency]
                    futures = []
                    for call in batch:
                        key = (session_id, call.id)
                        # Registered before the event goes out: the answer may come first.
                        futures.append(self._calls.setdefault(key, loop.create_future()))
                        keys.append(key)
                        yield event(
                            "tool.call",
                            tool_call=agent_pb2.ToolCallRequested(
                                step=step, call=call, timeout_ms=timeout_ms
                            ),
                        )
                    for call, future in zip(batch, futures, strict=True):
                        result_json, is_error = await _result_of(future, timeout_ms)
                        message_count += 1
                        yield event(
                            "tool.result",
                            tool_result=agent_pb2.ToolResult(
                                step=step,
                                tool_call_id=call.id,
                                tool_name=call.name,
                                result_json=result_json,
                                is_error=is_error,
                            ),
                        )
                if text:
                    final_text = text
                yield event("step.done", step_done=agent_pb2.StepDone(step=step))
            yield event(
                "run.done",
                run_done=agent_pb2.RunDone(
                    finish_reason=agent_pb2.FINISH_REASON_STOP,
                    status=agent_pb2.CHECKPOINT_STATUS_FINISHED,
                    final_text=final_text,
                    step_index=len(script),
                    usage=agent_pb2.Usage(model_calls=len(script)),
                    message_count=message_count,
                ),
            )
        finally:
            for key in keys:
                self._calls.pop(key, None)


async def _result_of(
    future: asyncio.Future[agent_pb2.SubmitToolResultRequest], timeout_ms: int
) -> tuple[str, bool]:
    try:
        async with asyncio.timeout(timeout_ms / 1000 if timeout_ms > 0 else None):
            submitted = await future
    except TimeoutError:
        return _dumps({"error": f"the tool call timed out after {timeout_ms} ms"}), True
    return submitted.result_json, submitted.is_error


def _add_health(server: grpc.aio.Server) -> None:
    """Serve grpc.health.v1 when grpcio-health-checking is installed (the bench polls it)."""
    try:
        from grpc_health.v1 import health, health_pb2_grpc
    except ImportError:
        return
    # The aio servicer reports the server ("") SERVING from the start.
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)


async def start_null_server(port: int = 0, host: str = "127.0.0.1") -> tuple[grpc.aio.Server, int]:
    """Start a null server on host:port (0 picks a free port); return it and its port.

    The port accepts calls when this returns. Stop it with ``await server.stop(None)``.
    """
    server = grpc.aio.server()
    agent_pb2_grpc.add_AgentServiceServicer_to_server(NullAgentService(), server)
    _add_health(server)
    bound = server.add_insecure_port(f"{host}:{port}")
    if bound == 0:
        raise OSError(f"cannot listen on {host}:{port}")
    await server.start()
    return server, bound


async def _serve(host: str, port: int) -> None:
    server, bound = await start_null_server(port, host)
    print(f"null server listening on {host}:{bound}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="luosho.v1.AgentService with no logic")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=50051, help="0 picks a free port")
    opts = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(opts.host, opts.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
