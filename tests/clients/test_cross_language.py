"""One session, three languages: a run started from Go pauses on an approval, the approval
is resolved from TypeScript (whose process then dies mid-tool), and Python finishes the
run — one consistent transcript (issue 7)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, assert_valid_transcript

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "clients" / "typescript"
TS_LEG = TS / "dist-test" / "examples" / "xlang-resolve.js"


@pytest.mark.skipif(shutil.which("go") is None, reason="needs Go (make test has it)")
@pytest.mark.skipif(
    not TS_LEG.exists(), reason="needs the built TypeScript client: make test builds it"
)
async def test_go_starts_typescript_resolves_python_finishes(tmp_path: Path) -> None:
    log_file = tmp_path / "calls.jsonl"
    daemon = DaemonProcess(
        "--store", db_url(tmp_path), "--scripted-call-log", str(log_file)
    ).start()
    ts = None
    try:
        go = subprocess.run(
            ["go", "run", "./cmd/xlang-start", daemon.address, "order-7"],
            cwd=ROOT / "clients" / "go",
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "GOFLAGS": "-mod=mod"},
        )
        assert go.returncode == 0, go.stderr
        approval_id = go.stdout.strip()
        assert approval_id.startswith("ap-")

        ts = subprocess.Popen(
            ["node", str(TS_LEG), daemon.address, approval_id],
            cwd=TS,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = ts.stdout.readline()
        assert line.startswith("IN_TOOL"), line
        held = line.split()[1]
        ts.kill()  # the TypeScript process dies while its notify call runs
        ts.wait(10)

        h = Harness(daemon.address, call_log=log_file)
        handed: list[str] = []
        for _ in range(200):  # until the daemon has seen the dead client and freed the session
            log = await h.run(
                "order-7",
                None,
                resume=True,
                tools={"notify": lambda a: "py:notify"},
                on_event=lambda e: (
                    handed.append(e.tool_call.call.id) if e.type == "tool.call" else None
                ),
            )
            if log.reason != "SESSION_BUSY":
                break
        assert log.done and log.done.final_text == "paid and notified", log.reason
        assert handed == [held]  # only the call the TypeScript process never answered

        cp = await h.get("order-7")
        assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
        assert_valid_transcript(cp)
        results = [
            (m.tool_name, json.loads(m.content)) for m in cp.messages if m.role == pb.ROLE_TOOL
        ]
        assert results == [("lookup", "go:lookup"), ("pay", "ts:pay"), ("notify", "py:notify")]
        assert h.model_calls("order-7") == 3  # no turn generated twice across the three clients
        await h.close()
    finally:
        if ts and ts.poll() is None:
            ts.kill()
        daemon.stop()
