from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from luoshod.server.app import Config, Daemon  # noqa: E402
from postgres_server import PostgresServer, ServerUnavailable  # noqa: E402
from support import Harness  # noqa: E402

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


# -- PostgreSQL ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A throw-away PostgreSQL server for the whole session (tests/postgres_server.py),
    started by the first test that needs it and removed at the end, whatever the tests did.

    Without PostgreSQL's programs the tests that need it are skipped, except in CI (``CI``
    set), where they fail: `make test` installs PostgreSQL first. The server runs with
    ``fsync=off``: the tests kill clients, never the server, so its syncs would only cost
    time (the benchmark keeps them).
    """
    server = PostgresServer(fsync=False)
    try:
        server.start()
    except ServerUnavailable as e:
        server.remove()
        if os.environ.get("CI"):
            pytest.fail(f"CI needs PostgreSQL and it could not be started: {e}")
        pytest.skip(f"no PostgreSQL server: {e}")
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A ``postgresql://`` URL of a new, empty database of the session's server."""
    return postgres_server.create_database()
