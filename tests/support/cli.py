"""The people CLI as a user runs it: ``python -m luoshod ...`` as a subprocess, or ``cli``
in this process against a daemon (its exit code and what it printed); ``PAY``, an agent
whose tool needs approval, and ``execute``, an app's Execute that stops reading where the
test says, to give the CLI something to show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from luoshod.cli import main
from tests.support.harness import agent, calls, user
from tests.support.threaded_daemon import ThreadedDaemon

#: A scripted model that charges 40 EUR (a tool that needs approval), then says so.
PAY_SCRIPT = [{"tool_calls": [{"name": "charge", "arguments": {"eur": 40}}]}, {"text": "charged"}]


def luoshod(
    *argv: str,
    address: str = "",
    env: dict[str, str] | None = None,
    clean_env: bool = False,
    stdin: int | None = subprocess.DEVNULL,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``luoshod ARGV`` (``--address`` appended when given) and return what it did.
    ``env`` is added to this process's environment, from which ``clean_env`` first drops
    every ``LUOSHOD_*`` variable (so only the test's settings count)."""
    base = {k: v for k, v in os.environ.items() if not (clean_env and k.startswith("LUOSHOD_"))}
    full = [sys.executable, "-m", "luoshod", *argv, *(["--address", address] if address else [])]
    return subprocess.run(
        full,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**base, **(env or {})},
        stdin=stdin,
    )


PAY = agent([calls(("charge", {"eur": 40})), {"text": "charged"}], tools=["charge"])
PAY.tools[0].needs_approval = True


def execute(
    address: str,
    session_id: str,
    spec: pb.AgentSpec,
    *,
    until: str = "run.done",
    answer: bool = False,
) -> list[pb.Event]:
    """Execute and read the stream up to the first ``until`` event; then drop it (an app
    that crashed there), unless it is the end. ``answer``: answer tool calls with 2."""
    with grpc.insecure_channel(address) as ch:
        stub = pb_grpc.AgentServiceStub(ch)
        call = stub.Execute(
            pb.ExecuteRequest(session_id=session_id, input=[user("go")], agent=spec)
        )
        events = []
        for r in call:
            events.append(r.event)
            if r.event.type == "tool.call" and answer:
                stub.SubmitToolResult(
                    pb.SubmitToolResultRequest(
                        session_id=session_id,
                        tool_call_id=r.event.tool_call.call.id,
                        result_json="2",
                    )
                )
            if r.event.type == until:
                call.cancel()
                break
        return events


def cli(
    daemon: ThreadedDaemon | str, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    address = daemon if isinstance(daemon, str) else daemon.address
    code = main([*argv, "--address", address])
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(daemon: ThreadedDaemon, capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = cli(daemon, capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)
