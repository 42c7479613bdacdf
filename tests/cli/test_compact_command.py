"""``luoshod sessions compact`` (R85) against a live daemon, with a session run by the
Python client's ``Agent(compaction=Compaction(...))``: the prune, then the summary, the
``--json`` form, nothing left to compact, and an unknown session as one line and exit 1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from luosho.client import Agent, Client, Compaction, Tool
from tests.support.cli import cli, cli_json
from tests.support.compaction import RESULT, SCRIPT, SUMMARY
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d:
        yield d


def test_r85_sessions_compact(daemon: Daemon, capsys: pytest.CaptureFixture[str]) -> None:
    agent = Agent(
        "scripted:pages",
        tools=[Tool("fetch")],
        # A window so large the run never compacts by itself.
        model_settings={"script": SCRIPT, "context_window": 1_000_000},
        compaction=Compaction(
            protect_tokens=100, model="scripted:sum", model_settings={"script": [{"text": SUMMARY}]}
        ),
    )
    with Client(daemon.address) as client:
        result = client.execute(
            "pages",
            [{"role": "user", "content": "Read pages 1 to 4.", "pinned": True}],
            agent=agent,
            tools={"fetch": lambda a: {"page": a["page"], "body": RESULT}},
        ).result()
        assert result.finish_reason == "stop"
        assert client.get_session("pages").messages[0].pinned

    code, out, err = cli(daemon, capsys, "sessions", "compact", "pages", "--strategy", "prune")
    assert code == 0, err
    assert out == (
        "compacted session pages: tool results before message 9 pruned, messages before 0 "
        "summarized (compaction 1, checkpoint version 10)\n"
    )
    done = cli_json(daemon, capsys, "sessions", "compact", "pages")
    assert done["compacted"] is True
    assert done["compaction"]["summary"] == SUMMARY and done["compaction"]["count"] == 2
    code, out, _ = cli(daemon, capsys, "sessions", "compact", "pages")
    assert (code, out) == (
        0,
        "nothing to compact in session pages: what is left is in the protected tail\n",
    )
    code, out, _ = cli(daemon, capsys, "sessions", "show", "pages")
    assert (
        code == 0
        and (
            "compacted 2 time(s): the model is sent the tool results before message 9 as a marker, "
            "messages before 9 as a summary"
        )
        in out
    )
    code, out, _ = cli(daemon, capsys, "sessions", "history", "pages")
    assert code == 0 and out.count("(compaction)") == 2
    code, _, err = cli(daemon, capsys, "sessions", "compact", "nobody")
    assert code == 1 and err.startswith("luoshod: ") and "CHECKPOINT_NOT_FOUND" in err
    assert len(err.strip().splitlines()) == 1
