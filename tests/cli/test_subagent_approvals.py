"""The people CLI with sub-agents (R60): ``approvals list`` shows the sub-agent's path,
and a sub-agent's approval decided from the CLI is finished by the app's client."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from luosho.client import Agent, Client, SubAgent, Tool
from luoshod.cli import main
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon

HELPER = Agent(
    "scripted:helper",
    tools=[Tool("charge", needs_approval=True)],
    model_settings={
        "script": [
            {"tool_calls": [{"name": "charge", "arguments": {"eur": 40}}]},
            {"text": "charged"},
        ]
    },
)
LEAD = Agent(
    "scripted:lead",
    model_settings={
        "script": [
            {
                "tool_calls": [
                    {"name": "task", "arguments": {"agent": "payer", "prompt": "charge 40"}}
                ]
            },
            {"text": "paid"},
        ]
    },
    subagents=[SubAgent("payer", "charges cards", HELPER)],
)


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d:
        yield d


def cli(daemon: Daemon, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--address", daemon.address])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_subagent_approval_listed_and_decided_from_the_cli_then_finished_by_the_app(
    daemon: Daemon, capsys: pytest.CaptureFixture[str]
) -> None:
    with Client(daemon.address) as client:
        paused = client.execute("cli-sub", "pay", agent=LEAD).result()
        assert paused.finish_reason == "awaiting_approval"
        code, out, _ = cli(daemon, capsys, "approvals", "list", "--session", "cli-sub")
        assert code == 0
        row = out.splitlines()[1].split()
        assert row[:8] == [
            paused.approval_id,
            "cli-sub",
            "1",
            "approval",
            "charge",
            "(call_0_0/call_0_0)",
            "in",
            "payer",
        ]
        code, out, _ = cli(daemon, capsys, "approvals", "list", "--json")
        (listed,) = [a for a in json.loads(out) if a["session_id"] == "cli-sub"]
        assert listed["subagent_path"] == ["payer"]
        code, out, err = cli(
            daemon, capsys, "approvals", "approve", paused.approval_id, "--note", "ok"
        )
        assert code == 0, err
        assert "call_0_0/call_0_0" in out  # the app's next Resume runs the sub-agent's call
        charged: list[dict] = []
        done = client.resume(
            "cli-sub", tools={"charge": lambda a: charged.append(a) or {"ok": True}}
        ).result()
        assert (done.finish_reason, done.final_text) == ("stop", "paid")
        assert charged == [{"eur": 40}]


def test_sessions_show_prints_the_unfinished_subagents_as_a_tree(
    daemon: Daemon, capsys: pytest.CaptureFixture[str]
) -> None:
    with Client(daemon.address) as client:
        client.execute("cli-tree", "pay", agent=LEAD).result()
        cp = client.get_session("cli-tree")
        (state,) = cp.subagents  # GetSession shows the nested state (R59)
        assert (state.call_id, state.name, state.depth, list(state.path), state.task_id) == (
            "call_0_0",
            "payer",
            1,
            ["payer"],
            "task_1",
        )
        assert [m.content for m in state.messages][:1] == ["charge 40"]
        assert state.step_index == 1 and state.fingerprint.hash
    code, out, _ = cli(daemon, capsys, "sessions", "show", "cli-tree")
    assert code == 0
    assert "Sub-agents at work (1)" in out
    assert "  payer task_1 [call_0_0]  step 1, 2 messages" in out
    assert "charge 40" in out and "delegated: " in out
