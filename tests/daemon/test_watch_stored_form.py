"""Events in the log's stored form (luoshod/server/stored_events.py) read back exactly:
Watch from the start and from any kept seq returns, field for field, the events the run
streamed live, sub-agent tags at depth 1 and 2 included (their name and depth put back
from the path)."""

from __future__ import annotations

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import Harness, calls
from tests.support.subagents import helper, lead, lookup, researcher, task


async def test_watch_returns_the_live_events_exactly_from_any_kept_seq(h: Harness) -> None:
    deep = helper([calls(("lookup", {"q": "deep"})), {"text": "helped"}])
    sub = researcher(
        [calls(("lookup", {"q": "a"}), task("helper", "p")), {"text": "r done"}], subagents=[deep]
    )
    spec = lead([calls(task("researcher", "p")), {"text": "ok"}], [sub], max_subagent_depth=2)
    log = await h.run("stored-form", "go", spec, {"lookup": lookup})
    assert log.error is None, log.error
    live = {e.seq: e for e in log.events}
    assert {e.subagent.depth for e in log.events if e.HasField("subagent")} == {1, 2}
    last = max(live)
    for after in (0, 1, last // 2, last - 1):
        watched = [
            resp.event
            async for resp in h.stub.Watch(
                pb.WatchRequest(session_id="stored-form", after_seq=after)
            )
        ]
        assert [e.seq for e in watched] == [s for s in sorted(live) if s > after]
        for e in watched:
            assert e == live[e.seq], (e, live[e.seq])
    # And the log holds the stored form: no session id, seq or type, no tag name or depth.
    page = await h.daemon.store.read_events("stored-form", after_seq=0, limit=1000)
    assert [e.seq for e in page.events] == sorted(live)
    for stored in page.events:
        e = pb.Event.FromString(stored.data)
        assert (e.session_id, e.seq, e.type) == ("", 0, "")
        assert (e.subagent.name, e.subagent.depth) == ("", 0)
