"""Issue 17, metrics an operator can alert on: the process and Python series every
Prometheus client exports, the build info, and a successful ``approvals approve`` (which
leaves the run once it waits on the app's tools) counted as a detached run, not an
interrupted one; its "run start" has its end in the log. Daemon and CLI are subprocesses."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import agent, calls, user


def test_process_python_and_build_series_and_approve_is_no_interrupted_run(tmp_path: Path) -> None:
    d = DaemonProcess(
        "--store", db_url(tmp_path), "--metrics-listen", "127.0.0.1:0", "--log-level", "INFO"
    ).start()
    try:
        assert d.proc is not None and d.proc.stdout is not None
        url = d.proc.stdout.readline().removeprefix("luoshod metrics on ").strip()
        spec = agent([calls(("charge", {"eur": 40})), {"text": "charged"}], tools=["charge"])
        spec.tools[0].needs_approval = True
        with grpc.insecure_channel(d.address) as ch:
            call = pb_grpc.AgentServiceStub(ch).Execute(
                pb.ExecuteRequest(session_id="pay-1", input=[user("go")], agent=spec)
            )
            approval = [r.event for r in call][-1].run_done.approval_id
        cli = [sys.executable, "-m", "luoshod"]
        approved = subprocess.run(
            [*cli, "approvals", "approve", approval, "--address", d.address],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert approved.returncode == 0 and "waits for the app to run charge" in approved.stdout, (
            approved.stderr
        )
        # Watch ends when the run the CLI left has stopped.
        subprocess.run(
            [*cli, "sessions", "watch", "pay-1", "--address", d.address],
            capture_output=True,
            timeout=60,
            check=True,
        )

        text = urllib.request.urlopen(url, timeout=10).read().decode()
        for series in (
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_open_fds ",
            "python_info{",
            "python_gc_objects_collected_total{",
        ):
            assert series in text, series
        build = re.search(r"^luoshod_build_info\{(.*)\} 1\.0$", text, re.M)
        assert (
            build
            and 'version="0.1.0"' in build.group(1)
            and f'python="{sys.version.split()[0]}"' in build.group(1)
        )
        runs = dict(re.findall(r'^luoshod_runs_total\{outcome="(\w+)"\} (\S+)$', text, re.M))
        assert runs.get("detached") == "1.0", runs
        assert runs.get("interrupted", "0.0") == "0.0", runs
        # The Resolve itself succeeded: the daemon ended its stream once the run waited on
        # the app's tools (detach_on_tool_call), the CLI did not cancel it.
        resolves = dict(
            re.findall(
                r'^luoshod_grpc_server_handled_total\{grpc_code="(\w+)",'
                r'grpc_method="Resolve",[^}]*\} (\S+)$',
                text,
                re.M,
            )
        )
        assert resolves == {"OK": "1.0"}, resolves
    finally:
        assert d.terminate() == 0
        log = d.stderr()
        d.stop()
    assert "run start session=pay-1" in log
    assert "run stopped session=pay-1: the caller detached at a tool call" in log, log


def test_a_rejection_that_runs_to_its_end_and_the_apps_resume_after_an_approve(
    tmp_path: Path,
) -> None:
    d = DaemonProcess(
        "--store", db_url(tmp_path), "--metrics-listen", "127.0.0.1:0", "--log-level", "INFO"
    ).start()
    try:
        assert d.proc is not None and d.proc.stdout is not None
        url = d.proc.stdout.readline().removeprefix("luoshod metrics on ").strip()
        spec = agent([calls(("charge", {"eur": 40})), {"text": "charged"}], tools=["charge"])
        spec.tools[0].needs_approval = True
        cli = [sys.executable, "-m", "luoshod"]
        with grpc.insecure_channel(d.address) as ch:
            stub = pb_grpc.AgentServiceStub(ch)
            approvals = []
            for sid in ("pay-r", "pay-a"):
                call = stub.Execute(
                    pb.ExecuteRequest(session_id=sid, input=[user("go")], agent=spec)
                )
                approvals.append([r.event for r in call][-1].run_done.approval_id)
            rejected = subprocess.run(
                [*cli, "approvals", "reject", approvals[0], "--address", d.address],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert rejected.returncode == 0 and "is finished (stop)" in rejected.stdout, (
                rejected.stderr
            )
            approved = subprocess.run(
                [*cli, "approvals", "approve", approvals[1], "--address", d.address],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert (
                approved.returncode == 0 and "waits for the app to run charge" in approved.stdout
            ), approved.stderr
            # The app resumes at once: the detached run is let go of, no SESSION_BUSY.
            resumed = stub.Resume(pb.ResumeRequest(session_id="pay-a"))
            for r in resumed:
                if r.event.type == "tool.call":
                    stub.SubmitToolResult(
                        pb.SubmitToolResultRequest(
                            session_id="pay-a",
                            tool_call_id=r.event.tool_call.call.id,
                            result_json='{"ok": true}',
                        )
                    )
                last = r.event
            assert last.type == "run.done" and last.run_done.finish_reason == pb.FINISH_REASON_STOP
        text = urllib.request.urlopen(url, timeout=10).read().decode()
        resolves = dict(
            re.findall(
                r'^luoshod_grpc_server_handled_total\{grpc_code="(\w+)",'
                r'grpc_method="Resolve",[^}]*\} (\S+)$',
                text,
                re.M,
            )
        )
        assert resolves == {"OK": "2.0"}, resolves
        runs = dict(re.findall(r'^luoshod_runs_total\{outcome="(\w+)"\} (\S+)$', text, re.M))
        assert runs == {"awaiting_approval": "2.0", "stop": "2.0", "detached": "1.0"}, runs
    finally:
        assert d.terminate() == 0
        log = d.stderr()
        d.stop()
    # Every "run start" has its end: done (stop) or stopped (detached).
    starts = log.count("run start session=pay-")
    ends = log.count("run done session=pay-") + log.count("run stopped session=pay-")
    assert starts == ends == 5, log
