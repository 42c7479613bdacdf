#!/usr/bin/env python3
"""Burst benchmark: N runs started at once on one daemon, through the default Python
client (not a test).

Every run is a scripted agent of T model turns (T-1 with one client tool call, then a
text turn), each model call taking ``--model-ms``; the client load is spread over
``--procs`` processes (bench/slowruns.py's workers: each its own ``AsyncClient`` with the
default ``RetryPolicy``). The daemon keeps its default admission (``--max-loop-lag-ms``
1000), so it refuses what it cannot start at once with ``DAEMON_OVERLOADED`` and a
``retry_after_s`` that spreads the refused over the seconds its start budget needs; the
clients come back as told. Printed: runs finished and failed (by code and reason), the
burst's wall time and the slowest run's against the ideal (T x model: every run admitted
at once, no step slower than its model), and the runs retried after a refusal.

``--overload-attempts 1`` turns the clients' overload retries off (a refusal is the run's
failure), for comparison.

    .venv/bin/python bench/burst.py                     # 2,000 runs x 10 turns x 2 s
    .venv/bin/python bench/burst.py --runs 500          # lighter
    .venv/bin/python bench/burst.py --runs 500 --overload-attempts 1
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

from slowruns import Cell, bench_cell


async def main_async(opts: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="luoshod-burst-") as tmp_dir:
        cell = Cell(opts.store, opts.runs, opts.turns, opts.model_ms, 0)
        print(
            f"  {opts.store}: {opts.runs} runs x {opts.turns} turns, model {opts.model_ms} ms, "
            f"started at once over {opts.procs} client processes",
            file=sys.stderr,
        )
        await bench_cell(cell, opts, Path(tmp_dir))
    if cell.failure:
        print(f"burst: {cell.failure}")
        return 1
    failed = cell.runs - len(cell.walls)
    errors = ", ".join(f"{k} x{v}" for k, v in sorted(cell.errors.items())) or "none"
    slowest = max(cell.walls) if cell.walls else float("nan")
    print()
    print(
        f"luoshod burst benchmark: {cell.runs} runs x {cell.turns} turns, model "
        f"{cell.model_ms} ms, store {cell.store}, --max-loop-lag-ms {opts.max_loop_lag_ms}, "
        f"client overload retries {'off' if opts.overload_attempts == 1 else 'on (default)'}"
    )
    print(f"  finished {len(cell.walls)}, failed {failed} ({errors})")
    print(
        f"  wall {cell.wall_s:.1f} s for the burst, slowest run {slowest:.1f} s; ideal "
        f"{cell.ideal_s:.1f} s ({cell.wall_s / cell.ideal_s:.2f}x, slowest "
        f"{slowest / cell.ideal_s:.2f}x)"
    )
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs started at once")
    parser.add_argument("--turns", type=int, default=10, help="model turns a run (>= 1)")
    parser.add_argument("--model-ms", type=int, default=2000, help="each model call's delay")
    parser.add_argument("--store", default="lmdb", help="lmdb, sqlite or memory")
    parser.add_argument("--procs", type=int, default=4, help="client processes")
    parser.add_argument(
        "--max-loop-lag-ms", type=int, default=1000, help="the daemon's lag gate (its default)"
    )
    parser.add_argument(
        "--overload-attempts", type=int, default=0, help="the clients' (0: their default)"
    )
    opts = parser.parse_args()
    if opts.turns < 1 or opts.runs < 1:
        parser.error("--runs and --turns must be >= 1")
    # What bench_cell reads of slowruns' options.
    opts.max_active_runs, opts.profile, opts.gc_probe, opts.show_rpcs = 0, None, False, False
    return asyncio.run(main_async(opts))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
