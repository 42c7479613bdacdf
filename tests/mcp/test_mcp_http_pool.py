"""The daemon's HTTP connections to a streamable-HTTP MCP server (tests/support/mcp_server.py
on loopback, the official SDK on both sides): calls in flight at once each hold an HTTP/1.1
connection, and every one of them is kept for the next calls. httpx's default pool keeps 20
idle connections, so before, each call beyond 20 at once opened a connection and closed it
after its answer. The connections are counted from the kernel's own table (/proc/net/tcp,
the sockets among this process's file descriptors), not from the HTTP client."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from luoshod.mcpclient import McpServers
from luoshod.mcpclient.manager import HTTP_CONNECTIONS
from tests.support.mcp_servers import HttpServer, attempts, http_config

AT_ONCE = 40


def established_to(port: int) -> set[int]:
    """The local ports of this process's ESTABLISHED TCP connections to 127.0.0.1:port."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, state, inode = fields[1], fields[2], fields[3], fields[9]
        if state == "01" and inode in inodes and int(remote.split(":")[1], 16) == port:
            ports.add(int(local.split(":")[1], 16))
    return ports


async def test_concurrent_calls_keep_their_connections_for_the_next_calls(tmp_path: Path) -> None:
    assert HTTP_CONNECTIONS > AT_ONCE
    attempts_file = tmp_path / "attempts.jsonl"
    server = HttpServer(attempts_file).start()
    tools = McpServers({"web": http_config("web", server.url)})
    try:
        await tools.list_tools("web")

        async def wave(n: int) -> set[int]:
            """One wave of calls at once; the connections seen open while it ran."""
            calls = asyncio.gather(
                *(
                    tools.call(
                        "web", "slow", {"ms": 500}, key=f"w{n}-{i}", session_id="s", timeout_s=30
                    )
                    for i in range(AT_ONCE)
                )
            )
            seen: set[int] = set()
            while not calls.done():
                seen |= established_to(server.port)
                await asyncio.wait({calls}, timeout=0.02)
            answers = calls.result()
            assert [is_error for _, is_error in answers] == [False] * AT_ONCE
            assert all("slept 500ms" in text for text, _ in answers)
            return seen

        used = await wave(1)
        kept = established_to(server.port)
        # The calls overlapped (each sleeps 500 ms), each on a connection of its own: more
        # at once than httpx's default pool keeps (a loaded machine may serialise a few).
        assert len(used) > 20 + 5, f"only {len(used)} connections for {AT_ONCE} calls at once"
        # Every connection the wave used is still open, beside the SDK's GET stream.
        assert used <= kept, f"{len(used - kept)} of the wave's {len(used)} connections were closed"
        await wave(2)
        after = established_to(server.port)
        new = after - kept
        # The second wave reuses them: at most what the first wave did not overlap is new.
        most = 2 + AT_ONCE - (len(kept) - 1)
        assert len(new) <= most, f"the second wave opened {len(new)} new connections"
        assert len(attempts(attempts_file)) == 2 * AT_ONCE
    finally:
        await tools.aclose()
        server.stop()


@pytest.fixture(autouse=True)
def _loopback_only() -> None:
    if not Path("/proc/net/tcp").exists():
        pytest.skip("needs /proc/net/tcp (Linux)")
