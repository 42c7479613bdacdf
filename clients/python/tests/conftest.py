"""Fixtures: the null server (bench/null_server.py) on a real port, in a thread of its own;
and ``daemon``, a real luoshod daemon in the test's own event loop on each store the
daemon's own tests use (memory, an SQLite file, LMDB), for the async tests that check the
client against what the daemon really does.

The server runs in its own event loop thread so both clients can be tested against it:
the blocking client would otherwise block the loop that serves it. start_null_server()
returns once the port is bound and serving, so nothing waits or sleeps.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
sys.path.insert(0, str(BENCH))

from null_server import start_null_server  # noqa: E402

from luoshod.server.app import Config, Daemon  # noqa: E402

STORES = {
    "memory": lambda tmp: "memory://",
    "sqlite-file": lambda tmp: f"sqlite:///{tmp}/luoshod.db",
    "lmdb": lambda tmp: f"lmdb://{tmp}/lmdb",
}


class ServerThread:
    """A null server served by an event loop running in a daemon thread."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="null-server", daemon=True
        )
        self._server: grpc.aio.Server | None = None
        self.port = 0

    def start(self) -> None:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(start_null_server(0), self._loop)
        self._server, self.port = started.result(timeout=30)

    def stop(self) -> None:
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._server.stop(None), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()


@pytest.fixture(scope="session")
def target() -> Iterator[str]:
    """host:port of a running null server."""
    server = ServerThread()
    server.start()
    try:
        yield f"127.0.0.1:{server.port}"
    finally:
        server.stop()


@pytest.fixture(params=sorted(STORES))
async def daemon(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Daemon]:
    """A real daemon on loopback, started and stopped in the test's event loop."""
    d = Daemon(
        Config(
            listen=["127.0.0.1:0"],
            store=STORES[request.param](tmp_path),
            tool_timeout_s=30,
            drain_timeout_s=5,
        )
    )
    await d.start()
    try:
        yield d
    finally:
        await d.stop()
