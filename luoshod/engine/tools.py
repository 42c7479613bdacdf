"""Tool-call checks that happen in the daemon before a call reaches the client (R25)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator

from ..domain import AgentSpec, Decision, Message, Role, ToolCall

REJECTED_ERROR = "the reviewer rejected this call"


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
