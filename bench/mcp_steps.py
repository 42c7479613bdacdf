#!/usr/bin/env python3
"""Daemon tool steps against client tool steps: the daemon's CPU per step (not a test).

One daemon (``luoshod serve``, memory://) runs three kinds of sessions side by side, in
rounds that alternate their order so that all see the same machine:

  * client  20 steps, each one tool call the client answers (tool.call → SubmitToolResult);
  * http    20 steps, each one call of ``http__work``, a tool of an MCP server over
            streamable HTTP on loopback that answers at once (bench/mcp_server.py, the
            official SDK), run by the daemon itself (docs/reference/rules.md R71);
  * stdio   the same tool of the same server program over stdio (a child of the daemon).
  * sub-stdio  a lead whose one turn delegates (the ``task`` tool) to a sub-agent making
            the same 20 stdio calls, then the lead's final text: a sub-agent's daemon tool
            step against the lead's (printed for information; no target).

The figure is the daemon process's CPU (user + system, from /proc) per model step; the MCP
server's and the client's CPU are their own processes' and not counted. Each round gives
the ratio daemon/client; the result is the median of the rounds (this shared VM's speed
drifts within a minute). Target: a daemon tool step (the HTTP server on loopback) costs at
most 1.5x a client tool step; the exit status is 1 when it does not.

In the same rounds, with the daemon idle, the ceiling: the CPU of this process per call of
the SDK's own ``call_tool`` (one ``mcp.Client`` held open, no daemon) over HTTP and stdio,
and of the daemon's wrapper around it (``luoshod.mcpclient.McpServers.call``: timeout,
``_meta`` with the idempotency key, connection check, result to JSON) on the same servers.
From them, the floor of an HTTP daemon tool step: the daemon's own share of a stdio step
(stdio step - wrapper's stdio call) plus the wrapper's HTTP call.

    .venv/bin/python bench/mcp_steps.py            # 5 rounds of 24 sessions each kind
    .venv/bin/python bench/mcp_steps.py --quick    # 2 rounds of 6
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import PYTHON, ROOT, ServerProcess, free_port
from _common import run_sessions as common_run_sessions

from luosho.v1 import agent_pb2
from luoshod.mcpclient import McpServerConfig, McpServers

TOOL_STEPS = 20
TARGET = 1.5


KINDS = ("client", "http", "stdio", "sub-stdio")


def bench_agent(kind: str) -> agent_pb2.AgentSpec:
    if kind == "sub-stdio":  # the stdio kind's agent as a sub-agent of a lead
        lead = agent_pb2.AgentSpec(
            model="scripted:bench-lead",
            model_settings_json=json.dumps(
                {
                    "script": [
                        {
                            "tool_calls": [
                                {"name": "task", "arguments": {"agent": "worker", "prompt": "work"}}
                            ]
                        },
                        {"text": "done"},
                    ]
                }
            ),
        )
        lead.subagents.add(name="worker", description="works", agent=bench_agent("stdio"))
        return lead
    daemon_tool = kind != "client"
    name = f"{kind}__work" if daemon_tool else "work"
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": name, "arguments": {"i": k}}]} for k in range(TOOL_STEPS)
    ]
    script.append({"text": "done"})
    spec = agent_pb2.AgentSpec(
        model="scripted:bench",
        max_steps=TOOL_STEPS + 5,
        model_settings_json=json.dumps({"script": script}),
    )
    if daemon_tool:
        spec.mcp_servers.add(name=kind)
    else:
        spec.tools.add(name="work", input_schema_json='{"type":"object"}')
    return spec


async def work(args: dict[str, Any]) -> str:
    return str(args.get("i"))


async def run_sessions(address: str, kind: str, sessions: int, concurrency: int) -> int:
    """Run the sessions of one kind; the model steps they made."""
    return await common_run_sessions(
        address, bench_agent(kind), sessions, concurrency, {"work": work}, kind
    )


CEILINGS = ("sdk http", "sdk stdio", "ours http", "ours stdio")


class Ceiling:
    """The in-process ceiling: the SDK's ``call_tool`` alone and the daemon's wrapper
    (``McpServers.call``) around it, each on a connection kept open across rounds."""

    def __init__(self, mcp_port: int) -> None:
        self.url = f"http://127.0.0.1:{mcp_port}/mcp"
        self.stdio = [str(ROOT / "bench" / "mcp_server.py"), "stdio"]
        self.stack = contextlib.AsyncExitStack()
        self.sdk: dict[str, Any] = {}
        self.ours = McpServers(
            {
                "http": McpServerConfig(name="http", url=self.url),
                "stdio": McpServerConfig(name="stdio", command=PYTHON, args=tuple(self.stdio)),
            }
        )

    async def __aenter__(self) -> Ceiling:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = await self.stack.enter_async_context(create_mcp_http_client())
        self.sdk["http"] = await self.stack.enter_async_context(
            Client(streamable_http_client(self.url, http_client=http), cache=None)
        )
        self.sdk["stdio"] = await self.stack.enter_async_context(
            Client(StdioServerParameters(command=PYTHON, args=self.stdio), cache=None)
        )
        for _ in range(20):  # warm up both paths
            await self.measure(1)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.ours.aclose()
        await self.stack.aclose()

    async def where(self, transport: str, calls: int) -> dict[str, float]:
        """The SDK's ``call_tool`` under cProfile (CPU clock): each package's share of the
        self time (a function's own time, so the shares add up to the whole)."""
        import cProfile
        import pstats

        prof = cProfile.Profile(time.process_time)
        client = self.sdk[transport]
        prof.enable()
        for i in range(calls):
            await client.call_tool("work", {"i": i}, meta={"k": str(i)})
        prof.disable()
        by: dict[str, float] = {}
        for (path, _, _), (_, _, tottime, _, _) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
            by[_package(path)] = by.get(_package(path), 0.0) + tottime
        total = sum(by.values()) or 1.0
        return {k: v / total for k, v in sorted(by.items(), key=lambda kv: -kv[1])}

    async def measure(self, calls: int) -> dict[str, float]:
        """This process's CPU seconds per call, for each of CEILINGS."""
        out: dict[str, float] = {}
        for name in CEILINGS:
            who, transport = name.split()
            cpu = time.process_time()
            for i in range(calls):
                if who == "sdk":
                    result = await self.sdk[transport].call_tool(
                        "work", {"i": i}, meta={"k": str(i)}
                    )
                    if result.is_error:
                        raise RuntimeError(f"{name}: tool error")
                else:
                    _, is_error = await self.ours.call(
                        transport, "work", {"i": i}, key=str(i), session_id="bench", timeout_s=30.0
                    )
                    if is_error:
                        raise RuntimeError(f"{name}: tool error")
            out[name] = (time.process_time() - cpu) / calls
        return out


def _package(path: str) -> str:
    """The package a profiled function belongs to: a site-packages distribution, an asyncio
    or other standard module, or C built-ins (``~``: socket calls, epoll, pydantic-core's and
    JSON's C code)."""
    if path == "~":
        return "C built-ins"
    if path.startswith("<"):
        return "stdlib other"  # <frozen ...>, <string>
    parts = Path(path).parts
    if "site-packages" in parts:
        return parts[parts.index("site-packages") + 1].removesuffix(".py")
    if "luoshod" in parts:
        return "luoshod"
    return "stdlib " + ("asyncio" if "asyncio" in parts else "other")


class MCPProcess(ServerProcess):
    """bench/mcp_server.py: ready once its port accepts connections."""

    async def _wait_serving(self, timeout: float) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return
            except OSError:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.05)


async def main_async(opts: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="luoshod-bench-mcp-") as tmp_dir:
        tmp = Path(tmp_dir)
        mcp_port, port = free_port(), free_port()
        mcp = MCPProcess(
            "mcp",
            [PYTHON, str(ROOT / "bench" / "mcp_server.py"), str(mcp_port)],
            mcp_port,
            tmp / "mcp.log",
        )
        config = tmp / "luoshod.toml"
        server = json.dumps(str(ROOT / "bench" / "mcp_server.py"))
        config.write_text(
            f'[mcp_servers.http]\nurl = "http://127.0.0.1:{mcp_port}/mcp"\n'
            f'[mcp_servers.stdio]\ncommand = {json.dumps(PYTHON)}\nargs = [{server}, "stdio"]\n'
        )
        daemon = ServerProcess(
            "daemon",
            [
                PYTHON,
                "-m",
                "luoshod",
                "serve",
                "--listen",
                f"127.0.0.1:{port}",
                "--store",
                "memory://",
                "--config",
                str(config),
                "--log-level",
                "WARNING",
            ],
            port,
            tmp / "daemon.log",
        )
        await mcp.start()
        try:
            await daemon.start()
            try:
                for kind in KINDS:  # warm up: connections, caches, the MCP sessions
                    await run_sessions(daemon.address, kind, 2, 2)
                rows: list[dict[str, float]] = []
                async with Ceiling(mcp_port) as ceiling:
                    for r in range(opts.rounds):
                        per_step: dict[str, float] = {}
                        for kind in KINDS[r % len(KINDS) :] + KINDS[: r % len(KINDS)]:
                            cpu = daemon.cpu_seconds()
                            steps = await run_sessions(
                                daemon.address, kind, opts.sessions, opts.concurrency
                            )
                            per_step[kind] = (daemon.cpu_seconds() - cpu) / steps
                        per_step.update(await ceiling.measure(opts.calls))
                        rows.append(per_step)
                        print(
                            f"  round {r + 1}: "
                            + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in per_step.items()),
                            file=sys.stderr,
                        )
                    where = (
                        {t: await ceiling.where(t, opts.calls) for t in ("http", "stdio")}
                        if opts.where
                        else {}
                    )
            finally:
                await daemon.stop()
        finally:
            await mcp.stop()
    ms = {k: statistics.median(row[k] for row in rows) * 1e3 for k in (*KINDS, *CEILINGS)}
    ratio = {
        k: statistics.median(row[k] / row["client"] for row in rows) for k in ("http", "stdio")
    }
    # The floor of an HTTP daemon tool step: what the daemon spends on a stdio step besides
    # the wrapper's stdio call, plus the wrapper's HTTP call (per round, then the median).
    floor = statistics.median(
        (row["stdio"] - row["ours stdio"] + row["ours http"]) / row["client"] for row in rows
    )
    ok = ratio["http"] <= TARGET
    print(
        f"daemon CPU per step, {opts.sessions} sessions x {TOOL_STEPS} tool steps a kind, "
        f"{opts.concurrency} at once, median of {opts.rounds} rounds:"
    )
    print(f"  client tool step              {ms['client']:6.2f} ms")
    print(
        f"  daemon tool step, HTTP        {ms['http']:6.2f} ms   {ratio['http']:5.2f}x   "
        f"target <= {TARGET}x: {'met' if ok else 'NOT met'}"
    )
    print(
        f"  daemon tool step, stdio       {ms['stdio']:6.2f} ms   {ratio['stdio']:5.2f}x   "
        f"target <= {TARGET}x: {'met' if ratio['stdio'] <= TARGET else 'NOT met'}"
    )
    sub = statistics.median(row["sub-stdio"] / row["stdio"] for row in rows)
    print(
        f"  sub-agent's daemon tool step, stdio {ms['sub-stdio']:6.2f} ms   {sub:5.2f}x the "
        "lead's stdio step "
        f"(per model step of the session: its {TOOL_STEPS + 1} and the lead's 2)"
    )
    print(
        f"ceiling, in-process without the daemon: this process's CPU per call, {opts.calls} calls "
        f"each, median of {opts.rounds} rounds:"
    )
    print(f"  SDK call_tool, HTTP           {ms['sdk http']:6.2f} ms")
    print(f"  SDK call_tool, stdio          {ms['sdk stdio']:6.2f} ms")
    wrap = {
        t: statistics.median(row[f"ours {t}"] / row[f"sdk {t}"] for row in rows)
        for t in ("http", "stdio")
    }
    print(
        f"  McpServers.call, HTTP         {ms['ours http']:6.2f} ms   {wrap['http']:5.2f}x the "
        "SDK's call (the daemon's wrapper)"
    )
    print(f"  McpServers.call, stdio        {ms['ours stdio']:6.2f} ms   {wrap['stdio']:5.2f}x")
    print(
        "  floor of an HTTP daemon tool step (stdio step - wrapper's stdio call + wrapper's HTTP "
        "call): "
        f"{floor:.2f}x a client tool step"
    )
    for transport, shares in where.items():
        print(
            f"where an SDK call_tool's CPU goes over {transport} (cProfile self time, "
            f"{opts.calls} calls): "
            + ", ".join(f"{k} {v:.0%}" for k, v in shares.items() if v >= 0.02)
        )
    return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--sessions", type=int, default=24)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--calls", type=int, default=300, help="calls of each ceiling measure a round")
    p.add_argument(
        "--where",
        action="store_true",
        help="also profile the SDK's call_tool in-process: its CPU by package",
    )
    p.add_argument("--quick", action="store_true", help="2 rounds of 6 sessions, 100 ceiling calls")
    opts = p.parse_args()
    if opts.quick:
        opts.rounds, opts.sessions, opts.calls = 2, 6, 100
    return asyncio.run(main_async(opts))


if __name__ == "__main__":
    sys.exit(main())
