"""The "Limits on spend and time" page's worked example (docs/concepts/limits.md), run as
written — its grpcurl commands with bash, its Python with the generated stub and with the
Python client — against
``luoshod serve``, only the address replaced: what the page says the user sees when a
budget trips cannot rot."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.daemon_process import DaemonProcess, db_url

GRPCURL = ROOT / ".tools" / "bin" / "grpcurl"
PAGE = ROOT / "docs" / "concepts" / "limits.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", PAGE.read_text(), flags=re.S)


@pytest.mark.skipif(
    not GRPCURL.exists(), reason="grpcurl not installed (make test installs it into .tools/bin)"
)
def test_r79_the_pages_grpcurl_example_trips_the_budget_and_resumes(tmp_path: Path) -> None:
    script = "\n".join(blocks("sh"))
    daemon = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        script = script.replace("127.0.0.1:50051", daemon.address)
        env = {**os.environ, "PATH": f"{GRPCURL.parent}:{os.environ['PATH']}"}
        for _ in range(2):  # twice in a row: the example runs again from the top
            done = subprocess.run(
                ["bash", "-e", "-c", script], capture_output=True, text=True, env=env, timeout=60
            )
            assert done.returncode == 0, done.stderr
            out = done.stdout
            reasons = re.findall(r'"finish_reason": "(\w+)"', out)
            assert reasons == [
                "FINISH_REASON_STOP",
                "FINISH_REASON_BUDGET_EXCEEDED",
                "FINISH_REASON_STOP",
            ]
            assert out.count('"type": "budget.exceeded"') == 1
            assert '"limit": "cost_usd"' in out and '"worst_case": 0.007557' in out
            assert '"used": 0.0081' in out and '"scope": "session"' in out
            # The stopped run made no model call: two model turns in the three runs.
            assert out.count('"type": "model.turn"') == 2
    finally:
        daemon.stop()


def test_r79_the_pages_python_example_prints_what_it_says(tmp_path: Path) -> None:
    code = blocks("python")[0]
    daemon = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        done = subprocess.run(
            [sys.executable, "-c", code.replace("127.0.0.1:50051", daemon.address)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        daemon.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "FINISH_REASON_STOP",
        "session cost_usd 0.015: used 0.0081, next call up to 0.007557",
        "FINISH_REASON_BUDGET_EXCEEDED",
        "FINISH_REASON_STOP",
    ]
    assert "prints `FINISH_REASON_STOP`, then `session cost_usd 0.015: used 0.0081" in " ".join(
        PAGE.read_text().split()
    )


def test_r79_the_pages_client_example_prints_what_it_says(tmp_path: Path) -> None:
    [_, code] = blocks("python")
    daemon = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        done = subprocess.run(
            [sys.executable, "-c", code.replace("127.0.0.1:50051", daemon.address)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        daemon.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "stop",
        "budget_exceeded",
        "session cost_usd 0.015: used 0.0081, next call up to 0.007557",
        "stop Le rapport dit que les ventes ont augmenté de 4 %.",
    ]
