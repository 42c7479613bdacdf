"""Limits on spend and time (docs/reference/rules.md R78–R81): the check before each model
call, and the reservations that keep parallel sub-agents inside their ancestors' budgets.

Before a model call the run asks :meth:`Budgets.admit` with the agent levels the call
counts toward, outermost first (the lead, then each sub-agent down to the caller): for
each level and each of its budgets (``run``, ``session``) every cap must hold against the
usage so far, plus what parallel calls have reserved, plus this call's worst case
(:func:`worst_case`: its input estimate and its ``max_tokens``). A call that could cross a
cap is refused with a :class:`Trip` naming it. An admitted call reserves its worst case
at every level until :meth:`Budgets.release`, which the caller calls when the call returns
(or fails), in the same synchronous stretch that adds the call's real usage: between the
two no other task runs, so the reserved and the counted never leave a gap.

Reservations live in the run's memory only: a crash loses them with the calls they
covered, and the resumed run starts with none.

Time (R81) counts from the start times the checkpoint stores (``run_started_at``,
``session_started_at``), read with the engine's one clock, less the time paused on
approvals unless ``Limits.count_paused_time``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any

from ..config import Price
from ..domain import USAGE_CAPS, AgentSpec, Checkpoint, Limits, Message, Usage

#: The output a call may write when its model settings give no ``max_tokens`` (nor
#: ``max_completion_tokens``, ``max_output_tokens``): its worst case's output tokens.
DEFAULT_MAX_OUTPUT_TOKENS = 4096
#: A call's input is estimated as its characters over this (and a token more).
CHARS_PER_TOKEN = 4
_OUTPUT_KEYS = ("max_tokens", "max_completion_tokens", "max_output_tokens")
#: The budgets of an agent's limits: over one run, over the session's life.
SCOPES = ("run", "session")
#: Tolerance of the cost comparison (sums of floats).
_EPSILON = 1e-9


def max_output_tokens(settings: dict[str, Any]) -> int:
    """The most output tokens a call with these model settings may write."""
    for key in _OUTPUT_KEYS:
        v = settings.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return DEFAULT_MAX_OUTPUT_TOKENS


def spec_chars(spec: AgentSpec) -> int:
    """The characters of what a request carries besides the transcript: the tools."""
    return sum(len(t.name) + len(t.description) + len(t.input_schema_json) for t in spec.tools)


class InputEstimate:
    """A cheap running estimate of a transcript's tokens (characters / 4): the messages
    only grow, so each call counts only the new ones."""

    __slots__ = ("chars", "counted")

    def __init__(self, fixed_chars: int = 0) -> None:
        self.chars, self.counted = fixed_chars, 0

    def tokens(self, messages: Sequence[Message]) -> int:
        for m in messages[self.counted :]:
            self.chars += len(m.content) + 4
            for c in m.tool_calls:
                self.chars += len(c.name) + len(c.arguments_json) + len(c.id)
        self.counted = len(messages)
        return self.chars // CHARS_PER_TOKEN + 1


#: A call's worst case as the usage caps count it, in ``USAGE_CAPS`` order: input,
#: output and total tokens, cost, model calls.
Worst = tuple[int, int, int, float, int]


def worst_case(input_tokens: int, output_tokens: int, price: Price | None) -> Worst:
    """A call's worst case: all of ``max_tokens`` written; its cost at ``price`` (0
    without one: the model's provider reports each call's cost afterwards)."""
    cost = 0.0
    if price is not None:  # no cache tokens: what Price.cost gives, without its cases
        cost = (
            input_tokens * price.prompt_per_mtok + output_tokens * price.completion_per_mtok
        ) / 1e6
    return (input_tokens, output_tokens, input_tokens + output_tokens, cost, 1)


@dataclass(frozen=True, slots=True)
class Trip:
    """A limit that a model call could cross (the ``budget.exceeded`` event's data)."""

    scope: str  # "run" | "session" | "ancestor"
    limit: str  # the Budget field
    value: float
    used: float
    worst_case: float
    usage: Usage
    #: For scope "ancestor": the agent whose budget it was (sub-agent names, outermost
    #: first; () the lead).
    path: tuple[str, ...] = ()
    #: Which level's budget it was (the key of :class:`Level`), to find who stops.
    key: int = 0

    @property
    def deadline(self) -> bool:
        return self.limit == "wall_clock_ms"

    def crossing(self) -> str:
        """The limit, named: ``the run limit cost_usd=0.5``; a time limit with the time
        elapsed, in whole milliseconds (``... wall_clock_ms=60000 has passed (61234 ms
        elapsed)``)."""
        whose = f" of {'/'.join(self.path) or 'the lead agent'}" if self.scope == "ancestor" else ""
        if self.deadline:
            return (
                f"the {self.scope} limit{whose} wall_clock_ms={self.value:.0f} has passed "
                f"({self.used:.0f} ms elapsed)"
            )
        return f"the {self.scope} limit{whose} {self.limit}={self.value:g}"

    def describe(self) -> str:
        if self.deadline:
            return f"{self.crossing()}: no further model call is made"
        return (
            f"{self.crossing()} could be crossed by the next model call (used {self.used:g}, "
            f"the call's worst case {self.worst_case:g}): it was not made"
        )

    def event_data(self) -> dict[str, object]:
        return {
            "scope": self.scope,
            "limit": self.limit,
            "value": float(self.value),
            "used": float(self.used),
            "worst_case": float(self.worst_case),
            "usage": self.usage.copy(),
            "path": self.path,
        }


#: What the usage caps of a Budget count of a Usage, in ``USAGE_CAPS`` order.
_COUNTS = attrgetter(
    "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "model_calls"
)
_NONE = (0, 0, 0, 0.0, 0)


@dataclass(frozen=True, slots=True)
class Level:
    """One agent a model call counts toward: its limits, the usage its run and session
    budgets count (live objects of the checkpoint), and its path of sub-agent names.
    Build it with :func:`level`, which lays out its caps once for the checks."""

    limits: Limits | None
    run: Usage
    session: Usage
    path: tuple[str, ...]
    key: int
    #: (scope, cap, value, the cap's index in ``USAGE_CAPS``) of each usage cap set.
    caps: tuple[tuple[str, str, float, int], ...] = ()
    #: (scope, wall_clock_ms) of each time cap set.
    clocks: tuple[tuple[str, int], ...] = ()
    #: A sub-agent's: its own sub-agents' usage, counted with ``run`` and ``session``.
    delegated: Usage | None = None

    def used(self, scope: str) -> Usage:
        """What the ``scope`` budget counts, as one usage."""
        u = (self.run if scope == "run" else self.session).copy()
        if self.delegated is not None:
            u.add(self.delegated)
        return u

    def within(self, scopes: Collection[str]) -> Level:
        """This level with only the caps and time limits of ``scopes`` (``run``,
        ``session``): a call that counts toward the session's usage only is checked
        against the session's budget only."""
        return replace(
            self,
            caps=tuple(c for c in self.caps if c[0] in scopes),
            clocks=tuple(c for c in self.clocks if c[0] in scopes),
        )


def level(
    limits: Limits | None,
    run: Usage,
    session: Usage,
    path: tuple[str, ...],
    key: int,
    delegated: Usage | None = None,
) -> Level:
    caps: list[tuple[str, str, float, int]] = []
    clocks: list[tuple[str, int]] = []
    if limits is not None:
        for scope, budget in limits.scopes():
            for i, cap in enumerate(USAGE_CAPS):
                if (value := getattr(budget, cap)) is not None:
                    caps.append((scope, cap, value, i))
            if budget.wall_clock_ms is not None:
                clocks.append((scope, budget.wall_clock_ms))
    return Level(limits, run, session, path, key, tuple(caps), tuple(clocks), delegated)


class Budgets:
    """One run's checks and reservations (in memory only)."""

    def __init__(self, cp: Checkpoint, clock: Callable[[], float]) -> None:
        self.cp, self.clock = cp, clock
        #: What the calls in flight reserved at each level, in ``USAGE_CAPS`` order.
        self.reserved: dict[int, list[float]] = {}

    def elapsed_ms(self, scope: str, limits: Limits, now: float | None = None) -> float:
        cp = self.cp
        if scope == "session":
            start, paused = cp.session_started_at, cp.session_paused_s
        else:
            start, paused = cp.run_started_at, cp.run_paused_s
        if not start:
            return 0.0
        now = self.clock() if now is None else now
        spent = now - start - (0.0 if limits.count_paused_time else paused)
        return max(0.0, spent * 1000)

    def deadline(self, levels: Sequence[Level]) -> Trip | None:
        """The first wall-clock limit of ``levels`` that has passed (R81), or ``None``."""
        last, now = len(levels) - 1, 0.0
        for n, lv in enumerate(levels):
            if not lv.clocks or lv.limits is None:
                continue
            for scope, value in lv.clocks:
                now = now or self.clock()
                # A sub-agent's time counts from its lead's run's start.
                elapsed = self.elapsed_ms(scope if n == 0 else "run", lv.limits, now)
                if elapsed >= value:
                    return Trip(
                        "ancestor" if n < last else scope,
                        "wall_clock_ms",
                        value,
                        math.floor(elapsed),
                        0,
                        lv.used(scope),
                        lv.path,
                        lv.key,
                    )
        return None

    def admit(self, levels: Sequence[Level], worst: Worst) -> Trip | None:
        """Check a call whose worst case is ``worst`` against every limit of ``levels``
        (outermost first, the caller last); reserve it at each level when it may be
        made (then :meth:`release` it), else return the limit it could cross."""
        if (trip := self.deadline(levels)) is not None:
            return trip
        last = len(levels) - 1
        for n, lv in enumerate(levels):
            if not lv.caps:
                continue
            held: Sequence[float] = self.reserved.get(lv.key) or _NONE
            run, session = _COUNTS(lv.run), _COUNTS(lv.session)
            if lv.delegated is not None:  # a sub-agent's: its own and its sub-agents'
                below = _COUNTS(lv.delegated)
                run = tuple(a + b for a, b in zip(run, below))
                session = tuple(a + b for a, b in zip(session, below))
            for scope, cap, value, i in lv.caps:
                used = run[i] if scope == "run" else session[i]
                have, call = used + held[i], worst[i]
                # A worst case of unknown cost (0): no call once the cap is reached.
                if have + call > value + _EPSILON or (call == 0 and have >= value):
                    return Trip(
                        "ancestor" if n < last else scope,
                        cap,
                        value,
                        used,
                        call,
                        lv.used(scope),
                        lv.path,
                        lv.key,
                    )
        if last:  # the lead's own calls never run beside another: nothing to reserve
            for lv in levels:
                if lv.caps:
                    held = self.reserved.setdefault(lv.key, [0, 0, 0, 0.0, 0])
                    for i, v in enumerate(worst):
                        held[i] += v
        return None

    def release(self, levels: Sequence[Level], worst: Worst) -> None:
        if len(levels) > 1:
            for lv in levels:
                if lv.caps and (held := self.reserved.get(lv.key)) is not None:
                    for i, v in enumerate(worst):
                        held[i] -= v


def any_limits(spec: AgentSpec) -> bool:
    """Whether the agent or any of its sub-agents has limits."""
    return spec.limits is not None or any(any_limits(s.agent) for s in spec.subagents)


__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "Budgets",
    "InputEstimate",
    "Level",
    "SCOPES",
    "Trip",
    "Worst",
    "level",
    "any_limits",
    "max_output_tokens",
    "spec_chars",
    "worst_case",
]
