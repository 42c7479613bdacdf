from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from luoshod.server.app import Config, Daemon  # noqa: E402
from tests.support.harness import Harness  # noqa: E402

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


# The throw-away PostgreSQL server (postgres_server, postgres_url) is the repository's
# conftest.py's: the drivers' tests and the conformance kit use it too.
