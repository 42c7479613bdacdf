"""Issue 20: the drift of a session's last resume is kept with its checkpoint (a badge in the
console's sessions list), and a resume that ``on_agent_drift = ERROR`` refused is recorded
in the session's event log and nowhere else. On the memory store and on real SQLite and
LMDB files (the header is what they store)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from luoshod.domain import AgentSpec, Checkpoint, Drift, DriftPolicy
from luoshod.store import Store, store_from_url
from luoshod.store.kit import codec
from luoshod.store.memory import MemoryStore
from tests.support.engine_harness import EngineHarness, agent, calls

SCRIPT = [calls(("add", {"a": 1})), calls(("add", {"a": 2})), {"text": "done"}]
TOOLS = {"add": {"type": "object"}}
ANSWERS = {"add": lambda a: 1}


def spec(**kw) -> AgentSpec:
    return agent(SCRIPT, kw.pop("tools", TOOLS), **kw)


@pytest.fixture(params=["memory", "sqlite-file", "lmdb"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    url = {
        "memory": "memory://",
        "sqlite-file": f"sqlite:///{tmp_path}/s.db",
        "lmdb": f"lmdb:///{tmp_path}/env",
    }
    s = MemoryStore() if request.param == "memory" else store_from_url(url[request.param])
    await s.open()
    try:
        yield s
    finally:
        await s.close()


async def crashed(h: EngineHarness, sid: str, **kw) -> Checkpoint:
    await h.run(sid, "go", spec(**kw), stop_at=lambda e: e.type == "tool.call")
    return await h.get(sid)


async def summary(h: EngineHarness, sid: str):
    page, _ = await h.store.list_sessions(status=None, page_size=10, page_token="")
    return next(s for s in page if s.session_id == sid)


async def test_a_warned_resume_is_kept_until_a_resume_without_drift(store: Store) -> None:
    h = EngineHarness(store)
    await crashed(h, "w1")
    assert (await h.get("w1")).last_drift is None and (await summary(h, "w1")).last_drift is None
    other = spec(model="scripted:other", tools={"add": {"type": "object"}, "mul": {}})
    # The resumed run saves its first result, then the app crashes on the next call.
    log = await h.run(
        "w1", [], other, ANSWERS, stop_at=lambda e: e.type == "tool.call" and e.data["step"] == 2
    )
    assert log.types[:2] == ["run.start", "agent.drift"]
    want = Drift("scripted:test", "scripted:other", ("mul",), (), (), False)
    assert (await h.get("w1")).last_drift == want
    assert (await summary(h, "w1")).last_drift == want
    # Each history entry says what its moment said; the entry before the resume says nothing.
    assert [e.checkpoint.last_drift for e in await h.history("w1")][-1] is None
    # The same agent resumes again: no drift now.
    again = await h.run("w1", [], other, ANSWERS)
    assert "agent.drift" not in again.types and again.done
    assert (await h.get("w1")).last_drift is None and (await summary(h, "w1")).last_drift is None


async def test_ignore_and_a_continued_conversation_record_no_drift(store: Store) -> None:
    h = EngineHarness(store)
    await crashed(h, "i1")
    await h.run("i1", [], spec(instructions="other", on_agent_drift=DriftPolicy.IGNORE), ANSWERS)
    assert (await h.get("i1")).last_drift is None
    await h.run("c1", "go", spec(), ANSWERS)
    await h.run("c1", "more", spec(model="scripted:other"), ANSWERS)  # R47: not compared
    assert (await h.get("c1")).last_drift is None


async def test_a_refused_resume_is_one_event_in_the_log_and_nothing_else(store: Store) -> None:
    h = EngineHarness(store)
    before = await crashed(h, "r1")
    history = await h.history("r1")
    events = await store.read_events("r1", after_seq=0, limit=100)
    strict = spec(instructions="changed", on_agent_drift=DriftPolicy.ERROR)
    log = await h.run("r1", [], strict, ANSWERS)
    assert log.reason == "AGENT_DRIFT" and log.events == []
    assert await h.get("r1") == before and await h.history("r1") == history
    after = await store.read_events("r1", after_seq=0, limit=100)
    assert after.events[:-1] == events.events
    refused = after.events[-1]
    assert refused.seq == events.last + 1
    text = refused.data.decode()  # the harness encodes events with repr()
    assert (
        "'agent.drift'" in text
        and "'refused': True" in text
        and "instructions_changed=True" in text
    )
    assert f"run_id='{before.run_id}'" in text
    # The right agent resumes: its events are numbered after the refusal, and no drift is kept.
    done = await h.run("r1", [], spec(), ANSWERS)
    assert done.done and done.events[0].seq == refused.seq + 1
    assert (await h.get("r1")).last_drift is None


async def test_a_refused_resolve_is_recorded_and_the_approval_stays(store: Store) -> None:
    h = EngineHarness(store)
    log = await h.run("ra", "go", spec(needs_approval=("add",)))
    approval = log.of("approval.requested")[0]["approval"]
    before = await h.get("ra")
    strict = spec(model="scripted:other", needs_approval=("add",), on_agent_drift=DriftPolicy.ERROR)
    refused = await h.resolve(approval.approval_id, True, agent=strict)
    assert refused.reason == "AGENT_DRIFT"
    assert await h.get("ra") == before
    listed, _ = await store.list_approvals(session_id="ra", page_size=10, page_token="")
    assert [a.approval_id for a in listed] == [approval.approval_id]
    last = (await store.read_events("ra", after_seq=0, limit=100)).events[-1]
    assert (
        "'refused': True" in last.data.decode()
        and "model_to='scripted:other'" in last.data.decode()
    )


def test_a_header_saved_before_last_drift_reads_as_no_drift() -> None:
    cp = Checkpoint("old", updated_at=1.0)
    header = json.loads(codec.encode_header(cp))
    assert "last_drift" not in header  # none is not written: old and new headers alike
    assert codec.decode_summary(json.dumps(header), 0).last_drift is None
    assert codec.decode_checkpoint(json.dumps(header), []).last_drift is None
    cp.last_drift = Drift("a", "b", ("x",), ("y",), ("z",), True)
    again = codec.decode_checkpoint(codec.encode_header(cp), [])
    assert again.last_drift == cp.last_drift
