"""The "Daemon tools over MCP" page's grpcurl commands (docs/concepts/daemon-tools.md), run as
written (only the address
replaced) with the real grpcurl against ``luoshod serve`` whose ``files`` server is the
stdio MCP test server: the docs cannot rot."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.mcp_servers import stdio_toml

ROOT = Path(__file__).resolve().parents[2]
GRPCURL = ROOT / ".tools" / "bin" / "grpcurl"
SECTION = "# Daemon tools over MCP"


def commands() -> list[str]:
    text = (ROOT / "docs" / "concepts" / "daemon-tools.md").read_text()
    start = text.index(SECTION)
    section = text[start : text.index("\n## ", start + len(SECTION))]
    return [
        line
        for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S)
        for line in block.splitlines()
        if line.strip()
    ]


@pytest.mark.skipif(
    not GRPCURL.exists(), reason="grpcurl not installed (make test installs it into .tools/bin)"
)
def test_the_readme_grpcurl_commands_run_a_daemon_tool(tmp_path: Path) -> None:
    config = stdio_toml(tmp_path)
    daemon = DaemonProcess("--store", db_url(tmp_path), "--config", str(config)).start()
    try:
        cmds = commands()
        assert len(cmds) == 3
        for _ in range(2):  # twice in a row: the walkthrough runs again from the top
            outputs = []
            for command in cmds:
                argv = shlex.split(command.replace("127.0.0.1:50051", daemon.address))
                assert argv[0] == "grpcurl"
                done = subprocess.run(
                    [str(GRPCURL), *argv[1:]], capture_output=True, text=True, timeout=60
                )
                assert done.returncode == 0, done.stderr
                outputs.append(done.stdout)
            _, execute, listed = outputs
            shown = (
                '"timeout_ms": "300000",\n      "attempt": 1,\n'
                '      "executor": "TOOL_EXECUTOR_DAEMON"'
            )
            assert shown in execute, execute
            assert '"result_json": "{\\"result\\": \\"5\\"}"' in execute, execute
            assert '"final_text": "5"' in execute
            assert (
                '"name": "files"' in listed
                and '"state": "MCP_SERVER_STATE_RUNNING"' in listed
                and '"name": "add"' in listed
            )
    finally:
        daemon.terminate()
        daemon.stop()
