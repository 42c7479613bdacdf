"""Issue 17, the CLI an operator expects (kubectl, temporal, dapr conventions) and the
lifecycle commands: ``luoshod`` and the daemon both run as subprocesses, on real ports
and a real SQLite file."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from tests.support.certs import CA
from tests.support.cli import PAY, execute, luoshod
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import agent, calls, user

ADD = agent([calls(("add", {"a": 1})), {"text": "two"}])


@pytest.fixture()
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    d = DaemonProcess("--store", db_url(tmp_path), "--log-level", "INFO").start()
    yield d
    d.stop()


# -- conventions ----------------------------------------------------------------------------


def test_version_and_help_with_examples() -> None:
    out = luoshod("--version")
    assert (out.returncode, out.stdout) == (0, "luoshod 0.1.0\n")
    top = luoshod("--help")
    assert top.returncode == 0 and "examples:\n  luoshod serve" in top.stdout
    for argv in (["sessions", "list"], ["prune"], ["approvals", "approve"], ["sessions", "resume"]):
        shown = luoshod(*argv, "--help")
        assert shown.returncode == 0 and "examples:\n  luoshod " in shown.stdout, shown.stdout


@pytest.mark.parametrize(
    "group, subcommands",
    [
        ("sessions", ["list", "show", "watch", "cancel", "resume", "compare"]),
        ("approvals", ["approve", "reject", "answer"]),
        ("config", ["show"]),
        ("store", ["copy", "verify"]),
    ],
)
def test_a_bare_group_prints_its_subcommands(group: str, subcommands: list[str]) -> None:
    out = luoshod(group)
    assert out.returncode == 0, out.stderr
    assert "the following arguments are required" not in out.stderr
    listed = re.findall(r"^    (\w+) ", out.stdout, re.M)
    assert set(subcommands) <= set(listed), out.stdout


def test_status_choices_are_listed_once() -> None:
    out = luoshod("sessions", "list", "--help")
    assert "{awaiting-approval,finished,in-progress,sleeping}" in out.stdout
    assert "in_progress" not in out.stdout


def test_a_wrong_duration_is_a_usage_error() -> None:
    out = luoshod("prune", "--older-than", "3x")
    assert out.returncode == 2
    assert "'3x' is not a duration" in out.stderr and "Traceback" not in out.stderr


def test_completion_scripts_complete_commands_subcommands_and_choices(tmp_path: Path) -> None:
    script = luoshod("completion", "bash")
    assert script.returncode == 0
    (tmp_path / "luoshod.bash").write_text(script.stdout)
    probe = """source "$1"
t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _luoshod; echo "${COMPREPLY[*]}"; }
t luoshod se
t luoshod sessions ""
t luoshod sessions list --status ""
t luoshod sessions resume --tool
"""
    done = subprocess.run(
        ["bash", "-c", probe, "-", str(tmp_path / "luoshod.bash")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == [
        "serve sessions",
        "list show dequeue history delete compact fork watch cancel resume compare --help",
        "awaiting-approval finished in-progress sleeping",
        "--tool-timeout",
    ], done.stdout + done.stderr
    zsh = luoshod("completion", "zsh")
    assert zsh.stdout.startswith("#compdef luoshod\n") and "bashcompinit" in zsh.stdout


# -- prune ----------------------------------------------------------------------------------


def _age_all(tmp_path: Path, days: float) -> None:
    """Every session of the (stopped) daemon's store as if last saved ``days`` ago."""
    import asyncio

    from luoshod.store import store_from_url

    async def go() -> None:
        store = store_from_url(db_url(tmp_path))
        await store.open()
        try:
            page, _ = await store.list_sessions(status=None, page_size=100, page_token="")
            for s in page:
                cp = await store.load(s.session_id)
                await store.import_session(
                    s.session_id,
                    latest=replace(cp, updated_at=cp.updated_at - days * 86400),
                    history=[],
                )
        finally:
            await store.close()

    asyncio.run(go())


def test_prune_asks_and_keeps_in_progress_sessions(tmp_path: Path) -> None:
    d = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        execute(d.address, "done-1", ADD, answer=True)
        execute(d.address, "crashed-1", ADD, until="tool.call")  # the app crashed: in-progress
    finally:
        assert d.terminate() == 0
        d.stop()
    _age_all(tmp_path, 40)
    d = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        # No terminal and no --yes: nothing deleted, exit 2.
        refused = luoshod("prune", "--older-than", "1s", address=d.address)
        assert refused.returncode == 2, refused.stderr
        assert "give --yes" in refused.stderr
        assert len(json.loads(luoshod("sessions", "list", "--json", address=d.address).stdout)) == 2

        # On a terminal it asks; "n" deletes nothing.
        for answer, deleted in (("n\n", 0), ("y\n", 1)):
            primary, secondary = pty.openpty()
            os.write(primary, answer.encode())
            asked = luoshod("prune", "--older-than", "1s", address=d.address, stdin=secondary)
            os.close(primary)
            os.close(secondary)
            assert "delete these 1 session" in asked.stderr and "done-1" in asked.stderr
            assert asked.returncode == (0 if deleted else 2), asked.stderr
        assert (
            "kept 1 in-progress session as old (give --status in-progress to prune them)"
            in asked.stdout
        )
        left = [
            s["session_id"]
            for s in json.loads(luoshod("sessions", "list", "--json", address=d.address).stdout)
        ]
        assert left == ["crashed-1"]

        named = luoshod(
            "prune", "--older-than", "1s", "--status", "in-progress", "--yes", address=d.address
        )
        assert named.returncode == 0 and "deleted 1 session" in named.stdout
    finally:
        d.stop()


# -- lifecycle commands ----------------------------------------------------------------------


def test_sessions_watch_prints_the_events(daemon: DaemonProcess) -> None:
    execute(daemon.address, "watch-1", ADD, answer=True)
    out = luoshod("sessions", "watch", "watch-1", address=daemon.address)
    assert out.returncode == 0, out.stderr
    types = [line.split()[3] for line in out.stdout.splitlines()]
    assert types == [
        "run.start",
        "step.start",
        "model.turn",
        "tool.call",
        "tool.result",
        "step.done",
        "step.start",
        "model.turn",
        "step.done",
        "run.done",
    ]
    assert "finished (stop)" in out.stdout.splitlines()[-1]
    later = luoshod(
        "sessions", "watch", "watch-1", "--after-seq", "9", "--json", address=daemon.address
    )
    assert [json.loads(line)["type"] for line in later.stdout.splitlines()] == ["run.done"]


def test_sessions_resume_says_at_once_the_run_waits_on_the_app(daemon: DaemonProcess) -> None:
    execute(daemon.address, "crash-1", ADD, until="tool.call")  # the app crashed
    out = luoshod("sessions", "resume", "crash-1", address=daemon.address)
    assert out.returncode == 0, out.stderr
    assert "session crash-1 waits for the app to run add [call_0_0]" in out.stderr
    assert "--tool-timeout" in out.stderr and "luoshod sessions cancel crash-1" in out.stderr

    # A short tool timeout: the unanswered call becomes a timeout error, the run goes on.
    finished = luoshod(
        "sessions", "resume", "crash-1", "--tool-timeout", "1s", address=daemon.address
    )
    assert finished.returncode == 0, finished.stderr
    assert "session crash-1 is finished (stop)" in finished.stdout
    assert re.search(r"tool\.result\s+add \[call_0_0\] error .*timeout", finished.stdout), (
        finished.stdout
    )
    shown = json.loads(
        luoshod("sessions", "show", "crash-1", "--json", address=daemon.address).stdout
    )
    assert shown["checkpoint"]["status"] == "CHECKPOINT_STATUS_FINISHED"


def test_sessions_cancel_aborts_the_active_run(daemon: DaemonProcess) -> None:
    with grpc.insecure_channel(daemon.address) as ch:
        call = pb_grpc.AgentServiceStub(ch).Execute(
            pb.ExecuteRequest(session_id="cancel-1", input=[user("go")], agent=ADD)
        )
        events = iter(call)
        while next(events).event.type != "tool.call":
            pass
        out = luoshod("sessions", "cancel", "cancel-1", address=daemon.address)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("cancelled the run of session cancel-1")
        done = [r.event for r in events][-1]
        assert done.run_done.finish_reason == pb.FINISH_REASON_ABORTED
    again = luoshod("sessions", "cancel", "cancel-1", address=daemon.address)
    assert again.returncode == 1 and "no run of session 'cancel-1' is active" in again.stderr


def test_sessions_compare_shows_where_two_runs_diverge(daemon: DaemonProcess) -> None:
    execute(daemon.address, "cmp-a", ADD, answer=True)
    execute(daemon.address, "cmp-b", agent([{"text": "no tools"}]), answer=True)
    out = luoshod("sessions", "compare", "cmp-a", "cmp-b", address=daemon.address)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].split() == ["STEP", "cmp-a", "cmp-b"]
    assert any(line.startswith("diverged at step 1;") for line in out.stdout.splitlines()), (
        out.stdout
    )


def test_one_step_numbering_for_a_fork_in_the_cli_and_the_api(daemon: DaemonProcess) -> None:
    """Fork at step 1 with another tool result: the API's diverged_at, the CLI's compare,
    its fork and show all say step 1; only the step that differs is marked, and what differs
    in it (the result) is shown."""
    execute(daemon.address, "num-a", ADD, answer=True)
    forked = luoshod(
        "sessions",
        "fork",
        "num-a",
        "--step",
        "1",
        "--tool-result",
        'call_0_0={"sum": 3}',
        address=daemon.address,
    )
    assert forked.returncode == 0 and "at step 1" in forked.stdout, forked.stdout + forked.stderr
    resumed = luoshod("sessions", "resume", "num-a.fork-1", address=daemon.address)
    assert resumed.returncode == 0, resumed.stderr
    with grpc.insecure_channel(daemon.address) as ch:
        api = pb_grpc.AgentServiceStub(ch).Compare(
            pb.CompareRequest(session_id_a="num-a", session_id_b="num-a.fork-1")
        )
    assert api.diverged_at == 1 and [s.index for s in api.a] == [1, 2]
    out = luoshod("sessions", "compare", "num-a", "num-a.fork-1", address=daemon.address)
    lines = out.stdout.splitlines()
    rows = {line.split()[0]: line for line in lines[1:3]}
    assert "≠" in rows["1"] and "≠" not in rows["2"], lines  # step 2 ("two") is the same in both
    assert any(line.startswith("diverged at step 1;") for line in lines), lines
    assert 'step 1 add result: 2 vs {"sum":3}' in lines, lines


# -- audit ------------------------------------------------------------------------------------


def test_audit_lines_name_the_token_or_the_mtls_subject(tmp_path: Path) -> None:
    import hashlib

    (tmp_path / "tokens").write_text("ops-token-1\n")
    d = DaemonProcess(
        "--store", db_url(tmp_path), "--auth-token-file", str(tmp_path / "tokens")
    ).start()
    try:
        meta = [("authorization", "Bearer ops-token-1")]
        with grpc.insecure_channel(d.address) as ch:
            call = pb_grpc.AgentServiceStub(ch).Execute(
                pb.ExecuteRequest(session_id="pay-1", input=[user("go")], agent=PAY), metadata=meta
            )
            approval = [r.event for r in call][-1].run_done.approval_id
        env = {"LUOSHOD_TOKEN": "ops-token-1"}
        assert luoshod("approvals", "approve", approval, address=d.address, env=env).returncode == 0
        assert luoshod("sessions", "delete", "pay-1", address=d.address, env=env).returncode == 0
    finally:
        assert d.terminate() == 0
        log = d.stderr()
        d.stop()
    digest = hashlib.sha256(b"ops-token-1").hexdigest()[:8]
    assert f"audit: approve approval={approval} session=pay-1 by='token sha256:{digest}'" in log, (
        log
    )
    assert f"audit: delete session=pay-1 keep_history=False by='token sha256:{digest}'" in log

    ca = CA(tmp_path)
    server, client = ca.issue("server", server=True), ca.issue("ops-laptop", server=False)
    d = DaemonProcess(
        "--store",
        db_url(tmp_path),
        "--tls-cert-file",
        str(server.cert),
        "--tls-key-file",
        str(server.key),
        "--tls-client-ca-file",
        str(ca.pair.cert),
    ).start()
    try:
        tls = [
            "--tls-ca-file",
            str(ca.pair.cert),
            "--tls-cert-file",
            str(client.cert),
            "--tls-key-file",
            str(client.key),
        ]
        creds = grpc.ssl_channel_credentials(
            ca.pair.cert.read_bytes(), client.key.read_bytes(), client.cert.read_bytes()
        )
        with grpc.secure_channel(d.address, creds) as ch:
            list(
                pb_grpc.AgentServiceStub(ch).Execute(
                    pb.ExecuteRequest(
                        session_id="fork-me", input=[user("go")], agent=agent([{"text": "hi"}])
                    )
                )
            )
        out = luoshod(
            "sessions",
            "fork",
            "fork-me",
            "--step",
            "1",
            "--new-id",
            "forked",
            *tls,
            address=d.address,
        )
        assert out.returncode == 0, out.stderr
    finally:
        assert d.terminate() == 0
        log = d.stderr()
        d.stop()
    assert "audit: fork session=fork-me step=1 new_session=forked by='mtls CN=ops-laptop'" in log, (
        log
    )
