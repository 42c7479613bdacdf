"""One run whose sub-agent's approval is requested from Go, decided from the people CLI,
and finished from TypeScript (issue 15): the Go client declares the sub-agent and its
tool handler sees which sub-agent asks; `luoshod approvals approve` decides; the
TypeScript client's Resume runs the sub-agent's approved call and finishes the run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, assert_valid_transcript

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "clients" / "typescript"
TS_LEG = TS / "dist-test" / "examples" / "xlang-subagent-finish.js"


@pytest.mark.skipif(shutil.which("go") is None, reason="needs Go (make test has it)")
@pytest.mark.skipif(
    not TS_LEG.exists(), reason="needs the built TypeScript client: make test builds it"
)
async def test_go_requests_cli_decides_typescript_finishes_a_subagent_approval(
    tmp_path: Path,
) -> None:
    daemon = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        go = subprocess.run(
            ["go", "run", "./cmd/xlang-subagent-start", daemon.address, "xsub-1"],
            cwd=ROOT / "clients" / "go",
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "GOFLAGS": "-mod=mod"},
        )
        assert go.returncode == 0, go.stderr
        approval_id, path, asked = go.stdout.split()
        assert approval_id.startswith("ap-") and path == "payer"
        assert asked == "payer:call_0_0/call_0_0"  # the Go handler saw which sub-agent asked

        cli = subprocess.run(
            [
                sys.executable,
                "-m",
                "luoshod",
                "approvals",
                "approve",
                approval_id,
                "--note",
                "ok from the CLI",
                "--address",
                daemon.address,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert cli.returncode == 0, cli.stderr
        assert "call_0_0/call_1_0" in cli.stdout

        ts = subprocess.run(
            ["node", str(TS_LEG), daemon.address, "xsub-1"],
            cwd=TS,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ts.returncode == 0, ts.stderr
        assert ts.stdout.strip().split(" ", 1) == [
            "payer:call_0_0/call_1_0",
            json.dumps("order 7 paid"),
        ]

        h = Harness(daemon.address)
        cp = await h.get("xsub-1")
        assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
        assert_valid_transcript(cp)
        task_result = json.loads(next(m.content for m in cp.messages if m.role == pb.ROLE_TOOL))
        assert task_result.startswith("paid 40\n\n[sub-agent 'payer': 3 step(s)")
        await h.close()
    finally:
        daemon.terminate()
        daemon.stop()
