"""Tool-call checks that happen in the daemon before a call reaches the client (R25)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

from ..domain import AgentSpec, Decision, Message, Role, ToolCall, ToolSpec

REJECTED_ERROR = "the reviewer rejected this call"
DECLINED_ERROR = "declined"


@lru_cache(maxsize=512)
def validator_for(schema_json: str) -> Validator:
    """A compiled validator for a schema (checked to be a JSON Schema). Raises ``SchemaError``
    or ``ValueError``."""
    schema: Any = json.loads(schema_json) if schema_json else {"type": "object"}
    if not isinstance(schema, dict | bool):
        raise SchemaError("a JSON Schema must be an object or a boolean")
    cls = jsonschema.validators.validator_for(schema)
    # types-jsonschema types the schema as a dict; JSON Schema allows a boolean too.
    cls.check_schema(schema)  # type: ignore[arg-type]  # a bool schema (see above)
    return cls(schema)


def error_result(call: ToolCall, error: str, **extra: Any) -> Message:
    """A tool result the model can read, recorded instead of running the call."""
    body = {"error": error, "tool": call.name, "tool_call_id": call.id, **extra}
    return Message(Role.TOOL, json.dumps(body), (), call.id, call.name, True)


def rejection_result(call: ToolCall, decision: Decision) -> Message:
    """The structured result of a rejected (or expired) approval (R30)."""
    extra = {"rejected": True, "note": decision.note}
    if decision.expired:
        extra["expired"] = True
    return error_result(call, REJECTED_ERROR, **extra)


def asked(tool: ToolSpec | None, call: ToolCall) -> str | None:
    """R88: the text a question tool's call asks — its string argument ``question`` when
    it has one, else its whole arguments as JSON; ``None`` for a call that is no question."""
    if tool is None or not tool.question:
        return None
    try:
        args = json.loads(call.arguments_json or "{}")
    except ValueError:
        return call.arguments_json
    if isinstance(args, dict) and isinstance(text := args.get("question"), str):
        return text
    return call.arguments_json or "{}"


def decided_result(call: ToolCall, tool: ToolSpec | None, decision: Decision) -> Message | None:
    """The result a person's decision makes on its own: an answered question's answer
    ``{"answer": TEXT}`` (R88), a rejection's or a declined question's error (R30);
    ``None`` when the call was approved and must run."""
    if decision.answer is not None:
        body = json.dumps({"answer": decision.answer}, ensure_ascii=False)
        return Message(Role.TOOL, body, (), call.id, call.name, False)
    if decision.approved:
        return None
    if tool is not None and tool.question:
        extra: dict[str, Any] = {"declined": True, "note": decision.note}
        if decision.expired:
            extra["expired"] = True
        return error_result(call, DECLINED_ERROR, **extra)
    return rejection_result(call, decision)


def check_call(spec: AgentSpec, call: ToolCall) -> Message | None:
    """``None`` when the call may run; else the error result to record (R25)."""
    tool = spec.tool(call.name)
    if tool is None:
        declared = ", ".join(t.name for t in spec.tools) or "none"
        return error_result(call, f"unknown tool {call.name!r} (declared tools: {declared})")
    try:
        args = json.loads(call.arguments_json or "{}")
    except ValueError as e:
        return error_result(call, f"arguments are not valid JSON: {e}")
    errors = sorted(
        validator_for(tool.input_schema_json).iter_errors(args), key=lambda e: list(e.path)
    )
    if errors:
        return error_result(
            call,
            "arguments do not match the tool's input schema",
            details=[f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors[:10]],
        )
    return None
