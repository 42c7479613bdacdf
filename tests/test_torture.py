"""``luoshod torture`` as a user runs it: real daemons on a real store, killed with kill -9
(and SIGSTOP past the lease TTL, two daemons sharing PostgreSQL) at the moments the seed
picks, every invariant checked after each cycle. A bounded number of cycles on SQLite, LMDB
and PostgreSQL must find nothing;
a driver that acknowledges a save before it is durable must be caught, named by the save
it lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
CYCLES = 12


def torture(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, dict]:
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "luoshod", "torture", *args, "--report", str(report),
         "--work-dir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})},
    )
    assert report.exists(), proc.stderr
    return proc.returncode, proc.stdout + proc.stderr, json.loads(report.read_text())


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("url", "daemons"),
    # The embedded drivers with one daemon, kill -9 only: a daemon stopped inside a write
    # holds the file's write lock (SQLite's, LMDB's writer mutex), so a second one cannot
    # take over until it runs again — torture counts such stalls; PostgreSQL below has two.
    [("sqlite:///{tmp}/t.db", "1"), ("lmdb:///{tmp}/t.lmdb", "1")],
    ids=["sqlite", "lmdb"],
)
def test_torture_finds_no_violation(tmp_path: Path, url: str, daemons: str) -> None:
    code, out, report = torture(
        tmp_path, "--store", url.format(tmp=tmp_path), "--cycles", str(CYCLES), "--seed", "14",
        "--daemons", daemons,
    )
    assert code == 0, out
    assert "violations  0" in out
    assert report["cycles"] == CYCLES and report["violations"] == []
    assert sum(report["kills"].values()) == CYCLES
    if daemons == "2":
        assert report["kills"].get("SIGSTOP past the lease TTL", 0) >= 1
    assert len(report["boundaries"]) >= 4, report["boundaries"]
    assert report["sessions_finished"] >= 1 and report["stats"]["tool calls handed out"] > CYCLES
    assert "client exceptions" not in report["stats"], out


@pytest.mark.timeout(300)
def test_torture_on_postgresql_with_two_daemons_finds_no_violation(tmp_path: Path, postgres_url: str) -> None:
    code, out, report = torture(
        tmp_path, "--store", postgres_url, "--cycles", str(CYCLES), "--seed", "14", "--daemons", "2"
    )
    assert code == 0, out
    assert report["daemons"] == 2 and report["violations"] == []
    assert sum(report["kills"].values()) == CYCLES and report["kills"].get("SIGSTOP past the lease TTL", 0) >= 1
    assert report["stats"].get("takeovers", 0) >= 1
    assert "client exceptions" not in report["stats"], out


def lazy_driver(tmp_path: Path) -> dict[str, str]:
    """Install tests/torture_drivers/lazy_sqlite.py as the ``lazysqlite://`` driver: an
    entry point in a dist-info folder on PYTHONPATH, as an installed distribution has."""
    site = tmp_path / "site"
    info = site / "luoshod_lazy_sqlite-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: luoshod-lazy-sqlite\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[luoshod.drivers]\nlazysqlite = lazy_sqlite:LazySqliteStore\n")
    path = os.pathsep.join([str(site), str(HERE / "torture_drivers"), os.environ.get("PYTHONPATH", "")])
    return {"PYTHONPATH": path}


@pytest.mark.timeout(300)
def test_torture_catches_a_driver_that_acknowledges_before_durable(tmp_path: Path) -> None:
    code, out, report = torture(
        tmp_path, "--store", f"lazysqlite:///{tmp_path}/t.db", "--cycles", "6", "--seed", "14",
        env=lazy_driver(tmp_path),
    )
    assert code == 1, out
    lost = [
        v for v in report["violations"]
        if v["rule"] == "R54" and "lost save: the result of call call_" in v["message"]
    ]
    assert lost, out
    # The violation names the save it lost (session and call), the events that session's
    # client saw, and how to reproduce the run.
    assert f"session {lost[0]['session_id']}, cycle {lost[0]['cycle']}: {lost[0]['message']}" in out
    assert lost[0]["events"] and " ".join(lost[0]["events"]) in out
    assert "reproduce: luoshod torture --store lazysqlite://" in out and "--seed 14" in out
