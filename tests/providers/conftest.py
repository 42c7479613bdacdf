"""Fixtures for the real providers' tests.

``fake`` is a fake model server of each wire format (ids ``openai`` and ``anthropic``), so
every test taking it runs once per provider; it fails the test if any request it received
was not a valid transcript of its format. ``llm`` starts an in-process daemon whose config
file names that server as provider ``llm`` (the model id is ``llm:test-model``) and
returns a :class:`Harness` on it; keyword overrides change the entry (the entry and the
agent: tests/support/providers.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness
from tests.support.model_fakes import WIRES, FakeServer
from tests.support.providers import KEY_ENV, StartDaemon, provider_toml


@pytest.fixture(params=sorted(WIRES))
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[FakeServer]:
    server = await WIRES[request.param]().start()
    try:
        yield server
    finally:
        await server.close()
    assert not server.violations, "invalid transcripts sent:\n" + "\n".join(server.violations)


@pytest.fixture
async def llm_daemon(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[StartDaemon]:
    """``await llm_daemon(**entry_overrides)`` → a Harness on a started daemon."""
    monkeypatch.setenv(KEY_ENV, fake.key)
    started: list[tuple[Daemon, Harness]] = []

    async def start(**overrides: Any) -> Harness:
        path = tmp_path / f"luoshod-{len(started)}.toml"
        path.write_text(provider_toml(fake, **overrides))
        config = Config(
            listen=["127.0.0.1:0"],
            store=f"sqlite:///{tmp_path}/luoshod-{len(started)}.db",
            tool_timeout_s=30,
            drain_timeout_s=5,
            # These tests time the daemon's guards around a provider; admission (a loaded
            # machine's late loop refusing new runs) is tested on its own
            # (tests/daemon/test_admission.py).
            max_loop_lag_ms=0,
            config_file=path,
        )
        daemon = Daemon(config)
        await daemon.start()
        harness = Harness(daemon.addresses[0], daemon)
        started.append((daemon, harness))
        return harness

    try:
        yield start
    finally:
        for daemon, harness in reversed(started):
            await harness.close()
            await daemon.stop()
            await daemon.engine.providers.aclose()


@pytest.fixture
async def llm(llm_daemon: StartDaemon) -> Harness:
    return await llm_daemon()
