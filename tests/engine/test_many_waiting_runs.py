"""Issue 16: thousands of runs waiting at once on one engine (a daemon's), on the memory
driver, with leases: every run waits for a client tool at the same time, the daemon's
lease upkeep renews all of their leases in one store write an interval (none per run),
and then every run finishes. Bounded (a few seconds of work a thousand runs, the memory
it holds is measured and bounded), not timed."""

from __future__ import annotations

import asyncio
import gc
import os

from luoshod.domain import FinishReason, Lease
from luoshod.engine.engine import RunControl, RunRequest
from luoshod.store.kit import Renewal
from luoshod.store.memory import MemoryStore
from tests.support.engine_harness import EngineHarness, Tools, agent, calls, user

RUNS = int(os.environ.get("LUOSHOD_MANY_RUNS", "10000"))
#: The process's RSS growth for one waiting run (its checkpoint and history in the store,
#: its task, its lease, its tool future): the engine's share of the issue's budget of
#: 60 KB a run for the whole daemon (tracemalloc counts ~16 KB of Python heap a run).
RSS_PER_WAITING_RUN_KB = 40


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


class CountingStore(MemoryStore):
    """The memory driver, counting the lease writes the engine asks of it."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []
        self.single_renewals = 0
        self.renewed = asyncio.Event()

    async def _renew_leases(self, leases: list[Lease], ttl: float) -> Renewal:
        self.batches.append(len(leases))
        self.renewed.set()
        return await super()._renew_leases(leases, ttl)

    async def _renew_lease(self, lease: Lease, ttl: float) -> Lease:
        self.single_renewals += 1
        return await super()._renew_lease(lease, ttl)


class Sink:
    def __init__(
        self, port: Tools, asked: list[tuple[Tools, str]], all_asked: asyncio.Event
    ) -> None:
        self.port, self.asked, self.all_asked = port, asked, all_asked
        self.done: dict | None = None

    async def emit(self, event, encoded: bytes | None = None) -> None:
        if event.type == "tool.call":
            self.asked.append((self.port, event.data["call"].id))
            if len(self.asked) == RUNS:
                self.all_asked.set()
        elif event.type == "run.done":
            self.done = event.data


async def test_ten_thousand_runs_wait_at_once_with_one_lease_write_an_interval_and_all_finish() -> (
    None
):
    store = CountingStore()
    await store.open()
    h = EngineHarness(store, lease_ttl_s=30, lease_renew_s=0.5, tool_timeout_s=600)
    spec = agent([calls(("add", {"a": 1})), {"text": "done"}])
    asked: list[tuple[Tools, str]] = []
    all_asked = asyncio.Event()
    sinks: list[Sink] = []

    async def one(k: int) -> None:
        port = Tools()
        sink = Sink(port, asked, all_asked)
        sinks.append(sink)
        await h.engine.run(RunRequest(f"s{k}", [user("go")], spec, None), sink, port, RunControl())

    gc.collect()
    base = rss_kb()
    runs = [asyncio.create_task(one(k)) for k in range(RUNS)]
    await asyncio.wait_for(all_asked.wait(), 600)
    per_run_kb = (rss_kb() - base) / RUNS
    print(f"RSS a waiting run: {per_run_kb:.1f} KB")
    assert h.engine.leases_held() == RUNS
    assert per_run_kb <= RSS_PER_WAITING_RUN_KB

    # Two renewal intervals while every run waits: each is ONE write covering every lease.
    for _ in range(2):
        store.renewed.clear()
        await asyncio.wait_for(store.renewed.wait(), 60)
    assert store.batches[-2:] == [RUNS, RUNS] and store.single_renewals == 0
    listed, _ = await store.list_leases(page_size=RUNS + 1, page_token="", owner="engine-test")
    assert len(listed) == RUNS

    for port, call_id in asked:
        assert port.deliver(call_id, "2")
    await asyncio.wait_for(asyncio.gather(*runs), 600)
    assert all(s.done and s.done["finish_reason"] is FinishReason.STOP for s in sinks)
    assert h.engine.leases_held() == 0
    assert (await store.list_leases(page_size=10, page_token=""))[0] == []
    await store.close()
