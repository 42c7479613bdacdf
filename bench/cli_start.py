#!/usr/bin/env python3
"""CLI start-up benchmark: how long the people CLI takes to start (not a test).

In one run, side by side, each measured ``--runs`` times (15) in interleaved rounds (every
command once a round, so that this shared VM's drift meets all of them alike):

  * ``python -c "import grpc"``  the floor: any gRPC client pays it;
  * ``import grpc`` and the API's generated code (``luosho.v1.agent_pb2``, ``_grpc``): what
    any client of this API pays before its own code (protobuf's runtime and descriptors);
  * ``luoshod sessions list --address 127.0.0.1:PORT``  PORT bound but not listening, so
    the command fails at once with ``cannot reach the daemon`` (exit 1): what is left is
    the start-up, imports and argument parsing;
  * ``luoshod --help``  the parser alone.

Each command's figure is the median of its runs; a ratio to ``import grpc`` is the median
of the ratios of each round, of the wall time and of the process's CPU time (user + system,
steadier than the wall time on a shared machine). Target: ``sessions list`` at most 1.5x
``import grpc`` (wall); the script prints the verdict and exits 1 when it is missed.

The warm-up runs write the project's ``.pyc`` files even where ``PYTHONDONTWRITEBYTECODE``
is set (an installed package has them; without them every start compiles the CLI's and the
client's sources again, a third of the time measured). ``python -X importtime`` shows
where a start-up goes.

    .venv/bin/python bench/cli_start.py             # 15 rounds
    .venv/bin/python bench/cli_start.py --runs 5    # quicker
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable  # run it with the project's .venv/bin/python
TARGET = 1.5
GENERATED = "import grpc\nfrom luosho.v1 import agent_pb2, agent_pb2_grpc"


def luoshod_command() -> list[str]:
    """The ``luoshod`` console script beside this Python (what people run), else ``-m``."""
    script = Path(PYTHON).parent / "luoshod"
    return [str(script)] if script.exists() else [PYTHON, "-m", "luoshod"]


def timed(
    argv: list[str], expect_rc: int, expect_err: str = "", env: dict[str, str] | None = None
) -> tuple[float, float]:
    """Seconds from spawn to exit, and the process's CPU seconds. Raises ``RuntimeError``
    when the command did not do what is measured (another exit status, or not the expected
    failure line)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != expect_rc or expect_err not in err:
        raise RuntimeError(
            f"{' '.join(argv)}: exit {proc.returncode}, stderr: {err.strip()[-400:]}"
        )
    return elapsed, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15, help="rounds (each command once a round)")
    args = ap.parse_args()

    with socket.socket() as closed:  # bound, never listening: connecting is refused at once
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        luoshod = luoshod_command()
        cases = {
            "import grpc": ([PYTHON, "-c", "import grpc"], 0, ""),
            "import grpc + API": ([PYTHON, "-c", GENERATED], 0, ""),
            "luoshod sessions list": (
                [*luoshod, "sessions", "list", "--address", address],
                1,
                "cannot reach the daemon",
            ),
            "luoshod --help": ([*luoshod, "--help"], 0, ""),
        }
        writing = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for argv, rc, err in cases.values():  # warm the page cache and the .pyc files
            timed(argv, rc, err, writing)
        times: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):
            for name, (argv, rc, err) in cases.items():
                wall, used = timed(argv, rc, err)
                times[name].append(wall)
                cpu[name].append(used)

    floor, cpu_floor = times["import grpc"], cpu["import grpc"]
    print(
        f"CLI start-up, median of {args.runs} runs each (interleaved); ratio: median of per-round "
        "ratios to import grpc (wall; CPU: the process's user + system time)"
    )
    print(
        f"{'command':<24} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'ratio':>6} "
        f"{'CPU ms':>7} {'ratio':>6}"
    )
    ratios: dict[str, float] = {}
    for name, values in times.items():
        ratios[name] = statistics.median(v / f for v, f in zip(values, floor, strict=True))
        cpu_ratio = statistics.median(
            v / f for v, f in zip(cpu[name], cpu_floor, strict=True) if f > 0
        )
        print(
            f"{name:<24} {statistics.median(values) * 1e3:>10.0f} {min(values) * 1e3:>8.0f} "
            f"{max(values) * 1e3:>8.0f} {ratios[name]:>5.2f}x "
            f"{statistics.median(cpu[name]) * 1e3:>7.0f} {cpu_ratio:>5.2f}x"
        )
    ratio = ratios["luoshod sessions list"]
    ok = ratio <= TARGET
    verdict = "met" if ok else "MISSED"
    print(f"target: luoshod sessions list <= {TARGET:g}x import grpc: {ratio:.2f}x, {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
