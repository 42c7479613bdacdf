"""R87: ``luoshod schedules create|list|pause|resume|trigger|delete`` against a live daemon,
and the Python client's schedule methods they call; a bad schedule is one line naming
its reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from luosho.client import Agent, Client
from tests.support.cli import cli, cli_json
from tests.support.threaded_daemon import ThreadedDaemon as Daemon
from tests.support.threaded_daemon import threaded_daemon


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    with threaded_daemon(store="memory://", tool_timeout_s=30) as d:
        yield d


def test_r87_the_schedules_commands(
    daemon: Daemon, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = {
        "model": "scripted:report",
        "modelSettingsJson": json.dumps({"script": [{"text": "ok"}]}),
    }
    (tmp_path / "agent.json").write_text(json.dumps(spec))
    code, out, err = cli(
        daemon,
        capsys,
        "schedules",
        "create",
        "daily-report",
        "--cron",
        "0 9 * * 1-5",
        "--time-zone",
        "Europe/Berlin",
        "--agent",
        f"@{tmp_path / 'agent.json'}",
        "--input",
        "Write the daily report",
    )
    assert code == 0, err
    assert "schedule daily-report created: 0 9 * * 1-5 (Europe/Berlin), next fire" in out
    code, out, _ = cli(daemon, capsys, "schedules", "list")
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("daily-report"))
    assert "active" in line and "0 9 * * 1-5 (Europe/Berlin)" in line
    code, out, _ = cli(daemon, capsys, "schedules", "pause", "daily-report")
    assert code == 0 and "paused" in out and "none (paused)" in out
    listed = cli_json(daemon, capsys, "schedules", "list")
    assert listed[0]["paused"] is True
    code, out, _ = cli(daemon, capsys, "schedules", "trigger", "daily-report")
    assert code == 0 and "fired: session schedule:daily-report:" in out
    code, out, _ = cli(daemon, capsys, "schedules", "resume", "daily-report")
    assert code == 0 and "resumed" in out
    with Client(daemon.address) as client:
        [shown] = client.schedules()
        assert (shown.spec.name, shown.paused, shown.fired) == ("daily-report", False, 1)
        made = client.create_schedule(
            "ping",
            Agent("scripted:x", model_settings={"script": [{"text": "ok"}]}),
            "ping",
            interval_s=300,
            session="one",
            overlap="enqueue",
        )
        assert made.spec.interval_ms == 300_000
        with pytest.raises(ValueError, match="overlap"):
            client.create_schedule(
                "x", Agent("scripted:x"), "x", interval_s=60, overlap="sometimes"
            )
    code, out, _ = cli(daemon, capsys, "schedules", "delete", "daily-report")
    assert code == 0 and "deleted" in out
    code, _, err = cli(daemon, capsys, "schedules", "delete", "daily-report")
    assert code == 1 and "SCHEDULE_NOT_FOUND: no schedule is named 'daily-report'" in err
    code, _, err = cli(
        daemon,
        capsys,
        "schedules",
        "create",
        "bad",
        "--cron",
        "0 25 * * *",
        "--agent",
        json.dumps(spec),
        "--input",
        "x",
    )
    assert code == 1 and "INVALID_SCHEDULE" in err and "cron expression '0 25 * * *'" in err
    code, _, err = cli(
        daemon,
        capsys,
        "schedules",
        "create",
        "bad",
        "--cron",
        "0 9 * * *",
        "--time-zone",
        "Berlin",
        "--agent",
        json.dumps(spec),
        "--input",
        "x",
    )
    assert code == 1 and "UNKNOWN_TIME_ZONE" in err
    assert [s["spec"]["name"] for s in cli_json(daemon, capsys, "schedules", "list")] == ["ping"]
