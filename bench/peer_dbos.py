#!/usr/bin/env python3
"""Peer benchmark: luoshod beside DBOS Transact on the same agent workload (not a test).

The workload, on both: a session of 20 model turns each asking for one tool call, the
tool's result, then a final answer (21 model turns, the unit "steps" counts), with 1 and
with 64 sessions at once; every step durable before the next starts. Both run on SQLite
(a file in a temporary directory) and on PostgreSQL (a throw-away local server, fsync on,
started with tests/support/postgres_server.py; a fresh database for each cell).

  * luoshod: the daemon (``luoshod serve``, a subprocess) runs bench/steps.py's scripted
    agent; the Python ``AsyncClient`` in this process answers each tool call. A step is a
    model turn and its tool call through the gRPC API, two durable saves.
  * DBOS Transact (``dbos``, in-process, as its docs show): an ``async`` workflow whose
    loop calls a model step (the scripted turn, given the transcript) and a tool step, each
    ``@DBOS.step()``, so each is recorded in DBOS's system database before the workflow
    goes on; ``DBOS.start_workflow_async`` starts the sessions, ``asyncio.gather`` waits.
    Each DBOS cell runs in a subprocess of its own (DBOS is one instance a process), with
    a warm-up workflow first. With ``--threads`` also ``dbos (threads)``: the same workflow
    written as plain functions, started with ``DBOS.start_workflow`` in waves of the
    concurrency (DBOS's thread pool); slower than the async form here.

Columns: steps/s (wall), ``vs luoshod`` (the peer's steps/s over luoshod's in the same round
and cell; the median of the rounds), CPU/step (the application's processes: the daemon and
its client for luoshod, the DBOS process; PostgreSQL's own CPU is in neither). Cells run in
rounds, every kind once a round, so this shared machine's drift meets them alike.

``dbos`` is a bench-only dependency: ``pip install -e '.[bench]'`` (pyproject.toml).

    .venv/bin/python bench/peer_dbos.py            # 2 rounds, SQLite and PostgreSQL
    .venv/bin/python bench/peer_dbos.py --quick    # 1 round, fewer sessions
    .venv/bin/python bench/peer_dbos.py --stores sqlite
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import PYTHON, ROOT, ServerFailed, ServerProcess, free_port

TOOL_STEPS = 20
STEPS_PER_SESSION = TOOL_STEPS + 1  # model turns: 20 tool turns and the final answer
KINDS = ("luoshod", "dbos", "dbos (threads)")  # the last only with --threads


# -- DBOS: one cell in a process of its own -----------------------------------------------


def script_turn(k: int) -> dict[str, Any]:
    """The scripted model's turn ``k`` (as bench/steps.py's scripted agent answers)."""
    if k < TOOL_STEPS:
        return {"tool_calls": [{"id": f"call_{k}", "name": "work", "arguments": {"i": k}}]}
    return {"text": "done"}


def work(args: dict[str, Any]) -> dict[str, Any]:
    """The tool (bench/steps.py's ``work``)."""
    return {"ok": args.get("i")}


def dbos_cell(url: str, mode: str, sessions: int, concurrency: int) -> dict[str, float]:
    """Run the workload on DBOS on ``url``; its figures (printed as JSON by ``--dbos-cell``)."""
    from dbos import DBOS, DBOSConfig

    @DBOS.step()
    async def model_step(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return script_turn(sum(1 for m in messages if m["role"] == "assistant"))

    @DBOS.step()
    async def tool_step(call: dict[str, Any]) -> str:
        return json.dumps(work(call["arguments"]))

    @DBOS.workflow()
    async def agent_session(prompt: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        while True:
            turn = await model_step(messages)
            messages.append({"role": "assistant", **turn})
            if "text" in turn:
                return str(turn["text"])
            for call in turn["tool_calls"]:
                result = await tool_step(call)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

    @DBOS.step()
    def model_step_sync(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return script_turn(sum(1 for m in messages if m["role"] == "assistant"))

    @DBOS.step()
    def tool_step_sync(call: dict[str, Any]) -> str:
        return json.dumps(work(call["arguments"]))

    @DBOS.workflow()
    def agent_session_sync(prompt: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        while True:
            turn = model_step_sync(messages)
            messages.append({"role": "assistant", **turn})
            if "text" in turn:
                return str(turn["text"])
            for call in turn["tool_calls"]:
                result = tool_step_sync(call)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

    config: DBOSConfig = {
        "name": "luoshod-peer-bench",
        "system_database_url": url,
        "log_level": "WARNING",
        "max_executor_threads": max(64, concurrency),
    }
    DBOS(config=config)
    DBOS.launch()

    async def run_async(n: int, at_once: int) -> None:
        todo = iter(range(n))

        async def worker() -> None:
            for _ in todo:
                if await agent_session("go") != "done":
                    raise RuntimeError("a session did not end with its answer")

        await asyncio.gather(*(worker() for _ in range(at_once)))

    def run_threads(n: int, at_once: int) -> None:
        for first in range(0, n, at_once):  # at_once sessions in flight, in waves
            handles = [
                DBOS.start_workflow(agent_session_sync, "go")
                for _ in range(min(at_once, n - first))
            ]
            if any(h.get_result() != "done" for h in handles):
                raise RuntimeError("a session did not end with its answer")

    def run(n: int, at_once: int) -> None:
        if mode == "async":
            asyncio.run(run_async(n, at_once))
        else:
            run_threads(n, at_once)

    try:
        run(1, 1)  # warm-up: connections, the first statements
        cpu, start = time.process_time(), time.perf_counter()
        run(sessions, concurrency)
        wall = time.perf_counter() - start
        return {
            "steps": sessions * STEPS_PER_SESSION,
            "wall_s": wall,
            "cpu_s": time.process_time() - cpu,
        }
    finally:
        DBOS.destroy()


# -- the run ------------------------------------------------------------------------------


@dataclass
class Cell:
    kind: str
    store: str
    concurrency: int
    sessions: int
    steps: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    error: str = ""

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_s if self.wall_s else 0.0

    @property
    def cpu_us_per_step(self) -> float:
        return self.cpu_s / self.steps * 1e6 if self.steps else 0.0


class Stores:
    """Where each cell's data goes: a fresh SQLite file or PostgreSQL database per cell."""

    def __init__(self, work: Path, kinds: list[str]) -> None:
        self.work = work
        self.server: Any = None
        if "postgres" in kinds:
            sys.path.insert(0, str(ROOT))
            from tests.support.postgres_server import PostgresServer

            work.chmod(0o711)  # the server's own user must reach its folder
            self.server = PostgresServer(fsync=True, parent=work)
            self.server.start()

    def fresh(self, store: str, kind: str) -> str:
        """A new store of ``store``'s kind: the URL ``kind`` reads it by."""
        if store == "postgres":
            return str(self.server.create_database())
        path = self.work / f"{kind.split()[0]}-{uuid.uuid4().hex[:8]}.db"
        return f"sqlite:///{path}" if kind.startswith("dbos") else f"sqlite://{path}"

    def remove(self) -> None:
        if self.server is not None:
            self.server.remove()


async def luoshod_cell(cell: Cell, url: str, tmp: Path) -> None:
    from steps import Cell as StepsCell
    from steps import bench_agent, run_sessions

    from luosho.client import LuoshoError

    port = free_port()
    argv = [PYTHON, "-m", "luoshod", "serve", "--listen", f"127.0.0.1:{port}", "--store", url]
    server = ServerProcess("luoshod", argv, port, tmp / f"luoshod-{port}.log")
    try:
        await server.start()
    except ServerFailed as err:
        cell.error = f"not started: {str(err).splitlines()[0]}"
        return
    try:
        counted = StepsCell("luoshod", cell.concurrency, cell.sessions)
        cpu, client_cpu = server.cpu_seconds(), time.process_time()
        cell.wall_s = await run_sessions(
            server.address,
            f"peer-{uuid.uuid4().hex[:8]}",
            cell.sessions,
            cell.concurrency,
            bench_agent(TOOL_STEPS),
            counted,
        )
        cell.cpu_s = server.cpu_seconds() - cpu + time.process_time() - client_cpu
        cell.steps = counted.steps
    except (LuoshoError, RuntimeError) as err:
        cell.error = f"{type(err).__name__}: {err}"
        print(f"  luoshod: {cell.error}\n{server.log_tail()}", file=sys.stderr)
    finally:
        await server.stop()


async def peer_cell(cell: Cell, url: str) -> None:
    mode = "threads" if "threads" in cell.kind else "async"
    argv = [PYTHON, __file__, "--dbos-cell", url, "--mode", mode]
    argv += ["--sessions", str(cell.sessions), "--concurrency", str(cell.concurrency)]
    done = await asyncio.to_thread(
        subprocess.run, argv, capture_output=True, text=True, timeout=900, cwd=ROOT
    )
    if done.returncode != 0:
        cell.error = f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"
        print(f"  {cell.kind}: {done.stderr[-2000:]}", file=sys.stderr)
        return
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    cell.steps, cell.wall_s, cell.cpu_s = figures["steps"], figures["wall_s"], figures["cpu_s"]


def report(rounds: list[list[Cell]]) -> None:
    print(
        f"\npeer benchmark: {TOOL_STEPS} model turns with one tool call each + a final answer "
        f"a session ({STEPS_PER_SESSION} steps); {len(rounds)} round(s), medians shown"
    )
    print("  vs luoshod: steps/s over luoshod's in the same round and cell (median of rounds)")
    print("  CPU/step: the application's processes (luoshod: daemon + client; DBOS: its process)")
    header = (
        f"{'store':<9} {'conc':>4} {'kind':<15} {'sessions':>8} {'steps/s':>8} "
        f"{'vs luoshod':>10} {'CPU/step µs':>11}"
    )
    print(header)
    print("-" * len(header))
    for first in rounds[0]:
        key = (first.kind, first.store, first.concurrency)
        cells = [c for r in rounds for c in r if (c.kind, c.store, c.concurrency) == key]
        failed = next((c for c in cells if c.error), None)
        lead = f"{first.store:<9} {first.concurrency:>4} {first.kind:<15} {first.sessions:>8}"
        if failed is not None:
            print(f"{lead}  {failed.error}")
            continue
        ratios = []
        for r in rounds:
            base = next(
                c
                for c in r
                if (c.kind, c.store, c.concurrency) == ("luoshod", first.store, first.concurrency)
            )
            cell = next(c for c in r if (c.kind, c.store, c.concurrency) == key)
            if not base.error and base.steps_per_s:
                ratios.append(cell.steps_per_s / base.steps_per_s)
        ratio = f"{statistics.median(ratios):9.2f}x" if ratios else "       n/a"
        print(
            f"{lead} {statistics.median(c.steps_per_s for c in cells):>8.0f} {ratio} "
            f"{statistics.median(c.cpu_us_per_step for c in cells):>11,.0f}"
        )


async def main_async(opts: argparse.Namespace) -> int:
    plan = [(1, 2), (8, 8)] if opts.quick else [(1, 8), (64, 64)]
    base = Path(opts.dir)
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="peer-bench-", dir=base))
    stores = Stores(work, opts.stores)
    rounds: list[list[Cell]] = []
    try:
        for r in range(1 if opts.quick else opts.rounds):
            cells: list[Cell] = []
            kinds = KINDS if opts.threads else KINDS[:2]
            order = kinds if r % 2 == 0 else tuple(reversed(kinds))
            for store in opts.stores:
                for concurrency, sessions in plan:
                    for kind in order:
                        print(
                            f"round {r + 1}: {kind} on {store}, {sessions} sessions, "
                            f"{concurrency} at once",
                            file=sys.stderr,
                        )
                        cell = Cell(kind, store, concurrency, sessions)
                        url = stores.fresh(store, kind)
                        if kind == "luoshod":
                            await luoshod_cell(cell, url, work)
                        else:
                            await peer_cell(cell, url)
                        cells.append(cell)
            # luoshod first in every round's listing, whatever order the cells ran in
            cells.sort(
                key=lambda c: (opts.stores.index(c.store), c.concurrency, KINDS.index(c.kind))
            )
            rounds.append(cells)
    finally:
        stores.remove()
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    print(f"{os.uname().sysname}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    report(rounds)
    return 1 if any(c.error for r in rounds for c in r) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round, few sessions")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of every cell")
    parser.add_argument(
        "--threads", action="store_true", help="also DBOS's synchronous workflows (threads)"
    )
    parser.add_argument(
        "--stores",
        type=lambda s: s.split(","),
        default=["sqlite", "postgres"],
        help="comma-separated, from: sqlite, postgres",
    )
    parser.add_argument(
        "--dir", default=str(ROOT / "bench" / "out"), help="where the files go (the disk measured)"
    )
    # One DBOS cell (the benchmark runs each in a process of its own).
    parser.add_argument("--dbos-cell", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="async", help=argparse.SUPPRESS)
    parser.add_argument("--sessions", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=1, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.dbos_cell:
        print(json.dumps(dbos_cell(opts.dbos_cell, opts.mode, opts.sessions, opts.concurrency)))
        return 0
    unknown = [s for s in opts.stores if s not in ("sqlite", "postgres")]
    if unknown:
        parser.error(f"unknown stores {unknown}")
    return asyncio.run(main_async(opts))


if __name__ == "__main__":
    sys.exit(main())
