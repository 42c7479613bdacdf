"""Watch over an event log kept in compressed blocks (luoshod/store/kit/eventblocks.py):
through the gRPC API, a session of more than three blocks of events returns exactly the
events the run streamed live, from cursors at the start, inside a block, at a block's
edge and in the loose tail; and a Watch resumed from a cursor inside a block after a
kill -9 of the daemon, on a fresh daemon over the same file, returns the rest exactly
once, while the next run seals further ranges; and, with a limit that is not a multiple of
BLOCK, a cursor inside the oldest (straddled) block is not EVENTS_OUT_OF_RANGE."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from luoshod.server.app import Config
from luoshod.store import Capability, store_from_url
from luoshod.store.kit import eventblocks
from luoshod.store.kit.eventblocks import BLOCK
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, calls, error_info, watch

STEPS = 70  # tool steps: a few events each, well over three blocks


def script(steps: int, tag: str) -> list[dict]:
    return [calls(("add", {"a": k, "tag": tag})) for k in range(steps)] + [{"text": f"{tag} done"}]


def cursors(last: int) -> list[int]:
    """The start, inside blocks, at their edges, the loose tail, the end."""
    edges = [k * BLOCK + d for k in (1, 2, 3) for d in (-1, 0, 1)]
    return sorted({0, 1, 5, BLOCK // 2, *edges, 3 * BLOCK + 2, last - 1, last})


async def test_watch_from_every_kind_of_cursor_returns_the_live_events_exactly(h: Harness) -> None:
    log = await h.run(
        "wb", "go", agent(script(STEPS, "a"), max_steps=STEPS + 5), {"add": lambda a: a["a"]}
    )
    assert log.error is None, log.error
    live = {e.seq: e for e in log.events if e.seq}
    last = max(live)
    assert sorted(live) == list(range(1, last + 1)) and last > 3 * BLOCK
    store = h.daemon.store
    if Capability.DURABLE in store.capabilities:  # memory keeps loose events only
        rows = (await store._read_events("wb", 0, 10_000)).events
        assert [r.seq for r in rows if eventblocks.is_block(r.data)] == list(
            range(BLOCK, last + 1, BLOCK)
        )
    for after in cursors(last):
        watched = await watch(h, "wb", after)
        assert [e.seq for e in watched] == list(range(after + 1, last + 1)), after
        for e in watched:
            assert e == live[e.seq], (after, e.seq)


@pytest.mark.parametrize("driver", ["sqlite", "lmdb"])
async def test_watch_resumes_inside_a_block_after_a_kill_9_of_the_daemon(
    tmp_path: Path, driver: str
) -> None:
    url = f"sqlite:///{tmp_path}/luoshod.db" if driver == "sqlite" else f"lmdb://{tmp_path}/lmdb"
    first = DaemonProcess("--store", url).start()
    second = None
    try:
        h = Harness(first.address)
        log = await h.run(
            "wk", "go", agent(script(STEPS, "a"), max_steps=STEPS + 5), {"add": lambda a: a["a"]}
        )
        assert log.error is None, log.error
        live = {e.seq: e for e in log.events if e.seq}
        last = max(live)
        # A watcher reads from inside the first block and stops inside the second.
        cursor = BLOCK // 2
        seen = await watch(h, "wk", cursor, stop_after=BLOCK)
        cursor = seen[-1].seq
        assert cursor == BLOCK // 2 + BLOCK and cursor % BLOCK
        await h.close()
        first.kill9()

        second = DaemonProcess("--store", url).start()
        h = Harness(second.address)
        seen += await watch(h, "wk", cursor)  # resumed inside a block, on the fresh daemon
        assert [e.seq for e in seen] == list(range(BLOCK // 2 + 1, last + 1))
        assert all(e == live[e.seq] for e in seen)
        # The next run numbers on and seals the ranges it completes; every event reads back.
        more = await h.run(
            "wk", "again", agent(script(STEPS, "b"), max_steps=STEPS + 5), {"add": lambda a: a["a"]}
        )
        assert more.error is None, more.error
        live.update((e.seq, e) for e in more.events if e.seq)
        end = max(live)
        watched = await watch(h, "wk", 0)
        assert [e.seq for e in watched] == list(range(1, end + 1))
        assert all(e == live[e.seq] for e in watched)
        await h.close()
        second.terminate()
        store = store_from_url(url)
        await store.open()
        try:
            rows = (await store._read_events("wk", 0, 10_000)).events
        finally:
            await store.close()
        assert [r.seq for r in rows if eventblocks.is_block(r.data)] == list(
            range(BLOCK, end + 1, BLOCK)
        )
    finally:
        first.stop()
        if second is not None:
            second.stop()


class TestAPrunedLog:
    """A log pruned to a limit that is not a multiple of BLOCK: the block holding the
    floor is kept whole, its first seq is the oldest kept, and a cursor inside it is
    within the log (only one below it is EVENTS_OUT_OF_RANGE)."""

    LIMIT = 2 * BLOCK + 10

    @pytest.fixture
    def config(self, config: Config) -> Config:
        config.event_log_limit = self.LIMIT
        return config

    async def test_a_cursor_inside_the_oldest_block_is_within_the_log(self, h: Harness) -> None:
        log = await h.run(
            "wp", "go", agent(script(STEPS, "a"), max_steps=STEPS + 5), {"add": lambda a: a["a"]}
        )
        assert log.error is None, log.error
        live = {e.seq: e for e in log.events if e.seq}
        last = max(live)
        floor = last - self.LIMIT
        assert floor > BLOCK and floor % BLOCK  # the floor lies inside a block
        if Capability.DURABLE in h.daemon.store.capabilities:
            first = floor // BLOCK * BLOCK + 1  # the straddled block, whole
        else:
            first = floor + 1  # memory: loose events only
        assert [e.seq for e in await watch(h, "wp", 0)] == list(range(first, last + 1))
        for after in (first - 1, first, first + 3, floor, floor + 1):
            watched = await watch(h, "wp", after)
            assert [e.seq for e in watched] == list(range(after + 1, last + 1)), after
            assert all(e == live[e.seq] for e in watched)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await watch(h, "wp", first - 2)
        code, reason, meta = error_info(err.value)
        assert (code, reason) == (grpc.StatusCode.OUT_OF_RANGE, "EVENTS_OUT_OF_RANGE")
        assert meta["oldest_kept_seq"] == str(first)
