"""Compare two trajectories side by side (docs/reference/rules.md R45), sub-agents' tasks included
(R67): a ``task`` call lists the steps its sub-agent made for it, so two runs whose
sub-agents went different ways diverge at the lead's step that delegated, even when the
tasks' answers are the same."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..domain import TASK_TOOL, Checkpoint, FinishReason, Message, Role, SubTask, Usage


@dataclass(frozen=True, slots=True)
class Call:
    id: str
    name: str
    arguments_json: str
    result_json: str | None
    is_error: bool
    #: A ``task`` call: the task it ran (or continued) and the steps it made for this call.
    task_id: str = ""
    task_steps: tuple[Step, ...] = ()

    def key(self) -> tuple[Any, ...]:
        """Identity without the call id (R45: ids aside); a task call's steps count."""
        return (
            self.name,
            _parsed(self.arguments_json),
            _parsed(self.result_json),
            self.is_error,
            tuple(s.key() for s in self.task_steps),
        )


@dataclass(frozen=True, slots=True)
class Step:
    index: int  # the step's number, from 1
    text: str
    calls: tuple[Call, ...]
    #: The turn's model and usage (R78); not part of the step's identity (``key``).
    model: str = ""
    usage: Usage | None = None

    def key(self) -> tuple[Any, ...]:
        return (self.text, tuple(c.key() for c in self.calls))


@dataclass(frozen=True, slots=True)
class ArgumentDrift:
    step: int
    tool: str
    a: str
    b: str


@dataclass(frozen=True, slots=True)
class Comparison:
    a: list[Step]
    b: list[Step]
    diverged_at: int | None
    tool_order_a: list[str]
    tool_order_b: list[str]
    arguments: list[ArgumentDrift]
    finish_reason_a: FinishReason
    finish_reason_b: FinishReason


def _parsed(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        return text


def trajectory(cp: Checkpoint) -> list[Step]:
    """One step per assistant turn: its text and its tool calls with their results; a
    ``task`` call with its sub-agent's steps for it (:func:`_task_steps`)."""
    return _steps(cp, cp.messages, cp.subtasks, {})


#: The footer of a task's result (R56): its task id.
_FOOTER = re.compile(r"task_id '([^']+)'\]$")


def _steps(
    cp: Checkpoint, messages: list[Message], live: dict[str, SubTask], claimed: dict[str, int]
) -> list[Step]:
    results = {m.tool_call_id: m for m in messages if m.role is Role.TOOL}
    steps: list[Step] = []
    for m in messages:
        if m.role is Role.ASSISTANT:
            calls = []
            for c in m.tool_calls:
                r = results.get(c.id)
                task_id, sub = "", tuple[Step, ...]()
                if c.name == TASK_TOOL.name:
                    task_id, sub = _task_steps(cp, c.id, c.arguments_json, r, live, claimed)
                calls.append(
                    Call(
                        c.id,
                        c.name,
                        c.arguments_json,
                        r.content if r else None,
                        r.is_error if r else False,
                        task_id,
                        sub,
                    )
                )
            steps.append(
                Step(len(steps) + 1, m.content, tuple(calls), m.model, m.usage)
            )  # numbered from 1, as everywhere
    return steps


def _task_steps(
    cp: Checkpoint,
    call_id: str,
    arguments_json: str,
    result: Message | None,
    live: dict[str, SubTask],
    claimed: dict[str, int],
) -> tuple[str, tuple[Step, ...]]:
    """The task a ``task`` call ran and its steps for this call: the unfinished task under
    the call's id, or the finished one its result names (footer, or ``task_id`` of an error
    result). A task continued by several calls (R65) has one stretch per call, each begun
    by the call's prompt as a user turn: the calls take them in order (``claimed``: task
    id → stretches already taken)."""
    state = live.get(call_id)
    if state is None and result is not None:
        task_id = _named_task(result.content)
        state = cp.tasks.get(task_id) if task_id else None
    if state is None:
        return "", ()
    try:
        prompt = json.loads(arguments_json or "{}").get("prompt")
    except (ValueError, AttributeError):
        prompt = None
    stretches = _stretches(state.messages)
    start = claimed.get(state.task_id, 0)
    for n in range(start, len(stretches)):
        if stretches[n][0].content == prompt:
            claimed[state.task_id] = n + 1
            return state.task_id, tuple(_steps(cp, stretches[n], state.children, claimed))
    return state.task_id, ()


def _named_task(content: str) -> str:
    try:
        body = json.loads(content)
    except ValueError:
        return ""
    if isinstance(body, dict):
        return str(body.get("task_id", ""))
    found = _FOOTER.search(body) if isinstance(body, str) else None
    return found.group(1) if found else ""


def _stretches(messages: list[Message]) -> list[list[Message]]:
    """A task's transcript cut before each user turn (each call's prompt)."""
    out: list[list[Message]] = []
    for m in messages:
        if m.role is Role.USER:
            out.append([m])
        elif out:
            out[-1].append(m)
    return out


def compare(a: Checkpoint, b: Checkpoint) -> Comparison:
    ta, tb = trajectory(a), trajectory(b)
    # Steps are numbered from 1, as fork's from_step, the checkpoint's step_index, the CLI and
    # the console count them.
    diverged = next((x.index for x, y in zip(ta, tb) if x.key() != y.key()), None)
    if diverged is None and len(ta) != len(tb):
        diverged = min(len(ta), len(tb)) + 1
    arguments = [
        ArgumentDrift(x.index, cx.name, cx.arguments_json, cy.arguments_json)
        for x, y in zip(ta, tb)
        for cx, cy in zip(x.calls, y.calls)
        if cx.name == cy.name and _parsed(cx.arguments_json) != _parsed(cy.arguments_json)
    ]
    return Comparison(
        ta,
        tb,
        diverged,
        [c.name for s in ta for c in s.calls],
        [c.name for s in tb for c in s.calls],
        arguments,
        a.finish_reason,
        b.finish_reason,
    )
