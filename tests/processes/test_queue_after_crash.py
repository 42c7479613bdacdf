"""R68, R69, R74 across two kills: queued inputs whose callers went away are each run on
their own by the daemon, in order, even when the daemon is killed inside a queued input's
own run after the save that applied it.

The story (real daemon processes, each store kind): a run waits on a client tool call;
inputs are queued with ``ENQUEUE`` and their callers go away; kill -9. The restarted
daemon runs the first queued input itself, whose first act is the pending tool call; its
result is accepted (that save records the input's request id); the daemon is killed
again while that input's model call is in flight. Started once more, with nobody
sending anything, the daemon finishes that input's run and then runs the next one: the
transcript ends ``[tool, u2, A2, u3, A3]``, never one merged turn, and a session with a
single queued input does not stay ``in-progress`` with its input lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import (
    Harness,
    agent,
    assert_valid_transcript,
    busy_with_a_tool,
    calls,
    queue_one,
    until,
    users,
)

pytestmark = pytest.mark.asyncio


def model_calls(log: Path, sid: str) -> list[int]:
    """The turn numbers of the scripted model calls of ``sid``, in order."""
    import json

    if not log.exists():
        return []
    return [
        x["turn"] for x in map(json.loads, log.read_text().splitlines()) if x["session_id"] == sid
    ]


async def killed_twice(tmp_path: Path, url: str, queued_texts: list[str]) -> pb.GetSessionResponse:
    calls_log = tmp_path / "calls.jsonl"
    args = (
        "--store",
        url,
        "--scripted-call-log",
        str(calls_log),
        "--lease-owner",
        "the-daemon",
        "--queue-sweep-s",
        "0.2",
    )
    sid = f"q2k-{len(queued_texts)}-{tmp_path.name[-10:]}"
    # Turn 1 (the first queued input's answer) is slow: the second kill lands while it is
    # in flight (within milliseconds of its start; the model calls checked at the end show
    # it was cut short: made again).
    script = [calls(("add", {"a": 1})), {"text": "A2", "delay_ms": 1_000}, {"text": "A3"}]
    spec = agent(script)
    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address, call_log=calls_log)
        busy, call = await busy_with_a_tool(h, sid, spec)  # its tool call is not answered
        waiting = [
            await queue_one(h, sid, text, spec, pb.IF_BUSY_ENQUEUE, request_id=f"r-{text}")
            for text in queued_texts
        ]
        first.kill9()  # the callers go away with it
        for t in (busy, *waiting):
            await t
        await h.close()
    finally:
        first.stop()
    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=calls_log)

        async def accepted() -> bool:
            # The daemon runs the first queued input by itself; its first act asks the
            # pending call again (R10). Answered here, as the app's tool loop would.
            try:
                return await h.submit(sid, call.id, "1") == pb.SUBMIT_OUTCOME_ACCEPTED
            except Exception:  # noqa: BLE001 - TOOL_CALL_NOT_PENDING until it asks
                return False

        await until(accepted, what="the restarted daemon to ask the pending tool call again")
        await until(
            lambda: model_calls(calls_log, sid) == [0, 1], what="the queued input's model call"
        )
        second.kill9()  # inside the first queued input's own run, after the save that applied it
        await h.close()
    finally:
        second.stop()
    third = DaemonProcess(*args).start()
    try:
        h = Harness(third.address, call_log=calls_log)
        done: list[pb.GetSessionResponse] = []

        async def settled() -> bool:
            got = await h.stub.GetSession(pb.GetSessionRequest(session_id=sid))
            done[:] = [got]
            assistant = [
                m for m in got.checkpoint.messages if m.role == pb.ROLE_ASSISTANT and m.content
            ]
            return (
                not got.queue
                and got.checkpoint.status == pb.CHECKPOINT_STATUS_FINISHED
                and len(assistant) == len(queued_texts)
            )

        # Nobody sends anything: the daemon runs what is left by itself.
        await until(settled, timeout=60, what=lambda: f"the queued inputs to run: {done}")
        await h.close()
        # Turn 1 made twice (the kill cut it short, R24), every other turn once.
        assert model_calls(calls_log, sid) == [0, 1, 1, *range(2, len(queued_texts) + 1)]
        return done[0]
    finally:
        third.stop()


STORES = ["sqlite", "lmdb", "postgres"]


def url_of(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store == "postgres":
        return request.getfixturevalue("postgres_url")
    return f"sqlite:///{tmp_path}/q.db" if store == "sqlite" else f"lmdb://{tmp_path}/lmdb"


@pytest.mark.parametrize("store", STORES)
async def test_r69_two_queued_inputs_each_get_their_own_run_after_a_kill_inside_the_first(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    got = await killed_twice(tmp_path, url_of(store, tmp_path, request), ["u2", "u3"])
    cp = got.checkpoint
    assert_valid_transcript(cp)
    assert users(cp) == ["one", "u2", "u3"]
    tail = [(m.role, m.content) for m in cp.messages[-5:]]
    assert tail == [
        (pb.ROLE_TOOL, "1"),
        (pb.ROLE_USER, "u2"),
        (pb.ROLE_ASSISTANT, "A2"),
        (pb.ROLE_USER, "u3"),
        (pb.ROLE_ASSISTANT, "A3"),
    ]


@pytest.mark.parametrize("store", STORES)
async def test_r69_a_single_queued_input_is_finished_by_the_daemon_after_a_kill_inside_its_run(
    tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    got = await killed_twice(tmp_path, url_of(store, tmp_path, request), ["u2"])
    cp = got.checkpoint
    assert_valid_transcript(cp)
    assert users(cp) == ["one", "u2"]
    assert [(m.role, m.content) for m in cp.messages[-3:]] == [
        (pb.ROLE_TOOL, "1"),
        (pb.ROLE_USER, "u2"),
        (pb.ROLE_ASSISTANT, "A2"),
    ]
