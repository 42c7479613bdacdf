"""Daemons on a highly available PostgreSQL (Patroni, a primary and a synchronous standby)
while the primary's machine dies: the standby is promoted, and the runs go on by
themselves, losing no acknowledged save and never with two writers on a session (R90)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections import Counter
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.errors import SessionBusy
from luoshod.store import store_from_url
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, RunLog, agent, assert_valid_transcript, calls
from tests.support.patroni_cluster import TTL, PatroniCluster
from tests.support.pg_proxy import Proxy, through

SESSIONS = 8
TURNS = 9  # tool-calling turns a run makes before its last answer (10 steps: the default most)
SPEC = agent([calls(("add", {"a": i})) for i in range(TURNS)] + [{"text": "done"}])


@pytest.fixture
def cluster() -> Iterator[PatroniCluster]:
    c = PatroniCluster().start()
    try:
        yield c
    finally:
        c.remove()


async def test_r90_a_failover_loses_no_acknowledged_save_and_runs_go_on(
    cluster: PatroniCluster,
) -> None:
    daemons = [DaemonProcess("--store", cluster.url).start() for _ in range(2)]
    clients = [Harness(d.address) for d in daemons]
    accepted: dict[str, list[str]] = {f"s{i}": [] for i in range(SESSIONS)}
    progress: list[float] = []  # when each event after the kill reached its client
    killed_at: list[float] = []

    async def answer(h: Harness, sid: str, call: pb.ToolCall) -> None:
        await asyncio.sleep(0.15)  # the tool's work
        result = json.dumps(json.loads(call.arguments_json)["a"])
        deadline = time.monotonic() + 45
        while True:  # a client retries a submit that failed (R54: ACCEPTED means durable)
            try:
                outcome = await h.submit(sid, call.id, result)
            except Exception:  # noqa: BLE001 - any failure: try again, bounded
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)
                continue
            if outcome == pb.SUBMIT_OUTCOME_ACCEPTED:
                accepted[sid].append(call.id)
            return

    async def run(i: int) -> RunLog:
        h, sid = clients[i % 2], f"s{i}"
        tasks: set[asyncio.Task[None]] = set()

        def seen(e: pb.Event) -> None:
            # Events of the first half second answer commits made before the kill.
            if killed_at and time.monotonic() > killed_at[0] + 0.5:
                progress.append(time.monotonic())
            if e.type == "tool.call":
                t = asyncio.create_task(answer(h, sid, e.tool_call.call))
                tasks.add(t)
                t.add_done_callback(tasks.discard)

        log = await h.run(sid, "go", SPEC, {}, on_event=seen)
        await asyncio.gather(*tasks)
        return log

    # A lease taken and acknowledged on the old primary, held by no daemon of the test.
    holder = store_from_url(cluster.url)
    await holder.open()
    lease = await holder.acquire_lease("leased", owner="old-holder", ttl=120)
    try:
        runs = [asyncio.create_task(run(i)) for i in range(SESSIONS)]
        # Kill the primary once every run has had a few results accepted.
        deadline = time.monotonic() + 30
        while min(len(a) for a in accepted.values()) < 3:
            assert time.monotonic() < deadline, accepted
            await asyncio.sleep(0.05)
        old = await asyncio.to_thread(cluster.kill_leader)
        killed_at.append(time.monotonic())
        logs = await asyncio.wait_for(asyncio.gather(*runs), 50)
        new = await asyncio.to_thread(cluster.wait_for, "leader")
        assert new["leader"].name != old.name

        # Runs went on by themselves: every one finished, none failed.
        for i, log in enumerate(logs):
            assert log.error is None, (i, log.error, daemons[i % 2].stderr()[-3000:])
            assert log.done is not None and log.done.final_text == "done"
        takeover = min(progress) - killed_at[0]
        print(f"\nR90 failover: first run progressing {takeover:.1f} s after the kill")
        said = "".join(d.stderr() for d in daemons)
        assert "PostgreSQL reached again" in said, said[-3000:]  # the driver went through it
        assert takeover < TTL + 20

        # Every save a client was told of is there, once: each accepted result is in its
        # session's transcript exactly once, every call has one result, the runs made
        # exactly their turns (a second writer would have doubled or lost some).
        for sid, ids in accepted.items():
            cp = await clients[0].get(sid)
            assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
            assert_valid_transcript(cp)
            results = Counter(m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL)
            assert all(results[i] == 1 for i in ids), (sid, ids, results)
            assert sum(results.values()) == TURNS and len(set(ids)) == len(ids)

        # The lease acknowledged on the old primary is on the new one: nobody else gets
        # the session, and its holder still renews it with its fencing token.
        other = store_from_url(cluster.url)
        await other.open()
        try:
            with pytest.raises(SessionBusy) as busy:
                await other.acquire_lease("leased", owner="new-holder", ttl=120)
            assert busy.value.metadata.get("holder") == "old-holder"
        finally:
            await other.close()
        renewed = await holder.renew_lease(lease, ttl=120)
        assert renewed.token == lease.token
    finally:
        await holder.close()
        for h in clients:
            await h.close()
        for d in daemons:
            d.stop()


async def test_r90_a_commit_whose_answer_was_lost_is_applied_once_and_the_run_goes_on(
    postgres_url: str,
) -> None:
    """A save's COMMIT reaches the server and its answer is lost, or the connection is cut
    just before the COMMIT: with failover on, the driver asks the server (the commit's mark)
    whether it landed, reports the one that did as saved and writes again the one that did
    not. The run never fails, and no save is lost or doubled."""
    parts = urlsplit(postgres_url)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.start()
    url = through(postgres_url, proxy.port) + "?pool_timeout=3&failover_timeout=20"
    daemon = await asyncio.to_thread(DaemonProcess("--store", url).start)
    handed: Counter[str] = Counter()
    accepted: dict[str, str] = {}
    faults = iter(["after", "before", "after", "before"])
    try:
        h = Harness(daemon.address)

        async def answer(e: pb.Event) -> None:
            if e.type != "tool.call":
                return
            cid = e.tool_call.call.id
            handed[cid] += 1
            fault = next(faults, None) if handed.total() % 2 == 0 else None
            if fault == "after":
                proxy.cut_after_commit = True
            elif fault == "before":
                proxy.cut_before_commit = True
            body = json.dumps(json.loads(e.tool_call.call.arguments_json)["a"])
            if await h.submit("lost", cid, body) == pb.SUBMIT_OUTCOME_ACCEPTED:
                accepted[cid] = body

        log = await h.run("lost", "go", SPEC, on_event=answer)
        assert log.error is None, (log.error, daemon.stderr()[-3000:])
        assert log.done is not None and log.done.final_text == "done"
        said = daemon.stderr()
        assert proxy.cuts >= 4, proxy.cuts
        assert "committed after all" in said and "was not committed" in said, said[-3000:]
        cp = await h.get("lost")
        assert_valid_transcript(cp)
        results = {m.tool_call_id: m.content for m in cp.messages if m.role == pb.ROLE_TOOL}
        assert len(results) == TURNS and len(accepted) == TURNS
        assert all(results[c] == b for c, b in accepted.items())  # none lost
        assert all(n == 1 for n in handed.values()), handed  # none asked for again (R54)
        history = await h.stub.History(pb.HistoryRequest(session_id="lost", page_size=100))
        versions = [e.version for e in history.entries]
        assert versions == sorted(set(versions), reverse=True)  # none doubled
        await h.close()
    finally:
        daemon.stop()
        assert proxy.server is not None
        proxy.server.close()


async def test_r90_a_lease_taken_on_the_old_primary_and_not_replicated_lets_no_second_writer_in(
    cluster: PatroniCluster, caplog: pytest.LogCaptureFixture
) -> None:
    """The standby stops receiving (its WAL receiver stopped), a daemon takes a lease: the
    primary commits it and waits for the standby, unacknowledged. The primary dies and the
    standby, synchronous until then, is promoted without that lease. The daemon that asked
    is not told it holds a lease that is not there: its commit mark is missing on the new
    primary, it takes the lease again there, and another daemon is refused the session."""
    standby = cluster.wait_for("leader", "sync_standby")["sync_standby"]
    first, second = store_from_url(cluster.url), store_from_url(cluster.url)
    await first.open()
    await second.open()
    try:
        cluster.signal_receiver(standby, signal.SIGSTOP)
        taking = asyncio.create_task(first.acquire_lease("one", owner="first", ttl=120))
        await asyncio.sleep(1.0)
        assert not taking.done()  # committed on the primary, waiting for the standby
        await asyncio.to_thread(cluster.kill_leader)
        # The standby's receiver dies with the WAL it had not written: the lease is lost.
        cluster.signal_receiver(standby, signal.SIGKILL)
        lease = await asyncio.wait_for(taking, 45)
        assert lease.owner == "first"
        assert "was not committed" in caplog.text  # looked up by its mark, then taken again
        with pytest.raises(SessionBusy) as busy:
            await second.acquire_lease("one", owner="second", ttl=120)
        assert busy.value.metadata.get("holder") == "first"
        assert (await first.renew_lease(lease, ttl=120)).token == lease.token
    finally:
        await first.close()
        await second.close()
