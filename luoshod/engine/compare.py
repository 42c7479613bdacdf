"""Compare two trajectories side by side (SEMANTICS.md R45)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..domain import Checkpoint, FinishReason, Role


@dataclass(frozen=True, slots=True)
class Call:
    id: str
    name: str
    arguments_json: str
    result_json: str | None
    is_error: bool

    def key(self) -> tuple[Any, ...]:
        """Identity without the call id (R45: ids aside)."""
        return (self.name, _parsed(self.arguments_json), _parsed(self.result_json), self.is_error)


@dataclass(frozen=True, slots=True)
class Step:
    index: int
    text: str
    calls: tuple[Call, ...]

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
    """One step per assistant turn: its text and its tool calls with their results."""
    results = {m.tool_call_id: m for m in cp.messages if m.role is Role.TOOL}
    steps = []
    for m in cp.messages:
        if m.role is Role.ASSISTANT:
            calls = tuple(
                Call(
                    c.id,
                    c.name,
                    c.arguments_json,
                    results[c.id].content if c.id in results else None,
                    results[c.id].is_error if c.id in results else False,
                )
                for c in m.tool_calls
            )
            steps.append(Step(len(steps), m.content, calls))
    return steps


def compare(a: Checkpoint, b: Checkpoint) -> Comparison:
    ta, tb = trajectory(a), trajectory(b)
    diverged = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x.key() != y.key()), None)
    if diverged is None and len(ta) != len(tb):
        diverged = min(len(ta), len(tb))
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
