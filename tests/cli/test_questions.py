"""Questions from the people CLI and the Python client (R88): ``approvals list`` shows the
kind and the text asked, ``approvals answer`` answers, ``approvals reject`` declines, and
the client's ``Tool(question=True)`` and ``resolve(answer=...)`` do the same from code."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from luosho.client import Agent, Client, LuoshoError, Tool
from luosho.v1 import agent_pb2 as pb
from tests.support.cli import cli, cli_json
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon

REPORT = Agent(
    "scripted:report",
    tools=[Tool("ask", question=True)],
    model_settings={
        "script": [
            {
                "tool_calls": [
                    {"name": "ask", "arguments": {"question": "Which report, daily or weekly?"}}
                ]
            },
            {"text": "report sent"},
        ]
    },
)


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d:
        yield d


@pytest.fixture(scope="module")
def client(daemon: Daemon) -> Iterator[Client]:
    with Client(daemon.address) as c:
        yield c


def asked(client: Client, session_id: str) -> str:
    paused = client.execute(session_id, "send the report", agent=REPORT).result()
    assert paused.finish_reason == "awaiting_approval"
    return paused.approval_id


def answer_of(client: Client, session_id: str) -> pb.Message:
    cp = client.get_session(session_id)
    return next(m for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_name == "ask")


def test_r88_the_cli_lists_a_question_with_its_text_and_answers_it(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    approval_id = asked(client, "cli-q1")
    code, out, _ = cli(daemon, capsys, "approvals", "list", "--session", "cli-q1")
    assert code == 0
    header, row = out.splitlines()[:2]
    assert "KIND" in header and "ARGUMENTS / QUESTION" in header
    assert row.split()[:5] == [approval_id, "cli-q1", "1", "question", "ask"]
    assert "Which report, daily or weekly?" in row
    [listed] = cli_json(daemon, capsys, "approvals", "list", "--session", "cli-q1")
    assert (listed["kind"], listed["question"]) == (
        "APPROVAL_KIND_QUESTION",
        "Which report, daily or weekly?",
    )
    code, out, err = cli(daemon, capsys, "approvals", "answer", approval_id, "weekly, please")
    assert code == 0, err
    assert out.strip() == f"answered {approval_id}: session cli-q1 is finished (stop)"
    assert json.loads(answer_of(client, "cli-q1").content) == {"answer": "weekly, please"}
    # The record says who answered, and what (R92).
    code, out, _ = cli(daemon, capsys, "sessions", "watch", "cli-q1")
    assert code == 0
    assert "ask [call_0_0] answered by anonymous: “weekly, please”" in out


def test_r88_the_cli_declines_a_question_and_refuses_an_answer_to_an_approval(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    approval_id = asked(client, "cli-q2")
    code, out, err = cli(daemon, capsys, "approvals", "reject", approval_id, "--note", "ask Bo")
    assert code == 0, err
    result = answer_of(client, "cli-q2")
    assert result.is_error and json.loads(result.content)["error"] == "declined"
    pay = Agent(
        "scripted:pay",
        tools=[Tool("charge", needs_approval=True)],
        model_settings={"script": [{"tool_calls": [{"name": "charge", "arguments": {}}]}]},
    )
    gated = client.execute("cli-q3", "charge it", agent=pay).result().approval_id
    code, _, err = cli(daemon, capsys, "approvals", "answer", gated, "yes")
    assert code != 0 and "ANSWER_NOT_ALLOWED" in err


def test_r88_the_python_client_answers_a_question(client: Client) -> None:
    approval_id = asked(client, "py-q1")
    [ap] = list(client.approvals("py-q1"))
    assert (ap.kind, ap.question) == (pb.APPROVAL_KIND_QUESTION, "Which report, daily or weekly?")
    with pytest.raises(LuoshoError) as e:
        client.resolve(approval_id, True).result()
    assert e.value.reason == "ANSWER_REQUIRED"
    done = client.resolve(approval_id, True, answer="daily").result()
    assert (done.finish_reason, done.final_text) == ("stop", "report sent")
    assert json.loads(answer_of(client, "py-q1").content) == {"answer": "daily"}
