"""The providers' tests' settings: a provider entry for a fake model server
(``provider_toml``, with small waits ``FAST``), the agent that uses it (``llm_agent``),
and its ``add`` tool. The fixtures that start them are in tests/providers/conftest.py."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import Harness
from tests.support.model_fakes import FakeServer

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
    windows = entry.pop("context_windows", {})
    lines = [f"[providers.{name}]"] + [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
    for model, price in prices.items():
        lines.append(f'[providers.{name}.prices."{model}"]')
        lines += [f"{k} = {v}" for k, v in price.items()]
    if windows:  # R85
        lines.append(f"[providers.{name}.context_windows]")
        lines += [f'"{model}" = {n}' for model, n in windows.items()]
    return "\n".join(lines) + "\n"


StartDaemon = Callable[..., Awaitable[Harness]]


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
