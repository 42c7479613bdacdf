#!/usr/bin/env python3
"""Sub-agent steps against lead steps: the daemon's CPU per step, and bytes on disk of a
session with many tasks (not a test; issue 15's targets).

One daemon (``luoshod serve``, a SQLite file in a temporary directory: every save
durable) runs two kinds of sessions side by side, in rounds that alternate their order:

  * lead      a lead agent of TOOL_STEPS client tool steps, then its final text;
  * subagent  a lead whose one turn delegates to a sub-agent (the ``task`` tool) of
              TOOL_STEPS client tool steps and its final text, then the lead's final text.

The figure is the daemon process's CPU (user + system, from /proc) per model step of the
whole session (a sub-agent kind's session makes TOOL_STEPS + 3 model calls); each round
gives the ratio subagent/lead, the result is the median of the rounds. Target: at most
1.2x.

Then one session of TASKS tasks of TOOL_STEPS steps each runs on a fresh daemon over a
fresh SQLite file, and the file's bytes (with its WAL) are compared with the session's
raw transcript (every message's JSON, the lead's and every sub-agent's). Target: at most
1.5x. The exit status is 1 when a target is not met.

    .venv/bin/python bench/subagent_steps.py            # 5 rounds of 16 sessions a kind
    .venv/bin/python bench/subagent_steps.py --quick    # 2 rounds of 4
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import PYTHON, ServerProcess, free_port
from _common import run_sessions as common_run_sessions
from luosho.client import AsyncClient
from luosho.v1 import agent_pb2

TOOL_STEPS = 10
TASKS = 50
CPU_TARGET = 1.2
BYTES_TARGET = 1.5
KINDS = ("lead", "subagent")


def worker_agent(model: str) -> agent_pb2.AgentSpec:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "work", "arguments": {"i": k}}]} for k in range(TOOL_STEPS)
    ]
    script.append({"text": "done"})
    return agent_pb2.AgentSpec(
        model=model, max_steps=TOOL_STEPS + 5, model_settings_json=json.dumps({"script": script}),
        tools=[agent_pb2.ToolSpec(name="work", input_schema_json='{"type":"object"}')],
    )


def delegating_agent(tasks: int) -> agent_pb2.AgentSpec:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "task", "arguments": {"agent": "worker", "prompt": f"job {k}"}}]}
        for k in range(tasks)
    ]
    script.append({"text": "all delegated"})
    spec = agent_pb2.AgentSpec(
        model="scripted:lead", max_steps=tasks + 5, model_settings_json=json.dumps({"script": script})
    )
    spec.subagents.add(name="worker", description="does the work", agent=worker_agent("scripted:worker"))
    return spec


AGENTS = {"lead": worker_agent("scripted:bench"), "subagent": delegating_agent(1)}


async def work(args: dict[str, Any]) -> dict[str, Any]:
    return {"ok": args.get("i")}


async def run_sessions(address: str, agent: agent_pb2.AgentSpec, sessions: int, concurrency: int) -> int:
    """Run ``sessions`` sessions of ``agent``; the model steps they made."""
    return await common_run_sessions(address, agent, sessions, concurrency, {"work": work})


def daemon(tmp: Path, name: str) -> ServerProcess:
    port = free_port()
    return ServerProcess(
        name,
        [PYTHON, "-m", "luoshod", "serve", "--listen", f"127.0.0.1:{port}",
         "--store", f"sqlite://{tmp / (name + '.db')}", "--log-level", "WARNING"],
        port, tmp / f"{name}.log",
    )


async def cpu_rounds(opts: argparse.Namespace, tmp: Path) -> list[dict[str, float]]:
    server = daemon(tmp, "cpu")
    await server.start()
    try:
        for kind in KINDS:  # warm up: connections, caches
            await run_sessions(server.address, AGENTS[kind], 2, 2)
        rows = []
        for r in range(opts.rounds):
            per_step: dict[str, float] = {}
            for kind in KINDS[r % 2:] + KINDS[:r % 2]:
                cpu = server.cpu_seconds()
                steps = await run_sessions(server.address, AGENTS[kind], opts.sessions, opts.concurrency)
                per_step[kind] = (server.cpu_seconds() - cpu) / steps
            rows.append(per_step)
            print("  round %d: " % (r + 1) + ", ".join(f"{k} {v * 1e3:.2f} ms CPU/step" for k, v in per_step.items()),
                  file=sys.stderr)
        return rows
    finally:
        await server.stop()


async def bytes_on_disk(tmp: Path, tasks: int) -> tuple[int, int]:
    """(bytes of the store's files, bytes of the raw transcript) of one session of ``tasks``
    tasks of TOOL_STEPS steps each."""
    server = daemon(tmp, "bytes")
    await server.start()
    raw = 0
    try:
        async with AsyncClient(server.address) as client:
            run = client.execute("many-tasks", "go", agent=delegating_agent(tasks), tools={"work": work})
            async for event in run:
                if event.type == "model.turn":  # every assistant turn, lead's and sub-agents'
                    m = event.model_turn.message
                    raw += len(json.dumps({"content": m.content, "tool_calls": [
                        {"id": c.id, "name": c.name, "arguments": c.arguments_json} for c in m.tool_calls]}))
                elif event.type == "tool.result":
                    r = event.tool_result
                    raw += len(json.dumps({"tool_call_id": r.tool_call_id, "content": r.result_json}))
            if run.result is None or run.result.finish_reason != "stop":
                raise RuntimeError("the many-tasks session did not finish")
            # The sub-agents' prompts and instructions-free system parts: one user turn each.
            raw += tasks * len(json.dumps({"content": "job 00"}))
    finally:
        await server.stop()
    disk = sum(p.stat().st_size for p in tmp.glob("bytes.db*"))
    return disk, raw


async def main_async(opts: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="luoshod-bench-sub-") as tmp_dir:
        tmp = Path(tmp_dir)
        rows = await cpu_rounds(opts, tmp)
        disk, raw = await bytes_on_disk(tmp, opts.tasks)
    ms = {k: statistics.median(row[k] for row in rows) * 1e3 for k in KINDS}
    ratio = statistics.median(row["subagent"] / row["lead"] for row in rows)
    cpu_ok, bytes_ok = ratio <= CPU_TARGET, disk <= BYTES_TARGET * raw
    print(f"daemon CPU per model step (sqlite), {opts.sessions} sessions x {TOOL_STEPS} tool steps a kind, "
          f"{opts.concurrency} at once, median of {opts.rounds} rounds:")
    print(f"  lead step                     {ms['lead']:6.2f} ms")
    print(f"  sub-agent session step        {ms['subagent']:6.2f} ms   {ratio:5.2f}x   "
          f"target <= {CPU_TARGET}x: {'met' if cpu_ok else 'NOT met'}")
    print(f"bytes on disk, one session of {opts.tasks} tasks x {TOOL_STEPS} steps (sqlite file + WAL):")
    print(f"  {disk / 1e6:.2f} MB on disk, raw transcript {raw / 1e6:.2f} MB: {disk / raw:.2f}x   "
          f"target <= {BYTES_TARGET}x: {'met' if bytes_ok else 'NOT met'}")
    return 0 if cpu_ok and bytes_ok else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--sessions", type=int, default=16)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--tasks", type=int, default=TASKS)
    p.add_argument("--quick", action="store_true", help="2 rounds of 4 sessions, 10 tasks")
    opts = p.parse_args()
    if opts.quick:
        opts.rounds, opts.sessions, opts.tasks = 2, 4, 10
    return asyncio.run(main_async(opts))


if __name__ == "__main__":
    sys.exit(main())
