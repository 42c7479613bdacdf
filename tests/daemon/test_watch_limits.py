"""Watch with a small event log: a cursor older than what is kept is refused."""

from __future__ import annotations

import grpc
import pytest

from luoshod.server.app import Config
from tests.support.harness import Harness, agent, calls, error_info, watch

STEPS = [calls(("add", {"a": k})) for k in range(20)] + [{"text": "done"}]


@pytest.fixture
def config(config: Config) -> Config:
    config.event_log_limit = 5
    return config


async def test_a_cursor_older_than_the_log_is_told_so(h: Harness) -> None:
    log = await h.run("old", "go", agent(STEPS[-3:], max_steps=25), {"add": lambda a: 1})
    last = log.events[-1].seq
    kept = await watch(h, "old", last - 5)
    assert [e.seq for e in kept] == list(range(last - 4, last + 1))
    assert [e.seq for e in await watch(h, "old", 0)] == [e.seq for e in kept]  # 0: all kept
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await watch(h, "old", 1)
    code, reason, meta = error_info(err.value)
    assert (code, reason) == (grpc.StatusCode.OUT_OF_RANGE, "EVENTS_OUT_OF_RANGE")
    assert meta["oldest_kept_seq"] == str(last - 4)
