"""The JSON API: one route per RPC of ``AgentService`` that an operator's page needs, and
the session's events as Server-Sent Events.

========================================== ================= ================================
route                                      RPC               answer
========================================== ================= ================================
``GET    /api/v1/sessions``                ``ListSessions``  JSON (``?status=&page_size=``,
                                                             ``?page_token=``)
``GET    /api/v1/sessions/{id}``           ``GetSession``    JSON
``DELETE /api/v1/sessions/{id}``           ``DeleteSession`` JSON (``?keep_history=true``)
``GET    /api/v1/sessions/{id}/history``   ``History``       JSON (``?page_size=``,
                                                             ``?page_token=``,
                                                             ``?include_checkpoint=``)
``POST   /api/v1/sessions/{id}/fork``      ``Fork``          JSON (body: the rest of
                                                             ``ForkRequest``)
``POST   /api/v1/sessions/{id}/cancel``    ``Cancel``        JSON
``POST   /api/v1/sessions/{id}/compact``   ``Compact``       JSON (body: ``{"strategy"}``,
                                                             optional; R85)
``POST   /api/v1/sessions/{id}/resume``    ``Resume``        NDJSON events
``GET    /api/v1/sessions/{id}/events``    ``Watch``         ``text/event-stream``
                                                             (``Last-Event-ID``/``?after_seq=``,
                                                             ``?follow=``)
``GET    /api/v1/approvals``               ``ListApprovals`` JSON (``?session_id=``,
                                                             ``?page_size=&page_token=``)
``POST   /api/v1/approvals/{id}/resolve``  ``Resolve``       NDJSON events
``GET    /api/v1/compare``                 ``Compare``       JSON (``?session_id_a=``,
                                                             ``?session_id_b=``)
``DELETE /api/v1/sessions/{id}/queue/{r}`` ``DequeueInput``  JSON (a queued input, R69)
``GET    /api/v1/sessions/{id}/tasks``     ``GetSession``    JSON: its tasks as a tree
                                                             (tasks.py; + ``ListApprovals``)
``GET    /api/v1/schedules``               ``ListSchedules`` JSON (R87)
``POST   /api/v1/schedules``               ``CreateSchedule`` JSON (body: ``{"spec": …}``)
``POST   /api/v1/schedules/{n}/pause``     ``PauseSchedule`` JSON
``POST   /api/v1/schedules/{n}/resume``    ``ResumeSchedule`` JSON
``POST   /api/v1/schedules/{n}/trigger``   ``TriggerSchedule`` JSON (the fire's session)
``DELETE /api/v1/schedules/{n}``           ``DeleteSchedule`` JSON
========================================== ================= ================================

Query parameters and bodies are the request message's fields (proto JSON mapping; enum
values by full or short name, ``in-progress`` for ``CHECKPOINT_STATUS_IN_PROGRESS``);
answers are the response message in the proto JSON mapping with the proto's field names.
An error is ``{"code", "reason", "message", "metadata"}`` — the gRPC code's name and the
``ErrorInfo`` (reason ``INTERNAL`` for a status without one) — with the HTTP status of
:data:`~luoshod.http.rpc.HTTP_STATUS`.

A streamed RPC (``Resume``, ``Resolve``) answers one JSON object a line,
``{"event": …}``, and ``{"error": …}`` last if it failed after its first event (before,
it is an ordinary error answer). The run is the caller's while the answer is being read,
as with a gRPC stream: a caller who goes away interrupts it at its next boundary.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
from aiohttp import web
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from luosho.v1 import agent_pb2 as pb

from ..server.service import AgentService
from . import rpc
from .rpc import CallContext, RpcFailure, invalid
from .tasks import task_tree

log = logging.getLogger("luoshod.http")

#: How long the event stream waits for the first event before it sends its headers: an
#: error of the request (a bad id, a cursor out of range) comes before that and is
#: answered with its own status; later ones arrive as an ``error`` event.
FIRST_EVENT_WAIT_S = 1.0
#: A comment line this often keeps proxies from closing a quiet event stream.
HEARTBEAT_S = 15.0

#: The app key of the service's ``max_payload_bytes``.
MAX_PAYLOAD = web.AppKey("max_payload_bytes", int)


def error_response(failure: RpcFailure) -> web.Response:
    headers = {"WWW-Authenticate": 'Bearer realm="luoshod"'} if failure.http_status == 401 else None
    return web.json_response(failure.body(), status=failure.http_status, headers=headers)


# -- requests from query strings and bodies -------------------------------------------------


M = TypeVar("M", bound=Message)


def _scalar(field: FieldDescriptor, raw: str) -> Any:
    """A query parameter's text as the value of ``field``. Raises :class:`RpcFailure`."""
    reason = f"INVALID_{field.name.upper()}"
    if field.type == FieldDescriptor.TYPE_BOOL:
        if raw.lower() in ("true", "1", "yes", ""):
            return True
        if raw.lower() in ("false", "0", "no"):
            return False
        raise invalid(reason, f"{field.name} must be true or false, not {raw!r}")
    if field.type == FieldDescriptor.TYPE_ENUM:
        enum = field.enum_type
        assert enum is not None  # an enum field has its enum type
        names = [v.name for v in enum.values]
        prefix = names[0].removesuffix("UNSPECIFIED")
        name = raw.strip().upper().replace("-", "_")
        if name in ("", "ALL"):
            return 0
        name = name if name.startswith(prefix) else prefix + name
        if name not in names:
            short = ", ".join(n.removeprefix(prefix).lower().replace("_", "-") for n in names[1:])
            raise invalid(reason, f"{field.name}: unknown value {raw!r} (one of {short})")
        return enum.values_by_name[name].number
    if field.cpp_type in (
        FieldDescriptor.CPPTYPE_INT32,
        FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32,
        FieldDescriptor.CPPTYPE_UINT64,
    ):
        try:
            value = int(raw)
        except ValueError:
            raise invalid(reason, f"{field.name} must be an integer, not {raw!r}") from None
        unsigned = field.cpp_type in (
            FieldDescriptor.CPPTYPE_UINT32,
            FieldDescriptor.CPPTYPE_UINT64,
        )
        bits = (
            32
            if field.cpp_type in (FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_UINT32)
            else 64
        )
        low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if not low <= value <= high:
            raise invalid(reason, f"{field.name} is out of range: {value}")
        return value
    if field.cpp_type == FieldDescriptor.CPPTYPE_STRING:
        return raw
    raise invalid("INVALID_REQUEST", f"{field.name} cannot be given in the query string")


def query_request(request: web.Request, message: M, **path: str) -> M:
    """``message`` with the route's ``path`` fields and the query parameters (each a scalar
    field of the message, given once). Raises :class:`RpcFailure`."""
    fields = message.DESCRIPTOR.fields_by_name
    for key in request.query:
        if key not in fields or key in path:
            known = ", ".join(f for f in fields if f not in path)
            raise invalid("INVALID_REQUEST", f"unknown query parameter {key!r} (known: {known})")
        values = request.query.getall(key)
        if len(values) > 1:
            raise invalid(
                "INVALID_REQUEST", f"query parameter {key!r} is given {len(values)} times"
            )
        # types-protobuf types upb's FieldDescriptor apart from the Python one it stands for.
        setattr(message, key, _scalar(fields[key], values[0]))  # type: ignore[arg-type]
    for key, value in path.items():
        setattr(message, key, value)
    return message


async def body_request(request: web.Request, message: Message, **path: str) -> Message:
    """``message`` from the JSON body (empty: ``{}``) and the route's ``path`` fields,
    which the body may repeat but not contradict. Raises :class:`RpcFailure`."""
    if request.query:
        raise invalid(
            "INVALID_REQUEST", "this route takes its fields in a JSON body, not the query string"
        )
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        # The service's own limit, which the listener reads a little past (as gRPC does).
        limit = request.app[MAX_PAYLOAD]
        size = request.content_length
        raise RpcFailure(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "PAYLOAD_TOO_LARGE",
            f"request of {size if size is not None else 'more than ' + str(limit)} bytes is over "
            f"the limit of {limit}",
            {"limit": str(limit), **({"size": str(size)} if size is not None else {})},
        ) from None
    data: Any = {}
    if raw.strip():
        if request.content_type != "application/json":
            raise RpcFailure(
                grpc.StatusCode.INVALID_ARGUMENT,
                "UNSUPPORTED_MEDIA_TYPE",
                f"the body must be application/json, not {request.content_type!r}",
            )
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as e:
            raise invalid("INVALID_JSON", f"the body is not JSON: {e}") from None
    if isinstance(data, dict):
        for key, value in path.items():
            given = data.get(key, value)
            if given != value:
                raise invalid(
                    "INVALID_REQUEST", f"{key} is {value!r} in the path and {given!r} in the body"
                )
            data[key] = value
    return rpc.from_json(data, message)


# -- streams ------------------------------------------------------------------------------------


class _Pump:
    """Reads a response stream in a task of its own, so that the writer can wait with a
    timeout (for heartbeats) without cancelling the handler's generator mid-step."""

    def __init__(self, responses: AsyncIterator[Message]) -> None:
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.task = asyncio.create_task(self._run(responses))

    async def _run(self, responses: AsyncIterator[Message]) -> None:
        try:
            async for response in responses:
                self.queue.put_nowait(("item", response))
            self.queue.put_nowait(("end", None))
        except RpcFailure as e:
            self.queue.put_nowait(("error", e))
        except Exception:  # noqa: BLE001 - answered as INTERNAL, logged with its traceback
            log.exception("event stream failed")
            self.queue.put_nowait(
                (
                    "error",
                    RpcFailure(
                        grpc.StatusCode.INTERNAL,
                        "INTERNAL",
                        "internal error (see the daemon's log)",
                    ),
                )
            )

    async def next(self, timeout: float | None = None) -> tuple[str, Any]:
        """``("item", response)``, ``("end", None)``, ``("error", RpcFailure)``, or
        ``("idle", None)`` after ``timeout`` seconds with nothing."""
        try:
            return await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            return ("idle", None)

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


class Api:
    """The routes, bound to the daemon's service object."""

    def __init__(self, service: AgentService) -> None:
        self.service = service

    def routes(self) -> list[web.RouteDef]:
        p = "/api/v1"
        # Each route is named after the RPC it calls (``RPC`` or ``RPC:what``): a token's
        # role is checked against that RPC's (``security.Guard``, R92).
        return [
            web.get(f"{p}/sessions", self.list_sessions, name="ListSessions"),
            web.get(f"{p}/sessions/{{session_id}}", self.get_session, name="GetSession"),
            web.delete(f"{p}/sessions/{{session_id}}", self.delete_session, name="DeleteSession"),
            web.get(f"{p}/sessions/{{session_id}}/history", self.history, name="History"),
            web.post(f"{p}/sessions/{{session_id}}/fork", self.fork, name="Fork"),
            web.post(f"{p}/sessions/{{session_id}}/cancel", self.cancel, name="Cancel"),
            web.post(f"{p}/sessions/{{session_id}}/compact", self.compact, name="Compact"),
            web.post(f"{p}/sessions/{{session_id}}/resume", self.resume, name="Resume"),
            web.get(f"{p}/sessions/{{session_id}}/events", self.events, name="Watch"),
            web.get(f"{p}/approvals", self.list_approvals, name="ListApprovals"),
            web.post(f"{p}/approvals/{{approval_id}}/resolve", self.resolve, name="Resolve"),
            web.get(f"{p}/compare", self.compare, name="Compare"),
            web.delete(
                f"{p}/sessions/{{session_id}}/queue/{{request_id}}",
                self.dequeue_input,
                name="DequeueInput",
            ),
            web.get(f"{p}/sessions/{{session_id}}/tasks", self.tasks, name="GetSession:tasks"),
            web.get(f"{p}/schedules", self.list_schedules, name="ListSchedules"),
            web.post(f"{p}/schedules", self.create_schedule, name="CreateSchedule"),
            web.post(f"{p}/schedules/{{name}}/pause", self.pause_schedule, name="PauseSchedule"),
            web.post(f"{p}/schedules/{{name}}/resume", self.resume_schedule, name="ResumeSchedule"),
            web.post(
                f"{p}/schedules/{{name}}/trigger", self.trigger_schedule, name="TriggerSchedule"
            ),
            web.delete(f"{p}/schedules/{{name}}", self.delete_schedule, name="DeleteSchedule"),
        ]

    @staticmethod
    def _ctx(request: web.Request) -> CallContext:
        auth = request.headers.get("Authorization")
        cert = request.transport.get_extra_info("peercert") if request.transport else None
        subject = ",".join(
            f"{key}={value}" for rdn in (cert or {}).get("subject", ()) for key, value in rdn
        )
        return CallContext(
            metadata=(("authorization", auth),) if auth else (),
            peer_address=f"http:{request.remote}",
            auth={"x509_subject": [subject.encode()]} if subject else {},
        )

    async def _unary(self, request: web.Request, handler: Any, message: Message) -> web.Response:
        response = await rpc.unary(handler, message, self._ctx(request))
        return web.json_response(rpc.to_json(response))

    # -- unary ---------------------------------------------------------------------------------

    async def list_sessions(self, request: web.Request) -> web.Response:
        return await self._unary(
            request, self.service.ListSessions, query_request(request, pb.ListSessionsRequest())
        )

    async def get_session(self, request: web.Request) -> web.Response:
        msg = query_request(
            request, pb.GetSessionRequest(), session_id=request.match_info["session_id"]
        )
        return await self._unary(request, self.service.GetSession, msg)

    async def delete_session(self, request: web.Request) -> web.Response:
        msg = query_request(
            request, pb.DeleteSessionRequest(), session_id=request.match_info["session_id"]
        )
        return await self._unary(request, self.service.DeleteSession, msg)

    async def dequeue_input(self, request: web.Request) -> web.Response:
        msg = pb.DequeueInputRequest(
            session_id=request.match_info["session_id"], request_id=request.match_info["request_id"]
        )
        return await self._unary(request, self.service.DequeueInput, msg)

    async def compact(self, request: web.Request) -> web.Response:
        msg = await body_request(
            request, pb.CompactRequest(), session_id=request.match_info["session_id"]
        )
        return await self._unary(request, self.service.Compact, msg)

    async def list_schedules(self, request: web.Request) -> web.Response:
        return await self._unary(request, self.service.ListSchedules, pb.ListSchedulesRequest())

    async def create_schedule(self, request: web.Request) -> web.Response:
        msg = await body_request(request, pb.CreateScheduleRequest())
        return await self._unary(request, self.service.CreateSchedule, msg)

    async def pause_schedule(self, request: web.Request) -> web.Response:
        msg = pb.PauseScheduleRequest(name=request.match_info["name"])
        return await self._unary(request, self.service.PauseSchedule, msg)

    async def resume_schedule(self, request: web.Request) -> web.Response:
        msg = pb.ResumeScheduleRequest(name=request.match_info["name"])
        return await self._unary(request, self.service.ResumeSchedule, msg)

    async def trigger_schedule(self, request: web.Request) -> web.Response:
        msg = pb.TriggerScheduleRequest(name=request.match_info["name"])
        return await self._unary(request, self.service.TriggerSchedule, msg)

    async def delete_schedule(self, request: web.Request) -> web.Response:
        msg = pb.DeleteScheduleRequest(name=request.match_info["name"])
        return await self._unary(request, self.service.DeleteSchedule, msg)

    async def history(self, request: web.Request) -> web.Response:
        msg = query_request(
            request, pb.HistoryRequest(), session_id=request.match_info["session_id"]
        )
        return await self._unary(request, self.service.History, msg)

    async def fork(self, request: web.Request) -> web.Response:
        msg = await body_request(
            request, pb.ForkRequest(), session_id=request.match_info["session_id"]
        )
        return await self._unary(request, self.service.Fork, msg)

    async def cancel(self, request: web.Request) -> web.Response:
        msg = await body_request(
            request, pb.CancelRequest(), session_id=request.match_info["session_id"]
        )
        return await self._unary(request, self.service.Cancel, msg)

    async def list_approvals(self, request: web.Request) -> web.Response:
        return await self._unary(
            request, self.service.ListApprovals, query_request(request, pb.ListApprovalsRequest())
        )

    async def compare(self, request: web.Request) -> web.Response:
        return await self._unary(
            request, self.service.Compare, query_request(request, pb.CompareRequest())
        )

    async def tasks(self, request: web.Request) -> web.Response:
        """``{"session_id", "status", "tasks"}``: the session's sub-agent tasks as a tree
        (:func:`~luoshod.http.tasks.task_tree`), from ``GetSession`` and, when the session
        waits on an approval, that approval (``ListApprovals``: its ``subagent_path``)."""
        sid = request.match_info["session_id"]
        ctx = self._ctx(request)
        got = await rpc.unary(
            self.service.GetSession,
            query_request(request, pb.GetSessionRequest(), session_id=sid),
            ctx,
        )
        cp = got.checkpoint
        approvals: list[pb.Approval] = []
        token = ""
        while (
            cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL and cp.approval_id and not approvals
        ):
            page = await rpc.unary(
                self.service.ListApprovals,
                pb.ListApprovalsRequest(session_id=sid, page_token=token),
                ctx,
            )
            approvals = [a for a in page.approvals if a.approval_id == cp.approval_id]
            token = page.next_page_token
            if not token:
                break
        return web.json_response(
            {
                "session_id": sid,
                "status": pb.CheckpointStatus.Name(cp.status),
                "tasks": task_tree(cp, approvals),
            }
        )

    # -- runs, streamed as NDJSON ----------------------------------------------------------------

    async def resume(self, request: web.Request) -> web.StreamResponse:
        msg = await body_request(
            request, pb.ResumeRequest(), session_id=request.match_info["session_id"]
        )
        return await self._ndjson(request, self.service.Resume, msg)

    async def resolve(self, request: web.Request) -> web.StreamResponse:
        msg = await body_request(
            request, pb.ResolveRequest(), approval_id=request.match_info["approval_id"]
        )
        return await self._ndjson(request, self.service.Resolve, msg)

    async def _ndjson(
        self, request: web.Request, handler: Any, message: Message
    ) -> web.StreamResponse:
        pump = _Pump(rpc.stream(handler, message, self._ctx(request)))
        try:
            kind, value = await pump.next()
            if kind == "error":
                return error_response(value)
            response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
            await response.prepare(request)
            while kind == "item":
                await response.write(_line({"event": rpc.to_json(value.event)}))
                kind, value = await pump.next()
            if kind == "error":
                await response.write(_line({"error": value.body()}))
            await response.write_eof()
            return response
        finally:
            await pump.close()

    # -- Watch as Server-Sent Events -----------------------------------------------------------

    async def events(self, request: web.Request) -> web.StreamResponse:
        """``Watch`` from ``Last-Event-ID`` (a reconnecting ``EventSource`` sends the last
        ``id:`` it saw, which is the event's ``seq``) or ``?after_seq=``; ``?follow=true``
        keeps following after the run ends. Each event: ``id: seq``, ``event: type``,
        ``data:`` the ``Event`` as JSON; ``text.delta`` (seq 0, never replayed) has no id.
        The stream ends with an ``end`` event, or an ``error`` event after a failure."""
        msg = query_request(request, pb.WatchRequest(), session_id=request.match_info["session_id"])
        if last := request.headers.get("Last-Event-ID", "").strip():
            if not last.isdigit() or int(last) >= 2**64:
                return error_response(
                    invalid(
                        "INVALID_LAST_EVENT_ID", f"Last-Event-ID must be an event seq, not {last!r}"
                    )
                )
            msg.after_seq = int(last)
        pump = _Pump(rpc.stream(self.service.Watch, msg, self._ctx(request)))
        try:
            kind, value = await pump.next(FIRST_EVENT_WAIT_S)
            if kind == "error":
                return error_response(value)
            response = web.StreamResponse(
                headers={
                    "Content-Type": "text/event-stream",
                    "Cache-Control": "no-store",
                    "X-Accel-Buffering": "no",
                }
            )
            await response.prepare(request)
            await response.write(b"retry: 2000\n\n")
            while kind in ("item", "idle"):
                if kind == "item":
                    await response.write(_sse(value.event))
                else:
                    await response.write(b": keep-alive\n\n")
                kind, value = await pump.next(HEARTBEAT_S)
            if kind == "error":
                await response.write(
                    b"event: error\ndata: " + json.dumps(value.body()).encode() + b"\n\n"
                )
            else:
                await response.write(b"event: end\ndata: {}\n\n")
            await response.write_eof()
            return response
        finally:
            await pump.close()


def _line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _sse(event: pb.Event) -> bytes:
    data = json.dumps(rpc.to_json(event), separators=(",", ":"))
    head = f"id: {event.seq}\n" if event.seq else ""
    return f"{head}event: {event.type}\ndata: {data}\n\n".encode()
