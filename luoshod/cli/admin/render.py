"""What the admin commands print: aligned tables and a session's transcript and timeline
for people, plain JSON (proto field names) for scripts. No I/O but ``emit``."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC
from typing import Any

from google.protobuf.message import Message as ProtoMessage
from google.protobuf.timestamp_pb2 import Timestamp

from luosho.v1 import agent_pb2 as pb

#: How much of a message, an argument list or a result a line shows (``--full`` lifts it).
CLIP = 160

#: The statuses by the words of the docs (``--status``), as ``status_label`` says them.
STATUSES = {
    "in-progress": pb.CHECKPOINT_STATUS_IN_PROGRESS,
    "awaiting-approval": pb.CHECKPOINT_STATUS_AWAITING_APPROVAL,
    "finished": pb.CHECKPOINT_STATUS_FINISHED,
    "sleeping": pb.CHECKPOINT_STATUS_SLEEPING,
}


def status_label(value: int) -> str:
    """``in-progress``, ``awaiting-approval``, ``finished``, ``sleeping`` (the words of
    the docs)."""
    return _enum_label(pb.CheckpointStatus, value, "CHECKPOINT_STATUS_")


def finish_label(value: int) -> str:
    """``stop``, ``max-steps``, ``aborted``, ``awaiting-approval``; ``""`` when unset."""
    return _enum_label(pb.FinishReason, value, "FINISH_REASON_")


def _enum_label(enum: Any, value: int, prefix: str) -> str:
    if not value:
        return ""
    try:
        return enum.Name(value).removeprefix(prefix).lower().replace("_", "-")
    except ValueError:
        return str(value)


def timestamp(ts: Timestamp) -> str:
    """UTC to the second, ``2026-05-01 09:30:12Z``; ``-`` when unset."""
    if not ts.seconds and not ts.nanos:
        return "-"
    return ts.ToDatetime(tzinfo=UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def clip(text: str, width: int | None = CLIP) -> str:
    """One line of at most ``width`` characters (``None``: no limit)."""
    line = " ".join(text.split()) if "\n" in text else text
    if width is None or len(line) <= width:
        return line
    return line[: width - 1] + "…"


def table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Columns padded to their widest cell; the last column is not padded."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        padded = [c.ljust(w) for c, w in zip(row[:-1], widths, strict=False)] + [row[-1]]
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)


def as_dict(message: ProtoMessage) -> dict[str, Any]:
    """A proto as JSON-ready data: proto field names, enums by name, defaults kept."""
    from google.protobuf import json_format  # for --json only: not on every start-up

    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def one_line(message: ProtoMessage) -> str:
    """A proto as JSON on one line (an event's payload in a stream's log)."""
    from google.protobuf import json_format  # not on every start-up

    return json_format.MessageToJson(message, indent=None)


def emit(data: object) -> None:
    """``--json`` output: one JSON document on stdout."""
    import json  # not at the top: the CLI's start-up does without it

    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


# -- rows ------------------------------------------------------------------------------------


def session_rows(sessions: Iterable[pb.SessionSummary]) -> str:
    sessions = list(sessions)
    # R86: a column of when each sleeping session wakes, when one of them sleeps.
    wakes = any(s.HasField("wake_at") for s in sessions)
    return table(
        (
            "SESSION",
            "STATUS",
            "FINISH",
            "STEP",
            "MSGS",
            "TOKENS",
            "COST",
            "UPDATED (UTC)",
            "APPROVAL",
            *(("WAKES (UTC)",) if wakes else ()),
        ),
        (
            (
                s.session_id,
                status_label(s.status),
                finish_label(s.finish_reason) or "-",
                s.step_index,
                s.message_count,
                s.total_usage.total_tokens,
                cost(s.total_usage),
                timestamp(s.updated_at),
                s.approval_id or "-",
                *((timestamp(s.wake_at),) if wakes else ()),
            )
            for s in sessions
        ),
    )


def history_rows(entries: Iterable[pb.HistoryEntry]) -> str:
    return table(
        ("VERSION", "STEP", "SAVED (UTC)", "STATUS", "MSGS"),
        (
            (
                e.version,
                e.step,
                timestamp(e.saved_at),
                status_label(e.status) + (" (compaction)" if e.compaction else ""),
                e.message_count,
            )
            for e in entries
        ),
    )


def approval_rows(approvals: Iterable[pb.Approval], width: int | None = 60) -> str:
    return table(
        (
            "APPROVAL",
            "SESSION",
            "STEP",
            "KIND",
            "TOOL",
            "ARGUMENTS / QUESTION",
            "CREATED (UTC)",
            "EXPIRES (UTC)",
        ),
        (
            (
                a.approval_id,
                a.session_id,
                a.step,
                "question" if a.kind == pb.APPROVAL_KIND_QUESTION else "approval",
                f"{a.tool_call.name} ({a.tool_call.id})" + _in_subagent(a),
                # R88: a question shows the text asked, an approval the call's arguments.
                clip(
                    a.question
                    if a.kind == pb.APPROVAL_KIND_QUESTION
                    else a.tool_call.arguments_json or "{}",
                    width,
                ),
                timestamp(a.created_at),
                timestamp(a.expires_at),
            )
            for a in approvals
        ),
    )


def _in_subagent(a: pb.Approval) -> str:
    """`` in researcher/helper`` for a sub-agent's call (R60), ``""`` for the lead's."""
    return f" in {'/'.join(a.subagent_path)}" if a.subagent_path else ""


# -- one session -------------------------------------------------------------------------------


def cost(u: pb.Usage) -> str:
    """``$0.0125``, or ``-`` when the usage has no known cost."""
    return f"${u.cost_usd:.4f}" if u.cost_usd else "-"


def _parts(u: pb.Usage) -> str:
    """The counts of the cache and of reasoning, where the provider reported them."""
    parts = [
        f"{n} {what}"
        for n, what in (
            (u.cached_input_tokens, "cached"),
            (u.cache_write_tokens, "cache write"),
            (u.reasoning_tokens, "reasoning"),
        )
        if n
    ]
    return f"; {', '.join(parts)}" if parts else ""


def usage_line(u: pb.Usage) -> str:
    text = (
        f"{u.total_tokens} tokens ({u.prompt_tokens} prompt + {u.completion_tokens} completion"
        f"{_parts(u)}), {u.model_calls} model call{'s' if u.model_calls != 1 else ''}"
    )
    return text + (f", ${u.cost_usd:.4f}" if u.cost_usd else "")


def turn_line(m: pb.Message) -> str:
    """An assistant turn's model and usage (R78), or "" for a turn saved without them."""
    if not m.model and not m.HasField("usage"):
        return ""
    u = m.usage
    text = f"{m.model or '?'}: {u.prompt_tokens} in + {u.completion_tokens} out{_parts(u)}"
    return text + (f", ${u.cost_usd:.4f}" if u.cost_usd else "")


def message_lines(n: int, m: pb.Message, width: int | None) -> list[str]:
    """One transcript message: ``#n role  text``, then one line per tool call."""
    role = _enum_label(pb.Role, m.role, "ROLE_") or "?"
    head = f"#{n:<3} {role:<10}"
    if m.role == pb.ROLE_TOOL:
        mark = "error ← " if m.is_error else "← "
        return [f"{head} {m.tool_name or '?'} [{m.tool_call_id}] {mark}{clip(m.content, width)}"]
    lines = [f"{head} {clip(m.content, width)}".rstrip()] if m.content or not m.tool_calls else []
    for k, c in enumerate(m.tool_calls):
        prefix = head if k == 0 and not lines else " " * len(head)
        lines.append(f"{prefix} → {c.name} [{c.id}] {clip(c.arguments_json or '{}', width)}")
    if turn := turn_line(m):
        lines.append(f"{' ' * len(head)} ({turn})")
    return lines


def timeline_lines(entries: Sequence[pb.HistoryEntry], messages: Sequence[pb.Message]) -> list[str]:
    """The history oldest first, each save with what it added to the transcript."""
    rows = []
    before = 0
    for e in sorted(entries, key=lambda e: e.version):
        added = messages[before : e.message_count] if e.message_count >= before else []
        what = ", ".join(_gist(m) for m in added) or "-"
        rows.append(
            (
                f"v{e.version}",
                e.step,
                timestamp(e.saved_at),
                status_label(e.status),
                f"+{max(e.message_count - before, 0)}",
                clip(what),
            )
        )
        before = e.message_count
    return table(("SAVE", "STEP", "SAVED (UTC)", "STATUS", "MSGS", "ADDED"), rows).splitlines()


def _gist(m: pb.Message) -> str:
    role = _enum_label(pb.Role, m.role, "ROLE_")
    if m.role == pb.ROLE_TOOL:
        return f"{'error' if m.is_error else 'result'} of {m.tool_name or m.tool_call_id}"
    if m.tool_calls:
        return f"{role} calls " + " ".join(c.name for c in m.tool_calls)
    return f"{role} {clip(m.content, 40)!r}" if m.content else role


#: ``structured_answer``'s value of a session without a structured answer.
NO_ANSWER = object()


def structured_answer(cp: pb.Checkpoint) -> Any:
    """The structured answer of a session whose agent had an output schema (R83) and whose
    run ended with it valid (finish reason stop): the final assistant message, parsed (the
    run.done event's ``output_json`` is the same value); ``NO_ANSWER`` otherwise."""
    import json  # not at the top: the CLI's start-up does without it

    if not cp.agent.output_schema_json or cp.finish_reason != pb.FINISH_REASON_STOP:
        return NO_ANSWER
    last = cp.messages[-1] if cp.messages else None
    if last is None or last.role != pb.ROLE_ASSISTANT or last.tool_calls:
        return NO_ANSWER
    try:
        return json.loads(last.content)
    except ValueError:
        return NO_ANSWER


def answer_lines(cp: pb.Checkpoint) -> list[str]:
    """The structured answer pretty-printed under a heading, or nothing without one."""
    import json  # not at the top: the CLI's start-up does without it

    value = structured_answer(cp)
    if value is NO_ANSWER:
        return []
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    return ["", "Structured answer (valid against the agent's output schema)"] + [
        "  " + line for line in text.splitlines()
    ]


def session_text(
    cp: pb.Checkpoint,
    history: Sequence[pb.HistoryEntry],
    width: int | None = CLIP,
    by_model: Mapping[str, pb.Usage] | None = None,
) -> str:
    status = status_label(cp.status)
    if cp.finish_reason:
        status += f" ({finish_label(cp.finish_reason)})"
    lines = [
        f"session   {cp.session_id}",
        f"status    {status}",
        f"step      {cp.step_index}   version {cp.version}   updated {timestamp(cp.updated_at)}",
        f"model     {cp.agent.model or '-'}"
        + (f"   tools: {', '.join(t.name for t in cp.agent.tools)}" if cp.agent.tools else ""),
        f"usage     this run: {usage_line(cp.usage)}",
        f"          session:  {usage_line(cp.total_usage)}",
    ]
    if cp.delegated_usage.model_calls:
        lines.append(f"          delegated: {usage_line(cp.delegated_usage)}")
    for model, u in sorted((by_model or {}).items(), key=lambda kv: (-kv[1].cost_usd, kv[0])):
        lines.append(f"          by model {model or '?'}: {usage_line(u)}")
    if cp.HasField("wake_at"):  # R86
        lines.append(
            f"wakes     {timestamp(cp.wake_at)} (now with: luoshod sessions resume "
            f"{cp.session_id} --wake)"
        )
    if cp.approval_id:
        lines.append(
            f"approval  {cp.approval_id} (decide with: luoshod approvals approve|reject "
            f"{cp.approval_id})"
        )
    if cp.business_state_json:
        lines.append(f"state     {clip(cp.business_state_json, width)}")
    lines += answer_lines(cp)
    if cp.HasField("compaction"):  # R85: what the model is sent of the transcript below
        c = cp.compaction
        lines.append(
            f"compacted {c.count} time(s): the model is sent the tool results before message "
            f"{c.pruned_before} as a marker"
            + (f", messages before {c.summarized_before} as a summary" if c.summary else "")
        )
    lines += ["", f"Transcript ({len(cp.messages)} messages)"]
    for n, m in enumerate(cp.messages):
        lines += ["  " + line for line in message_lines(n, m, width)]
    if cp.subagents:  # R59: the unfinished sub-agents, as a tree
        lines += ["", f"Sub-agents at work ({len(cp.subagents)})"]
        for st in cp.subagents:
            indent = "  " * st.depth
            lines.append(
                f"{indent}{st.name} {st.task_id} [{st.call_id}]  step {st.step_index}, "
                f"{len(st.messages)} messages, {usage_line(st.usage)}"
            )
            lines += [
                indent + "  " + line
                for n, m in enumerate(st.messages)
                for line in message_lines(n, m, width)
            ]
    if cp.tasks:  # R65: the finished tasks, kept with the session, by path
        lines += ["", f"Tasks done ({len(cp.tasks)}; continue one with task_id)"]
        for t in sorted(cp.tasks, key=lambda t: (list(t.path), t.task_id)):
            indent = "  " * t.depth
            lines.append(
                f"{indent}{t.name} {t.task_id} ({'/'.join(t.path)})  {t.step_index} step(s), "
                f"{len(t.messages)} messages"
            )
            lines += [
                indent + "  " + line
                for n, m in enumerate(t.messages)
                for line in message_lines(n, m, width)
            ]
    waiting = [r for r in cp.tool_calls if not r.HasField("result_json")]
    if waiting:
        lines += ["", "Tool calls without a result (run again on resume)"]
        lines += [
            f"  step {r.step}  {r.call.name} [{r.call.id}] "
            f"{clip(r.call.arguments_json or '{}', width)}"
            for r in waiting
        ]
    saves = f"{len(history)} save{'s' if len(history) != 1 else ''}"
    lines += ["", f"Timeline ({saves} kept, oldest first)"]
    lines += (
        ["  " + line for line in timeline_lines(history, cp.messages)]
        if history
        else ["  (no history kept)"]
    )
    return "\n".join(lines)
