"""The "Durable timers" page's worked example (docs/concepts/timers.md), run as written
with the Python client against ``luoshod serve``, only the address replaced: the session
sleeps, is listed as sleeping, and the daemon wakes it by itself (R86)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from tests.support import ROOT
from tests.support.daemon_process import DaemonProcess, db_url

PAGE = ROOT / "docs" / "concepts" / "timers.md"


def test_r86_the_pages_python_example_sleeps_and_wakes_by_itself(tmp_path: Path) -> None:
    [code] = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    daemon = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", code.replace("127.0.0.1:50051", daemon.address)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        took = time.monotonic() - started
    finally:
        daemon.stop()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "sleeping sleeping",
        "build-7 True",
        '"time"} checked again: the build is green',
    ]
    assert took >= 2
    page = " ".join(PAGE.read_text().split())
    said = 'It prints `sleeping sleeping`, then `build-7 True`, then, two seconds later, `"time"}'
    assert said in page
