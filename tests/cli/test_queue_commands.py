"""``luoshod sessions show`` prints a session's queued inputs (R69) and ``luoshod sessions
dequeue`` removes one, against a live daemon."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from luosho.client import Agent, Client, LuoshoError, Tool
from tests.support.cli import PAY_SCRIPT as PAY
from tests.support.cli import cli, cli_json
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d:
        yield d


def test_sessions_show_lists_the_queue_and_dequeue_removes_an_input(
    daemon: Daemon, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = Agent(
        "scripted:pay", tools=[Tool("charge", needs_approval=True)], model_settings={"script": PAY}
    )
    with Client(daemon.address) as client:
        assert client.execute("cli-q", "charge it", agent=agent).result().approval_id
        waiting = client.execute(
            "cli-q", "and a receipt, please", agent=agent, if_busy="enqueue", request_id="receipt"
        )
        assert next(iter(waiting)).type == "input.queued"  # kept while the session is paused
        code, out, _ = cli(daemon, capsys, "sessions", "show", "cli-q")
        assert code == 0
        assert "queued inputs (1, in the order they run):" in out
        line = next(x for x in out.splitlines() if x.strip().startswith("1. receipt"))
        assert "enqueue" in line and "'and a receipt, please'" in line
        shown = cli_json(daemon, capsys, "sessions", "show", "cli-q")
        assert [q["request_id"] for q in shown["queue"]] == ["receipt"]
        code, out, _ = cli(daemon, capsys, "sessions", "dequeue", "cli-q", "receipt")
        assert code == 0 and "removed input receipt" in out
        with pytest.raises(LuoshoError) as err:
            waiting.result()
        assert err.value.reason == "INPUT_DEQUEUED"
        code, _, err_text = cli(daemon, capsys, "sessions", "dequeue", "cli-q", "receipt")
        assert code != 0 and "queues no input 'receipt'" in err_text
        code, out, _ = cli(daemon, capsys, "sessions", "show", "cli-q")
        assert "queued inputs" not in out
