"""The structured answer of an agent with an output schema (R83) from the people CLI:
``sessions show`` prints it pretty-printed, its ``--json`` gives it parsed as ``output``, and
``sessions history --checkpoints --json`` gives it with each save that holds it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from luosho.client import Agent, Client
from tests.support.cli import cli, cli_json
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "sights": {"type": "array"}},
    "required": ["city", "sights"],
}


def structured(*turns: str, schema: dict | None = SCHEMA) -> Agent:
    return Agent(
        "scripted:structured",
        model_settings={"script": [{"text": t} for t in turns]},
        output_schema=schema,
    )


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://") as d:
        yield d


@pytest.fixture(scope="module")
def client(daemon: Daemon) -> Iterator[Client]:
    with Client(daemon.address) as c:
        yield c


def test_r83_sessions_show_prints_the_structured_answer_pretty(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    answer = '{"sights": ["Louvre", "Orsay"], "city": "Paris"}'
    result = client.execute("cli-out", "where?", agent=structured(answer)).result()
    assert result.finish_reason == "stop" and result.output_json
    code, out, err = cli(daemon, capsys, "sessions", "show", "cli-out")
    assert code == 0, err
    lines = out.splitlines()
    at = lines.index("Structured answer (valid against the agent's output schema)")
    block = lines[at + 1 : lines.index("", at)]
    assert block == [
        "  {",
        '    "city": "Paris",',
        '    "sights": [',
        '      "Louvre",',
        '      "Orsay"',
        "    ]",
        "  }",
    ]
    # The same value as the run's output_json.
    assert json.loads("\n".join(block)) == json.loads(result.output_json)
    shown = cli_json(daemon, capsys, "sessions", "show", "cli-out")
    assert shown["output"] == {"city": "Paris", "sights": ["Louvre", "Orsay"]}
    saves = cli_json(daemon, capsys, "sessions", "history", "cli-out", "--checkpoints")
    assert saves[0]["output"] == shown["output"]  # newest first: the finished save
    assert all("output" not in s for s in saves[1:])


def test_r83_no_structured_answer_without_a_schema_or_when_it_was_invalid(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    client.execute("cli-plain", "hi", agent=structured('{"city": "Paris"}', schema=None)).result()
    bad = client.execute("cli-bad", "hi", agent=structured('{"city": "Paris"}', "Paris")).result()
    assert bad.finish_reason == "output_invalid"
    for sid in ("cli-plain", "cli-bad"):
        code, out, err = cli(daemon, capsys, "sessions", "show", sid)
        assert code == 0, err
        assert "Structured answer" not in out
        assert cli_json(daemon, capsys, "sessions", "show", sid)["output"] is None
