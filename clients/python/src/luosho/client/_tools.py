"""Running the app's tools for ``tool.call`` events, and encoding what they return; and
answering ``tool.reconcile`` events (R77) with the app's reconcile functions.

A tool is any callable, sync or async, called as ``fn(args)`` or, when it takes a second
positional parameter, ``fn(args, ctx)`` with a ``ToolContext``. Its return value is sent
as JSON. Every failure becomes an error result the model can read, so a run never waits
on a tool the client could not run: an exception is ``{"error": "<Type>: <message>"}``,
and so are an unknown tool name, undecodable arguments and an unencodable return value.

A reconcile function (``reconcile={"pay": check_payment}``) is called as ``fn(call)`` with a
``ReconcileCall`` when the daemon asks whether a call handed out before happened; it
returns ``Done(result)`` (recorded as the call's result, the tool is not run again),
``NOT_STARTED`` (the call is handed out again) or ``UNKNOWN`` (handed out again, the tool
told through ``ToolContext.may_have_run``). A reconcile function that raises, and a tool
without one, answer ``UNKNOWN``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple, TypeAlias

from luosho.v1 import agent_pb2

from ._json import dumps

__all__ = [
    "NOT_STARTED",
    "UNKNOWN",
    "Done",
    "ReconcileCall",
    "ReconcileFunction",
    "ReconcileLike",
    "SubagentInfo",
    "Undone",
    "ToolBox",
    "ToolContext",
    "ToolFunction",
    "ToolOutcome",
    "ToolsLike",
    "subagent_of",
]

ToolFunction: TypeAlias = Callable[..., Any]
ToolsLike: TypeAlias = Mapping[str, ToolFunction]


@dataclass(frozen=True, slots=True)
class Done:
    """A reconcile answer: the call happened; ``result`` (any JSON value) is its result."""

    result: Any
    is_error: bool = False


class Undone(Enum):
    """A reconcile answer without a result: the call is handed out again."""

    #: The call never started.
    NOT_STARTED = "NOT_STARTED"
    #: The client cannot tell: the tool checks its side effect by the call id.
    UNKNOWN = "UNKNOWN"


NOT_STARTED = Undone.NOT_STARTED
UNKNOWN = Undone.UNKNOWN


@dataclass(frozen=True, slots=True)
class ReconcileCall:
    """A call handed out before whose fate the daemon does not know (``tool.reconcile``)."""

    session_id: str
    # The call's id: the same on every hand-out, the idempotency key to look it up by.
    tool_call_id: str
    tool_name: str
    arguments: Any
    # The attempt of the last hand-out (1 = the first).
    attempt: int
    step: int = 0
    subagent: SubagentInfo | None = None


ReconcileFunction: TypeAlias = Callable[[ReconcileCall], "Done | Undone | Awaitable[Done | Undone]"]
ReconcileLike: TypeAlias = Mapping[str, ReconcileFunction]


@dataclass(frozen=True, slots=True)
class SubagentInfo:
    """Which sub-agent caused an event (R58): its name, depth (1 = a sub-agent of the
    lead), the names from the lead's sub-agent down to it, and its task id."""

    name: str
    depth: int
    path: tuple[str, ...]
    task_id: str


def subagent_of(event: agent_pb2.Event) -> SubagentInfo | None:
    """The sub-agent an event comes from, ``None`` for the lead's own events."""
    if not event.HasField("subagent"):
        return None
    t = event.subagent
    return SubagentInfo(t.name, t.depth, tuple(t.path), t.task_id)


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may want to know about the call it runs."""

    session_id: str
    # Stable across re-runs of the same call: usable as an idempotency key.
    tool_call_id: str
    tool_name: str
    step: int = 0
    # How long the run waits for the result before recording a timeout.
    timeout_ms: int = 0
    # The sub-agent that asks (None: the lead). Its calls' ids are qualified by their
    # path ("<lead call id>/<its call id>"), and stay stable across re-runs too.
    subagent: SubagentInfo | None = None
    # Which hand-out of the call this is (R77): 1 the first time, one more each time the
    # same call is handed out again after a daemon restart, a takeover or a resume.
    attempt: int = 0
    # How the call's reconcile was answered when this hand-out follows one: "" (none),
    # "NOT_STARTED" or "UNKNOWN" (also when the reconcile went unanswered).
    reconciled: str = ""

    @property
    def may_have_run(self) -> bool:
        """An earlier hand-out may have had its effect (``reconciled`` is "UNKNOWN"): check
        by ``tool_call_id`` before acting again."""
        return self.reconciled == "UNKNOWN"


class ToolOutcome(NamedTuple):
    """A tool call's answer, ready for SubmitToolResult (``reconcile``: the proto's
    ``ReconcileOutcome`` when it answers a ``tool.reconcile``, else 0)."""

    result_json: str
    is_error: bool
    reconcile: int = 0


class UnknownToolError(LookupError):
    """The run asked for a tool that the client was not given."""


@dataclass(frozen=True, slots=True)
class _Entry:
    fn: ToolFunction
    is_async: bool
    takes_context: bool


def _takes_context(fn: ToolFunction) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature: call with args only
        return False
    positional = 0
    for p in parameters:
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            return True
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


def _is_async(fn: ToolFunction) -> bool:
    # An object with an ``async def __call__`` counts as async too.
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


def _error(exc: BaseException) -> ToolOutcome:
    return ToolOutcome(dumps({"error": f"{type(exc).__name__}: {exc}"}), True)


def _encode(value: Any) -> ToolOutcome:
    try:
        return ToolOutcome(dumps(value), False)
    except (TypeError, ValueError) as exc:
        return _error(exc)


async def _await(awaitable: Any) -> Any:
    return await awaitable


_RECONCILED = {
    agent_pb2.RECONCILE_OUTCOME_NOT_STARTED: "NOT_STARTED",
    agent_pb2.RECONCILE_OUTCOME_UNKNOWN: "UNKNOWN",
}


class ToolBox:
    """The tools of one run, by name, with how each is to be called, and their reconcile
    functions."""

    def __init__(self, tools: ToolsLike | None, reconcile: ReconcileLike | None = None) -> None:
        self._entries = {
            name: _Entry(fn, _is_async(fn), _takes_context(fn))
            for name, fn in (tools or {}).items()
        }
        self._reconcilers = dict(reconcile or {})

    def _reconcile_call(self, session_id: str, event: agent_pb2.Event) -> ReconcileCall:
        asked = event.tool_reconcile
        call = asked.call
        try:
            args = json.loads(call.arguments_json) if call.arguments_json else {}
        except ValueError:
            args = call.arguments_json
        return ReconcileCall(
            session_id=event.session_id or session_id,
            tool_call_id=call.id,
            tool_name=call.name,
            arguments=args,
            attempt=asked.attempt,
            step=asked.step,
            subagent=subagent_of(event),
        )

    async def reconcile_async(self, session_id: str, event: agent_pb2.Event) -> ToolOutcome:
        """The answer to a tool.reconcile event; sync functions run in a worker thread."""
        fn = self._reconcilers.get(event.tool_reconcile.call.name)
        if fn is None:
            return _UNKNOWN
        call = self._reconcile_call(session_id, event)
        try:
            if _is_async(fn):
                answer = await fn(call)  # type: ignore[misc]
            else:
                answer = await asyncio.to_thread(fn, call)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception:  # noqa: BLE001 - the client cannot tell: UNKNOWN
            return _UNKNOWN
        return _reconciled(answer)

    def reconcile_sync(self, session_id: str, event: agent_pb2.Event) -> ToolOutcome:
        """The answer to a tool.reconcile event, in this thread."""
        fn = self._reconcilers.get(event.tool_reconcile.call.name)
        if fn is None:
            return _UNKNOWN
        try:
            answer = fn(self._reconcile_call(session_id, event))
            if inspect.isawaitable(answer):
                answer = asyncio.run(_await(answer))
        except Exception:  # noqa: BLE001 - the client cannot tell: UNKNOWN
            return _UNKNOWN
        return _reconciled(answer)

    def _prepare(
        self, session_id: str, event: agent_pb2.Event
    ) -> tuple[_Entry, tuple[Any, ...]] | ToolOutcome:
        request = event.tool_call
        call = request.call
        entry = self._entries.get(call.name)
        if entry is None:
            return _error(UnknownToolError(f"no tool named {call.name!r} was given to the client"))
        try:
            args = json.loads(call.arguments_json) if call.arguments_json else {}
        except ValueError as exc:
            return _error(exc)
        if not entry.takes_context:
            return entry, (args,)
        ctx = ToolContext(
            session_id=event.session_id or session_id,
            tool_call_id=call.id,
            tool_name=call.name,
            step=request.step,
            timeout_ms=request.timeout_ms,
            subagent=subagent_of(event),
            attempt=request.attempt,
            reconciled=_RECONCILED.get(request.reconciled, ""),
        )
        return entry, (args, ctx)

    async def run_async(self, session_id: str, event: agent_pb2.Event) -> ToolOutcome:
        """Run the call of a tool.call event; sync tools run in a worker thread."""
        prepared = self._prepare(session_id, event)
        if isinstance(prepared, ToolOutcome):
            return prepared
        entry, args = prepared
        try:
            if entry.is_async:
                value = await entry.fn(*args)
            else:
                value = await asyncio.to_thread(entry.fn, *args)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            return _error(exc)
        return _encode(value)

    def run_sync(self, session_id: str, event: agent_pb2.Event) -> ToolOutcome:
        """Run the call of a tool.call event in this thread; async tools get their own loop."""
        prepared = self._prepare(session_id, event)
        if isinstance(prepared, ToolOutcome):
            return prepared
        entry, args = prepared
        try:
            value = entry.fn(*args)
            if inspect.isawaitable(value):
                value = asyncio.run(_await(value))
        except Exception as exc:
            return _error(exc)
        return _encode(value)


_UNKNOWN = ToolOutcome("", False, agent_pb2.RECONCILE_OUTCOME_UNKNOWN)


def _reconciled(answer: Any) -> ToolOutcome:
    """A reconcile function's answer as SubmitToolResult's fields; anything but ``Done``
    or ``NOT_STARTED`` is ``UNKNOWN``."""
    if isinstance(answer, Done):
        encoded = _encode(answer.result)
        return ToolOutcome(
            encoded.result_json,
            encoded.is_error or answer.is_error,
            agent_pb2.RECONCILE_OUTCOME_DONE,
        )
    if answer is NOT_STARTED:
        return ToolOutcome("", False, agent_pb2.RECONCILE_OUTCOME_NOT_STARTED)
    return _UNKNOWN


def done_outcome(outcome: ToolOutcome) -> ToolOutcome:
    """A result the tool already computed in this run object, as a DONE reconcile answer."""
    return ToolOutcome(outcome.result_json, outcome.is_error, agent_pb2.RECONCILE_OUTCOME_DONE)
