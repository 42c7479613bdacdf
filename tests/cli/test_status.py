"""``luoshod status``: a running daemon at a glance, with the CLI and the daemon as
processes on a real SQLite file. (``luoshod leases release`` after a kill is in
tests/processes/test_leases.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from tests.support.cli import luoshod
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import agent, calls, user


def test_status_shows_health_sessions_and_what_the_metrics_say(tmp_path: Path) -> None:
    d = DaemonProcess(
        "--store", db_url(tmp_path), "--metrics-listen", "127.0.0.1:0", "--lease-owner", "web-1"
    ).start()
    try:
        assert d.proc is not None and d.proc.stdout is not None
        metrics = (
            d.proc.stdout.readline()
            .removeprefix("luoshod metrics on http://")
            .removesuffix("/metrics\n")
        )
        spec = agent([calls(("charge", {"eur": 40})), {"text": "ok"}], tools=["charge"])
        spec.tools[0].needs_approval = True
        with grpc.insecure_channel(d.address) as ch:
            stub = pb_grpc.AgentServiceStub(ch)
            list(stub.Execute(pb.ExecuteRequest(session_id="paid", input=[user("go")], agent=spec)))
            list(
                stub.Execute(
                    pb.ExecuteRequest(
                        session_id="hello", input=[user("hi")], agent=agent([{"text": "hi"}])
                    )
                )
            )
        out = luoshod("status", "--address", d.address, "--metrics-address", metrics)
        assert out.returncode == 0, out.stderr
        rows = dict(line.split(None, 1) for line in out.stdout.splitlines())
        assert rows["daemon"] == f"{d.address}  SERVING"
        assert rows["sessions"] == "0 in-progress, 1 awaiting-approval, 1 finished, 0 sleeping"
        assert rows["approvals"] == "1 pending"
        assert rows["version"].startswith("0.1.0 (python ")
        assert rows["store"] == db_url(tmp_path) and rows["listeners"] == d.address
        assert rows["runs"] == "0 active, 0 leases held as web-1"
        shown = json.loads(
            luoshod("status", "--address", d.address, "--metrics-address", metrics, "--json").stdout
        )
        assert (shown["health"], shown["pending_approvals"], shown["lease_owner"]) == (
            "SERVING",
            1,
            "web-1",
        )
        alone = luoshod("status", "--address", d.address)
        assert alone.returncode == 0 and "give --metrics-address" in alone.stdout
    finally:
        d.stop()
