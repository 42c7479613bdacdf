#!/usr/bin/env python3
"""Runs through repeated PostgreSQL failovers (R90; not a test, the longer run of it).

A Patroni cluster on loopback (tests/support/patroni_cluster.py: etcd, a primary and a
synchronous standby), two daemons on its multi-host URL, and sessions running all along:
each client runs a session of ``--turns`` tool-calling turns, then the next one. Every
``--every`` seconds the primary's machine dies (``kill -9`` of its Patroni, postmaster and
backends); the standby is promoted, the dead node is started again and rejoins as the new
synchronous standby, and the next failover comes. At the end every session is read back:

- every run finished (none failed: the daemons went on through each failover by themselves);
- every tool result a client was told ``ACCEPTED`` is in its session's transcript exactly
  once, every call has one result and no run made a turn twice (no save lost or doubled,
  never two writers);

and for each failover, the takeover: the seconds from the kill to the first event of any
run after it (those of the first half second answer commits made before the kill).
Exits 1 on any violation.

    .venv/bin/python bench/failover.py                       # 5 failovers, 8 clients
    .venv/bin/python bench/failover.py --failovers 20 --clients 16
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

# Patroni is started again from this process while its gRPC threads run: gRPC's fork
# handlers have nothing to do for a child that execs at once. (Set before grpc is imported.)
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from luosho.v1 import agent_pb2 as pb  # noqa: E402
from tests.support.daemon_process import DaemonProcess  # noqa: E402
from tests.support.harness import Harness, agent, calls  # noqa: E402
from tests.support.patroni_cluster import PatroniCluster  # noqa: E402

#: Seconds after a kill whose events are not progress: they answer commits made before it.
IN_FLIGHT_S = 0.5


async def bench(opts: argparse.Namespace) -> int:
    spec = agent([calls(("add", {"a": i})) for i in range(opts.turns)] + [{"text": "done"}])
    cluster = await asyncio.to_thread(PatroniCluster().start)
    daemons = [DaemonProcess("--store", cluster.url).start() for _ in range(2)]
    clients = [Harness(d.address) for d in daemons]
    accepted: dict[str, list[str]] = {}
    failed: list[str] = []
    events: list[float] = []  # when each event reached its client
    stop = asyncio.Event()

    async def answer(h: Harness, sid: str, call: pb.ToolCall) -> None:
        await asyncio.sleep(opts.tool_s)
        result = json.dumps(json.loads(call.arguments_json)["a"])
        deadline = time.monotonic() + 60
        while True:  # a client retries a submit that failed (R54)
            try:
                outcome = await h.submit(sid, call.id, result)
                break
            except Exception:  # noqa: BLE001 - any failure: try again, bounded
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)
        if outcome == pb.SUBMIT_OUTCOME_ACCEPTED:
            accepted[sid].append(call.id)

    async def client(k: int) -> None:
        h, n = clients[k % 2], 0
        while not stop.is_set():
            sid, n = f"c{k}-{n}", n + 1
            accepted[sid] = []
            tasks: set[asyncio.Task[None]] = set()

            def seen(e: pb.Event, h: Harness = h, sid: str = sid) -> None:
                events.append(time.monotonic())
                if e.type == "tool.call":
                    t = asyncio.create_task(answer(h, sid, e.tool_call.call))
                    tasks.add(t)
                    t.add_done_callback(tasks.discard)

            log = await h.run(sid, "go", spec, {}, on_event=seen)
            await asyncio.gather(*tasks)
            if log.error is not None or log.done is None or log.done.final_text != "done":
                failed.append(f"{sid}: {log.error or log.done}")

    takeovers: list[float] = []
    runners = [asyncio.create_task(client(k)) for k in range(opts.clients)]
    try:
        for i in range(opts.failovers):
            await asyncio.sleep(opts.every)
            old = await asyncio.to_thread(cluster.kill_leader)
            killed = time.monotonic()
            # Events of the first half second answer commits made before the kill.
            while not any(t > killed + IN_FLIGHT_S for t in events):
                if time.monotonic() - killed > 120:
                    raise SystemExit(f"failover {i + 1}: no run moved for 120 s")
                await asyncio.sleep(0.05)
            takeovers.append(min(t for t in events if t > killed + IN_FLIGHT_S) - killed)
            new = await asyncio.to_thread(cluster.wait_for, "leader")
            print(
                f"failover {i + 1}: {old.name} killed, {new['leader'].name} promoted, runs "
                f"moving again after {takeovers[-1]:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            await asyncio.to_thread(cluster.revive, old)
            await asyncio.to_thread(cluster.wait_for, "leader", "sync_standby", timeout=120)
        stop.set()
        await asyncio.wait_for(asyncio.gather(*runners), 120)

        lost = doubled = 0
        for sid, ids in accepted.items():
            cp = await clients[0].get(sid)
            results = Counter(m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL)
            lost += sum(1 for c in ids if results[c] == 0)
            doubled += sum(1 for c in results if results[c] > 1)
            if cp.status == pb.CHECKPOINT_STATUS_FINISHED and sum(results.values()) != opts.turns:
                doubled += 1
        report: dict[str, Any] = {
            "failovers": len(takeovers),
            "takeover_s": {
                "min": round(min(takeovers), 1),
                "median": round(statistics.median(takeovers), 1),
                "max": round(max(takeovers), 1),
            },
            "runs": len(accepted),
            "results_accepted": sum(len(v) for v in accepted.values()),
            "runs_failed": len(failed),
            "results_lost": lost,
            "results_doubled_or_turns_redone": doubled,
        }
        print(json.dumps(report, indent=2))
        for f in failed[:5]:
            print("failed:", f, file=sys.stderr)
        return 1 if failed or lost or doubled else 0
    finally:
        stop.set()
        for t in runners:
            t.cancel()
        for h in clients:
            await h.close()
        for d in daemons:
            d.stop()
        cluster.remove()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--failovers", type=int, default=5, help="primaries killed (default 5)")
    p.add_argument("--every", type=float, default=8.0, help="seconds between failovers")
    p.add_argument("--clients", type=int, default=8, help="sessions running at once")
    p.add_argument("--turns", type=int, default=9, help="tool-calling turns a run makes")
    p.add_argument("--tool-s", type=float, default=0.1, help="seconds a tool takes")
    return asyncio.run(bench(p.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
