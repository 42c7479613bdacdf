"""R85 across ``kill -9``: a daemon killed while the summary call of a compaction is in
flight (its ``compaction.start`` durable, no record saved), on SQLite, LMDB and
PostgreSQL, restarted, and the run resumed: the compaction is made again, once, and the
run ends as it would have."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.compaction import FETCH, SUMMARY, go, spec
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, assert_valid_transcript

pytestmark = pytest.mark.asyncio


@pytest.fixture(params=["sqlite", "lmdb", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/luoshod.db"
    if request.param == "lmdb":
        return f"lmdb://{tmp_path}/lmdb"
    return request.getfixturevalue("postgres_url")


def summary_calls(log_file: Path) -> int:
    lines = log_file.read_text().splitlines() if log_file.exists() else []
    return sum(1 for line in lines if json.loads(line)["model"] == "sum")


async def test_r85_a_kill9_during_the_summary_call_repeats_the_compaction(
    store: str, tmp_path: Path
) -> None:
    log_file = tmp_path / "calls.jsonl"
    args = ("--store", store, "--scripted-call-log", str(log_file), "--lease-owner", "d1")
    slow = spec(summarizer=[{"text": SUMMARY, "delay_ms": 60_000}])
    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address, call_log=log_file)
        summarizing = asyncio.Event()

        def on_event(e: pb.Event) -> None:
            if e.type == "compaction.start" and e.compaction_start.step == 4:
                summarizing.set()

        run = asyncio.create_task(h.run("crash", go(), slow, FETCH, on_event=on_event))
        await asyncio.wait_for(summarizing.wait(), 30)
        for _ in range(100):  # the summary call is made (the scripted model logs it first)
            if summary_calls(log_file):
                break
            await asyncio.sleep(0.05)
        assert summary_calls(log_file) == 1
        first.kill9()
        log = await asyncio.wait_for(run, 30)
        assert log.done is None
        await h.close()
    finally:
        first.stop()

    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=log_file)
        cp = await h.get("crash")
        # The first compaction (a prune) was saved; the second left no record.
        assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS
        assert cp.compaction.count == 1 and cp.compaction.summary == ""
        assert cp.messages[1].pinned  # read back from the store's own encoding
        # Resumed with a summarizer that answers at once (compaction is not drift).
        log = await h.run("crash", None, spec(), FETCH, resume=True)
        assert log.error is None, log.error
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        first_done = log.of("compaction.done")[0].compaction_done
        assert first_done.step == 4 and first_done.summarized > 0 and not first_done.error
        assert summary_calls(log_file) == 2  # made again after the crash
        cp = await h.get("crash")
        assert_valid_transcript(cp)
        assert cp.compaction.summary == SUMMARY and cp.compaction.count == 3
        entries = (
            await h.stub.History(pb.HistoryRequest(session_id="crash", page_size=100))
        ).entries
        assert sum(e.compaction for e in entries) == 3
        await h.close()
    finally:
        second.stop()
