"""Structured logs of a real daemon process: one JSON object per line, with the session,
run and step it is about; no secrets, and no contents unless --log-contents."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, calls

TOKEN = "log-test-token-" + "5e" * 12
SAID = "my card number is 4111 1111"
TOOL_SAYS = "tool-answer-7f3a"


async def run_logged(tmp_path: Path, *flags: str) -> list[dict]:
    d = DaemonProcess(
        "--store",
        f"sqlite:///{tmp_path}/l.db",
        "--log-format",
        "json",
        "--log-level",
        "DEBUG",
        *flags,
        env={"LUOSHOD_AUTH_TOKENS": TOKEN},
    ).start()
    try:
        h = Harness(d.address)
        meta = (("authorization", f"Bearer {TOKEN}"),)
        h.stub.Execute = _with_metadata(h.stub.Execute, meta)
        h.stub.SubmitToolResult = _with_metadata(h.stub.SubmitToolResult, meta)
        log = await h.run(
            "logged-1",
            SAID,
            agent([calls(("add", {"a": 40})), {"text": "the sum is 42"}]),
            {"add": lambda a: TOOL_SAYS},
        )
        assert log.error is None, log.error
        await h.close()
        assert d.terminate() == 0
        err = d.stderr()
    finally:
        d.stop()
    return [json.loads(line) for line in err.splitlines() if line.strip()]  # each line one object


def _with_metadata(method, metadata):  # type: ignore[no-untyped-def]
    return lambda request, **kw: method(request, metadata=metadata, **kw)


async def test_every_line_is_json_with_the_run_context_and_no_contents(tmp_path: Path) -> None:
    records = await run_logged(tmp_path)
    assert records
    for r in records:
        assert {"time", "level", "logger", "message"} <= r.keys(), r
        assert r["time"].endswith("Z")
    about_run = [r for r in records if r.get("session_id") == "logged-1"]
    assert any(r["message"].startswith("run start") for r in about_run)
    done = next(r for r in about_run if r["message"].startswith("run done"))
    assert done["run_id"] and done["step"] == 2
    events = [r for r in about_run if r["message"].startswith("event ")]
    assert {r["message"].split()[1] for r in events} >= {"run.start", "tool.call", "run.done"}
    text = json.dumps(records)
    for private in (SAID, TOOL_SAYS, "the sum is 42", TOKEN):
        assert private not in text


async def test_log_contents_adds_what_the_run_said(tmp_path: Path) -> None:
    text = json.dumps(await run_logged(tmp_path, "--log-contents"))
    assert SAID not in text  # the input is not an event
    assert TOOL_SAYS in text and "the sum is 42" in text
    assert TOKEN not in text


async def test_text_lines_carry_the_context_too() -> None:
    d = DaemonProcess("--store", "memory://", "--log-format", "text").start()
    try:
        h = Harness(d.address)
        assert (await h.run("texty", "hi", agent([{"text": "ok"}]))).error is None
        await h.close()
        assert d.terminate() == 0
        err = d.stderr()
    finally:
        d.stop()
    line = next(x for x in err.splitlines() if "run done" in x)
    assert (
        " INFO luoshod.engine: run done" in line
        and "[session=texty run=" in line
        and "step=1]" in line
    )
