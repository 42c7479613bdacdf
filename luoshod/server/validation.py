"""Request checks: bad input gets INVALID_ARGUMENT with a specific reason and changes
nothing. Each ``check_*`` returns the domain value or raises ``InvalidArgument``."""

from __future__ import annotations

import base64
import json
import re
from collections import OrderedDict

from google.protobuf.message import Message as ProtoMessage
from jsonschema.exceptions import SchemaError

from luosho.v1 import agent_pb2 as pb

from ..domain import REASONING_EFFORTS, SLEEP_TOOL, AgentSpec, Message, Role
from ..engine import validator_for
from ..errors import InvalidArgument, PayloadTooLarge
from ..store import MAX_PAGE_SIZE
from . import convert, mcp_convert, subagent_checks

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
SESSION_ID_RULE = "1-128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit"
DEFAULT_PAGE_SIZE = 50
#: Tool call ids and tool names in messages: far above what any model produces, and far
#: below the 64 KiB the embedded drivers' codec can store of one.
MAX_TOOL_REF_CHARS = 1024


def check_size(request: ProtoMessage, limit: int) -> None:
    size = request.ByteSize()
    if size > limit:
        raise PayloadTooLarge(
            f"request is {size} bytes, over the limit of {limit}", limit=limit, size=size
        )


#: Request ids (R74) are kept with the session, up to a thousand of them: a UUID is 36.
MAX_REQUEST_ID = 128


def check_request_id(request_id: str) -> str:
    if len(request_id) > MAX_REQUEST_ID:
        raise InvalidArgument(
            f"request_id is {len(request_id)} characters, over the limit of {MAX_REQUEST_ID}",
            reason="INVALID_REQUEST_ID",
            limit=MAX_REQUEST_ID,
        )
    return request_id


def check_session_id(session_id: str, field: str = "session_id") -> str:
    if not SESSION_ID.fullmatch(session_id):
        raise InvalidArgument(
            f"{field} {session_id[:140]!r} is invalid: {SESSION_ID_RULE}",
            reason="INVALID_SESSION_ID",
            field=field,
        )
    return session_id


def check_json(text: str, field: str) -> str:
    try:
        json.loads(text)
    except ValueError as e:
        raise InvalidArgument(
            f"{field} is not valid JSON: {e}", reason="INVALID_JSON", field=field
        ) from None
    return text


#: The lead agent specs checked last, by their bytes: the runs of a service mostly send
#: one spec, checked and converted once, and they share one ``AgentSpec`` (immutable),
#: whose JSON the store's codec and hash chain keep by identity instead of encoding it,
#: or hashing and comparing it, again at every save. Specs of at most
#: :data:`SPEC_CACHE_BYTES` bytes, the newest :data:`SPEC_CACHE_SIZE` of them.
SPEC_CACHE_SIZE = 64
SPEC_CACHE_BYTES = 64 * 1024
_checked: OrderedDict[bytes, AgentSpec] = OrderedDict()


def check_agent(agent: pb.AgentSpec, field: str = "agent") -> AgentSpec:
    if field != "agent":
        return _check_agent(agent, field)
    key = agent.SerializeToString(deterministic=True)
    spec = _checked.get(key)
    if spec is not None:
        _checked.move_to_end(key)
        return spec
    spec = _check_agent(agent, field)
    if len(key) <= SPEC_CACHE_BYTES:
        _checked[key] = spec
        if len(_checked) > SPEC_CACHE_SIZE:
            _checked.popitem(last=False)
    return spec


def _check_agent(agent: pb.AgentSpec, field: str) -> AgentSpec:
    if not agent.model:
        raise InvalidArgument(
            f"{field}.model is required ('provider:model')",
            reason="INVALID_MODEL",
            field=f"{field}.model",
        )
    seen: set[str] = set()
    for n, tool in enumerate(agent.tools):
        where = f"{field}.tools[{n}]"
        if not TOOL_NAME.fullmatch(tool.name):
            raise InvalidArgument(
                f"{where}.name {tool.name[:80]!r} is invalid: 1-64 characters of A-Z a-z 0-9 _ -",
                reason="INVALID_TOOL_NAME",
                field=f"{where}.name",
            )
        if tool.name in seen:
            raise InvalidArgument(
                f"tool name {tool.name!r} is declared twice",
                reason="DUPLICATE_TOOL_NAME",
                tool=tool.name,
            )
        seen.add(tool.name)
        if tool.input_schema_json:
            check_json(tool.input_schema_json, f"{where}.input_schema_json")
            try:
                validator_for(tool.input_schema_json)
            except SchemaError as e:
                raise InvalidArgument(
                    f"{where}.input_schema_json is not a JSON Schema: {e.message}",
                    reason="INVALID_TOOL_SCHEMA",
                    tool=tool.name,
                ) from None
    if agent.output_schema_json:  # R83
        check_json(agent.output_schema_json, f"{field}.output_schema_json")
        try:
            validator_for(agent.output_schema_json)
        except SchemaError as e:
            raise InvalidArgument(
                f"{field}.output_schema_json is not a JSON Schema: {e.message}",
                reason="INVALID_OUTPUT_SCHEMA",
                field=f"{field}.output_schema_json",
            ) from None
    if agent.HasField("reasoning"):  # R84
        r = agent.reasoning
        if r.effort and r.effort not in REASONING_EFFORTS:
            raise InvalidArgument(
                f"{field}.reasoning.effort must be one of {', '.join(REASONING_EFFORTS)}, "
                f"got {r.effort!r}",
                reason="INVALID_REASONING",
                field=f"{field}.reasoning.effort",
            )
        if r.HasField("budget_tokens") and r.budget_tokens < 1:
            raise InvalidArgument(
                f"{field}.reasoning.budget_tokens must be >= 1, got {r.budget_tokens}",
                reason="INVALID_REASONING",
                field=f"{field}.reasoning.budget_tokens",
            )
    if agent.HasField("max_steps") and agent.max_steps < 0:
        raise InvalidArgument(
            f"{field}.max_steps must be >= 0, got {agent.max_steps}",
            reason="INVALID_MAX_STEPS",
            max_steps=agent.max_steps,
        )
    if agent.HasField("tool_concurrency") and agent.tool_concurrency < 1:
        raise InvalidArgument(
            f"{field}.tool_concurrency must be >= 1, got {agent.tool_concurrency}",
            reason="INVALID_TOOL_CONCURRENCY",
            tool_concurrency=agent.tool_concurrency,
        )
    if agent.HasField("tool_timeout_ms") and agent.tool_timeout_ms < 1:
        raise InvalidArgument(
            f"{field}.tool_timeout_ms must be >= 1, got {agent.tool_timeout_ms}",
            reason="INVALID_TOOL_TIMEOUT",
            tool_timeout_ms=agent.tool_timeout_ms,
        )
    if agent.HasField("approval_timeout_ms") and agent.approval_timeout_ms < 1:
        raise InvalidArgument(
            f"{field}.approval_timeout_ms must be >= 1, got {agent.approval_timeout_ms}",
            reason="INVALID_APPROVAL_TIMEOUT",
            approval_timeout_ms=agent.approval_timeout_ms,
        )
    if agent.on_agent_drift not in convert.DRIFT_FROM_PB:  # proto3 enums are open
        raise InvalidArgument(
            f"{field}.on_agent_drift {agent.on_agent_drift} is not a drift policy "
            "(AGENT_DRIFT_POLICY_WARN, _ERROR or _IGNORE)",
            reason="INVALID_DRIFT_POLICY",
            on_agent_drift=agent.on_agent_drift,
        )
    if agent.model_settings_json:
        check_json(agent.model_settings_json, f"{field}.model_settings_json")
    if agent.HasField("limits"):
        _check_limits(agent.limits, f"{field}.limits")
    mcp_convert.check(agent, field)
    _check_sleep(agent, field)
    if field == "agent":  # the top-level agent: its tree is checked once, level by level
        subagent_checks.check(agent, field, _check_one)
    return convert.agent_from_pb(agent)


def _check_limits(limits: pb.Limits, field: str) -> None:
    """R78: every cap set is a number >= 0 (0 is a cap of zero; unset, no cap)."""
    for scope in ("run", "session"):
        budget = getattr(limits, scope)
        for name in convert.BUDGET_FIELDS:
            if not budget.HasField(name):
                continue
            value = getattr(budget, name)
            if value < 0 or value != value or value == float("inf"):
                raise InvalidArgument(
                    f"{field}.{scope}.{name} must be >= 0 (0 is a cap of zero; leave it unset "
                    f"for no cap), got {value}",
                    reason="INVALID_LIMITS",
                    field=f"{field}.{scope}.{name}",
                )


def _check_sleep(agent: pb.AgentSpec, field: str) -> None:
    """R86: ``sleep_tool`` on the lead agent only, and no tool of its own named ``sleep``."""
    if not agent.sleep_tool:
        return
    if field != "agent":
        raise InvalidArgument(
            f"{field}.sleep_tool: only the lead agent can sleep (a sub-agent's run is part of "
            "the lead's)",
            reason="INVALID_SLEEP_TOOL",
            field=f"{field}.sleep_tool",
        )
    if any(t.name == SLEEP_TOOL.name for t in agent.tools):
        raise InvalidArgument(
            f"tool name {SLEEP_TOOL.name!r} is both declared by the agent and the daemon's "
            "timer (sleep_tool)",
            reason="DUPLICATE_TOOL_NAME",
            tool=SLEEP_TOOL.name,
        )


def _check_one(agent: pb.AgentSpec, field: str) -> None:
    check_agent(agent, field)


def check_messages(messages: list[pb.Message], field: str = "input") -> list[Message]:
    out = []
    for n, m in enumerate(messages):
        where = f"{field}[{n}]"
        if m.role not in convert.ROLE_FROM_PB:
            raise InvalidArgument(
                f"{where}.role is required", reason="INVALID_MESSAGE", field=f"{where}.role"
            )
        _check_tool_ref(m.tool_call_id, f"{where}.tool_call_id")
        _check_tool_ref(m.tool_name, f"{where}.tool_name")
        for k, c in enumerate(m.tool_calls):
            if m.role != pb.ROLE_ASSISTANT:
                raise InvalidArgument(
                    f"{where} has tool_calls but is not an assistant message",
                    reason="INVALID_MESSAGE",
                    field=where,
                )
            if not c.id or not c.name:
                raise InvalidArgument(
                    f"{where}.tool_calls[{k}] needs an id and a name",
                    reason="INVALID_MESSAGE",
                    field=where,
                )
            _check_tool_ref(c.id, f"{where}.tool_calls[{k}].id")
            _check_tool_ref(c.name, f"{where}.tool_calls[{k}].name")
            if c.arguments_json:
                check_json(c.arguments_json, f"{where}.tool_calls[{k}].arguments_json")
        for k, b in enumerate(m.reasoning):  # R84: blocks a model returned, sent back as given
            if m.role != pb.ROLE_ASSISTANT:
                raise InvalidArgument(
                    f"{where} has reasoning but is not an assistant message",
                    reason="INVALID_MESSAGE",
                    field=where,
                )
            if not isinstance(_json_or_none(b.raw_json), dict):
                raise InvalidArgument(
                    f"{where}.reasoning[{k}].raw_json must be a JSON object",
                    reason="INVALID_MESSAGE",
                    field=f"{where}.reasoning[{k}].raw_json",
                )
        msg = convert.message_from_pb(m)
        if msg.role is Role.TOOL:
            if not m.tool_call_id:
                raise InvalidArgument(
                    f"{where} is a tool message without tool_call_id",
                    reason="INVALID_MESSAGE",
                    field=where,
                )
            check_json(m.content, f"{where}.content")
        out.append(msg)
    return out


def _json_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _check_tool_ref(value: str, field: str) -> None:
    if len(value) > MAX_TOOL_REF_CHARS:
        raise InvalidArgument(
            f"{field} is {len(value)} characters, over the limit of {MAX_TOOL_REF_CHARS}",
            reason="INVALID_MESSAGE",
            field=field,
            limit=MAX_TOOL_REF_CHARS,
        )


def check_page_size(page_size: int) -> int:
    if page_size < 0:
        raise InvalidArgument(
            f"page_size must be >= 0, got {page_size}", reason="INVALID_PAGE_SIZE"
        )
    return min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def check_history_limit(limit: int) -> int:
    if limit < 0:
        raise InvalidArgument(
            f"history_limit must be >= 0, got {limit}",
            reason="INVALID_HISTORY_LIMIT",
            history_limit=limit,
        )
    return limit


def check_retention_ms(ms: int) -> float:
    """ExecuteRequest.retention_ms as the seconds the engine keeps (0: forever)."""
    if ms < 0:
        raise InvalidArgument(
            f"retention_ms must be >= 0, got {ms}", reason="INVALID_RETENTION", retention_ms=ms
        )
    return ms / 1000


def check_tool_result_patch(p: pb.ToolResultPatch) -> Message:
    if not p.tool_call_id:
        raise InvalidArgument(
            "patch.tool_result.tool_call_id is required", reason="INVALID_TOOL_CALL_ID"
        )
    check_json(p.result_json, "patch.tool_result.result_json")
    return Message(Role.TOOL, p.result_json, (), p.tool_call_id, "", p.is_error)


def encode_offset(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o{offset}".encode()).decode()


def decode_offset(token: str) -> int:
    if not token:
        return 0
    try:
        text = base64.b64decode(token, altchars=b"-_", validate=True).decode()
        if not text.startswith("o") or not text[1:].isdigit():
            raise ValueError(text)
        return int(text[1:])
    except (ValueError, UnicodeDecodeError):
        raise InvalidArgument(
            f"malformed page token {token[:40]!r}", reason="INVALID_PAGE_TOKEN"
        ) from None
