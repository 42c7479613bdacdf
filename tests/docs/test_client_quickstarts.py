"""Issue 17, day one with the clients: each quickstart runs with one command against a
running daemon named by ``LUOSHOD_ADDRESS``, runs again with the same output (a new
session each time, not a finished conversation continued past its script), and prints
the finish reason the same way (``stop``) in Python, TypeScript, Go and Java."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.daemon_process import DaemonProcess

ROOT = Path(__file__).resolve().parents[2]
LAST = "stop - Lisbon is sunny today, and 100 EUR is about 108 USD. Enjoy the trip!"
GO = shutil.which("go") or (
    "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
)
TS_QUICKSTART = ROOT / "clients/typescript/dist-test/examples/quickstart.js"
MVN = shutil.which("mvn")
#: The command clients/java/README.md gives, word for word.
JAVA_COMMAND = ["mvn", "-B", "-q", "-Dstyle.color=never", "compile", "exec:java"]


@pytest.fixture(scope="module")
def daemon() -> Iterator[DaemonProcess]:
    d = DaemonProcess(
        "--store", "memory://", "--scripts-dir", str(ROOT / "examples" / "scripts")
    ).start()
    yield d
    d.stop()


def twice(command: list[str], cwd: Path, address: str) -> list[str]:
    """Run ``command`` twice with only LUOSHOD_ADDRESS naming the daemon; its last lines.
    Nothing it prints is an escape code (a terminal's colours, or their resets)."""
    env = {**os.environ, "LUOSHOD_ADDRESS": address}
    lasts = []
    for _ in range(2):
        done = subprocess.run(
            command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout + done.stderr, repr(done.stdout[-200:])
        lasts.append(done.stdout.strip().splitlines()[-1])
    return lasts


def test_the_python_quickstart(daemon: DaemonProcess) -> None:
    assert twice([sys.executable, "examples/quickstart.py"], ROOT, daemon.address) == [LAST, LAST]


@pytest.mark.skipif(GO is None, reason="needs Go (make test has it)")
def test_the_go_quickstart(daemon: DaemonProcess) -> None:
    assert twice([str(GO), "run", "./cmd/quickstart"], ROOT / "clients/go", daemon.address) == [
        LAST,
        LAST,
    ]


@pytest.mark.skipif(
    not TS_QUICKSTART.exists(), reason="needs the built TypeScript client: make test builds it"
)
def test_the_typescript_quickstart(daemon: DaemonProcess) -> None:
    assert twice(["node", str(TS_QUICKSTART)], ROOT / "clients/typescript", daemon.address) == [
        LAST,
        LAST,
    ]


@pytest.mark.skipif(MVN is None, reason="needs Maven (make test has it)")
def test_the_java_quickstart(daemon: DaemonProcess) -> None:
    readme = (ROOT / "clients/java/README.md").read_text()
    assert " ".join(JAVA_COMMAND) in readme
    assert twice(JAVA_COMMAND, ROOT / "clients/java", daemon.address) == [LAST, LAST]
