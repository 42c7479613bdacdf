"""One writer per session across daemons (R51, R52): two real daemon processes on one
store, a daemon killed or paused while it holds a session's lease.

Every test runs on each store that several processes can share (``shared_store``): a
PostgreSQL database (the session's throw-away server), an SQLite file, an LMDB directory.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from tests.support.cli import luoshod
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import (
    Harness,
    agent,
    assert_valid_transcript,
    calls,
    error_info,
    user,
)
from tests.support.leases import SPEC, TTL, add, check_finished, harness, waiting_for_a_tool


@pytest.fixture(params=["postgres", "sqlite", "lmdb"])
def shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return {"sqlite": f"sqlite:///{tmp_path}/luoshod.db", "lmdb": f"lmdb://{tmp_path}/lmdb"}[
        request.param
    ]


@pytest.fixture
def daemons(shared_store: str, tmp_path: Path) -> Iterator[tuple[DaemonProcess, DaemonProcess]]:
    """Daemons ``daemon-a`` and ``daemon-b`` on one store, with a 2 s lease TTL."""
    log = str(tmp_path / "calls.jsonl")
    started = []
    try:
        for name in ("daemon-a", "daemon-b"):
            args = (
                "--store",
                shared_store,
                "--scripted-call-log",
                log,
                "--lease-owner",
                name,
                *TTL,
            )
            started.append(DaemonProcess(*args).start())
        yield started[0], started[1]
    finally:
        for d in started:
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGCONT)  # a paused one must be able to die
            d.stop()


def killed_logs(daemons: tuple[DaemonProcess, ...]) -> str:
    """Stop the daemons at once and return the end of each one's log."""
    for d in daemons:
        assert d.proc is not None
        d.proc.kill()
        d.proc.wait(10)
    return "\n".join(d.stderr()[-4000:] for d in daemons)


async def resume_when_free(h: Harness, sid: str, deadline_s: float = 20) -> tuple[int, object]:
    """Resume ``sid`` until its lease is free; (refusals seen, the finished run's log)."""
    refusals, end = 0, time.monotonic() + deadline_s
    while True:
        log = await h.run(sid, agent=SPEC, tools={"add": add}, resume=True)
        if log.reason != "SESSION_BUSY":
            return refusals, log
        refusals += 1
        assert time.monotonic() < end, "the lease never became free"
        # The thing under test: a lease held by a daemon that died or froze runs out in
        # real time in another process (R51 refuses until then, R52 takes over after), and
        # only a try tells. The pause paces the tries; it waits for nothing to subscribe.
        await asyncio.sleep(0.2)


async def test_r51_a_session_run_by_one_daemon_is_busy_on_the_other(
    daemons: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = daemons
    ha, hb = harness(a, tmp_path), harness(b, tmp_path)
    # The run on A waits for its first tool result, which the test gives only later.
    running = await waiting_for_a_tool(ha, "s")

    busy = await hb.run("s", "again", SPEC, tools={"add": add})
    assert busy.error is not None and busy.events == []
    code, reason, meta = error_info(busy.error)
    assert (code, reason) == (grpc.StatusCode.ABORTED, "SESSION_BUSY")
    assert meta["holder"] == "daemon-a" and meta["expires_at"].endswith("Z")
    with pytest.raises(grpc.aio.AioRpcError) as deleted:
        await hb.stub.DeleteSession(pb.DeleteSessionRequest(session_id="s"))
    assert error_info(deleted.value)[1] == "SESSION_BUSY"

    # A finishes the run; its lease is released at once, not after the TTL.
    for j in range(2):
        await ha.submit("s", f"call_0_{j}", "1")
    running.cancel()  # the rest of the run is B's
    with pytest.raises(asyncio.CancelledError):
        await running
    refusals, log = await resume_when_free(hb, "s")
    assert log.error is None and log.done is not None
    check_finished(await hb.get("s"), hb, "s")
    await ha.close()
    await hb.close()


async def test_r52_a_killed_holders_run_is_resumed_by_another_daemon_after_the_ttl(
    daemons: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = daemons
    ha, hb = harness(a, tmp_path), harness(b, tmp_path)
    executed: list[str] = []

    async def tool_then_kill(e: pb.Event) -> None:
        if e.type != "tool.call":
            return
        cid = e.tool_call.call.id
        if cid == "call_1_0":  # step 2's turn is checkpointed (R1), its tools not run
            a.kill9()
            return
        executed.append(cid)
        await ha.submit("s", cid, json.dumps(json.loads(e.tool_call.call.arguments_json)["a"]))

    log = await ha.run("s", "go", SPEC, on_event=tool_then_kill)
    assert log.error is not None and log.error.code() == grpc.StatusCode.UNAVAILABLE
    killed_at = time.monotonic()

    refusals, resumed = await resume_when_free(hb, "s")
    # The killed daemon's lease held the session until it expired (R51), then B ran it (R52).
    assert refusals >= 1 and time.monotonic() - killed_at >= 1.5
    assert resumed.error is None and resumed.done is not None
    again = [e.tool_call.call.id for e in resumed.of("tool.call")]
    assert again == ["call_1_0", "call_1_1", "call_2_0", "call_2_1"]  # R21/R22: nothing redone
    assert executed == ["call_0_0", "call_0_1"]
    check_finished(await hb.get("s"), hb, "s")
    await ha.close()
    await hb.close()


async def test_a_clean_stop_releases_the_lease_at_once(
    daemons: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = daemons
    ha, hb = harness(a, tmp_path), harness(b, tmp_path)
    stopped = await waiting_for_a_tool(ha, "s")
    assert await asyncio.to_thread(a.terminate) == 0  # SIGTERM: drain, checkpoint, release
    log = await stopped
    assert log.error is not None and error_info(log.error)[1] == "SHUTTING_DOWN"
    # No TTL to wait out: B resumes at its first try.
    resumed = await hb.run("s", agent=SPEC, tools={"add": add}, resume=True)
    assert resumed.error is None and resumed.done is not None
    check_finished(await hb.get("s"), hb, "s")
    await ha.close()
    await hb.close()


async def test_a_paused_holder_taken_over_cannot_write_and_stops_with_lease_lost(
    daemons: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = daemons
    ha, hb = harness(a, tmp_path), harness(b, tmp_path)
    stalled = await waiting_for_a_tool(ha, "s")
    assert a.proc is not None
    a.proc.send_signal(signal.SIGSTOP)  # a GC pause, a frozen VM: A holds a lease it cannot renew
    try:
        refusals, resumed = await resume_when_free(hb, "s")
        assert refusals >= 1 and resumed.error is None and resumed.done is not None
        done = await hb.get("s")
    finally:
        a.proc.send_signal(signal.SIGCONT)
    # A wakes up believing it runs the session: its renewal, or the save of the result
    # given to it now, finds the lease taken over. Its stream ends with LEASE_LOST...
    try:
        await ha.submit("s", "call_0_0", "1")  # accepted, if A's run still waits for it
    except grpc.aio.AioRpcError as e:
        assert error_info(e)[1] in ("TOOL_CALL_NOT_PENDING", "LEASE_LOST")
    log = await asyncio.wait_for(stalled, 20)
    assert log.error is not None
    assert error_info(log.error)[:2] == (grpc.StatusCode.ABORTED, "LEASE_LOST")
    # ... and nothing of it reached the store: B's finished run is what is there.
    after = await hb.get("s")
    assert after == done
    check_finished(after, hb, "s")
    # A stopped cleanly: it serves other sessions.
    other = await ha.run("t", "go", SPEC, tools={"add": add})
    assert other.error is None and other.done is not None
    await ha.close()
    await hb.close()


async def test_r33_two_daemons_resolving_one_approval_exactly_one_wins(
    daemons: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    hs = [harness(d, tmp_path) for d in daemons]
    spec = agent([calls(("pay", {"eur": 40})), {"text": "paid"}], ["pay"])
    spec.tools[0].needs_approval = True
    for r in range(3):  # a few rounds: the race can go either way
        sid = f"pay-{r}"
        log = await hs[0].run(sid, "charge", spec)
        approval_id = log.of("approval.requested")[0].approval_requested.approval.approval_id

        async def resolve(h: Harness) -> tuple[list[pb.Event], str]:
            events: list[pb.Event] = []
            try:
                async for resp in h.stub.Resolve(
                    pb.ResolveRequest(approval_id=approval_id, approved=True)
                ):
                    events.append(resp.event)
                    if resp.event.type == "tool.call":
                        await h.submit(sid, resp.event.tool_call.call.id, '"ok"')
            except grpc.aio.AioRpcError as e:
                return events, error_info(e)[1]
            return events, ""

        outcomes = await asyncio.gather(*(resolve(h) for h in hs))
        assert sorted(reason for _, reason in outcomes) == ["", "APPROVAL_NOT_FOUND"]
        won = next(events for events, reason in outcomes if not reason)
        assert won[-1].run_done.final_text == "paid"
        assert [e.type for e in won].count("tool.call") == 1  # the call ran once
    for h in hs:
        await h.close()


SESSIONS, CLIENTS, RUNS = 8, 32, 3
HAMMER = agent(
    [
        t
        for k in range(2 * RUNS * CLIENTS // SESSIONS)
        for t in (calls(("add", {"a": k})), {"text": f"ok {k}"})
    ]
)


async def test_32_clients_hammering_8_sessions_through_two_daemons(
    daemons: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    hs = [harness(d, tmp_path) for d in daemons]
    refused: list[str] = []
    failures: list[str] = []

    async def client(c: int) -> None:
        sid = f"h{c % SESSIONS}"
        for r in range(RUNS):
            attempt = 0
            while True:
                h = hs[(c + attempt) % 2]  # each try through the other daemon
                attempt += 1
                log = await h.run(sid, f"c{c}-r{r}", HAMMER, tools={"add": add})
                if log.error is None and log.done is not None:
                    break
                if (
                    log.error is not None
                    and error_info(log.error)[:2]
                    == (
                        grpc.StatusCode.ABORTED,
                        "SESSION_BUSY",
                    )
                    and not log.events
                ):
                    refused.append(sid)
                    # Back-off of a contended client: paces the load, waits for no event.
                    await asyncio.sleep(0.02 * (c % 5 + 1))
                    continue
                failures.append(f"{sid} c{c} r{r}: {log.error or log.types}")
                return

    await asyncio.wait_for(asyncio.gather(*(client(c) for c in range(CLIENTS))), 240)
    if failures:  # with what the daemons logged, which says why
        raise AssertionError(f"{failures[:3]}\n{killed_logs(daemons)}")
    assert refused  # the sessions were contended: the refusals were all clean SESSION_BUSY
    for i in range(SESSIONS):
        sid = f"h{i}"
        cp = await hs[0].get(sid)
        assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
        assert_valid_transcript(cp)  # no interleaved saves: every call answered once, in order
        inputs = [m.content for m in cp.messages if m.role == pb.ROLE_USER]
        expected = {f"c{c}-r{r}" for c in range(i, CLIENTS, SESSIONS) for r in range(RUNS)}
        assert sorted(inputs) == sorted(expected)
        # Each run is user, call, result, text: nothing of two runs interleaved.
        body = [m.role for m in cp.messages if m.role != pb.ROLE_SYSTEM]
        run = [pb.ROLE_USER, pb.ROLE_ASSISTANT, pb.ROLE_TOOL, pb.ROLE_ASSISTANT]
        assert body == run * len(expected)
        turns = sum(1 for m in cp.messages if m.role == pb.ROLE_ASSISTANT)
        assert hs[0].model_calls(sid) == turns == 2 * len(expected)
    for h in hs:
        await h.close()


# -- lease upkeep: one write an interval per daemon (PostgreSQL) ----------------------------

HELD = 12
RENEW_S = 0.5


def lease_writes(metrics: str) -> dict[str, float]:
    with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    found: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("luoshod_store_lease_writes_total{"):
            op = line.split('op="')[1].split('"')[0]
            found[op] = float(line.rsplit(" ", 1)[1])
    return {op: found.get(op, 0.0) for op in ("acquire", "renew", "release")}


@pytest.fixture
def pg_daemons(
    postgres_url: str, tmp_path: Path
) -> Iterator[tuple[DaemonProcess, DaemonProcess, str]]:
    """``daemon-a`` (with metrics) and ``daemon-b`` on one PostgreSQL database, 2 s TTL."""
    log = str(tmp_path / "calls.jsonl")
    ttl = ("--lease-ttl-s", "2", "--lease-renew-s", str(RENEW_S), "--scripted-call-log", log)
    a = DaemonProcess(
        "--store",
        postgres_url,
        "--lease-owner",
        "daemon-a",
        "--metrics-listen",
        "127.0.0.1:0",
        *ttl,
    )
    b = DaemonProcess("--store", postgres_url, "--lease-owner", "daemon-b", *ttl)
    started: list[DaemonProcess] = []
    try:
        started.append(a.start())
        assert a.proc is not None and a.proc.stdout is not None
        metrics = (
            a.proc.stdout.readline()
            .removeprefix("luoshod metrics on http://")
            .removesuffix("/metrics\n")
        )
        started.append(b.start())
        yield a, b, metrics
    finally:
        for d in started:
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGCONT)  # a paused one must be able to die
            d.stop()


async def test_one_renewal_write_an_interval_covers_every_session_and_a_frozen_holder_is_fenced(
    pg_daemons: tuple[DaemonProcess, DaemonProcess, str], tmp_path: Path
) -> None:
    a, b, metrics = pg_daemons
    ha, hb = harness(a, tmp_path), harness(b, tmp_path)
    stalled = await waiting_for_a_tool(ha, "s")
    others = {f"o{k}": await waiting_for_a_tool(ha, f"o{k}") for k in range(HELD)}
    before = await asyncio.to_thread(lease_writes, metrics)
    assert before["acquire"] == HELD + 1
    start = time.monotonic()
    while (now := await asyncio.to_thread(lease_writes, metrics))["renew"] < before["renew"] + 4:
        await asyncio.sleep(RENEW_S / 2)  # paces the scrapes; the count is what is checked
    intervals = (time.monotonic() - start) / RENEW_S
    # One write an interval for HELD + 1 sessions, not one a session.
    assert now["renew"] - before["renew"] <= intervals + 2 < HELD

    assert a.proc is not None
    a.proc.send_signal(signal.SIGSTOP)  # frozen past its TTL: B takes "s" over
    try:
        refusals, resumed = await resume_when_free(hb, "s")
        assert refusals >= 1 and resumed.error is None and resumed.done is not None
        done = await hb.get("s")
    finally:
        a.proc.send_signal(signal.SIGCONT)
    # A's renewal finds "s" taken over: that run alone stops with LEASE_LOST, and nothing
    # of it reaches the store.
    log = await asyncio.wait_for(stalled, 20)
    assert log.error is not None and error_info(log.error)[:2] == (
        grpc.StatusCode.ABORTED,
        "LEASE_LOST",
    )
    assert await hb.get("s") == done
    check_finished(done, hb, "s")
    # The sessions nobody took over were renewed with the rest (same tokens): A still
    # writes them. A result is ACCEPTED only once saved under the session's lease (R54).
    accepted = pb.SUBMIT_OUTCOME_ACCEPTED
    for sid, run in others.items():
        assert [await ha.submit(sid, f"call_0_{j}", "1") for j in range(2)] == [accepted, accepted]
        results = [m.tool_call_id for m in (await ha.get(sid)).messages if m.role == pb.ROLE_TOOL]
        assert results == ["call_0_0", "call_0_1"] and not run.done(), sid
        run.cancel()
    await ha.close()
    await hb.close()


# -- the people CLI: leases list and release ------------------------------------------------


def test_leases_list_shows_the_holders_and_release_session_frees_one(tmp_path: Path) -> None:
    url = db_url(tmp_path)
    spec = agent([calls(("add", {"a": 1})), {"text": "two"}])
    a = DaemonProcess(
        "--store", url, "--lease-owner", "web-1", "--lease-ttl-s", "600", "--lease-renew-s", "200"
    ).start()
    with grpc.insecure_channel(a.address) as ch:
        stub = pb_grpc.AgentServiceStub(ch)
        streams = []
        for sid in ("held-a", "held-b"):
            call = stub.Execute(pb.ExecuteRequest(session_id=sid, input=[user("go")], agent=spec))
            events = iter(call)
            while next(events).event.type != "tool.call":
                pass
            streams.append(call)
        listed = luoshod("leases", "list", "--store", url)
        assert listed.returncode == 0, listed.stderr
        head, *rows = listed.stdout.splitlines()
        assert head.split() == ["SESSION", "HOLDER", "TOKEN", "EXPIRES"]
        assert [r.split()[:3] for r in rows] == [["held-a", "web-1", "1"], ["held-b", "web-1", "1"]]
        shown = json.loads(
            luoshod("leases", "list", "--store", url, "--owner", "web-1", "--json").stdout
        )
        assert [(lease["session_id"], lease["holder"], lease["token"]) for lease in shown] == [
            ("held-a", "web-1", 1),
            ("held-b", "web-1", 1),
        ]
        expires = datetime.fromisoformat(shown[0]["expires_at"].replace("Z", "+00:00"))
        assert 500 < (expires - datetime.now(UTC)).total_seconds() <= 600
        assert (
            luoshod("leases", "list", "--store", url, "--owner", "nobody").stdout
            == "no live leases held by nobody\n"
        )
        a.kill9()  # both runs keep their sessions' leases for ten minutes
    a.stop()
    out = luoshod("leases", "release", "--store", url, "--session", "held-a")
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"released the lease of session held-a (holder web-1, token 1) in {url}\n"
    again = luoshod("leases", "release", "--store", url, "--session", "held-a")
    assert again.returncode == 1 and "holds no live lease" in again.stderr
    assert [
        lease["session_id"]
        for lease in json.loads(luoshod("leases", "list", "--store", url, "--json").stdout)
    ] == ["held-b"]
    b = DaemonProcess("--store", url).start()
    try:
        with grpc.insecure_channel(b.address) as ch:
            stub = pb_grpc.AgentServiceStub(ch)
            resumed = stub.Resume(pb.ResumeRequest(session_id="held-a"))
            assert next(iter(resumed)).event.type == "run.start"  # freed: a new holder
            resumed.cancel()
            try:
                list(stub.Resume(pb.ResumeRequest(session_id="held-b")))
                raise AssertionError("held-b's lease was not released")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.ABORTED and "web-1" in e.details()
    finally:
        b.stop()
    missing = luoshod("leases", "release", "--store", url)
    assert missing.returncode == 2 and "--owner" in missing.stderr and "--session" in missing.stderr


def test_leases_release_frees_what_a_killed_daemon_held(tmp_path: Path) -> None:
    spec = agent([calls(("add", {"a": 1})), {"text": "two"}])
    # A chosen --lease-owner: whether its daemon is alive cannot be told from its name, so
    # its lease stays until the TTL (a default owner that is gone is taken back at once by
    # the next daemon on this machine: test_dead_holder.py).
    owner = ("--lease-owner", "app-0")
    a = DaemonProcess(
        "--store", db_url(tmp_path), "--lease-ttl-s", "600", "--lease-renew-s", "200", *owner
    ).start()
    with grpc.insecure_channel(a.address) as ch:
        call = pb_grpc.AgentServiceStub(ch).Execute(
            pb.ExecuteRequest(session_id="held", input=[user("go")], agent=spec)
        )
        events = iter(call)
        while next(events).event.type != "tool.call":
            pass
        a.kill9()  # the run holds the session's lease, for ten minutes
    a.stop()
    b = DaemonProcess("--store", db_url(tmp_path)).start()
    try:
        with grpc.insecure_channel(b.address) as ch:
            stub = pb_grpc.AgentServiceStub(ch)
            try:
                list(stub.Resume(pb.ResumeRequest(session_id="held")))
                raise AssertionError("the killed daemon's lease should make the session busy")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.ABORTED and "is leased by" in e.details()
                holder = e.details().split("is leased by ")[1].split("'")[1]
                assert holder == "app-0" and "holder alive: unknown" in e.details()
            out = luoshod("leases", "release", "--store", db_url(tmp_path), "--owner", holder)
            assert out.returncode == 0, out.stderr
            assert out.stdout == f"released 1 lease of {holder} in {db_url(tmp_path)}\n"
            resumed = stub.Resume(pb.ResumeRequest(session_id="held"))
            assert next(iter(resumed)).event.type == "run.start"
            resumed.cancel()
    finally:
        b.stop()
