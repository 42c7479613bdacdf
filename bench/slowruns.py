#!/usr/bin/env python3
"""Slow-runs benchmark: thousands of runs waiting on a slow model or tool (not a test).

The real agent workload spends most of its time waiting: a model answers in seconds, a
tool in seconds to minutes. This benchmark holds N sessions at once on one daemon, each a
scripted agent of T model turns (T-1 turns with one client tool call, then a text turn),
every model call taking ``--model-ms`` and every tool ``--tool-ms``. The client load is
spread over ``--procs`` processes (each its own ``luosho.client.AsyncClient`` and event
loop) so that the figures are the daemon's, not one client's event loop. All sessions
start together.

For each store and size it prints:

  wall/ideal   the slowest session's wall time over T x model + (T-1) x tool
  p50/p99      extra latency a step: the time between two events that bound a model call
               (run start or a tool.call to the next tool.call or run.done), minus the
               model's and the tool's delays: what the daemon, gRPC and the client add
  CPU/step     the daemon's CPU time (all threads) over the model turns it played, µs
  client       the client processes' CPU time over the same turns, µs (it shares the cores)
  KB/run       the daemon's RSS while every run waits, over its idle RSS, per run
  anon         the same for its anonymous memory alone (RssAnon: no file pages mapped)
  saves/s      checkpoint saves a second (``luoshod_store_save_seconds`` count)
  lease w/s    lease upkeep writes a second (``luoshod_store_lease_writes{op="renew"}``)
  errors       failed runs by gRPC code and reason (``TOO_MANY_RUNS`` refusals apart)

``--gc tuned,python`` runs every cell twice, side by side: the daemon's garbage collector
as ``luoshod serve`` tunes it (server/gc_tuning.py) and with Python's defaults
(``--no-gc-tuning``); ``gc s`` is the share of the daemon's CPU its collections took
(``--gc-probe``: timed with ``gc.callbacks`` inside the daemon, through a sitecustomize).

    .venv/bin/python bench/slowruns.py                  # 200, 2000 runs on lmdb and sqlite
    .venv/bin/python bench/slowruns.py --runs 10000 --turns 2 --tool-ms 20000 --stores lmdb
    .venv/bin/python bench/slowruns.py --quick          # smoke run (50 runs, 3 x 0.5 s)
    .venv/bin/python bench/slowruns.py --runs 2000 --stores lmdb --gc tuned,python --gc-probe
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
import urllib.request
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import PYTHON, ServerFailed, ServerProcess, free_port, percentile, proc_status_kb

STORES = {
    "lmdb": lambda tmp: f"lmdb://{tmp / 'slow-lmdb'}",
    "sqlite": lambda tmp: f"sqlite://{tmp / 'slow.db'}",
    "memory": lambda tmp: "memory://",
    # A database of its own each cell, on the server LUOSHOD_TEST_POSTGRES_URL names
    # (``python tests/support/postgres_server.py run -- .venv/bin/python bench/slowruns.py
    # --stores postgres``).
    "postgres": lambda tmp: postgres_database(tmp.name),
    # bench/null_server.py: the same messages, no engine, no store (gRPC's own share).
    "null": lambda tmp: "",
}


def postgres_database(name: str) -> str:
    """A fresh database ``name`` on the LUOSHOD_TEST_POSTGRES_URL server; its URL."""
    import psycopg

    url = os.environ.get("LUOSHOD_TEST_POSTGRES_URL", "")
    if not url:
        raise SystemExit(
            "--stores postgres needs LUOSHOD_TEST_POSTGRES_URL "
            "(tests/support/postgres_server.py run)"
        )
    name = "slow_" + name.replace("-", "_")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return url.rsplit("/", 1)[0] + "/" + name


# -- the daemon's collector, timed from inside (--gc-probe) --------------------------------

#: A sitecustomize for the daemon's process alone: ``gc.callbacks`` sum the time of its
#: collections by generation, written to a file every 0.2 s (read before and after a cell).
GC_PROBE = """
import gc, json, os, threading, time
_out = os.environ.pop("SLOWRUNS_GC_PROBE", "")
if _out:
    _spent = [0.0, 0.0, 0.0]
    _count = [0, 0, 0]
    _start = [0.0]
    def _timed(phase, info):
        if phase == "start":
            _start[0] = time.thread_time()
        else:
            _spent[info["generation"]] += time.thread_time() - _start[0]
            _count[info["generation"]] += 1
    gc.callbacks.append(_timed)
    def _write():
        while True:
            time.sleep(0.2)
            with open(_out + ".tmp", "w") as f:
                json.dump({"seconds": _spent, "count": _count}, f)
            os.replace(_out + ".tmp", _out)
    threading.Thread(target=_write, daemon=True).start()
"""


def gc_probe_env(tmp: Path) -> dict[str, str]:
    """The environment that runs :data:`GC_PROBE` in the daemon (its file in ``tmp``)."""
    site = tmp / "gc-probe"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(GC_PROBE)
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "SLOWRUNS_GC_PROBE": str(tmp / "gc-probe.json")}


def gc_seconds(tmp: Path) -> tuple[float, list[int]]:
    """The daemon's collections so far: seconds in all, and how many of each generation."""
    try:
        got = json.loads((tmp / "gc-probe.json").read_text())
    except (OSError, ValueError):
        return float("nan"), [0, 0, 0]
    return sum(got["seconds"]), got["count"]


# -- the client side: one worker process drives its share of the sessions ------------------


def agent_spec(turns: int, model_ms: int) -> Any:
    from luosho.v1 import agent_pb2

    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "work", "arguments": {"i": k}}], "delay_ms": model_ms}
        for k in range(turns - 1)
    ]
    script.append({"text": "done", "delay_ms": model_ms})
    return agent_pb2.AgentSpec(
        model="scripted:slow",
        max_steps=turns + 2,
        tools=[agent_pb2.ToolSpec(name="work", input_schema_json='{"type":"object"}')],
        model_settings_json=json.dumps({"script": script}),
    )


async def worker_main(opts: argparse.Namespace) -> dict[str, Any]:
    from luosho.client import AsyncClient, LuoshoError

    agent = agent_spec(opts.turns, opts.model_ms)
    tool_s = opts.tool_ms / 1000
    model_s = opts.model_ms / 1000
    extra: list[float] = []
    walls: list[float] = []
    errors: Counter[str] = Counter()
    details: list[str] = []

    async def work(args: dict[str, Any]) -> dict[str, Any]:
        if tool_s:
            await asyncio.sleep(tool_s)
        return {"ok": args.get("i")}

    async def one(client: AsyncClient, session_id: str) -> None:
        start = last = time.perf_counter()
        mine: list[float] = []
        try:
            run = client.execute(session_id, "go", agent=agent, tools={"work": work})
            async for event in run:
                if event.type in ("tool.call", "run.done"):
                    now = time.perf_counter()
                    waited = model_s + (tool_s if last != start else 0.0)
                    mine.append(now - last - waited)
                    last = now
            result = await run
            if result.finish_reason != "stop":
                errors[f"finish:{result.finish_reason}"] += 1
                return
        except LuoshoError as e:
            errors[f"{e.code.name}/{e.reason or '-'}"] += 1
            if len(details) < 3:
                details.append(f"{session_id}: {e!r} after {time.perf_counter() - start:.1f}s")
            return
        except Exception as e:  # noqa: BLE001 - counted and shown, the benchmark goes on
            errors[f"{type(e).__name__}: {str(e)[:80]}"] += 1
            return
        extra.extend(mine)
        walls.append(time.perf_counter() - start)

    from luosho.client import RetryPolicy

    # The client's default policy, or one with --overload-attempts (bench/burst.py's 1:
    # an admission refusal is the run's failure).
    n = opts.overload_attempts
    retry = RetryPolicy(overload_attempts=n) if n else RetryPolicy()
    async with AsyncClient(opts.address, retry=retry) as client:
        delay = opts.start_at - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        cpu = time.process_time()
        await asyncio.gather(*(one(client, f"{opts.prefix}-{i}") for i in range(opts.sessions)))
        cpu = time.process_time() - cpu
    return {"extra": extra, "walls": walls, "errors": dict(errors), "details": details, "cpu": cpu}


# -- the daemon side -------------------------------------------------------------------------


def scrape(port: int, null: bool = False) -> dict[str, float]:
    """The daemon's counters this benchmark reads, from its /metrics (none: null server)."""
    if null:
        return {"saves": 0.0, "lease_renew": 0.0, "lease_other": 0.0}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as reply:
        text = reply.read().decode()
    found: dict[str, float] = {"saves": 0.0, "lease_renew": 0.0, "lease_other": 0.0}
    for line in text.splitlines():
        if line.startswith("luoshod_store_save_seconds_count"):
            found["saves"] += float(line.rsplit(" ", 1)[1])
        elif line.startswith("luoshod_store_lease_writes_total"):
            key = "lease_renew" if 'op="renew"' in line else "lease_other"
            found[key] += float(line.rsplit(" ", 1)[1])
    return found


def rpc_codes(port: int) -> str:
    """The daemon's RPCs by method and code (``--show-rpcs``)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as reply:
        lines = reply.read().decode().splitlines()
    return "\n".join(
        f"  {line}"
        for line in lines
        if line.startswith(("luoshod_grpc_server_handled_total", "luoshod_runs_total"))
    )


@dataclass
class Cell:
    store: str
    runs: int
    turns: int
    model_ms: int
    tool_ms: int
    wall_s: float = 0.0
    extra: list[float] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    idle_rss_mb: float = 0.0
    waiting_rss_mb: float = 0.0
    idle_anon_mb: float = 0.0
    waiting_anon_mb: float = 0.0  # RssAnon at the largest waiting sample
    peak_rss_mb: float = 0.0
    saves: float = 0.0
    lease_renew: float = 0.0
    lease_other: float = 0.0
    failure: str = ""
    fast: bool = False  # the fast regime (bench/steps.py's), for the CPU/step ratio
    gc: str = "tuned"  # the daemon's collector: "tuned" (luoshod serve's) or "python"
    gc_s: float = float("nan")  # the daemon's CPU seconds in collections (--gc-probe)

    @property
    def ideal_s(self) -> float:
        return (self.turns * self.model_ms + (self.turns - 1) * self.tool_ms) / 1000

    @property
    def steps(self) -> int:
        return len(self.walls) * self.turns


async def bench_cell(cell: Cell, opts: argparse.Namespace, tmp: Path) -> None:
    port, metrics_port = free_port(), free_port()
    profile = ["-m", "cProfile", "-o", opts.profile] if opts.profile else []
    argv = [
        PYTHON, *profile, "-m", "luoshod", "serve", "--listen", f"127.0.0.1:{port}",
        "--store", STORES[cell.store](tmp), "--metrics-listen", f"127.0.0.1:{metrics_port}",
        "--max-active-runs", str(opts.max_active_runs),
        "--max-loop-lag-ms", str(opts.max_loop_lag_ms),
        "--tool-timeout-s", str(max(60, 4 * cell.tool_ms // 1000)),
        "--gc-tuning" if cell.gc == "tuned" else "--no-gc-tuning",
    ]  # fmt: skip
    if cell.store == "null":  # the same messages with no engine or store: gRPC's own share
        argv = [
            PYTHON,
            *profile,
            str(Path(__file__).parent / "null_server.py"),
            "--port",
            str(port),
        ]
    probe_env = gc_probe_env(tmp) if opts.gc_probe else {}
    server = ServerProcess(
        f"daemon {cell.store}",
        argv,
        port,
        tmp / f"{cell.store}-{cell.runs}.log",
        env=probe_env or None,
    )
    try:
        await server.start(timeout=60)
    except ServerFailed as err:
        cell.failure = f"not started: {str(err).splitlines()[0]}"
        return
    workers: list[subprocess.Popen[bytes]] = []
    try:
        await asyncio.sleep(1.0)
        cell.idle_rss_mb = server.rss_mb()
        cell.idle_anon_mb = proc_status_kb(server.pid, "RssAnon") / 1024
        before = await asyncio.to_thread(scrape, metrics_port, cell.store == "null")
        cpu = server.cpu_seconds()
        gc_before, _ = gc_seconds(tmp)
        procs = min(opts.procs, cell.runs)
        start_at = time.time() + 2.0 + cell.runs / 2000  # every worker connected by then
        for k in range(procs):
            share = cell.runs // procs + (1 if k < cell.runs % procs else 0)
            workers.append(
                subprocess.Popen(
                    [
                        PYTHON,
                        __file__,
                        "--worker",
                        "--address",
                        server.address,
                        "--sessions",
                        str(share),
                        "--prefix",
                        f"s{uuid.uuid4().hex[:6]}-w{k}",
                        "--turns",
                        str(cell.turns),
                        "--model-ms",
                        str(cell.model_ms),
                        "--tool-ms",
                        str(cell.tool_ms),
                        "--start-at",
                        repr(start_at),
                        "--out",
                        str(tmp / f"worker-{k}.json"),
                        "--overload-attempts",
                        str(getattr(opts, "overload_attempts", 0)),
                    ],  # fmt: skip
                )
            )
        # Sample the daemon's RSS while the runs wait (the middle of the first model call
        # and of each tool wait); keep the largest.
        await asyncio.sleep(max(0.0, start_at - time.time()))
        t0 = time.perf_counter()
        sample_at = cell.model_ms / 2000
        while any(w.poll() is None for w in workers):
            await asyncio.sleep(0.25)
            if (
                time.perf_counter() - t0 >= sample_at
                and (rss := server.rss_mb()) > cell.waiting_rss_mb
            ):
                cell.waiting_rss_mb = rss
                cell.waiting_anon_mb = proc_status_kb(server.pid, "RssAnon") / 1024
        cell.wall_s = time.perf_counter() - t0
        cell.cpu_s = server.cpu_seconds() - cpu
        if opts.gc_probe:
            await asyncio.sleep(0.3)  # the probe's next write
            cell.gc_s = gc_seconds(tmp)[0] - gc_before
        after = await asyncio.to_thread(scrape, metrics_port, cell.store == "null")
        if opts.show_rpcs and cell.store != "null":
            print(await asyncio.to_thread(rpc_codes, metrics_port), file=sys.stderr)
        for key in ("saves", "lease_renew", "lease_other"):
            setattr(cell, key, after[key] - before[key])
        for k, w in enumerate(workers):
            try:
                got = json.loads((tmp / f"worker-{k}.json").read_text())
            except (OSError, ValueError):
                cell.errors[f"worker exited {w.returncode}"] += 1
                continue
            cell.extra += got["extra"]
            cell.walls += got["walls"]
            cell.client_cpu_s += got["cpu"]
            cell.errors.update(got["errors"])
            for line in got.get("details", []):
                print(f"  {line}", file=sys.stderr)
        cell.peak_rss_mb = server.peak_rss_mb()
        if cell.errors:
            print(f"  daemon log tail:\n{server.log_tail(8)}", file=sys.stderr)
    finally:
        for w in workers:  # an interrupted benchmark leaves no client behind
            if w.poll() is None:
                w.kill()
                w.wait()
        await server.stop(grace=30)


def report(cells: list[Cell], opts: argparse.Namespace) -> None:
    print()
    print(
        f"luoshod slow-runs benchmark: client load over {opts.procs} processes, all runs "
        f"started together, --max-active-runs {opts.max_active_runs}, "
        f"--max-loop-lag-ms {opts.max_loop_lag_ms}"
    )
    print("  extra p50/p99: a step's latency beyond the model's and the tool's delays")
    print("  KB/run: daemon RSS while all runs wait, above the idle daemon, per run")
    print(
        "  anon: the same for its anonymous memory alone (RssAnon), without the store's mapped "
        "file pages"
    )
    print("  saves/s, lease w/s: checkpoint saves and lease-renewal writes a second")
    print(
        "  gc: the daemon's collector (tuned: luoshod serve's; python: --no-gc-tuning); "
        "gc CPU: the share of its CPU in collections (--gc-probe)"
    )
    print()
    head = (
        f"{'store':<7} {'gc':<6} {'runs':>6} {'turns':>5} {'model':>6} {'tool':>6} {'ok':>6} "
        f"{'wall/ideal':>10} {'extra p50':>9} {'p99 ms':>7} {'CPU/step':>8} {'client':>7} "
        f"{'idle MB':>7} {'KB/run':>6} {'anon':>5} {'peak MB':>7} {'saves/s':>7} {'lease w/s':>9} "
        f"{'gc CPU':>6}  errors"
    )
    print(head)
    print("-" * len(head))
    for c in cells:
        if c.failure:
            print(f"{c.store:<7} {c.gc:<6} {c.runs:>6}  {c.failure}")
            continue
        extra = sorted(c.extra)
        ratio = max(c.walls) / c.ideal_s if c.walls and c.ideal_s else float("nan")
        cpu = c.cpu_s / c.steps * 1e6 if c.steps else float("nan")
        client = c.client_cpu_s / c.steps * 1e6 if c.steps else float("nan")
        per_run = (c.waiting_rss_mb - c.idle_rss_mb) * 1024 / c.runs
        anon = (c.waiting_anon_mb - c.idle_anon_mb) * 1024 / c.runs
        errors = ", ".join(f"{k} x{v}" for k, v in sorted(c.errors.items())) or "none"
        gc_share = (
            f"{c.gc_s / c.cpu_s * 100:>5.1f}%" if c.cpu_s and c.gc_s == c.gc_s else f"{'-':>6}"
        )
        print(
            f"{c.store:<7} {c.gc:<6} {c.runs:>6} {c.turns:>5} {c.model_ms:>4}ms {c.tool_ms:>4}ms "
            f"{len(c.walls):>6} {ratio:>9.2f}x {percentile(extra, 50) * 1000:>9.0f} "
            f"{percentile(extra, 99) * 1000:>7.0f} {cpu:>6.0f}µs {client:>5.0f}µs "
            f"{c.idle_rss_mb:>7.1f} "
            f"{per_run:>6.1f} {anon:>5.1f} {c.peak_rss_mb:>7.1f} {c.saves / c.wall_s:>7.0f} "
            f"{c.lease_renew / c.wall_s:>9.2f} {gc_share}  {errors}"
        )
    print()
    for c in cells:
        fast = next(
            (f for f in cells if f.fast and (f.store, f.gc) == (c.store, c.gc) and f.steps), None
        )
        if c.fast or fast is None or not c.steps:
            continue
        ratio = (c.cpu_s / c.steps) / (fast.cpu_s / fast.steps)
        print(
            f"{c.store} {c.runs} runs, gc {c.gc}: CPU/step {ratio:.2f}x the fast regime's "
            f"({fast.cpu_s / fast.steps * 1e6:.0f} µs; target <= 1.2x)"
        )
    # The other targets, where a cell is of their size (the figures, not the exit
    # code: a loaded shared machine decides the wall time as much as the daemon does).
    for c in cells:
        if c.fast or c.failure or not c.walls:
            continue
        if c.runs >= 2000 and c.model_ms >= 1000 and not c.tool_ms:
            ratio = max(c.walls) / c.ideal_s
            print(
                f"{c.store} {c.runs} runs, gc {c.gc}: wall {ratio:.2f}x ideal (target <= 1.3x at "
                "2,000)"
            )
        if c.runs >= 10000:
            per_run = (c.waiting_rss_mb - c.idle_rss_mb) * 1024 / c.runs
            print(
                f"{c.store} {c.runs} runs waiting, gc {c.gc}: {per_run:.0f} KB a run, peak RSS "
                f"{c.peak_rss_mb:.0f} MB (targets <= 60 KB, <= 1 GB)"
            )
    if any(c.walls for c in cells):
        med = statistics.median(len(c.walls) / c.runs for c in cells if not c.failure)
        print(f"\nmedian share of runs finished: {med:.3f}")


async def main_async(opts: argparse.Namespace) -> int:
    sizes = [int(n) for n in opts.runs.split(",")]
    stores = [s.strip() for s in opts.stores.split(",") if s.strip()]
    unknown = [s for s in stores if s not in STORES]
    if unknown:
        print(f"unknown stores {unknown}; choose from {sorted(STORES)}", file=sys.stderr)
        return 2
    modes = [m.strip() for m in opts.gc.split(",") if m.strip()]
    if not modes or set(modes) - {"tuned", "python"}:
        print(f"--gc {opts.gc!r}: choose from tuned, python", file=sys.stderr)
        return 2
    cells: list[Cell] = []
    with tempfile.TemporaryDirectory(prefix="luoshod-slowruns-") as tmp_dir:
        for store in stores:
            # Each size with each collector one after the other, so that the machine's
            # load weighs on both alike. The null server has no luoshod collector tuning.
            store_modes = ["-"] if store == "null" else modes
            # bench/steps.py's regime in the same run: 64 sessions of 21 turns with a
            # model that answers at once; the slow cells' CPU/step is compared to it.
            shapes = [] if opts.no_fast else [(64, 21, 0, 0, True)]
            shapes += [(n, opts.turns, opts.model_ms, opts.tool_ms, False) for n in sizes]
            for n, turns, model_ms, tool_ms, fast in shapes:
                for mode in store_modes:
                    tmp = Path(tmp_dir) / f"{store}-{'fast' if fast else n}-{mode}"
                    tmp.mkdir()
                    cell = Cell(store, n, turns, model_ms, tool_ms, fast=fast, gc=mode)
                    print(
                        f"  {store}, gc {mode}: {n} runs x {turns} turns, model {model_ms} ms, "
                        f"tool {tool_ms} ms" + (" (the fast regime)" if fast else ""),
                        file=sys.stderr,
                    )
                    await bench_cell(cell, opts, tmp)
                    cells.append(cell)
    report(cells, opts)
    return 1 if any(c.failure or c.errors for c in cells) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="200,2000", help="comma-separated run counts")
    parser.add_argument("--turns", type=int, default=10, help="model turns a run (>= 1)")
    parser.add_argument("--model-ms", type=int, default=2000, help="each model call's delay")
    parser.add_argument("--tool-ms", type=int, default=0, help="each tool call's delay")
    parser.add_argument(
        "--stores", default="lmdb,sqlite", help="from: lmdb, sqlite, memory, postgres, null"
    )
    parser.add_argument("--procs", type=int, default=4, help="client processes")
    parser.add_argument("--max-active-runs", type=int, default=0, help="the daemon's limit")
    parser.add_argument(
        "--max-loop-lag-ms", type=int, default=0, help="the daemon's lag gate (0: off)"
    )
    parser.add_argument(
        "--gc",
        default="tuned",
        help="the daemon's garbage collector, comma-separated, each cell run with each: "
        "tuned (luoshod serve's default), python (--no-gc-tuning: Python's defaults)",
    )
    parser.add_argument(
        "--gc-probe",
        action="store_true",
        help="time the daemon's collections (gc.callbacks in the daemon, via a sitecustomize)",
    )
    parser.add_argument("--profile", help="write the daemon's cProfile stats to this file")
    parser.add_argument("--show-rpcs", action="store_true", help="print the daemon's RPC codes")
    parser.add_argument(
        "--no-fast", action="store_true", help="skip the fast-regime cell (model 0 ms)"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 50 runs, 3 x 0.5 s")
    # A worker process (started by the benchmark itself).
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--sessions", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--prefix", help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--overload-attempts", type=int, default=0, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        # A file, not stdout: a pipe nobody reads until the end would block the worker.
        Path(opts.out).write_text(json.dumps(asyncio.run(worker_main(opts))))
        return 0
    if opts.quick:
        opts.runs, opts.turns, opts.model_ms = "50", 3, 500
    if opts.turns < 1:
        parser.error("--turns must be >= 1")
    try:
        return asyncio.run(main_async(opts))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
