"""Running the app's tools for ``tool.call`` events, and encoding what they return.

A tool is any callable, sync or async, called as ``fn(args)`` or, when it takes a second
positional parameter, ``fn(args, ctx)`` with a ``ToolContext``. Its return value is sent
as JSON. Every failure becomes an error result the model can read, so a run never waits
on a tool the client could not run: an exception is ``{"error": "<Type>: <message>"}``,
and so are an unknown tool name, undecodable arguments and an unencodable return value.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeAlias

from luosho.v1 import agent_pb2

from ._agent import dumps

__all__ = [
    "SubagentInfo",
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


class ToolOutcome(NamedTuple):
    """A tool call's answer, ready for SubmitToolResult."""

    result_json: str
    is_error: bool


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


class ToolBox:
    """The tools of one run, by name, with how each is to be called."""

    def __init__(self, tools: ToolsLike | None) -> None:
        self._entries = {
            name: _Entry(fn, _is_async(fn), _takes_context(fn))
            for name, fn in (tools or {}).items()
        }

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
