"""``luoshod sessions list --prefix`` and the Python client's ``list_sessions(prefix=)``:
the sessions whose id starts with the prefix, every page followed (a real daemon process)."""

from __future__ import annotations

import json
from pathlib import Path

from luosho.client import Client
from tests.support.cli import execute, luoshod
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import agent


def test_sessions_list_by_id_prefix(tmp_path: Path) -> None:
    d = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        ids = [f"trip-{i:03}" for i in range(7)] + ["trips", "refund-1", "a-trip"]
        for sid in ids:
            execute(d.address, sid, agent([{"text": "hi"}]))
        out = luoshod("sessions", "list", "--prefix", "trip-", "--json", address=d.address)
        assert out.returncode == 0, out.stderr
        assert [s["session_id"] for s in json.loads(out.stdout)] == [
            f"trip-{i:03}" for i in range(7)
        ]
        with Client(d.address) as client:
            assert [s.session_id for s in client.list_sessions(page_size=2, prefix="trip")] == [
                *(f"trip-{i:03}" for i in range(7)),
                "trips",
            ]
        bad = luoshod("sessions", "list", "--prefix", "trip 1", address=d.address)
        assert bad.returncode != 0 and "INVALID_SESSION_ID" in bad.stderr + bad.stdout
    finally:
        d.stop()
