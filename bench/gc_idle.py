#!/usr/bin/env python3
"""What a daemon keeps once idle, with its collector tuned and with Python's defaults (not a test).

``luoshod serve`` collects garbage cycles rarely (server/gc_tuning.py): cycles that reach
the oldest generation wait for its next collection, which an idle daemon may not reach
for long. This plays rounds of N slow runs (2 model turns of 1 s, a tool answered at
once) on a ``memory://`` daemon started each way, and prints its RSS once every run of a
round has ended: what the tuned collector leaves pending, and whether it grows.

    .venv/bin/python bench/gc_idle.py                    # 2,000 runs, 3 rounds
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from luosho.client import AsyncClient  # noqa: E402
from luosho.v1 import agent_pb2 as pb  # noqa: E402
from tests.support.daemon_process import DaemonProcess  # noqa: E402


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


async def play(address: str, runs: int) -> list[str]:
    script = [
        {"tool_calls": [{"name": "work", "arguments": {"i": 1}}], "delay_ms": 1000},
        {"text": "done", "delay_ms": 1000},
    ]
    agent = pb.AgentSpec(
        model="scripted:slow",
        tools=[pb.ToolSpec(name="work", input_schema_json='{"type":"object"}')],
        model_settings_json=json.dumps({"script": script}),
    )
    async with AsyncClient(address) as client:

        async def one(k: int) -> str:
            run = client.execute(
                f"idle-{k}", "go", agent=agent, tools={"work": lambda args: {"ok": 1}}
            )
            async for _ in run:
                pass
            return (await run).finish_reason

        return list(await asyncio.gather(*(one(k) for k in range(runs))))


async def main_async(opts: argparse.Namespace) -> int:
    print(f"daemon RSS once {opts.runs} slow runs have ended, each round (memory://, history 0)")
    for label, flag in (("tuned", "--gc-tuning"), ("python", "--no-gc-tuning")):
        d = DaemonProcess(
            "--store", "memory://", "--max-loop-lag-ms", "0", "--history-limit", "0", flag
        ).start()
        try:
            assert d.proc is not None
            time.sleep(1)
            line = [f"{label:<7} idle {rss_mb(d.proc.pid):5.0f} MB"]
            for _ in range(opts.rounds):
                finished = await play(d.address, opts.runs)
                if finished != ["stop"] * opts.runs:
                    print(f"{label}: runs did not all finish: {sorted(set(finished))}")
                    return 1
                await asyncio.sleep(3)
                line.append(f"{rss_mb(d.proc.pid):5.0f} MB")
            print("  after each round: ".join([line[0], " ".join(line[1:])]))
        finally:
            d.stop()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
