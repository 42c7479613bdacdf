"""Fixtures for the real providers' tests.

``fake`` is a fake model server of each wire format (ids ``openai`` and ``anthropic``), so
every test taking it runs once per provider; it fails the test if any request it received
was not a valid transcript of its format. ``llm`` starts an in-process daemon whose config
file names that server as provider ``llm`` (the model id is ``llm:test-model``) and
returns a :class:`Harness` on it; keyword overrides change the entry.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness
from tests.support.model_fakes import WIRES, FakeServer

KEY_ENV = "LUOSHOD_TEST_PROVIDER_KEY"
MODEL = "test-model"
#: Small waits so the retry tests stay fast; the failure floors (guard.py) near zero, so a
#: test may resume at once after a failure (tests/providers/test_failure_floors.py keeps
#: the defaults).
FAST = {
    "timeout_s": 0.5,
    "max_retries": 3,
    "backoff_base_s": 0.001,
    "backoff_max_s": 1.0,
    "failure_backoff_base_s": 0.001,
    "failure_backoff_max_s": 0.01,
    "circuit_open_s": 0.001,
}
PRICE = {"prompt_per_mtok": 0.15, "completion_per_mtok": 0.6}


@pytest.fixture(params=sorted(WIRES))
async def fake(request: pytest.FixtureRequest) -> AsyncIterator[FakeServer]:
    server = await WIRES[request.param]().start()
    try:
        yield server
    finally:
        await server.close()
    assert not server.violations, "invalid transcripts sent:\n" + "\n".join(server.violations)


def provider_toml(fake: FakeServer, name: str = "llm", **overrides: Any) -> str:
    """A config file with one provider entry for ``fake``."""
    entry: dict[str, Any] = {
        "kind": fake.kind,
        "base_url": fake.base_url,
        "api_key_env": KEY_ENV,
        **FAST,
    }
    entry.update(overrides)
    prices = entry.pop("prices", {MODEL: PRICE})
    lines = [f"[providers.{name}]"] + [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
    for model, price in prices.items():
        lines.append(f'[providers.{name}.prices."{model}"]')
        lines += [f"{k} = {v}" for k, v in price.items()]
    return "\n".join(lines) + "\n"


StartDaemon = Callable[..., Awaitable[Harness]]


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


def llm_agent(
    tools: dict[str, dict[str, Any]] | None = None,
    *,
    settings: dict[str, Any] | None = None,
    instructions: str = "You add numbers with the tools.",
    **kw: Any,
) -> pb.AgentSpec:
    if tools is None:
        tools = {
            "add": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            }
        }
    return pb.AgentSpec(
        model=f"llm:{MODEL}",
        instructions=instructions,
        tools=[
            pb.ToolSpec(name=n, description=f"the {n} tool", input_schema_json=json.dumps(s))
            for n, s in tools.items()
        ],
        model_settings_json=json.dumps(settings) if settings else "",
        **kw,
    )


def add(args: dict[str, Any]) -> float:
    return args.get("a", 0) + args.get("b", 0)
