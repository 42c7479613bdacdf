"""Protobuf ⇄ domain. The only module that knows both shapes."""

from __future__ import annotations

from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from luosho.v1 import agent_pb2 as pb

from .. import engine
from ..domain import (
    DEFAULT_COMPACTION_THRESHOLD,
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_SUBAGENT_DEPTH,
    DEFAULT_TOOL_CONCURRENCY,
    AgentSpec,
    Approval,
    Budget,
    Checkpoint,
    Compacted,
    Compaction,
    CompactionStrategy,
    Drift,
    DriftPolicy,
    Fingerprint,
    FinishReason,
    HistoryEntry,
    Limits,
    Message,
    Reasoning,
    ReasoningBlock,
    Role,
    SessionSummary,
    Status,
    SubAgent,
    SubTask,
    ToolCall,
    ToolSpec,
    Usage,
)
from ..engine import Comparison, Event, Step, SubagentTag
from ..providers.guard import Failure
from . import mcp_convert

ROLE_TO_PB = {
    Role.SYSTEM: pb.ROLE_SYSTEM,
    Role.USER: pb.ROLE_USER,
    Role.ASSISTANT: pb.ROLE_ASSISTANT,
    Role.TOOL: pb.ROLE_TOOL,
}
ROLE_FROM_PB = {v: k for k, v in ROLE_TO_PB.items()}
STATUS_TO_PB = {
    Status.IN_PROGRESS: pb.CHECKPOINT_STATUS_IN_PROGRESS,
    Status.AWAITING_APPROVAL: pb.CHECKPOINT_STATUS_AWAITING_APPROVAL,
    Status.FINISHED: pb.CHECKPOINT_STATUS_FINISHED,
    Status.SLEEPING: pb.CHECKPOINT_STATUS_SLEEPING,
}
STATUS_FROM_PB = {v: k for k, v in STATUS_TO_PB.items()}
FINISH_TO_PB = {
    FinishReason.NONE: pb.FINISH_REASON_UNSPECIFIED,
    FinishReason.STOP: pb.FINISH_REASON_STOP,
    FinishReason.MAX_STEPS: pb.FINISH_REASON_MAX_STEPS,
    FinishReason.ABORTED: pb.FINISH_REASON_ABORTED,
    FinishReason.AWAITING_APPROVAL: pb.FINISH_REASON_AWAITING_APPROVAL,
    FinishReason.BUDGET_EXCEEDED: pb.FINISH_REASON_BUDGET_EXCEEDED,
    FinishReason.DEADLINE_EXCEEDED: pb.FINISH_REASON_DEADLINE_EXCEEDED,
    FinishReason.OUTPUT_INVALID: pb.FINISH_REASON_OUTPUT_INVALID,
    FinishReason.SLEEPING: pb.FINISH_REASON_SLEEPING,
}
DRIFT_FROM_PB = {
    pb.AGENT_DRIFT_POLICY_UNSPECIFIED: DriftPolicy.WARN,
    pb.AGENT_DRIFT_POLICY_WARN: DriftPolicy.WARN,
    pb.AGENT_DRIFT_POLICY_ERROR: DriftPolicy.ERROR,
    pb.AGENT_DRIFT_POLICY_IGNORE: DriftPolicy.IGNORE,
}
DRIFT_TO_PB = {
    DriftPolicy.WARN: pb.AGENT_DRIFT_POLICY_WARN,
    DriftPolicy.ERROR: pb.AGENT_DRIFT_POLICY_ERROR,
    DriftPolicy.IGNORE: pb.AGENT_DRIFT_POLICY_IGNORE,
}
MODE_TO_PB = {
    "new": pb.RUN_MODE_NEW,
    "continue": pb.RUN_MODE_CONTINUE,
    "resume": pb.RUN_MODE_RESUME,
}


def timestamp(t: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(t * 1e9))
    return ts


# -- domain from proto (requests are validated first, see validation.py) ---------------------


def tool_call_from_pb(c: pb.ToolCall) -> ToolCall:
    return ToolCall(c.id, c.name, c.arguments_json or "{}")


def message_from_pb(m: pb.Message) -> Message:
    return Message(
        ROLE_FROM_PB[m.role],
        m.content,
        tuple(tool_call_from_pb(c) for c in m.tool_calls),
        m.tool_call_id,
        m.tool_name,
        m.is_error,
        m.model,
        usage_from_pb(m.usage) if m.HasField("usage") else None,
        tuple(ReasoningBlock(b.provider, b.raw_json, b.text) for b in m.reasoning),
        m.pinned,
    )


def usage_from_pb(u: pb.Usage) -> Usage:
    return Usage(
        u.prompt_tokens,
        u.completion_tokens,
        u.total_tokens,
        u.model_calls,
        u.cost_usd,
        u.cached_input_tokens,
        u.cache_write_tokens,
        u.reasoning_tokens,
    )


def agent_from_pb(a: pb.AgentSpec) -> AgentSpec:
    return AgentSpec(
        model=a.model,
        instructions=a.instructions,
        tools=tuple(
            ToolSpec(
                t.name,
                t.description,
                t.input_schema_json,
                t.needs_approval,
                reconcile=t.reconcile,
                question=t.question,
            )
            for t in a.tools
        ),
        max_steps=a.max_steps if a.HasField("max_steps") else DEFAULT_MAX_STEPS,
        tool_concurrency=a.tool_concurrency
        if a.HasField("tool_concurrency")
        else DEFAULT_TOOL_CONCURRENCY,
        on_agent_drift=DRIFT_FROM_PB[a.on_agent_drift],
        model_settings_json=a.model_settings_json,
        tool_timeout_ms=a.tool_timeout_ms if a.HasField("tool_timeout_ms") else None,
        approval_timeout_ms=a.approval_timeout_ms if a.HasField("approval_timeout_ms") else None,
        mcp_servers=mcp_convert.uses_from_pb(a.mcp_servers),
        subagents=tuple(
            SubAgent(s.name, s.description, agent_from_pb(s.agent)) for s in a.subagents
        ),
        max_subagent_depth=a.max_subagent_depth
        if a.HasField("max_subagent_depth")
        else DEFAULT_MAX_SUBAGENT_DEPTH,
        limits=limits_from_pb(a.limits) if a.HasField("limits") else None,
        output_schema_json=a.output_schema_json,
        fallback_models=tuple(a.fallback_models),
        reasoning=Reasoning(
            a.reasoning.effort,
            a.reasoning.budget_tokens if a.reasoning.HasField("budget_tokens") else None,
        )
        if a.HasField("reasoning")
        else None,
        compaction=compaction_from_pb(a.compaction) if a.HasField("compaction") else None,
        sleep_tool=a.sleep_tool,
    )


COMPACTION_STRATEGY_FROM_PB = {
    pb.COMPACTION_STRATEGY_UNSPECIFIED: CompactionStrategy.BOTH,
    pb.COMPACTION_STRATEGY_BOTH: CompactionStrategy.BOTH,
    pb.COMPACTION_STRATEGY_PRUNE: CompactionStrategy.PRUNE,
    pb.COMPACTION_STRATEGY_SUMMARIZE: CompactionStrategy.SUMMARIZE,
}
COMPACTION_STRATEGY_TO_PB = {
    CompactionStrategy.BOTH: pb.COMPACTION_STRATEGY_BOTH,
    CompactionStrategy.PRUNE: pb.COMPACTION_STRATEGY_PRUNE,
    CompactionStrategy.SUMMARIZE: pb.COMPACTION_STRATEGY_SUMMARIZE,
}


def compaction_from_pb(c: pb.Compaction) -> Compaction:
    return Compaction(
        c.threshold or DEFAULT_COMPACTION_THRESHOLD,
        c.protect_tokens,
        COMPACTION_STRATEGY_FROM_PB.get(c.strategy, CompactionStrategy.BOTH),
        c.model,
        c.model_settings_json,
    )


def compaction_pb(c: Compaction) -> pb.Compaction:
    return pb.Compaction(
        threshold=c.threshold,
        protect_tokens=c.protect_tokens,
        strategy=COMPACTION_STRATEGY_TO_PB[c.strategy],
        model=c.model,
        model_settings_json=c.model_settings_json,
    )


def compacted_pb(c: Compacted) -> pb.CompactionState:
    return pb.CompactionState(
        pruned_before=c.pruned_before,
        summarized_before=c.summarized_before,
        summary=c.summary,
        version=c.version,
        count=c.count,
    )


BUDGET_FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cost_usd",
    "model_calls",
    "wall_clock_ms",
)


def budget_from_pb(b: pb.Budget) -> Budget:
    return Budget(**{k: getattr(b, k) for k in BUDGET_FIELDS if b.HasField(k)})


def limits_from_pb(lim: pb.Limits) -> Limits:
    return Limits(budget_from_pb(lim.run), budget_from_pb(lim.session), lim.count_paused_time)


def limits_pb(lim: Limits) -> pb.Limits:
    return pb.Limits(
        run=pb.Budget(**lim.run.caps()),
        session=pb.Budget(**lim.session.caps()),
        count_paused_time=lim.count_paused_time,
    )


# -- proto from domain -----------------------------------------------------------------------


# A message's fields as plain dicts (what ``pb.Message(**...)`` takes): protobuf fills a
# message field from a dict in place, where a message built first is copied into it; the
# events of every step are built from these (:func:`event_pb`).


def _call_dict(c: ToolCall) -> dict[str, Any]:
    return {"id": c.id, "name": c.name, "arguments_json": c.arguments_json}


def _usage_dict(u: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "total_tokens": u.total_tokens,
        "model_calls": u.model_calls,
        "cost_usd": u.cost_usd,
        "cached_input_tokens": u.cached_input_tokens,
        "cache_write_tokens": u.cache_write_tokens,
        "reasoning_tokens": u.reasoning_tokens,
    }


def _message_dict(m: Message) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": ROLE_TO_PB[m.role],
        "content": m.content,
        "tool_calls": [_call_dict(c) for c in m.tool_calls],
        "tool_call_id": m.tool_call_id,
        "tool_name": m.tool_name,
        "is_error": m.is_error,
        "model": m.model,
        "reasoning": [
            {"provider": b.provider, "raw_json": b.raw_json, "text": b.text} for b in m.reasoning
        ],
        "pinned": m.pinned,
    }
    if m.usage is not None:
        out["usage"] = _usage_dict(m.usage)
    return out


def tool_call_pb(c: ToolCall) -> pb.ToolCall:
    return pb.ToolCall(**_call_dict(c))


def message_pb(m: Message) -> pb.Message:
    return pb.Message(**_message_dict(m))


def usage_pb(u: Usage) -> pb.Usage:
    return pb.Usage(**_usage_dict(u))


def fingerprint_pb(f: Fingerprint | None) -> pb.AgentFingerprint | None:
    if f is None:
        return None
    return pb.AgentFingerprint(
        hash=f.hash,
        model=f.model,
        tool_schema_hashes=f.tool_schema_hashes,
        instructions_hash=f.instructions_hash,
    )


def agent_pb(a: AgentSpec | None) -> pb.AgentSpec | None:
    if a is None:
        return None
    spec = pb.AgentSpec(
        model=a.model,
        instructions=a.instructions,
        tools=[
            pb.ToolSpec(
                name=t.name,
                description=t.description,
                input_schema_json=t.input_schema_json,
                needs_approval=t.needs_approval,
                reconcile=t.reconcile,
                question=t.question,
            )
            for t in a.tools
            if not t.server  # a daemon tool (R70) comes from mcp_servers, not the request
        ],
        mcp_servers=mcp_convert.uses_pb(a.mcp_servers),
        max_steps=a.max_steps,
        tool_concurrency=a.tool_concurrency,
        on_agent_drift=DRIFT_TO_PB[a.on_agent_drift],
        model_settings_json=a.model_settings_json,
        output_schema_json=a.output_schema_json,
        fallback_models=a.fallback_models,
        sleep_tool=a.sleep_tool,
    )
    if a.tool_timeout_ms is not None:
        spec.tool_timeout_ms = a.tool_timeout_ms
    if a.approval_timeout_ms is not None:
        spec.approval_timeout_ms = a.approval_timeout_ms
    for sub in a.subagents:
        spec.subagents.add(name=sub.name, description=sub.description, agent=agent_pb(sub.agent))
    if a.reasoning is not None:
        spec.reasoning.effort = a.reasoning.effort
        if a.reasoning.budget_tokens is not None:
            spec.reasoning.budget_tokens = a.reasoning.budget_tokens
    if a.max_subagent_depth != DEFAULT_MAX_SUBAGENT_DEPTH:
        spec.max_subagent_depth = a.max_subagent_depth
    if a.limits is not None:
        spec.limits.CopyFrom(limits_pb(a.limits))
    if a.compaction is not None:
        spec.compaction.CopyFrom(compaction_pb(a.compaction))
    return spec


def approval_pb(a: Approval) -> pb.Approval:
    out = pb.Approval(
        approval_id=a.approval_id,
        session_id=a.session_id,
        tool_call=tool_call_pb(a.call),
        remaining=[tool_call_pb(c) for c in a.remaining],
        step=a.step,
        fingerprint=fingerprint_pb(a.fingerprint),
        created_at=timestamp(a.created_at),
        subagent_path=a.subagent_path,
        kind=pb.APPROVAL_KIND_QUESTION if a.is_question else pb.APPROVAL_KIND_APPROVAL,
        question=a.question or "",
    )
    if a.expires_at is not None:
        out.expires_at.CopyFrom(timestamp(a.expires_at))
    return out


def history_entry_pb(e: HistoryEntry, *, include_checkpoint: bool) -> pb.HistoryEntry:
    cp = e.checkpoint
    turn = next((m for m in reversed(cp.messages) if m.role is Role.ASSISTANT), None)
    return pb.HistoryEntry(
        step=e.step,
        saved_at=timestamp(e.saved_at),
        status=STATUS_TO_PB[e.status],
        version=cp.version,
        message_count=len(cp.messages),
        checkpoint=checkpoint_pb(cp) if include_checkpoint else None,
        model=turn.model if turn is not None else "",
        usage=usage_pb(turn.usage) if turn is not None and turn.usage is not None else None,
        total_usage=usage_pb(cp.total_usage),
        chain=cp.chain,
        compaction=cp.compaction is not None and cp.compaction.version == cp.version,
    )


def _steps_pb(steps: list[Step]) -> list[pb.TrajectoryStep]:
    return [
        pb.TrajectoryStep(
            index=s.index,
            text=s.text,
            model=s.model,
            usage=usage_pb(s.usage) if s.usage is not None else None,
            calls=[
                pb.TrajectoryCall(
                    tool_call_id=c.id,
                    name=c.name,
                    arguments_json=c.arguments_json,
                    result_json=c.result_json,
                    is_error=c.is_error,
                    task_id=c.task_id,
                    task_steps=_steps_pb(list(c.task_steps)),
                )
                for c in s.calls
            ],
        )
        for s in steps
    ]


def comparison_pb(c: Comparison) -> pb.CompareResponse:
    out = pb.CompareResponse(
        a=_steps_pb(c.a),
        b=_steps_pb(c.b),
        drift=pb.TrajectoryDrift(
            tool_order_a=c.tool_order_a,
            tool_order_b=c.tool_order_b,
            tool_order_changed=c.tool_order_a != c.tool_order_b,
            arguments=[
                pb.ArgumentDrift(
                    step=d.step, tool=d.tool, arguments_json_a=d.a, arguments_json_b=d.b
                )
                for d in c.arguments
            ],
            steps_a=len(c.a),
            steps_b=len(c.b),
            finish_reason_a=FINISH_TO_PB[c.finish_reason_a],
            finish_reason_b=FINISH_TO_PB[c.finish_reason_b],
        ),
    )
    if c.diverged_at is not None:
        out.diverged_at = c.diverged_at
    return out


def model_failure_pb(f: Failure) -> pb.ModelFailure:
    return pb.ModelFailure(
        reason=f.reason,
        message=f.message,
        metadata=f.metadata,
        failed_at=timestamp(f.at),
        failures=f.failures,
        retry_not_before=timestamp(f.not_before),
    )


def checkpoint_pb(cp: Checkpoint) -> pb.Checkpoint:
    records = [
        pb.ToolCallRecord(
            call=tool_call_pb(r.call),
            step=r.step,
            result_json=r.result.content if r.result else None,
            is_error=bool(r.result and r.result.is_error),
            attempts=r.attempts,
        )
        for r in cp.tool_call_records()
    ]
    return pb.Checkpoint(
        session_id=cp.session_id,
        messages=[message_pb(m) for m in cp.messages],
        step_index=cp.step_index,
        usage=usage_pb(cp.usage),
        business_state_json=cp.business_state_json,
        status=STATUS_TO_PB[cp.status],
        approval_id=cp.approval_id,
        finish_reason=FINISH_TO_PB[cp.finish_reason],
        fingerprint=fingerprint_pb(cp.fingerprint),
        tool_calls=records,
        updated_at=timestamp(cp.updated_at),
        agent=agent_pb(cp.agent),
        total_usage=usage_pb(cp.total_usage),
        version=cp.version,
        run_id=cp.run_id,
        last_drift=_drift_pb(cp.last_drift) if cp.last_drift else None,
        delegated_usage=usage_pb(cp.delegated_usage) if cp.delegated_usage.model_calls else None,
        subagents=_subagent_states(cp.subtasks, ""),
        early_results=[message_pb(m) for m in cp.early_results.values()],
        attempts=cp.hand_out_counts(),
        run_started_at=timestamp(cp.run_started_at) if cp.run_started_at else None,
        run_paused_ms=round(cp.run_paused_s * 1000),
        session_started_at=timestamp(cp.session_started_at) if cp.session_started_at else None,
        session_paused_ms=round(cp.session_paused_s * 1000),
        wake_at=timestamp(cp.wake_at) if cp.wake_at is not None else None,
        sleep_call_id=cp.sleep.call_id if cp.sleep is not None else "",
        tasks=[
            pb.SubAgentState(
                name=t.name,
                depth=t.depth,
                path=t.path,
                task_id=t.task_id,
                messages=[message_pb(m) for m in t.messages],
                step_index=t.step_index,
            )
            for t in cp.tasks.values()
        ],
        compaction=compacted_pb(cp.compaction) if cp.compaction is not None else None,
    )


def _subagent_states(subtasks: dict[str, SubTask], prefix: str) -> list[pb.SubAgentState]:
    """The nested states, flattened outermost first, each under its qualified call id."""
    out = []
    for call_id, st in subtasks.items():
        qualified = f"{prefix}/{call_id}" if prefix else call_id
        out.append(
            pb.SubAgentState(
                call_id=qualified,
                name=st.name,
                depth=st.depth,
                path=st.path,
                task_id=st.task_id,
                messages=[message_pb(m) for m in st.messages],
                step_index=st.step_index,
                usage=usage_pb(st.usage),
                fingerprint=fingerprint_pb(st.fingerprint),
            )
        )
        out.extend(_subagent_states(st.children, qualified))
    return out


def summary_pb(s: SessionSummary) -> pb.SessionSummary:
    return pb.SessionSummary(
        session_id=s.session_id,
        status=STATUS_TO_PB[s.status],
        finish_reason=FINISH_TO_PB[s.finish_reason],
        step_index=s.step_index,
        message_count=s.message_count,
        approval_id=s.approval_id,
        updated_at=timestamp(s.updated_at),
        last_drift=_drift_pb(s.last_drift) if s.last_drift else None,
        total_usage=usage_pb(s.total_usage),
        wake_at=timestamp(s.wake_at) if s.wake_at is not None else None,
    )


def _drift_pb(d: Drift, *, refused: bool = False) -> pb.AgentDrift:
    return pb.AgentDrift(
        refused=refused,
        model_from=d.model_from,
        model_to=d.model_to,
        tools_added=d.tools_added,
        tools_removed=d.tools_removed,
        tools_changed=d.tools_changed,
        instructions_changed=d.instructions_changed,
    )


#: R77: a reconcile answer, as the engine names it ("": a plain result, no reconcile).
RECONCILE_TO_PB = {
    "": pb.RECONCILE_OUTCOME_UNSPECIFIED,
    engine.RECONCILE_DONE: pb.RECONCILE_OUTCOME_DONE,
    engine.RECONCILE_NOT_STARTED: pb.RECONCILE_OUTCOME_NOT_STARTED,
    engine.RECONCILE_UNKNOWN: pb.RECONCILE_OUTCOME_UNKNOWN,
}
RECONCILE_FROM_PB = {v: k for k, v in RECONCILE_TO_PB.items()}


def _payload(e: Event) -> dict[str, Any]:
    d = e.data
    match e.type:
        case engine.RUN_START:
            return {
                "run_start": pb.RunStart(
                    mode=MODE_TO_PB[d["mode"]],
                    step_index=d["step_index"],
                    fingerprint=fingerprint_pb(d["fingerprint"]),
                    request_id=d["request_id"],
                )
            }
        case engine.AGENT_DRIFT:
            return {"agent_drift": _drift_pb(d["drift"], refused=d.get("refused", False))}
        case engine.STEP_START:
            return {"step_start": pb.StepStart(step=d["step"])}
        case engine.MODEL_TURN:
            return {
                "model_turn": pb.ModelTurn(
                    step=d["step"], message=message_pb(d["message"]), usage=usage_pb(d["usage"])
                )
            }
        case engine.TOOL_CALL:
            return {
                "tool_call": pb.ToolCallRequested(
                    step=d["step"],
                    call=tool_call_pb(d["call"]),
                    timeout_ms=d["timeout_ms"],
                    executor=mcp_convert.EXECUTOR_TO_PB[d.get("executor", "client")],
                    attempt=d.get("attempt", 0),
                    reconciled=RECONCILE_TO_PB[d.get("reconciled", "")],
                )
            }
        case engine.TOOL_RECONCILE:
            return {
                "tool_reconcile": pb.ToolReconcile(
                    step=d["step"],
                    call=tool_call_pb(d["call"]),
                    attempt=d["attempt"],
                    timeout_ms=d["timeout_ms"],
                )
            }
        case engine.TOOL_RETRY:
            return {"tool_retry": mcp_convert.tool_retry_pb(d)}
        case engine.PROVIDER_RETRY:
            return {"provider_retry": pb.ProviderRetry(**d)}
        case engine.PROVIDER_FALLBACK:
            return {"provider_fallback": pb.ProviderFallback(**d)}
        case engine.TOOL_RESULT:
            return {"tool_result": pb.ToolResult(**d)}
        case engine.STEP_DONE:
            return {"step_done": pb.StepDone(step=d["step"])}
        case engine.APPROVAL_REQUESTED:
            return {"approval_requested": pb.ApprovalRequested(approval=approval_pb(d["approval"]))}
        case engine.APPROVAL_RESOLVED:
            return {"approval_resolved": pb.ApprovalResolved(**d)}
        case engine.BUDGET_EXCEEDED:
            return {
                "budget_exceeded": pb.BudgetExceeded(
                    scope=d["scope"],
                    limit=d["limit"],
                    value=d["value"],
                    used=d["used"],
                    worst_case=d["worst_case"],
                    usage=usage_pb(d["usage"]),
                    path=d["path"],
                )
            }
        case engine.COMPACTION_START:
            return {"compaction_start": pb.CompactionStart(**d)}
        case engine.COMPACTION_DONE:
            usage = d.get("usage")
            fields = {k: v for k, v in d.items() if k != "usage"}
            return {
                "compaction_done": pb.CompactionDone(
                    **fields, usage=usage_pb(usage) if usage is not None else None
                )
            }
        case engine.TEXT_DELTA:
            return {"text_delta": pb.TextDelta(step=d["step"], text=d["text"])}
        case engine.REASONING_DELTA:
            return {"reasoning_delta": pb.ReasoningDelta(step=d["step"], text=d["text"])}
        case engine.RUN_DONE:
            return {
                "run_done": pb.RunDone(
                    finish_reason=FINISH_TO_PB[d["finish_reason"]],
                    status=STATUS_TO_PB[d["status"]],
                    final_text=d["final_text"],
                    step_index=d["step_index"],
                    usage=usage_pb(d["usage"]),
                    approval_id=d["approval_id"],
                    message_count=d["message_count"],
                    output_json=d.get("output_json", ""),
                    output_errors=d.get("output_errors", ()),
                )
            }
    raise ValueError(f"no protobuf payload for event type {e.type!r}")


def event_pb(e: Event) -> pb.Event:
    # A step's five events built from plain dicts (``_message_dict``): twice as fast.
    fill = _FILL.get(e.type)
    return pb.Event(
        session_id=e.session_id,
        run_id=e.run_id,
        seq=e.seq,
        time=_time(e.time),
        type=e.type,
        subagent=_subagent_pb(e.subagent) if e.subagent else None,
        **(fill(e.data) if fill is not None else _payload(e)),
    )


#: What ``Timestamp`` takes (google/protobuf/timestamp.proto: 0001-01-01 to 9999-12-31).
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799


def _time(t: float) -> dict[str, int] | Timestamp:
    """An event's time as :func:`timestamp` makes it (a time out of range raises there)."""
    seconds, nanos = divmod(int(t * 1e9), 1_000_000_000)
    if _MIN_SECONDS <= seconds <= _MAX_SECONDS:
        return {"seconds": seconds, "nanos": nanos}
    return timestamp(t)


def _tool_call_payload(d: dict[str, Any]) -> dict[str, Any]:
    return {
        "tool_call": {
            "step": d["step"],
            "call": _call_dict(d["call"]),
            "timeout_ms": d["timeout_ms"],
            "executor": mcp_convert.EXECUTOR_TO_PB[d.get("executor", "client")],
            "attempt": d.get("attempt", 0),
            "reconciled": RECONCILE_TO_PB[d.get("reconciled", "")],
        }
    }


#: The payloads of a step's events (the ones every step sends), as dicts; the others are
#: built by :func:`_payload`.
_FILL: dict[str, Any] = {
    engine.STEP_START: lambda d: {"step_start": {"step": d["step"]}},
    engine.MODEL_TURN: lambda d: {
        "model_turn": {
            "step": d["step"],
            "message": _message_dict(d["message"]),
            "usage": _usage_dict(d["usage"]),
        }
    },
    engine.TOOL_CALL: _tool_call_payload,
    engine.TOOL_RESULT: lambda d: {"tool_result": d},
    engine.STEP_DONE: lambda d: {"step_done": {"step": d["step"]}},
}


def _subagent_pb(t: SubagentTag) -> pb.SubAgentTag:
    return pb.SubAgentTag(name=t.name, depth=t.depth, path=t.path, task_id=t.task_id)
