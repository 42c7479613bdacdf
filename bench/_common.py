"""Helpers shared by the benchmarks: server subprocesses, readiness, memory, percentiles,
sessions driven by the Python client."""

from __future__ import annotations

import asyncio
import collections
import math
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable  # run the benchmarks with the project's .venv/bin/python


def py_spy() -> Path | None:
    """The sampling profiler of ``--profile`` (a bench dependency), or ``None`` with a
    line saying how to install it when this venv lacks it."""
    spy = Path(PYTHON).parent / "py-spy"
    if spy.exists():
        return spy
    print(f"--profile needs py-spy in this venv: {Path(PYTHON).parent}/pip install -e '.[bench]'")
    return None


class Spy:
    """py-spy (``--profile``) recording process ``pid`` (each thread apart with
    ``threads``) into ``out`` until :meth:`stop`."""

    def __init__(self, pid: int, out: Path, *, threads: bool = False) -> None:
        self.out = out
        argv = [str(py_spy()), "record", "--pid", str(pid), "--nonblocking", "-r", "200"]
        argv += ["-f", "raw", "-o", str(out)] + (["--threads"] if threads else [])
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> str | None:
        """The raw samples (``None``: py-spy failed)."""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
            return self.out.read_text(errors="replace")
        except (subprocess.TimeoutExpired, OSError):
            self.proc.kill()
            return None


def tally(
    samples: str,
    keep: Callable[[list[str]], bool] = lambda frames: True,
    name: Callable[[str], str] = lambda frame: frame,
) -> tuple[int, collections.Counter[str], collections.Counter[str]]:
    """py-spy's raw ``samples`` counted: how many (of the stacks ``keep`` takes, their
    frames named by ``name``), and by function, own (the innermost frame) and inclusive."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in samples.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = [name(f) for f in stack.split(";")]
        if not keep(frames):
            continue
        total += int(count)
        own[frames[-1]] += int(count)
        for frame in set(frames):
            inclusive[frame] += int(count)
    return total, own, inclusive


class ServerFailed(RuntimeError):
    """A server subprocess exited or never became healthy."""


def free_port() -> int:
    """A TCP port that was free a moment ago (the server binds it right after)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def proc_status_kb(pid: int, field: str) -> int:
    """A memory field of /proc/<pid>/status in kB (VmHWM: peak RSS, VmRSS: current); 0 if gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list (nan when empty)."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


class ServerProcess:
    """A gRPC server in a subprocess: started, awaited healthy, measured, stopped."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        port: int,
        log_path: Path,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.argv = argv
        self.env = {**os.environ, **env} if env else None  # added to the benchmark's
        self.port = port
        self.address = f"127.0.0.1:{port}"
        self.log_path = log_path
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def peak_rss_mb(self) -> float:
        return proc_status_kb(self.pid, "VmHWM") / 1024

    def cpu_seconds(self) -> float:
        """User + system CPU the process has used so far (all its threads); 0 if gone."""
        try:
            with open(f"/proc/{self.pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        return proc_status_kb(self.pid, "VmRSS") / 1024

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    async def start(self, timeout: float = 30.0) -> None:
        """Start the process and wait (bounded) until grpc.health.v1 says SERVING."""
        with open(self.log_path, "wb") as log:
            # A session of its own: Ctrl-C on the benchmark does not hit the server before
            # stop() drains it.
            self._proc = subprocess.Popen(
                self.argv,
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=self.env,
            )
        try:
            await self._wait_serving(timeout)
        except BaseException:
            await self.stop()
            raise

    async def _wait_serving(self, timeout: float) -> None:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        deadline = time.monotonic() + timeout
        async with grpc.aio.insecure_channel(self.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while True:
                if self._proc is not None and self._proc.poll() is not None:
                    raise ServerFailed(
                        f"{self.name} exited with {self._proc.returncode}:\n{self.log_tail()}"
                    )
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ServerFailed(f"{self.name} not SERVING after {timeout:.0f}s")
                try:
                    # wait_for_ready: the call itself waits for the port to accept.
                    reply = await health.Check(
                        health_pb2.HealthCheckRequest(),
                        timeout=min(0.5, remaining),
                        wait_for_ready=True,
                    )
                except grpc.aio.AioRpcError as err:
                    if err.code() not in (
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        grpc.StatusCode.UNAVAILABLE,
                    ):
                        raise ServerFailed(f"{self.name} health check: {err.code().name}") from err
                    continue
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                await asyncio.sleep(0.05)  # up but NOT_SERVING yet: poll again shortly

    async def stop(self, grace: float = 10.0) -> None:
        """SIGTERM (the daemon drains), then SIGKILL after ``grace`` seconds."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            await asyncio.to_thread(proc.wait, grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            await asyncio.to_thread(proc.wait)


async def run_sessions(
    address: str,
    agent: Any,
    sessions: int,
    concurrency: int,
    tools: dict[str, Callable[[dict[str, Any]], Awaitable[Any]]],
    prefix: str = "s",
) -> int:
    """Run ``sessions`` sessions of ``agent`` (an ``AgentSpec``), ``concurrency`` at once,
    the client's ``tools`` answering; the model steps they made. A tool error or a run that
    does not end with ``stop`` raises."""
    from luosho.client import AsyncClient

    ids = iter(f"{prefix}-{uuid.uuid4().hex[:8]}-{i}" for i in range(sessions))
    steps = 0
    async with AsyncClient(address) as client:

        async def worker() -> None:
            nonlocal steps
            for sid in ids:
                run = client.execute(sid, "go", agent=agent, tools=tools)
                async for event in run:
                    if event.type == "model.turn":
                        steps += 1
                    if event.type == "tool.result" and event.tool_result.is_error:
                        raise RuntimeError(f"{sid}: tool error {event.tool_result.result_json}")
                if run.result is None or run.result.finish_reason != "stop":
                    raise RuntimeError(f"{sid}: did not finish")

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return steps
