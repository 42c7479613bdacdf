"""Structured output (R83): the final answer checked against the agent's output schema."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..domain import Message, Role
from .tools import validator_for

#: How the repair turn's message begins; a run's transcript holding one (after the run's
#: start) has had its repair turn, whichever process sent it.
REPAIR_PREFIX = "Your answer is not valid against the required output schema."
#: At most this many validation errors are named (to the model and on run.done).
MAX_ERRORS = 10


@dataclass(frozen=True, slots=True)
class Verdict:
    """``output_json``: the answer as canonical JSON when valid; else ``errors``."""

    output_json: str = ""
    errors: tuple[str, ...] = ()


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def judge(schema_json: str, answer: str) -> Verdict:
    """The answer parsed as JSON and validated against the schema."""
    try:
        value = json.loads(answer)
    except ValueError as e:
        return Verdict(errors=(f"the answer is not JSON: {e}",))
    found = sorted(validator_for(schema_json).iter_errors(value), key=lambda e: list(e.path))
    if found:
        return Verdict(
            errors=tuple(
                f"{'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in found[:MAX_ERRORS]
            )
        )
    return Verdict(output_json=canonical(value))


def repair_message(errors: Sequence[str]) -> Message:
    """The user message of the repair turn: the errors, and what to answer instead."""
    lines = "\n".join(f"- {e}" for e in errors)
    return Message(
        Role.USER,
        f"{REPAIR_PREFIX} Errors:\n{lines}\n"
        "Answer again with only the JSON value, valid against the schema.",
    )


def repaired(run_messages: Sequence[Message]) -> bool:
    """Whether the run these messages belong to has had its repair turn."""
    return any(m.role is Role.USER and m.content.startswith(REPAIR_PREFIX) for m in run_messages)
