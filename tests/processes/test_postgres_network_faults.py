"""Issue 14, a network's faults: a daemon whose PostgreSQL is behind a loopback TCP proxy
the test drives. Connections cut right after a COMMIT went through (the database
committed, the daemon never heard), every connection dropped mid-run: runs fail cleanly
(UNAVAILABLE) or go on, no save is lost or doubled, and the pool recovers with no restart.
A connection stalled (no byte either way, the TCP connection kept) mid-save and mid-read:
the same, once the stall ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from urllib.parse import urlsplit

import grpc

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, assert_valid_transcript, calls
from tests.support.pg_proxy import Proxy, through

SCRIPT = [calls(("add", {"a": k}), ("add", {"a": 10 + k})) for k in range(3)] + [{"text": "done"}]


async def test_commit_cut_and_dropped_connections_lose_and_double_nothing(
    postgres_url: str,
) -> None:
    parts = urlsplit(postgres_url)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.start()
    # Started from a thread: this loop serves the proxy the daemon connects through.
    daemon = await asyncio.to_thread(
        DaemonProcess("--store", through(postgres_url, proxy.port) + "?pool_timeout=3").start
    )
    handed: Counter[str] = Counter()
    accepted: dict[str, str] = {}
    try:
        h = Harness(daemon.address)
        faults = iter(["commit", "drop", "commit"])

        async def answer(e: pb.Event) -> None:
            if e.type != "tool.call":
                return
            cid = e.tool_call.call.id
            handed[cid] += 1
            fault = next(faults, None) if handed.total() % 2 == 0 else None
            if fault == "commit":
                proxy.cut_after_commit = True
            elif fault == "drop":
                proxy.drop_all()
            body = json.dumps(json.loads(e.tool_call.call.arguments_json)["a"])
            with contextlib.suppress(grpc.aio.AioRpcError):  # not saved: may be asked again (R24)
                if await h.submit("px", cid, body) == pb.SUBMIT_OUTCOME_ACCEPTED:
                    accepted[cid] = body

        spec = agent(SCRIPT)
        failed = 0
        for attempt in range(20):
            log = await h.run("px", "go" if attempt == 0 else [], spec, on_event=answer)
            if log.error is None and log.done and log.done.status == pb.CHECKPOINT_STATUS_FINISHED:
                break
            if log.error is not None:
                failed += 1
                assert log.error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED), (
                    log.error
                )
            with contextlib.suppress(grpc.aio.AioRpcError):  # until the failed run has ended
                async for _ in h.stub.Watch(pb.WatchRequest(session_id="px", after_seq=2**62)):
                    pass
        else:
            raise AssertionError("the run never finished through the proxy")
        assert proxy.cuts >= 1 and failed >= 1, (proxy.cuts, failed)  # the faults hit runs
        cp = await h.get("px")
        assert_valid_transcript(cp)  # one result a call, in order (R20, R23)
        results = {m.tool_call_id: m.content for m in cp.messages if m.role == pb.ROLE_TOOL}
        assert len(results) == 6 and all(results[c] == b for c, b in accepted.items())  # none lost
        for cid in accepted:  # an ACCEPTED result was never asked for again (R54)
            assert handed[cid] == 1, (cid, handed)
        versions = [
            e.version
            for e in (
                await h.stub.History(pb.HistoryRequest(session_id="px", page_size=100))
            ).entries
        ]
        assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(
            versions
        )  # none doubled
        await h.close()
    finally:
        daemon.stop()
        assert proxy.server is not None
        proxy.server.close()


#: A save's statement (inside its transaction: the session's lock is held) and the
#: checkpoint read of a load, as the proxy sees them go by.
MID_SAVE = b"INSERT INTO MESSAGES"
MID_READ = b"SELECT S.HEADER::TEXT"
STALL_S = 4.0


async def test_a_stalled_connection_mid_save_and_mid_read_loses_and_doubles_nothing(
    postgres_url: str,
) -> None:
    parts = urlsplit(postgres_url)
    proxy = Proxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.start()
    daemon = await asyncio.to_thread(
        DaemonProcess("--store", through(postgres_url, proxy.port) + "?pool_timeout=3").start
    )
    handed: Counter[str] = Counter()
    accepted: dict[str, str] = {}
    reads: list[float] = []
    try:
        h = Harness(daemon.address)
        loop = asyncio.get_running_loop()

        async def read_during_the_run() -> None:
            began = loop.time()
            with contextlib.suppress(grpc.aio.AioRpcError):  # a clean failure is allowed
                await h.get("st")
            reads.append(loop.time() - began)

        async def answer(e: pb.Event) -> None:
            if e.type != "tool.call":
                return
            cid = e.tool_call.call.id
            handed[cid] += 1
            if handed.total() == 3:  # mid-read: a GetSession's load stalls, the run goes on
                proxy.stall(MID_READ, STALL_S)
                asyncio.ensure_future(read_during_the_run())
            body = json.dumps(json.loads(e.tool_call.call.arguments_json)["a"])
            with contextlib.suppress(grpc.aio.AioRpcError):  # not saved: may be asked again (R24)
                if await h.submit("st", cid, body) == pb.SUBMIT_OUTCOME_ACCEPTED:
                    accepted[cid] = body

        spec = agent(SCRIPT)
        proxy.stall(MID_SAVE, STALL_S)  # mid-save: the first save that writes messages
        began = loop.time()
        for attempt in range(20):
            log = await h.run("st", "go" if attempt == 0 else [], spec, on_event=answer)
            if log.error is None and log.done and log.done.status == pb.CHECKPOINT_STATUS_FINISHED:
                break
            assert log.error is None or log.error.code() in (
                grpc.StatusCode.UNAVAILABLE,
                grpc.StatusCode.ABORTED,
            ), log.error
            with contextlib.suppress(grpc.aio.AioRpcError):  # until the failed run has ended
                async for _ in h.stub.Watch(pb.WatchRequest(session_id="st", after_seq=2**62)):
                    pass
        else:
            raise AssertionError("the run never finished through the stalls")
        for _ in range(100):  # the stalled read, answered once its stall ended
            if reads:
                break
            await asyncio.sleep(0.1)
        assert proxy.stalls == [MID_SAVE, MID_READ], proxy.stalls  # both stalls hit
        assert loop.time() - began >= STALL_S and reads and reads[0] >= STALL_S * 0.9, reads
        cp = await h.get("st")
        assert_valid_transcript(cp)  # one result a call, in order (R20, R23)
        results = {m.tool_call_id: m.content for m in cp.messages if m.role == pb.ROLE_TOOL}
        assert len(results) == 6 and all(results[c] == b for c, b in accepted.items())  # none lost
        for cid in accepted:  # an ACCEPTED result was never asked for again (R54)
            assert handed[cid] == 1, (cid, handed)
        versions = [
            e.version
            for e in (
                await h.stub.History(pb.HistoryRequest(session_id="st", page_size=100))
            ).entries
        ]
        assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(
            versions
        )  # none doubled
        # The pool recovered: a new session runs through, with no stall and no restart.
        after = await h.run(
            "st-after",
            "go",
            agent([calls(("add", {"a": 1})), {"text": "done"}]),
            {"add": lambda args: json.dumps(args["a"])},
        )
        assert (
            after.error is None
            and after.done
            and after.done.status == pb.CHECKPOINT_STATUS_FINISHED
        ), after.error
        await h.close()
    finally:
        daemon.stop()
        assert proxy.server is not None
        proxy.server.close()
