"""Issue 16: a burst of runs started together on one daemon all run. gRPC core used to
cancel calls at random (a bare CANCELLED, nothing in the daemon's log) once more than
1,000 had arrived that the daemon's event loop had not taken up yet; the daemon now keeps
them waiting (``grpc.server.max_pending_requests``), so a busy daemon is slower, never
lossy. A real daemon, real gRPC, 2,500 Execute streams opened at once."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import grpc

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc
from luoshod.server.app import Config, Daemon
from tests.support.harness import user

BURST = 2500


async def test_a_burst_of_runs_over_grpc_cores_pending_limit_all_finish() -> None:
    d = Daemon(
        Config(listen=["127.0.0.1:0"], store="memory://", max_active_runs=0, max_loop_lag_ms=0)
    )
    await d.start()
    spec = pb.AgentSpec(
        model="scripted:slow",
        model_settings_json=json.dumps({"script": [{"text": "ok", "delay_ms": 200}]}),
    )
    outcomes: Counter[str] = Counter()
    try:
        async with grpc.aio.insecure_channel(d.addresses[0]) as channel:
            stub = pb_grpc.AgentServiceStub(channel)

            async def one(k: int) -> None:
                try:
                    events = [
                        r.event
                        async for r in stub.Execute(
                            pb.ExecuteRequest(
                                session_id=f"burst-{k}", input=[user("go")], agent=spec
                            )
                        )
                    ]
                    outcomes[f"{events[-1].type}: {events[-1].run_done.final_text}"] += 1
                except grpc.aio.AioRpcError as e:
                    outcomes[e.code().name] += 1

            await asyncio.gather(*(one(k) for k in range(BURST)))
    finally:
        await d.stop()
    assert outcomes == Counter({"run.done: ok": BURST})
