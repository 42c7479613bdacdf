#!/usr/bin/env python3
"""Long-run benchmark: what a save costs late in one long run, beside early (not a test).

One session runs a scripted agent of ``--calls`` steps (300) with one client tool call a
step, through the real daemon on ``lmdb://`` (a temporary directory) and the Python client,
with a history long enough to keep every save. Then, the daemon stopped, its saves are read
back from the store, and for the save that handed out the 10th, the 100th and the last call
it prints what the header a save writes weighs and costs: its JSON bytes, its compact
(stored) bytes, and the CPU of encoding it as the drivers store it plus the hash chain's
link (R91) over it (thread CPU, the best of five repeats). And the daemon's CPU a step over
the first and the last 100 steps of the run, and over the whole run (the scripted model
reads its place in the transcript at each call, O(transcript), so part of a step's growth
is the model's, not the save's).

Target: the header of the last save at most 1.2x the bytes, and its encoding and link at
most 1.2x the CPU, of the 10th's: a run's header holds what is still open, not one entry
for every call it made.

Then, through the store API on ``memory://``: a save (two new lead messages) and a load of
a session holding 0, 10 and 50 finished sub-agent tasks of 20 messages each (R65: a
session keeps its tasks' transcripts), thread CPU a call over 300 of each.

``--against REV`` runs the same session on a daemon from revision REV's code (extracted
with ``git archive``, as ``bench/steps.py --against`` does), and the ``memory://`` part in
a process importing REV's code, in the same run, and prints their figures beside.

    .venv/bin/python bench/long_run.py
    .venv/bin/python bench/long_run.py --calls 500 --against HEAD~1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _common import PYTHON, ServerProcess, free_port
from steps import TARGETS, TOOLS, against, bench_agent, twin

from luosho.client import AsyncClient
from luoshod.domain import Checkpoint, Message, Role, SubTask
from luoshod.store import store_from_url
from luoshod.store.kit import chain, codec
from luoshod.store.memory import MemoryStore

TARGET = 1.2  # the last save's header over the 10th's: bytes, and CPU to encode and link
WINDOW = 100  # steps at each end of the run whose daemon CPU is compared
TASKS = (0, 10, 50)  # finished tasks of the memory:// session


@dataclass
class Save:
    """What the save that handed out one call writes of its header, and what it costs."""

    call: int
    json_bytes: int
    stored_bytes: int
    encode_us: float
    link_us: float


@dataclass
class Result:
    name: str
    saves: list[Save] = field(default_factory=list)
    #: The daemon's CPU a step over the first and the last WINDOW steps, and the run's, µs.
    first_us: float = 0.0
    last_us: float = 0.0
    run_us: float = 0.0


def best_us(fn: Callable[[], object]) -> float:
    """The best of five repeats of ``fn`` (200 calls each), µs a call."""
    return min(timeit.repeat(fn, number=200, repeat=5, timer=time.thread_time)) / 200 * 1e6


async def run_session(server: ServerProcess, calls: int) -> tuple[float, float, float]:
    """One session of ``calls`` tool steps to its end; the server's CPU a step over the
    first and the last WINDOW steps (read at each ``tool.call``), and over the run."""
    cpu_at: list[float] = []
    async with AsyncClient(server.address) as client:
        run = client.execute(
            "long",
            "go",
            agent=bench_agent(calls),
            tools=TOOLS,
            history_limit=3 * calls,
        )
        async for event in run:
            if event.type == "tool.call":
                cpu_at.append(server.cpu_seconds())
        result = await run
    if result.finish_reason != "stop":
        raise SystemExit(f"the session finished with {result.finish_reason!r}")
    window = min(WINDOW, len(cpu_at) // 2)
    first = (cpu_at[window] - cpu_at[0]) / window * 1e6
    last = (cpu_at[-1] - cpu_at[-1 - window]) / window * 1e6
    return first, last, (cpu_at[-1] - cpu_at[0]) / (len(cpu_at) - 1) * 1e6


async def read_saves(url: str, calls: int) -> list[Save]:
    """For the 10th, the 100th and the last call: the header of the save that handed it out
    (the first history entry whose transcript ends with its turn)."""
    store = store_from_url(url, history_limit=3 * calls)
    await store.open()
    try:
        entries = await store.history("long")
    finally:
        await store.close()
    entries.sort(key=lambda e: e.checkpoint.version)
    saves = []
    for k in (10, 100, calls):  # --calls is at least 100
        call_id = f"call_{k - 1}_0"
        entry = next(
            e for e in entries if any(c.id == call_id for c in e.checkpoint.messages[-1].tool_calls)
        )
        cp = entry.checkpoint
        # Linked as that save was: over its header and its new records (the previous
        # call's result and this turn).
        stored = len(cp.messages) - 2
        saves.append(
            Save(
                k,
                len(codec.encode_header(cp).encode()),
                len(codec.encode_compact_header(cp)),
                best_us(lambda: codec.encode_compact_header(cp)),
                best_us(lambda: chain.link_save(cp, stored)),
            )
        )
    return saves


async def measure(
    name: str,
    argv_of: Callable[[int, Path], list[str]],
    env: dict[str, str] | None,
    tmp: Path,
    calls: int,
) -> Result:
    work = tmp / name.replace("@", "-").replace(":", "").replace("/", "")
    work.mkdir()
    port = free_port()
    server = ServerProcess(name, argv_of(port, work), port, work / "daemon.log", env)
    await server.start()
    try:
        first, last, whole = await run_session(server, calls)
    finally:
        await server.stop()
    store_dir = work / "against" if env else work
    saves = await read_saves(f"lmdb://{store_dir / 'bench-lmdb'}", calls)
    return Result(name, saves, first, last, whole)


async def memory_tasks(tasks: int, calls: int = 300) -> tuple[float, float]:
    """``memory://``: thread CPU a save (two new lead messages) and a load, µs, of a
    session holding ``tasks`` finished tasks of 20 messages each."""
    store = MemoryStore()
    await store.open()
    cp = Checkpoint(f"tasks-{tasks}", version=1)
    cp.messages = [Message(Role.USER, "go")]
    for k in range(tasks):
        task = SubTask("researcher", f"task_{k + 1}", 1, ("researcher",))
        task.messages = [
            Message(Role.ASSISTANT if i % 2 else Role.USER, "x" * 200) for i in range(20)
        ]
        cp.tasks[task.task_id] = task.end()
    try:
        await store.save(cp, stored_messages=0)
        for task in cp.all_tasks():  # what the store holds of each, as a run sets it
            task.stored = len(task.messages)
        start = time.thread_time()
        for _ in range(calls):
            stored = len(cp.messages)
            cp.messages += (Message(Role.ASSISTANT, "a" * 100), Message(Role.USER, "b" * 100))
            cp.version += 1
            await store.save(cp, stored_messages=stored)
        save_us = (time.thread_time() - start) / calls * 1e6
        start = time.thread_time()
        for _ in range(calls):
            await store.load(cp.session_id)
        return save_us, (time.thread_time() - start) / calls * 1e6
    finally:
        await store.close()


async def memory_figures() -> list[tuple[int, float, float]]:
    return [(k, *await memory_tasks(k)) for k in TASKS]


def memory_figures_of(env: dict[str, str]) -> list[tuple[int, float, float]]:
    """:func:`memory_figures` in a process that imports another tree's code (``env``)."""
    done = subprocess.run(
        [PYTHON, str(Path(__file__).resolve()), "--memory-only"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return [tuple(row) for row in json.loads(done.stdout)]  # type: ignore[misc]


def report_memory(rows: list[tuple[str, list[tuple[int, float, float]]]]) -> None:
    print("\nmemory://: a save and a load of a session holding k finished tasks (20 messages each)")
    print(f"{'code':<16} {'tasks':>5} {'save µs':>8} {'load µs':>8} {'save x':>7} {'load x':>7}")
    for name, figures in rows:
        base = figures[0]
        for k, save_us, load_us in figures:
            print(
                f"{name:<16} {k:>5} {save_us:>8.1f} {load_us:>8.1f} "
                f"{save_us / base[1]:>6.2f}x {load_us / base[2]:>6.2f}x"
            )


def report(results: list[Result]) -> bool:
    print(
        "\nthe save that handed out call k: its header as JSON and as stored (compact), the"
        "\nCPU to encode it as stored and to link it (R91); x: over the 10th call's save"
    )
    print(
        f"{'daemon':<16} {'call':>5} {'JSON B':>7} {'stored B':>9} {'encode µs':>10} "
        f"{'link µs':>8} {'bytes x':>8} {'CPU x':>6}"
    )
    ok = True
    for r in results:
        base = r.saves[0]
        for s in r.saves:
            bytes_x = s.json_bytes / base.json_bytes
            cpu_x = (s.encode_us + s.link_us) / (base.encode_us + base.link_us)
            verdict = ""
            if s is r.saves[-1] and r is results[0]:
                met = bytes_x <= TARGET and cpu_x <= TARGET
                ok = ok and met
                verdict = f"  <= {TARGET}x: {'ok' if met else 'MISSED'}"
            print(
                f"{r.name:<16} {s.call:>5} {s.json_bytes:>7,} {s.stored_bytes:>9,} "
                f"{s.encode_us:>10.1f} {s.link_us:>8.1f} {bytes_x:>7.2f}x {cpu_x:>5.2f}x{verdict}"
            )
    print(f"\nthe daemon's CPU a step: the first and the last {WINDOW} steps, and the whole run")
    for r in results:
        print(
            f"{r.name:<16} first {r.first_us:>7.0f} µs  last {r.last_us:>7.0f} µs  "
            f"{r.last_us / r.first_us:.2f}x  the run {r.run_us:>7.0f} µs"
        )
    return ok


async def main_async(opts: argparse.Namespace) -> int:
    lmdb = TARGETS["lmdb"]
    with tempfile.TemporaryDirectory(prefix="long-run-", dir=opts.dir) as tmp_dir:
        tmp = Path(tmp_dir)
        results = [await measure("lmdb://", lmdb.argv, None, tmp, opts.calls)]
        memory = [("this tree", await memory_figures())]
        if opts.against:
            env = against(opts.against, tmp / "against-tree")
            other = twin(lmdb, opts.against, env)
            results.append(await measure(other.name, other.argv, env, tmp, opts.calls))
            memory.append((f"@{opts.against}", memory_figures_of(env)))
    ok = report(results)
    report_memory(memory)
    return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=300, help="tool steps of the run (300)")
    p.add_argument("--against", metavar="REV", help="also run the daemon from REV's code")
    p.add_argument("--dir", default=None, help="where the temporary directory goes")
    p.add_argument("--memory-only", action="store_true", help=argparse.SUPPRESS)
    opts = p.parse_args()
    if opts.memory_only:  # the memory:// part alone, as JSON (for --against's process)
        print(json.dumps(asyncio.run(memory_figures())))
        return 0
    if opts.calls < 100:
        p.error("--calls must be at least 100")
    return asyncio.run(main_async(opts))


if __name__ == "__main__":
    sys.exit(main())
