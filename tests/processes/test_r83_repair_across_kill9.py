"""R83 across ``kill -9``: a daemon killed once the repair turn's message is saved (after
the invalid answer, before the model call that answers it), on an SQLite file, restarted,
and the run resumed: the repair is not lost, not sent twice, and the answer to it ends
the run with its output_json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.engine.output import REPAIR_PREFIX
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, agent

pytestmark = pytest.mark.asyncio

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
SPEC = agent(
    [{"text": '{"n": "one"}'}, {"text": '{"n": 1}'}], [], output_schema_json=json.dumps(SCHEMA)
)


async def test_r83_a_kill9_before_the_repair_call_keeps_the_repair(tmp_path: Path) -> None:
    log_file = tmp_path / "calls.jsonl"
    args = ("--store", db_url(tmp_path), "--scripted-call-log", str(log_file))
    # step.done of the invalid answer's step is durable with the repair message, in one save.
    first = DaemonProcess(*args, kill_at="step.done").start()
    try:
        h = Harness(first.address, call_log=log_file)
        log = await h.run("kill", "count", SPEC)
        assert log.error is not None and log.done is None
        await h.close()
    finally:
        first.stop()

    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=log_file)
        cp = await h.get("kill")
        assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
        assert cp.messages[-1].role == pb.ROLE_USER
        assert cp.messages[-1].content.startswith(REPAIR_PREFIX)
        assert "n: 'one' is not of type 'integer'" in cp.messages[-1].content
        assert h.model_calls("kill") == 1
        log = await h.run("kill", None, SPEC, resume=True)
        assert log.error is None, log.error
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        assert log.done.output_json == '{"n":1}'
        assert h.model_calls("kill") == 2  # the repair call, once; the first never again
        cp = await h.get("kill")
        assert sum(m.content.startswith(REPAIR_PREFIX) for m in cp.messages) == 1
        assert [m.role for m in cp.messages] == [
            pb.ROLE_SYSTEM,
            pb.ROLE_USER,
            pb.ROLE_ASSISTANT,
            pb.ROLE_USER,
            pb.ROLE_ASSISTANT,
        ]
        await h.close()
    finally:
        second.stop()
