"""Issue 17 (with issue 16's lease rework): ``luoshod leases list`` shows who holds which
session (holder, fencing token, expiry) and ``luoshod leases release --session`` frees one
session's lease; the CLI as a subprocess against a real daemon on a real SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
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


def test_leases_list_shows_the_holders_and_release_session_frees_one(tmp_path: Path) -> None:
    url = db_url(tmp_path)
    spec = agent([calls(("add", {"a": 1})), {"text": "two"}])
    a = DaemonProcess(
        "--store", url, "--lease-owner", "web-1", "--lease-ttl-s", "600", "--lease-renew-s", "200"
    ).start()
    with grpc.insecure_channel(a.address) as ch:
        stub = pb_grpc.AgentServiceStub(ch)
        streams = []
        for sid in ("held-a", "held-b"):
            call = stub.Execute(pb.ExecuteRequest(session_id=sid, input=[user("go")], agent=spec))
            events = iter(call)
            while next(events).event.type != "tool.call":
                pass
            streams.append(call)
        listed = luoshod("leases", "list", "--store", url)
        assert listed.returncode == 0, listed.stderr
        head, *rows = listed.stdout.splitlines()
        assert head.split() == ["SESSION", "HOLDER", "TOKEN", "EXPIRES"]
        assert [r.split()[:3] for r in rows] == [["held-a", "web-1", "1"], ["held-b", "web-1", "1"]]
        shown = json.loads(
            luoshod("leases", "list", "--store", url, "--owner", "web-1", "--json").stdout
        )
        assert [(lease["session_id"], lease["holder"], lease["token"]) for lease in shown] == [
            ("held-a", "web-1", 1),
            ("held-b", "web-1", 1),
        ]
        expires = datetime.fromisoformat(shown[0]["expires_at"].replace("Z", "+00:00"))
        assert 500 < (expires - datetime.now(UTC)).total_seconds() <= 600
        assert (
            luoshod("leases", "list", "--store", url, "--owner", "nobody").stdout
            == "no live leases held by nobody\n"
        )
        a.kill9()  # both runs keep their sessions' leases for ten minutes
    a.stop()
    out = luoshod("leases", "release", "--store", url, "--session", "held-a")
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"released the lease of session held-a (holder web-1, token 1) in {url}\n"
    again = luoshod("leases", "release", "--store", url, "--session", "held-a")
    assert again.returncode == 1 and "holds no live lease" in again.stderr
    assert [
        lease["session_id"]
        for lease in json.loads(luoshod("leases", "list", "--store", url, "--json").stdout)
    ] == ["held-b"]
    b = DaemonProcess("--store", url).start()
    try:
        with grpc.insecure_channel(b.address) as ch:
            stub = pb_grpc.AgentServiceStub(ch)
            resumed = stub.Resume(pb.ResumeRequest(session_id="held-a"))
            assert next(iter(resumed)).event.type == "run.start"  # freed: a new holder
            resumed.cancel()
            try:
                list(stub.Resume(pb.ResumeRequest(session_id="held-b")))
                raise AssertionError("held-b's lease was not released")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.ABORTED and "web-1" in e.details()
    finally:
        b.stop()
    missing = luoshod("leases", "release", "--store", url)
    assert missing.returncode == 2 and "--owner" in missing.stderr and "--session" in missing.stderr
