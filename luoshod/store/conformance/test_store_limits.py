"""What limits on spend and time need of a store (docs/reference/rules.md R78, R81): the
agent's limits, the usage with its cache and reasoning tokens, and the run's and the
session's stored start and paused times read back as saved, in the checkpoint and in its
history, so a run resumed by any daemon counts from where the last save left it."""

from __future__ import annotations

import copy
from dataclasses import replace

from luoshod.domain import Budget, Checkpoint, FinishReason, Limits, Status, Usage
from luoshod.store import Capability, Store

from .backend import Backend
from .helpers import rich_checkpoint


def limited(session_id: str = "limited", *, version: int = 1) -> Checkpoint:
    cp = rich_checkpoint(session_id, version=version)
    assert cp.agent is not None
    limits = Limits(
        run=Budget(input_tokens=0, cost_usd=0.5, model_calls=12, wall_clock_ms=60_000),
        session=Budget(output_tokens=9_000, total_tokens=50_000, cost_usd=12.25),
        count_paused_time=True,
    )
    cp.agent = replace(cp.agent, limits=limits)
    cp.usage = Usage(1200, 300, 1500, 3, 0.0081, 600, 200, 40)
    cp.total_usage = Usage(5200, 900, 6100, 9, 0.125, 1600, 250, 90)
    cp.status, cp.finish_reason = Status.IN_PROGRESS, FinishReason.BUDGET_EXCEEDED
    cp.run_started_at, cp.run_paused_s = 1_700_000_100.5, 42.25
    cp.session_started_at, cp.session_paused_s = 1_700_000_000.125, 3600.5
    return cp


async def test_r78_limits_usage_and_run_times_round_trip(driver: Store) -> None:
    cp = limited()
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=0)
    loaded = await driver.load("limited")
    assert loaded == expected
    assert loaded is not None and loaded.agent is not None
    assert loaded.agent.limits == expected.agent.limits  # type: ignore[union-attr]


async def test_r81_history_keeps_each_saves_usage_and_times(
    backend: Backend, driver: Store
) -> None:
    backend.require(Capability.HISTORY)
    cp = limited("timed")
    await driver.save(cp, stored_messages=0)
    later = copy.deepcopy(cp)
    later.version = 2
    later.run_paused_s += 10
    later.usage.add(Usage(1, 1, 2, 1, 0.001, 1, 0, 1))
    await driver.save(later, stored_messages=len(cp.messages))
    loaded = await driver.load("timed")
    assert loaded is not None
    assert (loaded.run_paused_s, loaded.usage) == (later.run_paused_s, later.usage)
    entries = await driver.history("timed")
    by_version = {e.checkpoint.version: e.checkpoint for e in entries if e.checkpoint}
    assert by_version[1].usage == cp.usage  # each save as it was
    assert by_version[1].run_paused_s == cp.run_paused_s
