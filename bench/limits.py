#!/usr/bin/env python3
"""The cost of the limits' checks on a step (R79–R81), side by side with limits off (not a
test; target: at most 1.05x).

One engine, in this process, on a store (the in-memory driver by default; ``--store URL``
for a durable one), with the scripted provider and every client tool answered at once
by the event sink: nothing but the engine's own work per step. Two kinds of sessions of
STEPS tool steps each (and a final text) run in alternating rounds:

  * off     the agent has no limits: the run builds no checks at all;
  * on      the agent has every cap of both budgets set (tokens, cost at a price, model
            calls, wall-clock), high enough never to trip, so every model call of the run
            goes through the whole check (input estimate, worst case, each cap of each
            budget, the deadline, the reservation and its release).

The figure is this process's CPU time (user + system) per model step, the two kinds
taking turns session by session; each round gives the ratio on/off, the result is the
median of the rounds. The exit status is 1 when the
target is not met.

    .venv/bin/python bench/limits.py              # 15 rounds of 20 sessions a kind
    .venv/bin/python bench/limits.py --quick      # 3 rounds of 5
    .venv/bin/python bench/limits.py --store sqlite:///tmp/limits.db
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from luoshod.domain import AgentSpec, Budget, Limits, Message, Role, ToolSpec  # noqa: E402
from luoshod.engine import Engine, Event, RunControl, RunRequest, ToolOutcome  # noqa: E402
from luoshod.providers import ProviderRegistry, ScriptedProvider  # noqa: E402
from luoshod.store import store_from_url  # noqa: E402

STEPS = 20
TARGET = 1.05
KINDS = ("off", "on")
PRICE = {"prompt_per_mtok": 3.0, "completion_per_mtok": 15.0}
BIG = 10**12


def spec(kind: str) -> AgentSpec:
    script = [
        {
            "tool_calls": [{"name": "work", "arguments": {"i": k}}],
            "usage": {"prompt_tokens": 500 + 40 * k, "completion_tokens": 20},
        }
        for k in range(STEPS)
    ] + [{"text": "done"}]
    limits = None
    if kind == "on":
        every = Budget(BIG, BIG, BIG, 1e9, BIG, BIG)
        limits = Limits(run=every, session=every)
    return AgentSpec(
        model="scripted:bench",
        instructions="You work step by step.",
        tools=(ToolSpec("work", "does one step", '{"type": "object"}'),),
        max_steps=STEPS + 5,
        model_settings_json=json.dumps({"script": script, "price": PRICE, "max_tokens": 256}),
        limits=limits,
    )


class Port:
    """Tool results arrive here; the sink answers each call as soon as it is handed out."""

    def __init__(self) -> None:
        self.waiting: dict[str, asyncio.Future[ToolOutcome]] = {}

    def expect(self, call_id: str) -> asyncio.Future[ToolOutcome]:
        fut: asyncio.Future[ToolOutcome] = asyncio.get_running_loop().create_future()
        self.waiting[call_id] = fut
        return fut

    def forget(self, call_id: str) -> None:
        self.waiting.pop(call_id, None)


class Sink:
    def __init__(self, port: Port) -> None:
        self.port = port
        self.done: dict[str, object] = {}

    async def emit(self, event: Event, encoded: bytes | None = None) -> None:
        if event.type == "tool.call":
            fut = self.port.waiting.get(event.data["call"].id)
            if fut is not None and not fut.done():
                fut.set_result(ToolOutcome("1"))
        elif event.type == "run.done":
            self.done = event.data


async def session(engine: Engine, agent: AgentSpec) -> str:
    """One session run to its end; its id."""
    port = Port()
    sink = Sink(port)
    req = RunRequest(f"s-{uuid.uuid4().hex}", [Message(Role.USER, "go")], agent)
    await engine.run(req, sink, port, RunControl())
    reason = sink.done.get("finish_reason")
    assert reason == "stop", f"a bench session ended {reason!r}"
    return req.session_id


async def measure(engine: Engine, sessions: int, flip: bool) -> dict[str, float]:
    """CPU seconds per model step of ``sessions`` sessions of each kind, the kinds taking
    turns session by session (so a burst of load elsewhere falls on both alike)."""
    agents = {kind: spec(kind) for kind in KINDS}
    spent = dict.fromkeys(KINDS, 0.0)
    for n in range(sessions):
        order = KINDS if (n % 2 == 0) != flip else tuple(reversed(KINDS))
        for kind in order:
            start = time.process_time()
            sid = await session(engine, agents[kind])
            spent[kind] += time.process_time() - start
            # Untimed: the store keeps no finished session, so the heap (and the garbage
            # collector's work) stays the same size the whole run, as a daemon's does.
            await engine.store.delete(sid)
    return {kind: spent[kind] / (sessions * (STEPS + 1)) for kind in KINDS}


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="3 rounds of 5 sessions")
    parser.add_argument("--store", default="memory://")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.sessions = 3, 5
    store = store_from_url(args.store)
    await store.open()
    engine = Engine(store, ProviderRegistry([ScriptedProvider()]))
    await measure(engine, 2, False)  # warm-up: imports, caches, the store's first pages
    ratios: list[float] = []
    per_kind: dict[str, list[float]] = {k: [] for k in KINDS}
    for n in range(args.rounds):
        got = await measure(engine, args.sessions, n % 2 == 1)
        for kind in KINDS:
            per_kind[kind].append(got[kind])
        ratios.append(got["on"] / got["off"])
        print(
            f"round {n + 1}: off {got['off'] * 1e6:7.1f} µs/step   "
            f"on {got['on'] * 1e6:7.1f} µs/step   on/off {ratios[-1]:.3f}",
            flush=True,
        )
    off, on = statistics.median(per_kind["off"]), statistics.median(per_kind["on"])
    ratio = statistics.median(ratios)
    print(
        f"\nstore {args.store}, {STEPS} tool steps a session, {args.sessions} sessions a kind "
        f"a round, {args.rounds} rounds (median)"
    )
    print(f"limits off: {off * 1e6:.1f} µs CPU a step")
    print(f"limits on:  {on * 1e6:.1f} µs CPU a step")
    print(f"on/off:     {ratio:.3f}x (target <= {TARGET}x)")
    await store.close()
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
