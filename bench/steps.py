#!/usr/bin/env python3
"""Steps benchmark: agent steps per second through the real gRPC API (not a test).

Each session runs a scripted agent of 20 steps with one client tool call a step, then a
final text turn, driven by luosho.client.AsyncClient (one process, one event loop). It
runs with 1 and 64 concurrent sessions against, in the same run:

  * null       bench/null_server.py: the same message pattern with no engine, no storage
               (the ceiling of Python gRPC on this machine);
  * memory://  the daemon (python -m luoshod serve) on the memory store;
  * sqlite://  the daemon on a SQLite file in a temporary directory;
  * lmdb://    the daemon on an LMDB environment in a temporary directory.

The cells run in ``--rounds`` rounds (3; every target once a round, a fresh server and
store each time), so that each target is measured beside the null server several times:
a cell's figures are the median of its rounds, its ratio to the null server the median of
the ratios of each round (this shared VM's speed drifts by tens of percent within a
minute). Targets at 64 sessions: memory:// at least 0.8x the null server, lmdb:// at
least 0.7x with every save durable, and the daemon's CPU a step at most 1.3x the null
server's (each round's ratio, like the rates'; ``CPU/step`` and ``CPU vs null`` columns).

Then it loads 1,000 finished sessions into a fresh daemon on memory:// and reports its
RSS (target: at most 120 MB). Every server is a subprocess, polled with grpc.health.v1
until SERVING; everything is stopped and removed at the end.

    .venv/bin/python bench/steps.py            # full run
    .venv/bin/python bench/steps.py --quick    # smoke run: fewer sessions, 1 and 8 at once
    .venv/bin/python bench/steps.py --no-load --rounds 2 --targets null,memory --profile
    .venv/bin/python bench/steps.py --no-load --targets null,memory,lmdb --against main~3

``--against REV`` runs each daemon target a second time, in the same rounds, from git
revision REV's code (extracted with ``git archive``, its store apart) and prints this
tree's CPU a step and steps/s over it: what a change bought, measured beside the code
before it (the VM drifts between runs by more than most changes move a step).

``--profile`` samples each daemon's 64-session cell of the first round with py-spy (a
bench dependency: ``pip install py-spy`` into the venv) and prints the server's top
functions, own and inclusive, each with its share of the samples as microseconds of the
cell's CPU a step.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import (
    PYTHON,
    ROOT,
    ServerFailed,
    ServerProcess,
    Spy,
    free_port,
    percentile,
    py_spy,
    tally,
)

from luosho.client import AsyncClient, LuoshoError
from luosho.v1 import agent_pb2

TOOL_STEPS = 20
STEPS_PER_SESSION = TOOL_STEPS + 1  # model turns: 20 tool turns and the final text turn
RSS_TARGET_MB = 120.0
#: Steps/s at 64 sessions over the null server's, per target.
RATIO_TARGETS = {"memory://": 0.8, "lmdb://": 0.7}
#: The daemon's CPU a step at 64 sessions over the null server's, at most (memory://).
CPU_RATIO_TARGETS = {"memory://": 1.3}


def bench_agent(tool_steps: int) -> agent_pb2.AgentSpec:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "work", "arguments": {"i": k}}]} for k in range(tool_steps)
    ]
    script.append({"text": "done"})
    return agent_pb2.AgentSpec(
        model="scripted:bench",
        max_steps=tool_steps + 5,
        tools=[agent_pb2.ToolSpec(name="work", input_schema_json='{"type":"object"}')],
        model_settings_json=json.dumps({"script": script}),
    )


async def work(args: dict[str, Any]) -> dict[str, Any]:
    return {"ok": args.get("i")}


TOOLS = {"work": work}


@dataclass
class Target:
    name: str
    # argv for a server listening on the given port, store files under the given dir.
    argv: Callable[[int, Path], list[str]]
    is_daemon: bool
    #: Added to the server's environment (``--against``: the other tree's PYTHONPATH).
    env: dict[str, str] | None = None


def _daemon(store: Callable[[Path], str]) -> Callable[[int, Path], list[str]]:
    def argv(port: int, tmp: Path) -> list[str]:
        return [
            PYTHON,
            "-m",
            "luoshod",
            "serve",
            "--listen",
            f"127.0.0.1:{port}",
            "--store",
            store(tmp),
        ]

    return argv


TARGETS: dict[str, Target] = {
    "null": Target(
        "null",
        lambda port, tmp: [PYTHON, str(ROOT / "bench" / "null_server.py"), "--port", str(port)],
        is_daemon=False,
    ),
    "memory": Target("memory://", _daemon(lambda tmp: "memory://"), is_daemon=True),
    # sqlite:///abs/path: the path of a file in the run's temporary directory.
    "sqlite": Target("sqlite://", _daemon(lambda tmp: f"sqlite://{tmp / 'bench.db'}"), True),
    # lmdb:///abs/path: an environment directory in the run's temporary directory.
    "lmdb": Target("lmdb://", _daemon(lambda tmp: f"lmdb://{tmp / 'bench-lmdb'}"), True),
}


def against(rev: str, tree: Path) -> dict[str, str]:
    """``--against``: the environment of a daemon run from ``rev``'s code, extracted into
    ``tree`` (``git archive``): the package, its store drivers and the generated API code
    of that revision ahead of this tree's on the path."""
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev],
        capture_output=True,
        check=False,
    )
    if archive.returncode:
        raise SystemExit(f"--against {rev}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    paths = [tree, *(tree / "drivers" / d for d in ("sqlite", "lmdb", "postgres"))]
    paths.append(tree / "clients" / "python" / "src")
    env = {"PYTHONPATH": os.pathsep.join(str(p) for p in paths)}
    # What the twin daemons will import, checked as they will be started.
    modules = ("luoshod", "luoshod_lmdb", "luoshod_sqlite", "luosho.v1.agent_pb2")
    probe = f"import importlib as i; print(*(i.import_module(m).__file__ for m in {modules}))"
    found = subprocess.run(
        [PYTHON, "-P", "-c", probe],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    if found.returncode or any(not f.startswith(str(tree)) for f in found.stdout.split()):
        raise SystemExit(
            f"--against {rev}: the daemon would not run its code: {found.stdout}{found.stderr}"
        )
    return env


def twin(target: Target, rev: str, env: dict[str, str]) -> Target:
    """``target`` run from ``rev``'s code (``--against``), its store in a directory of its
    own. ``python -P``: the server's working directory (this tree, where ``-m`` would
    look first) is not put on its path."""

    def argv(port: int, tmp: Path) -> list[str]:
        (apart := tmp / "against").mkdir(exist_ok=True)  # a store of its own
        python, *rest = target.argv(port, apart)
        return [python, "-P", *rest]

    return Target(f"{target.name}@{rev}", argv, target.is_daemon, env)


@dataclass
class Cell:
    target: str
    concurrency: int
    sessions: int
    steps: int = 0
    wall_s: float = 0.0
    latencies: list[float] = field(default_factory=list)
    peak_rss_mb: float = 0.0
    server_cpu_s: float = 0.0
    error: str = ""
    #: py-spy's raw samples of the server during the cell (``--profile``).
    samples: str | None = None

    @property
    def cpu_us_per_step(self) -> float:
        return self.server_cpu_s / self.steps * 1e6 if self.steps else 0.0

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.wall_s if self.wall_s else 0.0


async def drive_session(
    client: AsyncClient, session_id: str, agent: agent_pb2.AgentSpec, cell: Cell | None
) -> None:
    """One session to its end; records its model turns and tool.call-to-tool.call times."""
    run = client.execute(session_id, "go", agent=agent, tools=TOOLS)
    last_call: float | None = None
    steps = 0
    latencies: list[float] = []
    async for event in run:
        kind = event.type
        if kind == "tool.call" or kind == "run.done":
            now = time.perf_counter()
            if last_call is not None:
                latencies.append(now - last_call)
            last_call = now if kind == "tool.call" else None
        elif kind == "model.turn":
            steps += 1
    result = await run
    if result.finish_reason != "stop":
        raise RuntimeError(f"{session_id}: finished with {result.finish_reason!r}")
    if cell is not None:
        cell.steps += steps
        cell.latencies.extend(latencies)


async def run_sessions(
    address: str,
    prefix: str,
    sessions: int,
    concurrency: int,
    agent: agent_pb2.AgentSpec,
    cell: Cell | None,
) -> float:
    """Run ``sessions`` sessions, ``concurrency`` at a time; the wall time in seconds."""
    async with AsyncClient(address) as client:
        await drive_session(client, f"{prefix}-warmup", agent, None)  # connect, warm caches
        ids = iter(f"{prefix}-{i}" for i in range(sessions))

        async def worker() -> None:
            for session_id in ids:  # one shared iterator: each id is taken once
                await drive_session(client, session_id, agent, cell)

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(min(concurrency, sessions))))
        return time.perf_counter() - start


def _function(frame: str) -> str:
    """``name (path/file.py:line)`` as ``name (file.py)``, from the package's folder on."""
    frame = re.sub(r":\d+\)$", ")", frame)
    return re.sub(
        r"\((?:/[^()]*/)?(?=luoshod[/_])|\((?:/[^()]*/)?(site-packages/|python3\.\d+/)", "(", frame
    )


def print_profile(cell: Cell, n: int = 10) -> None:
    """The top functions of a cell's samples: own (the innermost frame; ``Handle._run``'s
    own is the C code it calls: gRPC's and asyncio's) and inclusive (the daemon's own
    functions, its entry points left out), each as its share and as microseconds of the
    cell's CPU a step."""
    if cell.samples is None:
        print(f"\nprofile of {cell.target} at {cell.concurrency}: no samples (is py-spy here?)")
        return
    total, own, every = tally(cell.samples, name=_function)
    inclusive = collections.Counter(
        {
            frame: count
            for frame, count in every.items()
            if "(luoshod" in frame and not re.search(r"\(luoshod/(cli/|__main__)", frame)
        }
    )
    us = cell.cpu_us_per_step
    print(
        f"\nprofile of {cell.target}, {cell.concurrency} sessions: {total} samples, "
        f"{us:.0f} µs of CPU a step"
    )
    for name, counter in (("own", own), ("inclusive, the daemon's functions", inclusive)):
        print(f"  {name}:")
        for frame, count in counter.most_common(n):
            share = count / max(total, 1)
            print(f"    {share:6.1%} {share * us:6.0f} µs  {frame}")


async def bench_target(
    target: Target, plan: list[tuple[int, int]], tmp: Path, profile: bool = False
) -> list[Cell]:
    cells = [Cell(target.name, c, n) for c, n in plan]
    server = ServerProcess(
        target.name,
        target.argv(port := free_port(), tmp),
        port,
        tmp / f"{target.name.split(':')[0]}{'-against' if target.env else ''}.log",
        env=target.env,
    )
    try:
        await server.start()
    except ServerFailed as err:
        for cell in cells:
            cell.error = f"not started: {str(err).splitlines()[0]}"
        print(f"  {target.name}: {err}", file=sys.stderr)
        return cells
    agent = bench_agent(TOOL_STEPS)
    try:
        for cell in cells:
            prefix = f"bench-{uuid.uuid4().hex[:8]}-c{cell.concurrency}"
            print(
                f"  {target.name}: {cell.sessions} sessions, {cell.concurrency} at once",
                file=sys.stderr,
            )
            cpu = server.cpu_seconds()
            spy = None
            if profile and target.is_daemon and cell.concurrency == 64:
                spy = Spy(server.pid, tmp / f"{target.name.split(':')[0]}-{cell.concurrency}.spy")
            try:
                cell.wall_s = await run_sessions(
                    server.address, prefix, cell.sessions, cell.concurrency, agent, cell
                )
                # The warm-up session's steps are not counted; its CPU is (a few %).
                cell.server_cpu_s = server.cpu_seconds() - cpu
                if spy is not None:
                    cell.samples = spy.stop()
                    spy = None
            except (LuoshoError, RuntimeError) as err:
                cell.error = f"{type(err).__name__}: {err}"
                print(f"  {target.name}: {cell.error}\n{server.log_tail()}", file=sys.stderr)
            finally:
                if spy is not None:
                    spy.stop()
            cell.peak_rss_mb = server.peak_rss_mb()
    finally:
        await server.stop()
    return cells


@dataclass
class Load:
    sessions: int
    stored: int | None = None
    rss_mb: float = 0.0
    peak_rss_mb: float = 0.0
    wall_s: float = 0.0
    error: str = ""


async def bench_load(sessions: int, tmp: Path) -> Load:
    """Fill a fresh memory:// daemon with finished sessions; its RSS afterwards."""
    load = Load(sessions)
    target = TARGETS["memory"]
    server = ServerProcess("load", target.argv(port := free_port(), tmp), port, tmp / "load.log")
    try:
        await server.start()
    except ServerFailed as err:
        load.error = f"not started: {str(err).splitlines()[0]}"
        return load
    try:
        print(f"  memory://: loading {sessions} finished sessions", file=sys.stderr)
        load.wall_s = await run_sessions(
            server.address, f"load-{uuid.uuid4().hex[:8]}", sessions, 64, bench_agent(1), None
        )
        async with AsyncClient(server.address) as client:
            try:
                load.stored = sum(
                    [1 async for _ in client.list_sessions("finished", page_size=1000)]
                )
            except LuoshoError as err:
                print(f"  ListSessions: {err}", file=sys.stderr)
        load.rss_mb = server.rss_mb()
        load.peak_rss_mb = server.peak_rss_mb()
    except (LuoshoError, RuntimeError) as err:
        load.error = f"{type(err).__name__}: {err}"
        print(f"  load: {load.error}\n{server.log_tail()}", file=sys.stderr)
    finally:
        await server.stop()
    return load


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f}"


def report(rounds: list[list[Cell]], load: Load | None) -> bool:
    """Print the cells (the median of their rounds) and the load; whether a target missed."""
    print()
    print(
        f"luoshod steps benchmark: {TOOL_STEPS} tool steps + 1 text turn per session, "
        f"Python AsyncClient in one process; {len(rounds)} round(s), medians shown"
    )
    print(f"  steps/s    model turns ({STEPS_PER_SESSION} per session) per second of wall time")
    print("  p50/p99    per-step latency seen by the client: from a tool.call event to the next")
    print("             tool.call (or run.done): tool + SubmitToolResult + result checkpoint +")
    print("             next model call + turn checkpoint + event delivery (all rounds)")
    print("  vs null    steps/s over the null server's at the same concurrency in the same")
    print("             round; the median of the rounds, then their range")
    print("  CPU/step   the server process's CPU time (all threads) a step, in microseconds")
    print("  CPU x      CPU/step over the null server's in the same round (median of rounds)")
    print("  peak RSS   VmHWM of the server process (the largest of the rounds)")
    print()
    header = (
        f"{'target':<18} {'conc':>4} {'sessions':>8} {'steps':>6} {'wall s':>7} "
        f"{'steps/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'vs null':>7} {'range':>11} "
        f"{'CPU/step µs':>11} {'CPU x':>6} {'peak RSS MB':>11}"
    )
    print(header)
    print("-" * len(header))
    missed = False
    for first in rounds[0]:
        key = (first.target, first.concurrency)
        cells = [c for r in rounds for c in r if (c.target, c.concurrency) == key]
        failed = next((c for c in cells if c.error), None)
        if failed is not None:
            print(f"{first.target:<18} {first.concurrency:>4} {first.sessions:>8}  {failed.error}")
            continue
        ratios, cpu_ratios = [], []
        for r in rounds:
            base = next(
                (c for c in r if c.target == "null" and c.concurrency == first.concurrency), None
            )
            cell = next(c for c in r if (c.target, c.concurrency) == key)
            if base is not None and not base.error and base.steps_per_s:
                ratios.append(cell.steps_per_s / base.steps_per_s)
            if base is not None and not base.error and base.cpu_us_per_step:
                cpu_ratios.append(cell.cpu_us_per_step / base.cpu_us_per_step)
        lat = sorted(x for c in cells for x in c.latencies)
        ratio = statistics.median(ratios) if ratios else None
        shown = f"{ratio:6.2f}x" if ratio is not None else "    n/a"
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}x" if len(ratios) > 1 else ""
        target = RATIO_TARGETS.get(first.target) if first.concurrency == 64 else None
        verdict = ""
        if target is not None and ratio is not None:
            ok = ratio >= target
            missed |= not ok
            verdict = f"  >= {target}x: {'ok' if ok else 'MISSED'}"
        cpu_ratio = statistics.median(cpu_ratios) if cpu_ratios else None
        cpu_shown = f"{cpu_ratio:5.2f}x" if cpu_ratio is not None else "   n/a"
        cpu_target = CPU_RATIO_TARGETS.get(first.target) if first.concurrency == 64 else None
        if cpu_target is not None and cpu_ratio is not None:
            ok = cpu_ratio <= cpu_target
            missed |= not ok
            verdict += f"; CPU <= {cpu_target}x: {'ok' if ok else 'MISSED'}"
        print(
            f"{first.target:<18} {first.concurrency:>4} {first.sessions:>8} "
            f"{statistics.median(c.steps for c in cells):>6.0f} "
            f"{statistics.median(c.wall_s for c in cells):>7.2f} "
            f"{statistics.median(c.steps_per_s for c in cells):>8.1f} "
            f"{_ms(percentile(lat, 50))} {_ms(percentile(lat, 99))} {shown:>7} {spread:>11} "
            f"{statistics.median(c.cpu_us_per_step for c in cells):>11.0f} {cpu_shown:>6} "
            f"{max(c.peak_rss_mb for c in cells):>11.1f}{verdict}"
        )
    if load is None:
        return missed
    print()
    if load.error:
        print(f"memory:// with {load.sessions} finished sessions: {load.error}")
        return missed
    missed |= load.rss_mb > RSS_TARGET_MB
    verdict = "ok" if load.rss_mb <= RSS_TARGET_MB else "OVER TARGET"
    stored = "?" if load.stored is None else str(load.stored)
    print(
        f"memory:// after {load.sessions} short sessions (1 tool step + text; ListSessions "
        f"finished: {stored}, incl. the warm-up; loaded in {load.wall_s:.1f}s): "
        f"RSS {load.rss_mb:.1f} MB, peak {load.peak_rss_mb:.1f} MB "
        f"(target <= {RSS_TARGET_MB:.0f} MB: {verdict})"
    )
    return missed


def report_against(rounds: list[list[Cell]], rev: str) -> None:
    """``--against``: each daemon cell beside its twin run from ``rev`` in the same round:
    the median of the rounds' ratios (CPU a step, steps/s), then their range."""
    print(f"\nthis tree against {rev} (each round's ratio; median, then range)")
    for cell in rounds[0]:
        if "@" in cell.target or cell.target == "null":
            continue
        cpu, rate = [], []
        key, twin_key = (cell.target, cell.concurrency), (f"{cell.target}@{rev}", cell.concurrency)
        for r in rounds:
            mine = next(c for c in r if (c.target, c.concurrency) == key)
            other = next((c for c in r if (c.target, c.concurrency) == twin_key), None)
            if other is None or mine.error or other.error or not other.cpu_us_per_step:
                continue
            cpu.append(mine.cpu_us_per_step / other.cpu_us_per_step)
            rate.append(mine.steps_per_s / other.steps_per_s)
        if cpu:
            print(
                f"  {cell.target:<10} {cell.concurrency:>3} sessions: CPU a step "
                f"{statistics.median(cpu):.3f}x ({min(cpu):.2f}-{max(cpu):.2f}), steps/s "
                f"{statistics.median(rate):.3f}x ({min(rate):.2f}-{max(rate):.2f})"
            )


async def main_async(opts: argparse.Namespace) -> int:
    if opts.quick:
        plan = [(1, 2), (8, 8)]
        load_sessions = 100
    else:
        plan = [(1, 32), (64, 256)]
        load_sessions = 1000
    names = [n.strip() for n in opts.targets.split(",") if n.strip()]
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        print(f"unknown targets {unknown}; choose from {sorted(TARGETS)}", file=sys.stderr)
        return 2
    daemon_installed = importlib.util.find_spec("luoshod") is not None
    rounds: list[list[Cell]] = []
    load: Load | None = None
    with tempfile.TemporaryDirectory(prefix="luoshod-bench-") as tmp_dir:
        targets = [TARGETS[name] for name in names]
        if opts.against:
            env = against(opts.against, Path(tmp_dir) / "against")
            targets = [
                t
                for target in targets
                for t in (target, twin(target, opts.against, env))
                if t is target or target.is_daemon
            ]
        for r in range(1 if opts.quick else opts.rounds):
            print(f"round {r + 1}", file=sys.stderr)
            tmp = Path(tmp_dir) / f"round-{r + 1}"
            tmp.mkdir()
            cells: list[Cell] = []
            for target in targets:
                if target.is_daemon and not daemon_installed:
                    cells += [
                        Cell(target.name, c, n, error="skipped: luoshod is not installed")
                        for c, n in plan
                    ]
                    continue
                cells += await bench_target(target, plan, tmp, opts.profile and r == 0)
            rounds.append(cells)
        tmp = Path(tmp_dir)
        if not opts.no_load:
            if daemon_installed:
                load = await bench_load(load_sessions, tmp)
            else:
                load = Load(load_sessions, error="skipped: luoshod is not installed")
    missed = report(rounds, load)
    if opts.against:
        report_against(rounds, opts.against)
    for cell in rounds[0] if opts.profile else []:
        if cell.concurrency == 64 and cell.target != "null":
            print_profile(cell)
    failed = any(c.error and not c.error.startswith("skipped") for r in rounds for c in r)
    return 1 if failed or (missed and not opts.quick) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: few sessions")
    parser.add_argument(
        "--targets",
        default="null,memory,sqlite,lmdb",
        help="comma-separated, from: null, memory, sqlite, lmdb (default: all)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of every cell (medians are shown)"
    )
    parser.add_argument("--no-load", action="store_true", help="skip the 1,000-session memory test")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="sample each daemon's 64-session cell of the first round with py-spy",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        default="",
        help="also run each daemon target from git revision REV's code, in the same rounds, "
        "and print this tree's CPU a step and steps/s over it",
    )
    opts = parser.parse_args()
    if opts.profile and py_spy() is None:
        return 2
    try:
        return asyncio.run(main_async(opts))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
