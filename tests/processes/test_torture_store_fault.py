"""``luoshod torture --store-fault COMMAND``: a fault of the store itself in place of some
kills (a PostgreSQL cluster's primary killed, in the guide's longer run). Here the command
only leaves a trace, on an SQLite store: it runs in the share of cycles asked for, one at a
time, while the sessions go on, and the run checks every rule as after any kill."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_torture_runs_the_store_fault_command_in_place_of_kills(tmp_path: Path) -> None:
    trace = tmp_path / "faults"
    fault = f"{sys.executable} -c \"open('{trace}', 'a').write('fault\\n')\""
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "luoshod",
            "torture",
            "--store",
            f"sqlite:///{tmp_path / 's.db'}",
            "--cycles",
            "4",
            "--sessions",
            "2",
            "--seed",
            "3",
            "--store-fault",
            fault,
            "--store-fault-share",
            "1",
            "--report",
            str(report),
            "--work-dir",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = json.loads(report.read_text())
    assert r["violations"] == [] and r["cycles"] == 4
    ran = r["kills"].get("store fault", 0)
    # Every cycle whose last fault had ended ran it; none of them killed a daemon.
    assert ran >= 2 and ran + r["kills"].get("kill -9", 0) == 4, r["kills"]
    assert trace.read_text().count("fault") == ran
    assert "store fault (" in proc.stderr
