"""The "Daemon tools in sub-agents" grpcurl commands of docs/concepts/subagents.md, run as written
(only the
address and the approval id replaced) with the real grpcurl against ``luoshod serve``
whose ``files`` server is the stdio MCP test server: the example cannot rot."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.mcp_servers import attempts, stdio_toml

ROOT = Path(__file__).resolve().parents[2]
GRPCURL = ROOT / ".tools" / "bin" / "grpcurl"
SECTION = "## Daemon tools in sub-agents"


def commands() -> list[str]:
    text = (ROOT / "docs" / "concepts" / "subagents.md").read_text()
    start = text.index(SECTION)
    following = re.compile(r"\n##+ ").search(text, start + len(SECTION))
    section = text[start : following.start() if following else len(text)]
    return [
        line
        for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S)
        for line in block.splitlines()
        if line.strip()
    ]


@pytest.mark.skipif(
    not GRPCURL.exists(), reason="grpcurl not installed (make test installs it into .tools/bin)"
)
def test_the_readme_grpcurl_commands_run_a_subagents_daemon_tool_through_its_approval(
    tmp_path: Path,
) -> None:
    attempts_file = tmp_path / "attempts.jsonl"
    config = stdio_toml(tmp_path, attempts_file)
    daemon = DaemonProcess("--store", db_url(tmp_path), "--config", str(config)).start()

    def grpcurl(command: str, approval_id: str = "") -> str:
        argv = shlex.split(
            command.replace("127.0.0.1:50051", daemon.address).replace("APPROVAL_ID", approval_id)
        )
        assert argv[0] == "grpcurl"
        done = subprocess.run([str(GRPCURL), *argv[1:]], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    try:
        delete, execute, list_approvals, resolve = commands()
        for n in (1, 2):  # twice in a row: the walkthrough runs again from the top
            grpcurl(delete)
            paused = grpcurl(execute)
            assert "FINISH_REASON_AWAITING_APPROVAL" in paused, paused
            assert (
                len(attempts(attempts_file)) == n - 1
            )  # gated by its destructiveHint: nothing ran
            (approval,) = json.loads(grpcurl(list_approvals))["approvals"]
            assert approval["subagent_path"] == ["clerk"]
            assert (
                approval["tool_call"]["id"] == "c-task/c-del"
                and approval["tool_call"]["name"] == "files__delete_record"
            )
            done = grpcurl(resolve, approval["approval_id"])
            assert (
                '"executor": "TOOL_EXECUTOR_DAEMON"' in done and '"id": "c-task/c-del"' in done
            ), done
            assert "FINISH_REASON_STOP" in done and "The clerk deleted r1." in done
            assert [(a["key"], a["tool"]) for a in attempts(attempts_file)] == [
                ("c-task/c-del", "delete_record")
            ] * n
    finally:
        daemon.terminate()
        daemon.stop()
