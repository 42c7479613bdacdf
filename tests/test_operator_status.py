"""Issue 17: ``luoshod status`` (a running daemon at a glance) and ``luoshod leases
release`` (the leases a killed daemon left), with the CLI and the daemons as processes
on a real SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
from daemon_proc import DaemonProcess, db_url
from support import agent, calls, user

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc


def luoshod(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "luoshod", *argv], capture_output=True, text=True, timeout=120
    )


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
        assert rows["sessions"] == "0 in-progress, 1 awaiting-approval, 1 finished"
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


def test_leases_release_frees_what_a_killed_daemon_held(tmp_path: Path) -> None:
    spec = agent([calls(("add", {"a": 1})), {"text": "two"}])
    # A chosen --lease-owner: whether its daemon is alive cannot be told from its name, so
    # its lease stays until the TTL (a default owner that is gone is taken back at once by
    # the next daemon on this machine: test_dead_holder.py).
    owner = ("--lease-owner", "app-0")
    a = DaemonProcess(
        "--store", db_url(tmp_path), "--lease-ttl-s", "600", "--lease-renew-s", "200", *owner
    ).start()
    with grpc.insecure_channel(a.address) as ch:
        call = pb_grpc.AgentServiceStub(ch).Execute(
            pb.ExecuteRequest(session_id="held", input=[user("go")], agent=spec)
        )
        events = iter(call)
        while next(events).event.type != "tool.call":
            pass
        a.kill9()  # the run holds the session's lease, for ten minutes
    a.stop()
    b = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        with grpc.insecure_channel(b.address) as ch:
            stub = pb_grpc.AgentServiceStub(ch)
            try:
                list(stub.Resume(pb.ResumeRequest(session_id="held")))
                raise AssertionError("the killed daemon's lease should make the session busy")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.ABORTED and "is leased by" in e.details()
                holder = e.details().split("is leased by ")[1].split("'")[1]
                assert holder == "app-0" and "holder alive: unknown" in e.details()
            out = luoshod("leases", "release", "--store", db_url(tmp_path), "--owner", holder)
            assert out.returncode == 0, out.stderr
            assert out.stdout == f"released 1 lease of {holder} in {db_url(tmp_path)}\n"
            resumed = stub.Resume(pb.ResumeRequest(session_id="held"))
            assert next(iter(resumed)).event.type == "run.start"
            resumed.cancel()
    finally:
        b.stop()
