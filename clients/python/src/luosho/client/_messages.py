"""Transcript messages: the input shapes ``execute`` accepts, and dicts for reading.

A message dict has the shape ``message_to_dict`` returns (only non-empty keys)::

    {"role": "user"|"system"|"assistant"|"tool", "content": str,
     "tool_calls": [{"id": str, "name": str, "arguments_json": str}],   # assistant
     "tool_call_id": str, "tool_name": str, "is_error": bool,           # tool
     "pinned": bool}                                  # user/system: never summarized (R85)

On input a tool call may give ``"arguments": <any JSON value>`` instead of
``arguments_json``, and a non-string ``content`` is JSON-encoded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from luosho.v1 import agent_pb2

from ._json import dumps

__all__ = ["InputLike", "MessageLike", "message_from_dict", "message_to_dict", "to_messages"]

MessageLike: TypeAlias = str | Mapping[str, Any] | agent_pb2.Message
InputLike: TypeAlias = MessageLike | Iterable[MessageLike] | None

_ROLES: dict[str, int] = {
    "system": agent_pb2.ROLE_SYSTEM,
    "user": agent_pb2.ROLE_USER,
    "assistant": agent_pb2.ROLE_ASSISTANT,
    "tool": agent_pb2.ROLE_TOOL,
}
_ROLE_NAMES: dict[int, str] = {value: name for name, value in _ROLES.items()}


def _tool_call_from_dict(call: Mapping[str, Any]) -> agent_pb2.ToolCall:
    if "arguments_json" in call:
        arguments_json = call["arguments_json"]
    else:
        arguments_json = dumps(call.get("arguments", {}))
    return agent_pb2.ToolCall(
        id=call.get("id", ""), name=call.get("name", ""), arguments_json=arguments_json
    )


def message_from_dict(message: Mapping[str, Any]) -> agent_pb2.Message:
    """The proto ``Message`` of a message dict; raises ValueError for an unknown role."""
    role = message.get("role", "user")
    if role not in _ROLES:
        raise ValueError(f"unknown message role {role!r}; expected one of {sorted(_ROLES)}")
    content = message.get("content", "")
    return agent_pb2.Message(
        role=_ROLES[role],
        content=content if isinstance(content, str) else dumps(content),
        tool_calls=[_tool_call_from_dict(c) for c in message.get("tool_calls", ())],
        tool_call_id=message.get("tool_call_id", ""),
        tool_name=message.get("tool_name", ""),
        is_error=bool(message.get("is_error", False)),
        pinned=bool(message.get("pinned", False)),
    )


def message_to_dict(message: agent_pb2.Message) -> dict[str, Any]:
    """A proto ``Message`` as a plain dict (the inverse of ``message_from_dict``)."""
    out: dict[str, Any] = {
        "role": _ROLE_NAMES.get(message.role, "unspecified"),
        "content": message.content,
    }
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments_json": c.arguments_json}
            for c in message.tool_calls
        ]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    if message.tool_name:
        out["tool_name"] = message.tool_name
    if message.is_error:
        out["is_error"] = True
    if message.pinned:
        out["pinned"] = True
    return out


def _one(message: MessageLike) -> agent_pb2.Message:
    if isinstance(message, agent_pb2.Message):
        return message
    if isinstance(message, str):
        return agent_pb2.Message(role=agent_pb2.ROLE_USER, content=message)
    if isinstance(message, Mapping):
        return message_from_dict(message)
    raise TypeError(
        f"a message must be a str, a dict or an agent_pb2.Message, not {type(message).__name__}"
    )


def to_messages(input: InputLike) -> list[agent_pb2.Message]:
    """Normalise ``execute``'s input: a str is one user message; None is no input."""
    if input is None:
        return []
    if isinstance(input, (str, Mapping, agent_pb2.Message)):
        return [_one(input)]
    return [_one(m) for m in input]
