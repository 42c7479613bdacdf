"""The "Sub-agents" page's grpcurl commands (docs/concepts/subagents.md), run as written (only the
address and the
approval id replaced) with the real grpcurl against ``luoshod serve`` with the examples'
scripts, as ``make run`` starts it: the worked example, its approval inside a sub-agent
included, cannot rot."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.support.daemon_process import DaemonProcess, db_url

ROOT = Path(__file__).resolve().parents[2]
GRPCURL = ROOT / ".tools" / "bin" / "grpcurl"
SECTION = "# Sub-agents"


def commands() -> list[list[str]]:
    text = (ROOT / "docs" / "concepts" / "subagents.md").read_text()
    start = text.index(SECTION)
    # Up to the next heading: its subsections' commands are run by their own tests.
    section = text[start : re.compile(r"\n##+ ").search(text, start + len(SECTION)).start()]
    out = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        joined = block.replace("\\\n", " ")
        current = ""
        for line in joined.splitlines():
            current += line + "\n"
            try:
                argv = shlex.split(current)
            except ValueError:
                continue  # a quoted argument goes on over the next line
            if argv:
                out.append(argv)
            current = ""
    return [argv for argv in out if argv[0] == "grpcurl"]


def grpcurl(argv: list[str], address: str, approval_id: str = "") -> list[str]:
    args = [
        a.replace("127.0.0.1:50051", address).replace("APPROVAL_ID", approval_id) for a in argv[1:]
    ]
    return [str(GRPCURL), *args]


def read_until(proc: subprocess.Popen, text: str) -> str:
    """What ``proc`` printed up to the line holding ``text`` (its stream still open)."""
    seen = ""
    for line in proc.stdout:  # grpcurl writes each message as it arrives
        seen += line
        if text in line:
            return seen
    raise AssertionError(f"{text!r} not in {seen!r}")


@pytest.mark.skipif(
    not GRPCURL.exists(), reason="grpcurl not installed (make test installs it into .tools/bin)"
)
def test_the_readme_grpcurl_commands_run_a_subagent_through_its_approval(tmp_path: Path) -> None:
    delete, execute, submit1, list_approvals, resolve, submit2 = commands()
    daemon = DaemonProcess(
        "--store", db_url(tmp_path), "--scripts-dir", str(ROOT / "examples" / "scripts")
    ).start()
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(2):  # twice in a row: the walkthrough runs again from the top
            walk(daemon, procs, delete, execute, submit1, list_approvals, resolve, submit2)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
            if p.stdout:
                p.stdout.close()
        daemon.terminate()
        daemon.stop()


def walk(
    daemon: DaemonProcess,
    procs: list[subprocess.Popen],
    delete: list[str],
    execute: list[str],
    submit1: list[str],
    list_approvals: list[str],
    resolve: list[str],
    submit2: list[str],
) -> None:
    """The page's commands once, from the DeleteSession that clears an earlier try."""
    procs.clear()
    cleared = subprocess.run(
        grpcurl(delete, daemon.address), capture_output=True, text=True, timeout=60
    )
    assert cleared.returncode == 0, cleared.stderr
    procs.append(
        subprocess.Popen(grpcurl(execute, daemon.address), stdout=subprocess.PIPE, text=True)
    )
    text = read_until(procs[0], '"id": "call_0_0/call_0_0"')
    text += read_until(procs[0], '"task_id"')
    assert '"task_id": "task_1"' in text and '"name": "researcher"' in text
    done = subprocess.run(
        grpcurl(submit1, daemon.address), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "SUBMIT_OUTCOME_ACCEPTED" in done.stdout, done.stderr
    assert "FINISH_REASON_AWAITING_APPROVAL" in procs[0].stdout.read()
    assert procs[0].wait(30) == 0
    listed = subprocess.run(
        grpcurl(list_approvals, daemon.address), capture_output=True, text=True, timeout=60
    )
    body = json.loads(listed.stdout)
    (approval,) = body["approvals"]
    assert (
        approval["subagent_path"] == ["researcher"]
        and approval["tool_call"]["id"] == "call_0_0/call_1_0"
    )
    procs.append(
        subprocess.Popen(
            grpcurl(resolve, daemon.address, approval["approval_id"]),
            stdout=subprocess.PIPE,
            text=True,
        )
    )
    read_until(procs[1], '"id": "call_0_0/call_1_0"')
    done = subprocess.run(
        grpcurl(submit2, daemon.address), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "SUBMIT_OUTCOME_ACCEPTED" in done.stdout, done.stderr
    final = procs[1].stdout.read()
    assert procs[1].wait(30) == 0
    assert (
        "FINISH_REASON_STOP" in final
        and "The researcher found the hours and booked the visit." in final
    )
    for p in procs:
        if p.stdout:
            p.stdout.close()
