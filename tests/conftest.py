"""The fixtures the folders share: ``h`` (a daemon in the test's event loop on each store,
with a gRPC harness) and ``make_console``/``console`` (a daemon with its HTTP listener, for
the HTTP tests and the README's curl lines). A folder's own fixtures are in its conftest.py
(tests/README.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from luoshod.server.app import Config, Daemon
from tests.support.console import Console, ConsoleFactory, _token_stub, http_config
from tests.support.harness import Harness

STORES = {
    "memory": lambda tmp: "memory://",
    "sqlite-file": lambda tmp: f"sqlite:///{tmp}/luoshod.db",
    "lmdb": lambda tmp: f"lmdb://{tmp}/lmdb",
}


@pytest.fixture(params=sorted(STORES))
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return STORES[request.param](tmp_path)


@pytest.fixture
def config(store_url: str, tmp_path: Path) -> Config:
    return Config(
        listen=["127.0.0.1:0"],
        store=store_url,
        scripted_call_log=tmp_path / "calls.jsonl",
        tool_timeout_s=30,
        drain_timeout_s=5,
    )


@pytest.fixture
async def daemon(config: Config) -> AsyncIterator[Daemon]:
    d = Daemon(config)
    await d.start()
    try:
        yield d
    finally:
        await d.stop()


@pytest.fixture
async def h(daemon: Daemon, config: Config) -> AsyncIterator[Harness]:
    harness = Harness(daemon.addresses[0], daemon, config.scripted_call_log)
    try:
        yield harness
    finally:
        await harness.close()


@pytest.fixture
async def make_console(tmp_path: Path) -> AsyncIterator[ConsoleFactory]:
    """Starts daemons (``http_config``'s keywords) and stops them all at the end."""
    made: list[Console] = []

    async def make(*, token: str | None = None, ssl: Any = None, **kw: Any) -> Console:
        folder = tmp_path / f"d{len(made)}"
        folder.mkdir()
        d = Daemon(http_config(folder, **kw))
        await d.start()
        assert d.http is not None and d.http.address
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        connector = aiohttp.TCPConnector(ssl=ssl) if ssl is not None else None
        session = aiohttp.ClientSession(headers=headers, connector=connector)
        app = Harness(d.addresses[0], d)
        if token:
            app.stub = _token_stub(app.channel, token)
        c = Console(d, d.http.url, session, app)
        made.append(c)
        return c

    try:
        yield make
    finally:
        for c in made:
            await c.http.close()
            await c.app.close()
            await c.daemon.stop()


@pytest.fixture
async def console(make_console: ConsoleFactory) -> Console:
    return await make_console()


# The throw-away PostgreSQL server (postgres_server, postgres_url) is the repository's
# conftest.py's: the drivers' tests and the conformance kit use it too.
