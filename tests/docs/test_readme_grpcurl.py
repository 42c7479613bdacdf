"""The "Operations with grpcurl" commands of the docs, run as written against a real daemon.

The real grpcurl (`make test` installs it into .tools/bin with `go install`) drives a
`luoshod serve` process through server reflection alone: no proto files. Every command of
the section is taken from docs/getting-started/grpcurl.md (its ```sh blocks), with only the address
replaced —
and APPROVAL_ID by the id ListApprovals printed — so the docs cannot rot.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.daemon_process import DaemonProcess, db_url

ROOT = Path(__file__).resolve().parents[2]
GRPCURL = ROOT / ".tools" / "bin" / "grpcurl"
README_ADDR = "127.0.0.1:50051"
PAGE = ROOT / "docs" / "getting-started" / "grpcurl.md"
SECTION = "# Operations with grpcurl"


def readme_commands() -> list[str]:
    """The section's shell commands, one per entry (continuations and quoted JSON joined)."""
    text = PAGE.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start : end if end != -1 else len(text)]
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S):
        current = ""
        for line in block.splitlines():
            current = f"{current}\n{line}" if current else line
            if current.rstrip().endswith("\\") or current.count("'") % 2:
                continue  # a continuation or an open single-quoted JSON body
            if current.strip():
                commands.append(current)
            current = ""
        assert not current, f"unterminated command in {PAGE.name}: {current!r}"
    return commands


class Stream:
    """A streaming grpcurl (Execute) in the background, its stdout collected as it comes."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        self.out = ""
        self.ended = False  # grpcurl closed its stdout: it exited
        # The reader notifies on every line and at the end, so a wait wakes on what it
        # waits for instead of polling the text.
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout
        for line in self.proc.stdout:
            with self._changed:
                self.out += line
                self._changed.notify_all()
        with self._changed:
            self.ended = True
            self._changed.notify_all()

    def text(self) -> str:
        with self._changed:
            return self.out

    def _wait(self, seen: Callable[[], bool], timeout: float) -> bool:
        """Until ``seen()`` or the end of the stream; whether ``seen()`` held."""
        with self._changed:
            self._changed.wait_for(lambda: seen() or self.ended, timeout)
            return seen()

    def wait_for(self, needle: str, timeout: float = 30) -> None:
        if not self._wait(lambda: needle in self.out, timeout):
            where = "stream ended" if self.ended else f"no such line in the stream after {timeout}s"
            raise AssertionError(f"{where} without {needle!r}:\n{self.text()}\n{self.stderr()}")

    def wait_paused_or_done(self, timeout: float = 30) -> None:
        """Until the stream waits for a tool result or ended (a paused or finished run)."""
        if not self._wait(lambda: '"tool.call"' in self.out, timeout):
            assert self.ended, f"the stream neither paused nor ended:\n{self.text()}"
            self._reader.join(10)

    def finish(self, timeout: float = 30) -> str:
        rc = self.proc.wait(timeout)
        self._reader.join(10)
        assert rc == 0, f"grpcurl exited {rc}: {self.stderr()}\n{self.text()}"
        return self.text()

    def stderr(self) -> str:
        return self.proc.stderr.read() if self.proc.stderr and self.proc.poll() is not None else ""


def messages(out: str) -> list[dict]:
    """grpcurl prints one JSON object per response message, one after the other."""
    decoder = json.JSONDecoder()
    found, i = [], 0
    while i < len(out):
        if out[i].isspace():
            i += 1
            continue
        obj, i = decoder.raw_decode(out, i)
        found.append(obj)
    return found


def events(out: str) -> list[dict]:
    return [m["event"] for m in messages(out)]


@pytest.fixture
def daemon(tmp_path: Path):
    d = DaemonProcess(
        "--store", db_url(tmp_path), "--scripts-dir", str(ROOT / "examples" / "scripts")
    )
    d.start()
    yield d
    d.stop()


def test_readme_grpcurl_operations(daemon: DaemonProcess) -> None:
    """The page's commands, twice in a row on one daemon: a reader can run it again (its
    DeleteSession commands start it clean), and it does the same the second time."""
    assert GRPCURL.exists(), f"{GRPCURL} is missing: `make test` installs it (go install)"
    env = {**os.environ, "PATH": f"{GRPCURL.parent}{os.pathsep}{os.environ['PATH']}"}
    for _ in range(2):
        walk_through(daemon, env)


def walk_through(daemon: DaemonProcess, env: dict[str, str]) -> None:
    commands = readme_commands()
    outputs: dict[str, list[str]] = {}
    streams: list[Stream] = []
    approval_id = ""

    def run(command: str) -> str:
        command = command.replace(README_ADDR, daemon.address).replace("APPROVAL_ID", approval_id)
        assert command.startswith("grpcurl "), command
        rpc = command.split()[-1]
        argv = ["bash", "-c", command]  # as a reader's shell runs it
        if rpc.endswith("/Execute"):
            stream = Stream(argv, env)
            streams.append(stream)
            stream.wait_paused_or_done()
            outputs.setdefault(rpc, []).append("")
            return ""
        call_id = re.search(r'"tool_call_id": "([^"]+)"', command)
        if call_id:  # answer a call once the run handed it out, as a reader would
            streams[-1].wait_for(f'"id": "{call_id.group(1)}"')
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, (
            f"{command}\nexited {done.returncode}: {done.stderr}{done.stdout}"
        )
        outputs.setdefault(rpc, []).append(done.stdout)
        return done.stdout

    for command in commands:
        out = run(command)
        if command.rstrip().endswith("AgentService/ListApprovals"):
            listed = messages(out)[0]["approvals"]
            assert [a["session_id"] for a in listed] == ["refund-1"]
            assert listed[0]["tool_call"]["name"] == "refund"
            approval_id = listed[0]["approval_id"]
        if command.rstrip().endswith("AgentService/SubmitToolResult"):
            assert messages(out) == [{"outcome": "SUBMIT_OUTCOME_ACCEPTED"}], out

    # Every operation the section promises is there.
    for rpc in [
        "grpc.health.v1.Health/Check",
        "list",
        "luosho.v1.AgentService",
        "luosho.v1.AgentService/Execute",
        "luosho.v1.AgentService/SubmitToolResult",
        "luosho.v1.AgentService/GetSession",
        "luosho.v1.AgentService/ListSessions",
        "luosho.v1.AgentService/ListApprovals",
        "luosho.v1.AgentService/Resolve",
        "luosho.v1.AgentService/Resume",
    ]:
        assert rpc in outputs, f"the README section has no {rpc} command"

    assert messages(outputs["grpc.health.v1.Health/Check"][0]) == [{"status": "SERVING"}]
    assert "luosho.v1.AgentService" in outputs["list"][0].split()
    assert "grpc.health.v1.Health" in outputs["list"][0].split()
    described = outputs["luosho.v1.AgentService"][0]
    assert (
        "service AgentService {" in described
        and "rpc Execute" in described
        and "rpc Resolve" in described
    )

    # The demo run: both tool calls answered, the run finished with the scripted answer.
    demo, refund = streams
    demo_events = events(demo.finish())
    types = [e["type"] for e in demo_events]
    assert types[0] == "run.start" and types[-1] == "run.done", types
    assert types.count("tool.call") == 2 and types.count("tool.result") == 2, types
    assert [int(e["seq"]) for e in demo_events] == list(range(1, len(demo_events) + 1))
    done = demo_events[-1]["run_done"]
    assert done["finish_reason"] == "FINISH_REASON_STOP" and "Lisbon is sunny" in done["final_text"]
    results = [e["tool_result"]["result_json"] for e in demo_events if e["type"] == "tool.result"]
    assert (
        json.loads(results[0]) == {"sky": "sunny", "celsius": 24}
        and json.loads(results[1]) == 108.0
    )

    checkpoint = messages(outputs["luosho.v1.AgentService/GetSession"][0])[0]["checkpoint"]
    assert (
        checkpoint["session_id"] == "demo-1"
        and checkpoint["status"] == "CHECKPOINT_STATUS_FINISHED"
    )
    sessions = messages(outputs["luosho.v1.AgentService/ListSessions"][0])[0]["sessions"]
    assert [s["session_id"] for s in sessions] == ["demo-1"]
    assert messages(outputs["luosho.v1.AgentService/Resume"][0]) == []  # finished: nothing to do

    # The approval run paused, was listed, rejected, and the model read the rejection.
    paused = events(refund.finish())
    assert [e["type"] for e in paused][-2:] == ["approval.requested", "run.done"]
    assert paused[-1]["run_done"]["finish_reason"] == "FINISH_REASON_AWAITING_APPROVAL"
    assert paused[-1]["run_done"]["approval_id"] == approval_id
    resolved = events(outputs["luosho.v1.AgentService/Resolve"][0])
    assert resolved[-1]["type"] == "run.done"
    assert resolved[-1]["run_done"]["finish_reason"] == "FINISH_REASON_STOP"
    assert resolved[-1]["run_done"]["final_text"] == "No refund without a receipt."
    rejection = [e["tool_result"] for e in resolved if e["type"] == "tool.result"]
    assert len(rejection) == 1 and rejection[0]["is_error"]
    assert json.loads(rejection[0]["result_json"])["note"] == "no receipt"


def test_the_readme_grpcurl_call_is_one_the_page_runs() -> None:
    """README.md's one grpcurl call is a command of the page, so the test above runs it."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## One call with grpcurl") :]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.S)
    assert block, "README.md's grpcurl section has no sh block"
    assert block.group(1).strip() in readme_commands()
