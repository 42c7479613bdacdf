"""R86 in the CLI: ``sessions list --status sleeping`` shows when each sleeper wakes,
``sessions show`` says it and how to wake it, ``sessions resume --wake`` wakes it now, and
``prune`` leaves sleeping sessions alone unless asked for them by name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from luosho.client import Agent, Client
from tests.support.cli import cli, cli_json
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon

DAY = 86400.0
SCRIPT = [
    {"tool_calls": [{"name": "sleep", "arguments": {"until": "2100-01-01T09:00:00Z"}}]},
    {"text": "good morning"},
]


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d:
        yield d


@pytest.fixture(scope="module")
def client(daemon: Daemon) -> Iterator[Client]:
    with Client(daemon.address) as c:
        yield c


def asleep(client: Client, session_id: str) -> None:
    agent = Agent("scripted:nap", sleep_tool=True, model_settings={"script": SCRIPT})
    result = client.execute(session_id, "wake me in 2100", agent=agent).result()
    assert (result.finish_reason, result.status) == ("sleeping", "sleeping")


def test_r86_sessions_list_show_and_resume_wake(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    asleep(client, "nap-1")
    code, out, _ = cli(daemon, capsys, "sessions", "list", "--status", "sleeping")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[-2:] == ["WAKES", "(UTC)"]
    [row] = rows
    assert row.split()[:3] == ["nap-1", "sleeping", "sleeping"]
    assert row.endswith("2100-01-01 09:00:00Z")
    [listed] = cli_json(daemon, capsys, "sessions", "list", "--status", "sleeping")
    assert listed["wake_at"] == "2100-01-01T09:00:00Z"
    code, out, _ = cli(daemon, capsys, "sessions", "show", "nap-1")
    assert code == 0
    assert "status    sleeping (sleeping)" in out
    assert "wakes     2100-01-01 09:00:00Z (now with: luoshod sessions resume nap-1 --wake)" in out
    code, out, err = cli(daemon, capsys, "sessions", "resume", "nap-1")
    assert code == 1 and "SESSION_SLEEPING" in err
    code, out, _ = cli(daemon, capsys, "sessions", "resume", "nap-1", "--wake")
    assert code == 0 and out.splitlines()[-1] == "session nap-1 is finished (stop)"
    assert client.get_session("nap-1").messages[-1].content == "good morning"


def test_r86_prune_keeps_sleeping_sessions_unless_named(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    asleep(client, "nap-old")

    async def age() -> None:
        store = daemon.daemon.store
        cp = await store.load("nap-old")
        assert cp is not None
        await store.import_session(
            "nap-old", latest=replace(cp, updated_at=cp.updated_at - 40 * DAY), history=[]
        )

    daemon.call(age())
    dry = cli_json(daemon, capsys, "prune", "--older-than", "30d", "--dry-run")
    assert "nap-old" not in {s["session_id"] for s in dry["matched"]}
    dry = cli_json(
        daemon, capsys, "prune", "--older-than", "30d", "--status", "sleeping", "--dry-run"
    )
    assert {s["session_id"] for s in dry["matched"]} == {"nap-old"}


def test_r86_the_python_client_lists_sleepers_and_wakes_one(client: Client) -> None:
    asleep(client, "nap-client")
    listed = list(client.list_sessions("sleeping", prefix="nap-client"))
    assert [s.session_id for s in listed] == ["nap-client"] and listed[0].HasField("wake_at")
    result = client.resume("nap-client", wake=True).result()
    assert (result.finish_reason, result.status, result.final_text) == (
        "stop",
        "finished",
        "good morning",
    )
