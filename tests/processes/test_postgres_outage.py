"""A daemon on PostgreSQL while the database goes away and comes back: runs fail with
UNAVAILABLE (STORE_UNAVAILABLE) while it is gone, nothing is half-written, and the daemon
recovers by itself, with no restart."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, assert_valid_transcript, calls, error_info
from tests.support.postgres_server import PostgresServer

SPEC = agent([calls(("add", {"a": 1})), {"text": "done"}])


@pytest.fixture
def daemon(postgres_server: PostgresServer, postgres_url: str) -> Iterator[DaemonProcess]:
    # pool_timeout: how long a call waits for a connection before it fails (default 10 s).
    d = DaemonProcess("--store", f"{postgres_url}?pool_timeout=2").start()
    try:
        yield d
    finally:
        d.stop()


async def test_runs_fail_with_unavailable_while_the_database_is_gone_and_recover(
    postgres_server: PostgresServer, daemon: DaemonProcess, tmp_path: Path
) -> None:
    h = Harness(daemon.address)
    before = await h.run("before", "go", SPEC, {"add": lambda a: a["a"]})
    assert before.error is None and before.done is not None

    postgres_server.stop()
    try:
        started = time.monotonic()
        gone = await h.run("during", "go", SPEC, {"add": lambda a: a["a"]})
        assert gone.error is not None
        assert error_info(gone.error)[:2] == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
        assert time.monotonic() - started < 30  # it fails, it does not hang
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.get("before")
        assert error_info(err.value)[:2] == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
    finally:
        postgres_server.start()

    # Back, with no restart of the daemon: what was saved is intact, the failed run wrote
    # nothing, and new runs go through.
    cp = await h.get("before")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert_valid_transcript(cp)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.get("during")
    assert error_info(err.value)[1] == "CHECKPOINT_NOT_FOUND"
    after = await h.run("during", "go", SPEC, {"add": lambda a: a["a"]})
    assert after.error is None and after.done is not None and after.done.final_text == "done"
    await h.close()
