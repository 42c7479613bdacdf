"""Per-daemon limits over real gRPC: active runs (TOO_MANY_RUNS) and request size."""

from __future__ import annotations

import grpc

from luoshod.server.app import Config, Daemon
from tests.support.harness import Harness, a_run_waiting_on_a_tool, agent, error_info


async def test_one_run_too_many_gets_resource_exhausted_with_the_limit() -> None:
    d = Daemon(Config(listen=["127.0.0.1:0"], store="memory://", max_active_runs=1))
    await d.start()
    h = Harness(d.addresses[0], d)
    try:
        waiting, stream = await a_run_waiting_on_a_tool(h)  # active: it waits for its tool result
        second = await h.run("second", "hi", agent([{"text": "no room"}]))
        code, reason, meta = error_info(second.error)
        assert (code, reason, meta["limit"]) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "TOO_MANY_RUNS",
            "1",
        )
        await h.submit("first", "call_0_0", "2")
        assert [r.event.type async for r in stream][-1] == "run.done"
        await h.idle("first")
        assert (
            await h.run("second", "hi", agent([{"text": "room now"}]))
        ).done.final_text == "room now"
    finally:
        await h.close()
        await d.stop()


async def test_a_request_over_max_payload_bytes_is_refused_with_the_limit() -> None:
    d = Daemon(Config(listen=["127.0.0.1:0"], store="memory://", max_payload_bytes=2048))
    await d.start()
    h = Harness(d.addresses[0], d)
    try:
        log = await h.run("big", "x" * 4096, agent([{"text": "never"}]))
        code, reason, meta = error_info(log.error)
        assert (code, reason, meta["limit"]) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "PAYLOAD_TOO_LARGE",
            "2048",
        )
    finally:
        await h.close()
        await d.stop()
