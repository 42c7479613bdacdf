"""R89: every daemon sharing a store answers every RPC for every session as if it held it.

Three daemon processes share the real PostgreSQL test server (two share a SQLite file in
the last test); the client picks a daemon at random for each call, and a request for a
session another daemon drives (a tool result, a cancel, a dequeue, a live ``Watch``) is
forwarded to that daemon, the caller's token with it.
"""

from __future__ import annotations

import asyncio
import json
import random
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.certs import CA
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, agent, calls, error_info, until, user

pytestmark = pytest.mark.asyncio

SPEC_TWO_TOOLS = [calls(("add", {"a": 1})), calls(("add", {"a": 2})), {"text": "three"}]


@contextmanager
def daemons(store: str, n: int, *extra: str) -> Iterator[list[DaemonProcess]]:
    started: list[DaemonProcess] = []
    try:
        for name in "abc"[:n]:
            started.append(
                DaemonProcess("--store", store, "--lease-owner", f"daemon-{name}", *extra).start()
            )
        yield started
    finally:
        for d in started:
            d.stop()


class Client:
    """One harness per daemon; each call goes to one picked at random (seeded), or to one
    other than a given daemon (the holder), to make sure a call is forwarded."""

    def __init__(self, procs: list[DaemonProcess], seed: int = 89) -> None:
        self.hs = [Harness(p.address) for p in procs]
        self.rng = random.Random(seed)

    def any(self) -> Harness:
        return self.rng.choice(self.hs)

    def other_than(self, h: Harness) -> Harness:
        return self.rng.choice([x for x in self.hs if x is not h])

    async def close(self) -> None:
        for h in self.hs:
            await h.close()


def seqs(events: list[pb.Event]) -> list[int]:
    return [e.seq for e in events if e.seq]


async def log_of(h: Harness, sid: str) -> list[pb.Event]:
    out = []
    async for resp in h.stub.Watch(pb.WatchRequest(session_id=sid)):
        out.append(resp.event)
    return out


async def test_r89_three_daemons_answer_tool_results_cancels_dequeues_and_watch_live(
    postgres_url: str,
) -> None:
    with daemons(postgres_url, 3) as procs:
        c = Client(procs)
        try:
            # -- client tools: the results go to daemons that do not drive the run --------
            holder = c.any()
            calls_seen: asyncio.Queue[pb.ToolCall] = asyncio.Queue()
            run = asyncio.create_task(
                holder.run("tools", "go", agent(SPEC_TWO_TOOLS), {}, on_event=_calls(calls_seen))
            )
            first = await asyncio.wait_for(calls_seen.get(), 30)

            # A Watch at another daemon, opened while the run waits: it shows the run's
            # next events as they happen (the second tool call arrives while the run still
            # waits for its result), then ends with the run.
            watcher = c.other_than(holder)
            watched: list[pb.Event] = []
            second_seen = asyncio.Event()

            async def watch() -> None:
                async for resp in watcher.stub.Watch(pb.WatchRequest(session_id="tools")):
                    watched.append(resp.event)
                    if (
                        resp.event.type == "tool.call"
                        and len([e for e in watched if e.type == "tool.call"]) == 2
                    ):
                        second_seen.set()

            watching = asyncio.create_task(watch())
            await until(lambda: any(e.type == "tool.call" for e in watched), 30, "replay")
            assert await c.other_than(holder).submit("tools", first.id, "1") == (
                pb.SUBMIT_OUTCOME_ACCEPTED
            )
            second = await asyncio.wait_for(calls_seen.get(), 30)
            await asyncio.wait_for(second_seen.wait(), 30)  # live, the run still waiting
            assert not run.done()
            # A duplicate through yet another daemon is told as the holder tells it.
            assert await c.other_than(holder).submit("tools", first.id, "1") == (
                pb.SUBMIT_OUTCOME_DUPLICATE
            )
            assert await c.other_than(holder).submit("tools", second.id, "2") == (
                pb.SUBMIT_OUTCOME_ACCEPTED
            )
            log = await asyncio.wait_for(run, 30)
            assert log.done is not None and log.done.final_text == "three"
            await asyncio.wait_for(watching, 30)
            # The watch at the other daemon: every event once, in order, none missing.
            full = await log_of(c.any(), "tools")
            assert seqs(watched) == seqs(full) == list(range(1, len(seqs(full)) + 1))
            assert watched[-1].type == "run.done"
            results = [m.content for m in (await c.any().get("tools")).messages if m.tool_call_id]
            assert results == ["1", "2"]

            # -- cancel at a daemon that does not drive the run ------------------------------
            holder = c.any()
            calls_seen = asyncio.Queue()
            run = asyncio.create_task(
                holder.run("cancel", "go", agent(SPEC_TWO_TOOLS), {}, on_event=_calls(calls_seen))
            )
            await asyncio.wait_for(calls_seen.get(), 30)
            cancelled = await c.other_than(holder).stub.Cancel(
                pb.CancelRequest(session_id="cancel")
            )
            assert cancelled.cancelled
            log = await asyncio.wait_for(run, 30)
            assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_ABORTED
            # Nothing runs it any more: every daemon says so.
            for h in c.hs:
                assert not (await h.stub.Cancel(pb.CancelRequest(session_id="cancel"))).cancelled

            # -- dequeue at a daemon that does not drive the run -----------------------------
            holder = c.any()
            calls_seen = asyncio.Queue()
            run = asyncio.create_task(
                holder.run("queue", "go", agent(SPEC_TWO_TOOLS), {}, on_event=_calls(calls_seen))
            )
            call = await asyncio.wait_for(calls_seen.get(), 30)
            queued = c.any().stub.Execute(
                pb.ExecuteRequest(
                    session_id="queue",
                    input=[user("later")],
                    agent=agent([{"text": "later"}]),
                    if_busy=pb.IF_BUSY_ENQUEUE,
                    request_id="q1",
                )
            )
            first_event = await asyncio.wait_for(anext(aiter(queued)), 30)
            assert first_event.event.type == "input.queued"
            removed = await c.other_than(holder).stub.DequeueInput(
                pb.DequeueInputRequest(session_id="queue", request_id="q1")
            )
            assert removed.removed
            assert not (
                await c.any().stub.GetSession(pb.GetSessionRequest(session_id="queue"))
            ).queue
            queued.cancel()
            assert await c.other_than(holder).submit("queue", call.id, "1") == (
                pb.SUBMIT_OUTCOME_ACCEPTED
            )
            second = await asyncio.wait_for(calls_seen.get(), 30)
            assert await c.other_than(holder).submit("queue", second.id, "2") == (
                pb.SUBMIT_OUTCOME_ACCEPTED
            )
            log = await asyncio.wait_for(run, 30)
            assert log.done is not None and log.done.final_text == "three"
            users = [
                m.content for m in (await c.any().get("queue")).messages if m.role == pb.ROLE_USER
            ]
            assert users == ["go"]  # the dequeued input never ran
        finally:
            await c.close()


async def test_r89_a_watch_follows_the_session_to_its_next_holder_without_gap_or_repeat(
    postgres_url: str,
) -> None:
    """A follow Watch at C while A runs the session; A is killed, B resumes the session:
    the Watch shows B's events live, every seq once, in order."""
    with daemons(postgres_url, 3, "--lease-ttl-s", "3", "--lease-renew-s", "1") as procs:
        a, b, c = (Harness(p.address) for p in procs)
        try:
            spec = agent(SPEC_TWO_TOOLS)
            calls_seen: asyncio.Queue[pb.ToolCall] = asyncio.Queue()
            run = asyncio.create_task(a.run("move", "go", spec, {}, on_event=_calls(calls_seen)))
            await asyncio.wait_for(calls_seen.get(), 30)
            watched: list[pb.Event] = []

            async def watch() -> None:
                call = c.stub.Watch(pb.WatchRequest(session_id="move", follow=True))
                async for resp in call:
                    watched.append(resp.event)
                    if resp.event.type == "run.done":
                        call.cancel()
                        return

            watching = asyncio.create_task(watch())
            await until(lambda: any(e.type == "tool.call" for e in watched), 30, "replay")
            procs[0].kill9()
            run.cancel()

            async def resumed() -> pb.ResumeResponse | None:
                stream = b.stub.Resume(pb.ResumeRequest(session_id="move", agent=spec))
                try:
                    async for resp in stream:
                        if resp.event.type == "tool.call":
                            # Answered through C, which forwards it to B.
                            call = resp.event.tool_call.call
                            assert await c.submit("move", call.id, "1") == (
                                pb.SUBMIT_OUTCOME_ACCEPTED
                            )
                        if resp.event.type == "run.done":
                            return resp
                except grpc.aio.AioRpcError as e:
                    assert error_info(e)[1] == "SESSION_BUSY", e  # A's lease, until it ends
                return None

            done = None
            for _ in range(100):
                if (done := await asyncio.wait_for(resumed(), 60)) is not None:
                    break
                await asyncio.sleep(0.2)
            assert done is not None
            await asyncio.wait_for(watching, 30)
            full = await log_of(b, "move")
            assert seqs(watched) == seqs(full) == list(range(1, len(seqs(full)) + 1))
        finally:
            for h in (a, b, c):
                await h.close()


async def test_r89_an_approval_resolved_anywhere_and_its_tools_answered_anywhere(
    postgres_url: str,
) -> None:
    with daemons(postgres_url, 3) as procs:
        c = Client(procs, seed=90)
        try:
            spec = agent(
                [calls(("pay", {"eur": 40})), calls(("add", {"a": 1})), {"text": "paid"}],
                ["add", "pay"],
            )
            spec.tools[1].needs_approval = True
            log = await c.any().run("order", "charge", spec, {})
            approval = log.of("approval.requested")[0].approval_requested.approval
            resolver = c.any()
            stream = resolver.stub.Resolve(
                pb.ResolveRequest(approval_id=approval.approval_id, approved=True, request_id="r1")
            )
            events: list[pb.Event] = []
            async for resp in stream:
                events.append(resp.event)
                if resp.event.type == "tool.call":
                    call = resp.event.tool_call.call
                    result = "40" if call.name == "pay" else "1"
                    # Answered through a daemon that does not run it.
                    assert await c.other_than(resolver).submit("order", call.id, result) == (
                        pb.SUBMIT_OUTCOME_ACCEPTED
                    )
            assert events[-1].type == "run.done" and events[-1].run_done.final_text == "paid"
        finally:
            await c.close()


async def test_r89_a_forwarded_call_keeps_the_callers_token_and_role(
    postgres_url: str, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("reader:r-secret read\noperator:o-secret operate\n")
    with daemons(postgres_url, 2, "--auth-token-file", str(tokens)) as procs:
        a, b = Harness(procs[0].address), Harness(procs[1].address)
        op = (("authorization", "Bearer o-secret"),)
        reader = (("authorization", "Bearer r-secret"),)
        try:
            spec = agent([calls(("pay", {"eur": 1})), {"text": "ok"}], ["pay"])
            stream = a.stub.Execute(
                pb.ExecuteRequest(session_id="s", input=[user("go")], agent=spec), metadata=op
            )
            it = aiter(stream)
            while (event := (await anext(it)).event).type != "tool.call":
                pass
            call_id = event.tool_call.call.id
            # The read token may watch through B (forwarded with it), not submit or cancel.
            watch = b.stub.Watch(pb.WatchRequest(session_id="s"), metadata=reader)
            assert (await anext(aiter(watch))).event.seq == 1
            watch.cancel()
            for refused in (
                b.stub.SubmitToolResult(
                    pb.SubmitToolResultRequest(
                        session_id="s", tool_call_id=call_id, result_json="1"
                    ),
                    metadata=reader,
                ),
                b.stub.Cancel(pb.CancelRequest(session_id="s"), metadata=reader),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as e:
                    await refused
                assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
            # Without any token, nothing is forwarded.
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await b.stub.Cancel(pb.CancelRequest(session_id="s"))
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
            # The operate token's result, through B, is taken by A as the caller's.
            ok = await b.stub.SubmitToolResult(
                pb.SubmitToolResultRequest(session_id="s", tool_call_id=call_id, result_json="1"),
                metadata=op,
            )
            assert ok.outcome == pb.SUBMIT_OUTCOME_ACCEPTED
            async for resp in stream:
                last = resp.event
            assert last.type == "run.done"
        finally:
            await a.close()
            await b.close()


async def test_r89_a_holder_that_cannot_be_reached_is_holder_unreachable_with_retry(
    postgres_url: str,
) -> None:
    """A holder stopped (SIGSTOP) keeps its lease a while: a request for its session is
    HOLDER_UNREACHABLE with the holder, its address and when its lease ends, never a
    wrong answer."""
    with daemons(postgres_url, 2, "--lease-ttl-s", "30", "--lease-renew-s", "5") as procs:
        a, b = Harness(procs[0].address), Harness(procs[1].address)
        try:
            calls_seen: asyncio.Queue[pb.ToolCall] = asyncio.Queue()
            run = asyncio.create_task(
                a.run("s", "go", agent(SPEC_TWO_TOOLS), {}, on_event=_calls(calls_seen))
            )
            call = await asyncio.wait_for(calls_seen.get(), 30)
            assert procs[0].proc is not None
            procs[0].proc.send_signal(19)  # SIGSTOP
            try:
                with pytest.raises(grpc.aio.AioRpcError) as e:
                    await b.stub.SubmitToolResult(
                        pb.SubmitToolResultRequest(
                            session_id="s", tool_call_id=call.id, result_json="1"
                        ),
                        timeout=2,  # B gives up on the stopped holder within it (1.5 s)
                    )
                code, reason, meta = error_info(e.value)
                assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "HOLDER_UNREACHABLE")
                assert meta["holder"] == "daemon-a" and meta["address"] == procs[0].address
                assert 0 < float(meta["retry_after_s"]) <= 30
            finally:
                procs[0].proc.send_signal(18)  # SIGCONT
            assert await b.submit("s", call.id, "1") == pb.SUBMIT_OUTCOME_ACCEPTED
            run.cancel()
        finally:
            await a.close()
            await b.close()


async def test_r89_two_daemons_on_one_sqlite_file_forward_results_and_watch_live(
    tmp_path: Path,
) -> None:
    with daemons(db_url(tmp_path), 2) as procs:
        a, b = Harness(procs[0].address), Harness(procs[1].address)
        try:
            calls_seen: asyncio.Queue[pb.ToolCall] = asyncio.Queue()
            run = asyncio.create_task(
                a.run("s", "go", agent(SPEC_TWO_TOOLS), {}, on_event=_calls(calls_seen))
            )
            first = await asyncio.wait_for(calls_seen.get(), 30)
            watched: list[pb.Event] = []

            async def watch() -> None:
                async for resp in b.stub.Watch(pb.WatchRequest(session_id="s")):
                    watched.append(resp.event)

            watching = asyncio.create_task(watch())
            await until(lambda: any(e.type == "tool.call" for e in watched), 30, "replay")
            assert await b.submit("s", first.id, "1") == pb.SUBMIT_OUTCOME_ACCEPTED
            second = await asyncio.wait_for(calls_seen.get(), 30)
            await until(
                lambda: [e.type for e in watched].count("tool.call") == 2, 30, lambda: watched
            )
            assert await b.submit("s", second.id, "2") == pb.SUBMIT_OUTCOME_ACCEPTED
            assert (await asyncio.wait_for(run, 30)).done is not None
            await asyncio.wait_for(watching, 30)
            full = await log_of(a, "s")
            assert seqs(watched) == seqs(full) and watched[-1].type == "run.done"
        finally:
            await a.close()
            await b.close()


def _calls(q: asyncio.Queue[pb.ToolCall]):  # type: ignore[no-untyped-def]
    def seen(e: pb.Event) -> None:
        if e.type == "tool.call":
            q.put_nowait(e.tool_call.call)

    return seen


async def test_r89_an_address_that_reaches_another_daemon_is_refused_not_answered(
    postgres_url: str,
) -> None:
    """A advertises an address where B answers (as a loopback address advertised to other
    hosts would): B's forwarded call comes back to B, which refuses it as not the holder's
    (HOLDER_UNREACHABLE naming both), never answering for a run it does not drive."""
    b_proc = DaemonProcess("--store", postgres_url, "--lease-owner", "daemon-b").start()
    a_proc = DaemonProcess(
        "--store",
        postgres_url,
        "--lease-owner",
        "daemon-a",
        "--advertise-address",
        b_proc.address,
    ).start()
    a, b = Harness(a_proc.address), Harness(b_proc.address)
    try:
        calls_seen: asyncio.Queue[pb.ToolCall] = asyncio.Queue()
        run = asyncio.create_task(
            a.run("s", "go", agent(SPEC_TWO_TOOLS), {}, on_event=_calls(calls_seen))
        )
        call = await asyncio.wait_for(calls_seen.get(), 30)
        for refused in (
            b.stub.SubmitToolResult(
                pb.SubmitToolResultRequest(session_id="s", tool_call_id=call.id, result_json="1")
            ),
            b.stub.Cancel(pb.CancelRequest(session_id="s")),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as e:
                await refused
            code, reason, meta = error_info(e.value)
            assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "HOLDER_UNREACHABLE")
            assert (meta["holder"], meta["reached"]) == ("daemon-a", "daemon-b")
            assert "advertise_address" in e.value.details()
        assert not run.done()  # A's run was not cancelled
        assert await a.submit("s", call.id, "1") == pb.SUBMIT_OUTCOME_ACCEPTED
        run.cancel()
    finally:
        await a.close()
        await b.close()
        a_proc.stop()
        b_proc.stop()


async def test_r89_daemons_forward_over_their_tls_checking_each_other_by_the_peer_ca(
    postgres_url: str, tmp_path: Path
) -> None:
    """Two daemons serving TLS only: B forwards a tool result to A over TLS, A's
    certificate checked against ``peer_ca_file``."""
    ca = CA(tmp_path)
    tls = []
    for name in ("a", "b"):
        pair = ca.issue(name, server=True)
        tls.append(("--tls-cert-file", str(pair.cert), "--tls-key-file", str(pair.key)))
    peer = ("--peer-ca-file", str(ca.pair.cert))
    with daemons(postgres_url, 1, *tls[0], *peer) as (a_proc,):
        b_proc = DaemonProcess(
            "--store", postgres_url, "--lease-owner", "daemon-b", *tls[1], *peer
        ).start()
        creds = grpc.ssl_channel_credentials(root_certificates=ca.pair.cert.read_bytes())
        a = Harness(a_proc.address, channel=grpc.aio.secure_channel(a_proc.address, creds))
        b = Harness(b_proc.address, channel=grpc.aio.secure_channel(b_proc.address, creds))
        try:
            calls_seen: asyncio.Queue[pb.ToolCall] = asyncio.Queue()
            run = asyncio.create_task(
                a.run("s", "go", agent(SPEC_TWO_TOOLS), {}, on_event=_calls(calls_seen))
            )
            first = await asyncio.wait_for(calls_seen.get(), 30)
            assert await b.submit("s", first.id, "1") == pb.SUBMIT_OUTCOME_ACCEPTED
            second = await asyncio.wait_for(calls_seen.get(), 30)
            assert await b.submit("s", second.id, "2") == pb.SUBMIT_OUTCOME_ACCEPTED
            assert (await asyncio.wait_for(run, 30)).done is not None
        finally:
            await a.close()
            await b.close()
            b_proc.stop()


async def test_r89_the_http_api_of_another_daemon_cancels_the_holders_run(
    postgres_url: str,
) -> None:
    """The JSON API is the same service: ``POST …/cancel`` at B cancels A's run."""
    a_proc = DaemonProcess("--store", postgres_url, "--lease-owner", "daemon-a").start()
    b_proc = DaemonProcess(
        "--store", postgres_url, "--lease-owner", "daemon-b", "--http-listen", "127.0.0.1:0"
    ).start()
    a = Harness(a_proc.address)
    try:
        assert b_proc.proc is not None and b_proc.proc.stdout is not None
        console = b_proc.proc.stdout.readline().strip().removeprefix("luoshod console on ")
        calls_seen: asyncio.Queue[pb.ToolCall] = asyncio.Queue()
        run = asyncio.create_task(
            a.run("s", "go", agent(SPEC_TWO_TOOLS), {}, on_event=_calls(calls_seen))
        )
        await asyncio.wait_for(calls_seen.get(), 30)

        def cancel() -> dict[str, object]:
            req = urllib.request.Request(
                console + "api/v1/sessions/s/cancel",
                data=b"{}",
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(req, timeout=20) as r:
                return json.loads(r.read())  # type: ignore[no-any-return]

        assert await asyncio.to_thread(cancel) == {"cancelled": True}
        log = await asyncio.wait_for(run, 30)
        assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_ABORTED
    finally:
        await a.close()
        a_proc.stop()
        b_proc.stop()
