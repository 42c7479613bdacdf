"""``luoshod sessions|approvals|prune`` against a live daemon: every command, its table
and its ``--json``, and the failures (unknown session, daemon not reachable) as one line
and a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace

import pytest

from luosho.client import Agent, Client, Tool
from luoshod.cli.admin.prune import parse_duration
from tests.support.cli import PAY_SCRIPT as PAY
from tests.support.cli import cli, cli_json
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon

TRIP = [
    {"text": "Let me look.", "tool_calls": [{"name": "weather", "arguments": {"city": "Lisbon"}}]},
    {"text": "Sunny in Lisbon."},
]
DAY = 86400.0


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d:
        yield d


@pytest.fixture(scope="module")
def client(daemon: Daemon) -> Iterator[Client]:
    with Client(daemon.address) as c:
        yield c


def trip(client: Client, session_id: str) -> None:
    agent = Agent(
        "scripted:trip",
        instructions="You plan trips.",
        tools=[Tool("weather")],
        model_settings={"script": TRIP},
    )
    client.execute(
        session_id, "Plan Lisbon", agent=agent, tools={"weather": lambda a: {"sky": "sunny"}}
    ).result()


def paused(client: Client, session_id: str) -> str:
    agent = Agent(
        "scripted:pay", tools=[Tool("charge", needs_approval=True)], model_settings={"script": PAY}
    )
    return client.execute(session_id, "charge it", agent=agent).result().approval_id


def age(daemon: Daemon, session_id: str, days: float) -> None:
    """Make the session's checkpoint as if last saved ``days`` ago (a verbatim import)."""

    async def go() -> None:
        store = daemon.daemon.store
        cp = await store.load(session_id)
        assert cp is not None
        await store.import_session(
            session_id, latest=replace(cp, updated_at=cp.updated_at - days * DAY), history=[]
        )

    daemon.call(go())


def test_sessions_list_table_and_json(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    trip(client, "list-a")
    approval = paused(client, "list-b")
    code, out, _ = cli(daemon, capsys, "sessions", "list")
    assert code == 0
    header, *rows = out.splitlines()
    assert header.split()[:4] == ["SESSION", "STATUS", "FINISH", "STEP"]
    row_a = next(r.split() for r in rows if r.startswith("list-a "))
    assert row_a[1:5] == ["finished", "stop", "2", "5"]
    assert any(r.startswith("list-b ") and "awaiting-approval" in r and approval in r for r in rows)

    listed = cli_json(daemon, capsys, "sessions", "list", "--status", "awaiting-approval")
    assert {s["session_id"] for s in listed} >= {"list-b"}
    assert all(s["status"] == "CHECKPOINT_STATUS_AWAITING_APPROVAL" for s in listed)
    both = cli_json(
        daemon, capsys, "sessions", "list", "--status", "finished", "--status", "awaiting_approval"
    )
    assert {"list-a", "list-b"} <= {s["session_id"] for s in both}


def test_sessions_list_follows_every_page(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in range(3):
        trip(client, f"page-{n}")
    import luoshod.cli.admin.commands as commands

    before, commands.PAGE_SIZE = commands.PAGE_SIZE, 1
    try:
        listed = cli_json(daemon, capsys, "sessions", "list")
    finally:
        commands.PAGE_SIZE = before
    assert {"page-0", "page-1", "page-2"} <= {s["session_id"] for s in listed}


def test_sessions_show_renders_transcript_and_timeline(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    trip(client, "show-1")
    code, out, _ = cli(daemon, capsys, "sessions", "show", "show-1")
    assert code == 0
    assert "status    finished (stop)" in out
    assert "model     scripted:trip   tools: weather" in out
    assert "this run: " in out and "2 model calls" in out
    transcript = out[out.index("Transcript (5 messages)") : out.index("Timeline")]
    assert "#0   system     You plan trips." in transcript
    assert "#1   user       Plan Lisbon" in transcript
    assert '→ weather [call_0_0] {"city": "Lisbon"}' in transcript
    assert '#3   tool       weather [call_0_0] ← {"sky":"sunny"}' in transcript
    assert "#4   assistant  Sunny in Lisbon." in transcript
    timeline = out[out.index("Timeline") :].splitlines()
    assert timeline[1].split()[:6] == ["SAVE", "STEP", "SAVED", "(UTC)", "STATUS", "MSGS"]
    assert "assistant calls weather" in timeline[2] and "in-progress" in timeline[2]
    assert "result of weather" in timeline[3]
    assert "finished" in timeline[-1] and "assistant 'Sunny in Lisbon.'" in timeline[-1]

    shown = cli_json(daemon, capsys, "sessions", "show", "show-1")
    assert shown["checkpoint"]["session_id"] == "show-1"
    assert [m["role"] for m in shown["checkpoint"]["messages"]] == [
        "ROLE_SYSTEM",
        "ROLE_USER",
        "ROLE_ASSISTANT",
        "ROLE_TOOL",
        "ROLE_ASSISTANT",
    ]
    assert [e["version"] for e in shown["history"]] == ["3", "2", "1"]  # int64 as JSON strings


def test_sessions_history(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    trip(client, "hist-1")
    code, out, _ = cli(daemon, capsys, "sessions", "history", "hist-1")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["VERSION", "3", "2", "1"]
    entries = cli_json(daemon, capsys, "sessions", "history", "hist-1", "--checkpoints")
    assert [e["status"] for e in entries][0] == "CHECKPOINT_STATUS_FINISHED"
    assert len(entries[0]["checkpoint"]["messages"]) == 5


def test_sessions_fork_then_delete(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    trip(client, "fork-src")
    code, out, _ = cli(
        daemon,
        capsys,
        "sessions",
        "fork",
        "fork-src",
        "--step",
        "1",
        "--new-id",
        "fork-dst",
        "--tool-result",
        'call_0_0={"sky": "rain"}',
    )
    assert code == 0 and "into fork-dst" in out
    assert client.get_session("fork-dst").messages[-1].content == '{"sky":"rain"}'
    forked = cli_json(
        daemon, capsys, "sessions", "fork", "fork-src", "--step", "1", "--append", "and Porto?"
    )
    assert forked["session_id"] == "fork-src.fork-1" and forked["step"] == 1

    code, out, _ = cli(daemon, capsys, "sessions", "delete", "fork-dst")
    assert (code, out) == (0, "deleted session fork-dst\n")
    assert cli_json(daemon, capsys, "sessions", "delete", "fork-src.fork-1") == {
        "session_id": "fork-src.fork-1",
        "deleted": True,
    }
    code, out, err = cli(daemon, capsys, "sessions", "delete", "fork-dst")
    assert (
        code == 1
        and err
        == "luoshod: CHECKPOINT_NOT_FOUND: session 'fork-dst' has no checkpoint; nothing deleted\n"
    )


def test_approvals_list_approve_reject(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = paused(client, "ap-1"), paused(client, "ap-2")
    code, out, _ = cli(daemon, capsys, "approvals", "list", "--session", "ap-1")
    assert code == 0
    assert out.splitlines()[1].split()[:6] == [
        first,
        "ap-1",
        "1",
        "approval",
        "charge",
        "(call_0_0)",
    ]
    assert '{"eur": 40}' in out
    listed = cli_json(daemon, capsys, "approvals", "list")
    assert {first, second} <= {a["approval_id"] for a in listed}

    # Approved: the decision is saved, the app's next Resume runs the call.
    code, out, _ = cli(daemon, capsys, "approvals", "approve", first, "--note", "ok by Ana")
    assert code == 0
    assert (
        out == f"approved {first}: session ap-1 is in progress and waits for the app to run charge "
        "[call_0_0]; the app's next Resume runs it\n"
    )
    done = client.resume("ap-1", tools={"charge": lambda a: {"charged": a["eur"]}}).result()
    assert (done.finish_reason, done.final_text) == ("stop", "charged")

    # Rejected: the model reads the rejection and the run finishes in the command.
    decided = cli_json(daemon, capsys, "approvals", "reject", second, "--note", "no receipt")
    assert decided["approved"] is False and decided["session_id"] == "ap-2"
    assert decided["run_done"]["status"] == "CHECKPOINT_STATUS_FINISHED"
    rejected = client.get_session("ap-2").messages[2]
    assert json.loads(rejected.content)["note"] == "no receipt"

    code, _, err = cli(daemon, capsys, "approvals", "approve", first)
    assert code == 1 and err.startswith(f"luoshod: APPROVAL_NOT_FOUND: approval {first!r}")


def test_prune_deletes_only_old_sessions(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    for sid in ("prune-old", "prune-new", "prune-old-paused"):
        trip(client, sid) if "paused" not in sid else paused(client, sid)
    age(daemon, "prune-old", 40)
    age(daemon, "prune-old-paused", 40)

    dry = cli_json(daemon, capsys, "prune", "--older-than", "30d", "--dry-run")
    assert {s["session_id"] for s in dry["matched"]} == {"prune-old", "prune-old-paused"}
    assert dry["deleted"] == [] and client.get_session("prune-old").session_id == "prune-old"

    code, out, _ = cli(
        daemon, capsys, "prune", "--older-than", "4w2d", "--status", "finished", "--yes"
    )
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()[:2]] == ["SESSION", "prune-old"]
    assert out.splitlines()[-1].startswith("deleted 1 session last saved before ")
    remaining = {s.session_id for s in client.list_sessions()}
    assert "prune-old" not in remaining and {"prune-new", "prune-old-paused"} <= remaining

    assert cli_json(daemon, capsys, "prune", "--older-than", "30d", "--yes")["deleted"] == [
        "prune-old-paused"
    ]
    with pytest.raises(SystemExit) as usage:  # a wrong command line: argparse's exit 2
        cli(daemon, capsys, "prune", "--older-than", "soon")
    assert (
        usage.value.code == 2
        and "--older-than: 'soon' is not a duration" in capsys.readouterr().err
    )


def test_unknown_session_and_bad_id_are_one_line(
    daemon: Daemon, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("show", "history"):
        code, out, err = cli(daemon, capsys, "sessions", command, "nobody")
        assert (code, out) == (1, "")
        assert err == "luoshod: CHECKPOINT_NOT_FOUND: session 'nobody' has no checkpoint\n"
    code, _, err = cli(daemon, capsys, "sessions", "show", "bad id!")
    assert code == 1 and err.startswith(
        "luoshod: INVALID_SESSION_ID: session_id 'bad id!' is invalid"
    )


def test_daemon_not_reachable_as_a_process(unused_tcp_port: int) -> None:
    """The installed entry point, as an operator runs it: one line, exit 1, no traceback."""
    address = f"127.0.0.1:{unused_tcp_port}"
    for argv in (
        ["sessions", "list"],
        ["approvals", "approve", "ap-1"],
        ["prune", "--older-than", "1d", "--json"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "luoshod", *argv],
            env={"LUOSHOD_ADDRESS": address, "PATH": ""},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr.startswith(f"luoshod: cannot reach the daemon at {address}: ")
        assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


#: What a client command must not load: the daemon, and the libraries only the daemon uses.
DAEMON_MODULES = (
    "luoshod.server",
    "luoshod.engine",
    "luoshod.store",
    "luoshod.observe",
    "luoshod.providers",
    "luoshod.settings",
    "luoshod.http",
    "luoshod_sqlite",
    "luoshod_lmdb",
    "luoshod_postgres",
    # (``import grpc`` itself loads the top of grpc_health and grpc_reflection, not these.)
    "grpc_health.v1",
    "grpc_reflection.v1alpha",
    "pydantic",
    "pydantic_settings",
    "jsonschema",
    "opentelemetry",
    "prometheus_client",
    "openai",
    "anthropic",
    "tqdm",
)
LIST_MODULES = """import sys
from luoshod.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
loaded = sorted(sys.modules)
import json
print(json.dumps(loaded))
"""


def loaded_by(*argv: str) -> set[str]:
    """The modules a ``luoshod`` process has loaded when the command is done."""
    proc = subprocess.run(
        [sys.executable, "-c", LIST_MODULES, *argv], capture_output=True, text=True, timeout=60
    )
    return set(json.loads(proc.stdout.splitlines()[-1]))


def within(modules: set[str], packages: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)}


def test_client_commands_do_not_load_the_daemon(unused_tcp_port: int) -> None:
    """``luoshod sessions list`` loads gRPC and the client, not the daemon (its start-up is
    bench/cli_start.py's to measure), nor does ``healthcheck --address``; ``luoshod --help``
    does not even load gRPC."""
    listed = loaded_by("sessions", "list", "--address", f"127.0.0.1:{unused_tcp_port}")
    assert {"luoshod.cli.admin.commands", "grpc", "luosho.client"} <= listed
    assert within(listed, DAEMON_MODULES) == set()
    # Nor what only runs need: the asyncio client, the tools' machinery, agent specs, run
    # results, MCP settings, grpc_status (its start-up: bench/cli_start.py).
    run_only = {
        f"luosho.client.{m}" for m in ("_async_client", "_tools", "_agent", "_result", "_mcp")
    }
    assert listed & (run_only | {"grpc_status"}) == set()
    # Nor what only help text and --json output need: the terminal's width without shutil
    # (and its bz2, lzma), protobuf's JSON printer, the json module; nor the IDNA codec
    # (the TLS hint of a daemon not reached looks its host up as bytes).
    assert (
        listed
        & {
            "shutil",
            "bz2",
            "lzma",
            "google.protobuf.json_format",
            "json",
            "encodings.idna",
        }
        == set()
    )
    checked = loaded_by(
        "healthcheck", "--address", f"127.0.0.1:{unused_tcp_port}", "--timeout", "1"
    )
    assert "grpc_health.v1.health_pb2" in checked
    assert within(checked, ("luoshod.settings", "pydantic", "luoshod.engine")) == set()
    helped = loaded_by("--help")
    assert "luoshod.cli" in helped
    assert (
        within(helped, DAEMON_MODULES + ("grpc", "luosho", "google.protobuf", "luoshod.cli.admin"))
        == set()
    )


def test_the_client_side_copies_of_daemon_names_agree() -> None:
    """What the client commands know of the daemon without importing it."""
    from luoshod import settings
    from luoshod.cli.connect import DEFAULT_ADDRESS
    from luoshod.cli.main import LOG_LEVEL_ENV
    from luoshod.server.app import DEFAULT_LISTEN

    assert DEFAULT_ADDRESS == DEFAULT_LISTEN
    assert settings.env_name("log_level") == LOG_LEVEL_ENV


def test_parse_duration() -> None:
    assert parse_duration("90s").total_seconds() == 90
    assert parse_duration("1d12h").total_seconds() == 36 * 3600
    assert parse_duration("2w").days == 14
    for bad in ("", "0s", "12", "1y", "1d 2h", "-1d"):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_a_decision_retried_by_hand_with_its_request_id_is_applied_once(
    daemon: Daemon, client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    """R74 from the people CLI: the same `approvals reject … --request-id --session` run
    again (as a person does after a failure) replays the decided run instead of failing
    or deciding twice; the same id with another note is refused."""
    approval = paused(client, "ap-retry")
    argv = (
        "approvals",
        "reject",
        approval,
        "--note",
        "no receipt",
        "--request-id",
        "rej-1",
        "--session",
        "ap-retry",
    )
    first = cli_json(daemon, capsys, *argv)
    again = cli_json(daemon, capsys, *argv)
    assert (
        first["run_done"]["status"] == again["run_done"]["status"] == "CHECKPOINT_STATUS_FINISHED"
    )
    assert again["session_id"] == "ap-retry"
    rejections = [m for m in client.get_session("ap-retry").messages if m.tool_call_id]
    assert len(rejections) == 1 and json.loads(rejections[0].content)["note"] == "no receipt"
    code, _, err = cli(daemon, capsys, *argv[:4], "other note", *argv[5:])
    assert code == 1 and "REQUEST_ID_REUSED" in err, err
