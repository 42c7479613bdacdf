"""Issue 14 (torture's PostgreSQL soak): a daemon SIGSTOPped inside a write transaction
keeps that transaction's locks (the session's advisory lock, its lease row FOR SHARE)
while it is stopped: another daemon's takeover (R52) waited on them, once until a CI run
timed out. The driver bounds it: the server ends a transaction left waiting on its
daemon after ``idle_in_transaction_timeout`` (a URL option, 5 s by default), so the
takeover proceeds about a lease TTL plus that bound after the holder froze.

Two real daemons on a real PostgreSQL. The holder reaches the database through a
loopback proxy only so the test can freeze it at a known point: the proxy holds back
the database's answers from the moment the holder sent the save's ``FOR SHARE`` (the
save's transaction is open, its locks taken), the test SIGSTOPs the holder, then lets
the answers flow again (into a stopped process). The control run turns the bound off
and shows the other daemon still waiting: the bound is what ends the wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from urllib.parse import urlsplit

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import assert_valid_transcript, error_info
from tests.support.leases import SPEC, add, harness, waiting_for_a_tool
from tests.support.pg_proxy import through

TTL_S = 2.0
IDLE_S = 1.0


class HoldingProxy:
    """Loopback TCP to PostgreSQL that, once armed, forwards the client's bytes that
    contain ``pattern`` and then holds back the server's answers on that connection
    until :meth:`release`."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.pattern: bytes | None = None
        self.held = asyncio.Event()
        self.flowing: asyncio.Event | None = None
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    def arm(self, pattern: bytes) -> None:
        self.pattern = pattern

    def release(self) -> None:
        if self.flowing is not None:
            self.flowing.set()

    async def _serve(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        sr, sw = await asyncio.open_connection(*self.target)
        self.writers += [cw, sw]
        flow = asyncio.Event()
        flow.set()

        async def up() -> None:
            while data := await cr.read(65536):
                sw.write(data)
                await sw.drain()
                if self.pattern is not None and self.pattern in data.upper():
                    self.pattern = None
                    flow.clear()  # the server's answers to this connection wait
                    self.flowing = flow
                    self.held.set()

        async def down() -> None:
            while data := await sr.read(65536):
                await flow.wait()
                cw.write(data)
                await cw.drain()

        # Either end closing closes the other (the server ending the stalled transaction
        # closes its connection: the daemon must see it closed when it wakes).
        pumps = [asyncio.ensure_future(up()), asyncio.ensure_future(down())]
        with contextlib.suppress(Exception):
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for w in (cw, sw):
            w.close()
        for t in pumps:
            t.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)

    async def close(self) -> None:
        self.release()
        for w in self.writers:
            w.close()
        if self.server is not None:
            self.server.close()


async def stop_the_holder_mid_save(postgres_url: str, tmp_path, options: str):  # type: ignore[no-untyped-def]
    """Daemon A (through the proxy) runs session ``s`` and is SIGSTOPped inside the save
    of a tool result; daemon B (direct) tries to resume ``s`` until it can. Yields the
    seconds B waited (or ``None`` if it did not get through in ``limit_s``) to the test
    through a dict: the daemons are stopped by the caller's ``finally``."""
    parts = urlsplit(postgres_url)
    proxy = HoldingProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
    await proxy.start()
    lease = (
        "--lease-ttl-s",
        f"{TTL_S:g}",
        "--lease-renew-s",
        "0.5",
        "--scripted-call-log",
        str(tmp_path / "calls.jsonl"),
    )
    a = DaemonProcess(
        "--store", through(postgres_url, proxy.port) + options, "--lease-owner", "daemon-a", *lease
    )
    b = DaemonProcess("--store", postgres_url + options, "--lease-owner", "daemon-b", *lease)
    return proxy, a, b


async def resume_until(hb, sid: str, limit_s: float) -> tuple[float | None, object]:  # type: ignore[no-untyped-def]
    """Resume ``sid`` on B until it is not SESSION_BUSY: (seconds it took, the run's log);
    ``None`` seconds when a resume was still waiting (or refused) at ``limit_s``."""
    began = time.monotonic()
    while (left := limit_s - (time.monotonic() - began)) > 0:
        try:
            log = await asyncio.wait_for(
                hb.run(sid, agent=SPEC, tools={"add": add}, resume=True), left
            )
        except TimeoutError:
            return None, None
        if log.reason != "SESSION_BUSY":
            return time.monotonic() - began, log
        await asyncio.sleep(0.2)  # paces the tries of a lease that runs out in real time
    return None, None


@pytest.mark.parametrize(
    "case",
    [
        # Stopped between two statements of the save's pipeline (at once after it sent
        # FOR SHARE): the server waits "active"; B's lock wait times out and B ends it.
        "between-statements",
        # Stopped waiting for the answer (0.5 s later: the daemon has sent its Sync and
        # waits): the server waits "idle in transaction" and its own timeout ends it;
        # lock_timeout=0, so B never ends anything itself.
        "waiting-for-the-answer",
        # Both bounds off: B is still waiting at the end.
        "control-unbounded",
    ],
)
@pytest.mark.timeout(120)
async def test_a_holder_stopped_mid_transaction_does_not_block_the_takeover(
    postgres_url: str, tmp_path, case: str
) -> None:
    bounded = case != "control-unbounded"
    options = {
        "between-statements": f"?idle_in_transaction_timeout={IDLE_S:g}&lock_timeout={IDLE_S:g}",
        "waiting-for-the-answer": f"?idle_in_transaction_timeout={IDLE_S:g}&lock_timeout=0",
        "control-unbounded": "?idle_in_transaction_timeout=0&lock_timeout=0",
    }[case]
    proxy, a, b = await stop_the_holder_mid_save(postgres_url, tmp_path, options)
    started: list[DaemonProcess] = []
    try:
        started.append(await asyncio.to_thread(a.start))
        started.append(await asyncio.to_thread(b.start))
        ha, hb = harness(a, tmp_path), harness(b, tmp_path)
        run = await waiting_for_a_tool(ha, "s")
        proxy.arm(b"FOR SHARE")  # the save's lease check: its transaction holds the locks
        submit = asyncio.create_task(ha.submit("s", "call_0_0", "1"))
        await asyncio.wait_for(proxy.held.wait(), 20)
        if case == "waiting-for-the-answer":
            await asyncio.sleep(0.5)
        assert a.proc is not None
        a.proc.send_signal(signal.SIGSTOP)
        proxy.release()  # from here on, only the stopped process holds the transaction
        stopped_at = time.monotonic()

        # The bounded cases take over about TTL_S + IDLE_S (3 s) after the SIGSTOP; the
        # control shows B still waiting at twice that.
        limit = TTL_S + IDLE_S + 10 if bounded else 2 * (TTL_S + IDLE_S)
        waited, log = await resume_until(hb, "s", limit)
        if not bounded:
            # Without the bound, B is still waiting on the stopped holder's locks.
            assert waited is None, (
                f"B took over in {waited:.1f} s although nothing bounds the stopped holder"
            )
            return
        assert waited is not None, f"B did not take over within {limit:g} s of the holder's SIGSTOP"
        print(
            f"{case}: takeover {time.monotonic() - stopped_at:.2f} s after the SIGSTOP (lease TTL "
            f"{TTL_S:g} s, "
            f"{options})"
        )
        assert log.error is None and log.done is not None, log.error  # type: ignore[attr-defined]
        cp = await hb.get("s")
        assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
        assert_valid_transcript(cp)
        # The frozen save never committed: its result is not there twice (R20, R54 held
        # for A: it never answered ACCEPTED).
        results = [m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL]
        assert results == [f"call_{k}_{j}" for k in range(3) for j in range(2)]
        a.proc.send_signal(signal.SIGCONT)
        # Woken, A's save was ended by the server: the submit is not ACCEPTED, and its run
        # ends with an error (the lease lost or the store's), nothing written.
        try:
            outcome = await asyncio.wait_for(submit, 30)
        except grpc.aio.AioRpcError as e:
            outcome = e.code()
        assert outcome != pb.SUBMIT_OUTCOME_ACCEPTED
        ended = await asyncio.wait_for(run, 30)
        assert ended.error is not None and error_info(ended.error)[0] in (  # type: ignore[attr-defined]
            grpc.StatusCode.ABORTED,
            grpc.StatusCode.UNAVAILABLE,
        ), ended.error  # type: ignore[attr-defined]
        assert await hb.get("s") == cp
        await ha.close()
        await hb.close()
    finally:
        for d in started:
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGCONT)  # a stopped one must be able to die
            d.stop()
        await proxy.close()
