"""``luoshod sessions list|show`` show usage and cost (R78): the list a session's tokens
and cost, costliest first with ``--by-cost``; show each turn's model and usage, the
totals and the usage by model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from luosho.client import Agent, Client
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon

from .test_admin_commands import cli, cli_json


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d:
        yield d


def spend(address: str, session_id: str, model: str, *costs: float) -> None:
    script = [
        {
            "text": f"turn {n}",
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": cost},
        }
        for n, cost in enumerate(costs)
    ]
    agent = Agent(model, model_settings={"script": script})
    with Client(address) as client:
        for n in range(len(costs)):  # one run a turn: the script plays turn n in run n
            client.execute(session_id, f"input {n}", agent=agent).result()


def test_r78_sessions_list_shows_cost_and_sorts_by_it(
    daemon: Daemon, capsys: pytest.CaptureFixture[str]
) -> None:
    spend(daemon.address, "cost-low", "scripted:a", 0.125)
    spend(daemon.address, "cost-high", "scripted:a", 1.5, 0.5)
    spend(daemon.address, "cost-none", "scripted:a", 0.0)
    code, out, _ = cli(daemon, capsys, "sessions", "list", "--prefix", "cost-")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[:7] == ["SESSION", "STATUS", "FINISH", "STEP", "MSGS", "TOKENS", "COST"]
    cells = {r.split()[0]: r.split()[5:7] for r in rows}
    assert cells == {
        "cost-high": ["220", "$2.0000"],
        "cost-low": ["110", "$0.1250"],
        "cost-none": ["110", "-"],
    }
    listed = cli_json(daemon, capsys, "sessions", "list", "--prefix", "cost-", "--by-cost")
    assert [s["session_id"] for s in listed] == ["cost-high", "cost-low", "cost-none"]
    assert listed[0]["total_usage"]["cost_usd"] == 2.0
    code, out, _ = cli(daemon, capsys, "sessions", "list", "--by-cost", "--limit", "1")
    assert code == 0 and out.splitlines()[1].startswith("cost-high ")


def test_r78_sessions_show_shows_each_turn_and_the_totals(
    daemon: Daemon, capsys: pytest.CaptureFixture[str]
) -> None:
    spend(daemon.address, "shown", "scripted:first", 0.25)
    spend_more = [
        {"text": "t0"},
        {
            "text": "cheaper now",
            "usage": {
                "prompt_tokens": 300,
                "completion_tokens": 20,
                "cached_input_tokens": 250,
                "reasoning_tokens": 7,
                "cost_usd": 0.0625,
            },
        },
    ]
    with Client(daemon.address) as client:
        agent = Agent("scripted:second", model_settings={"script": spend_more})
        client.execute("shown", "again", agent=agent).result()
    code, out, _ = cli(daemon, capsys, "sessions", "show", "shown")
    assert code == 0
    assert "(scripted:first: 100 in + 10 out, $0.2500)" in out
    assert "(scripted:second: 300 in + 20 out; 250 cached, 7 reasoning, $0.0625)" in out
    assert "session:  430 tokens (400 prompt + 30 completion; 250 cached, 7 reasoning)" in out
    assert "by model scripted:first: 110 tokens (100 prompt + 10 completion)" in out
    by_model = [line for line in out.splitlines() if "by model" in line]
    assert len(by_model) == 2 and "scripted:first" in by_model[0]  # the costliest first

    shown = cli_json(daemon, capsys, "sessions", "show", "shown")
    assert (
        shown["usage_by_model"]["scripted:second"]["cached_input_tokens"] == "250"
    )  # int64: a string in JSON
    turns = [m for m in shown["checkpoint"]["messages"] if m["role"] == "ROLE_ASSISTANT"]
    assert [t["model"] for t in turns] == ["scripted:first", "scripted:second"]
    assert shown["history"][0]["model"] == "scripted:second"
    assert shown["history"][0]["total_usage"]["cost_usd"] == 0.3125
