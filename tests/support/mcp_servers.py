"""Helpers of the daemon-tool tests: the real MCP server of tests/support/mcp_server.py started
over stdio (by the daemon) or streamable HTTP (by the test, on a loopback port), and the
record of their attempts per idempotency key."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from luoshod.config import Secret
from luoshod.domain.mcpspec import RetryPolicy
from luoshod.mcpclient import McpServerConfig
from tests.support import free_port

SERVER = Path(__file__).with_name("mcp_server.py")


def stdio_config(name: str, attempts: Path, *, variant: str = "1", **kw: object) -> McpServerConfig:
    env = {"MCP_ATTEMPTS": Secret(str(attempts)), "MCP_VARIANT": Secret(variant)}
    return McpServerConfig(name, command=sys.executable, args=(str(SERVER), "stdio"), env=env, **kw)  # type: ignore[arg-type]


def http_config(name: str, url: str, token: str = "", **kw: object) -> McpServerConfig:
    headers = {"Authorization": Secret(f"Bearer {token}")} if token else {}
    return McpServerConfig(name, url=url, headers=headers, **kw)  # type: ignore[arg-type]


class HttpServer:
    """``tests/support/mcp_server.py http PORT`` as a subprocess on loopback."""

    def __init__(
        self, attempts: Path, *, token: str = "", variant: str = "1", port: int | None = None
    ) -> None:
        self.attempts, self.token, self.variant = attempts, token, variant
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> HttpServer:
        env = {
            **os.environ,
            "MCP_ATTEMPTS": str(self.attempts),
            "MCP_VARIANT": self.variant,
            "MCP_TOKEN": self.token,
        }
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), "http", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # ready once it accepts connections
            if self.proc.poll() is not None:
                raise RuntimeError(f"MCP test server exited with {self.proc.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("MCP test server did not listen")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None


def attempts(path: Path, key: str | None = None) -> list[dict]:
    """The attempts the server recorded (of one idempotency key)."""
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in rows if key is None or r["key"] == key]


def retry(attempts: int, backoff_ms: int = 0, *on: str) -> RetryPolicy:
    return RetryPolicy(attempts, backoff_ms, tuple(on) or RetryPolicy().retry_on)


def stdio_toml(tmp: Path, attempts_file: Path | None = None) -> Path:
    """``tmp/luoshod.toml`` naming the stdio test server as ``[mcp_servers.files]`` (its
    attempts recorded in ``attempts_file`` when given)."""
    path = tmp / "luoshod.toml"
    env = f"env = {{ MCP_ATTEMPTS = {json.dumps(str(attempts_file))} }}\n" if attempts_file else ""
    path.write_text(
        "[mcp_servers.files]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(SERVER))}, "stdio"]\n' + env
    )
    return path


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (a daemon's stdio servers)."""
    out = []
    for p in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{p}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(p))
    return out


def reap(pids: list[int]) -> None:
    """The stdio servers of a killed daemon end on their closed stdin; make sure."""
    deadline = time.monotonic() + 10
    for pid in pids:
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)
