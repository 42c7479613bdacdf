"""R75: a retry waits for the channel to connect before it spends an attempt.

While a gRPC channel is in TRANSIENT_FAILURE, every call fails at once ("failed to
connect to all addresses") until the channel's reconnect backoff ends. A retry sent in
that window is an attempt spent on nothing: with short backoffs a client used to give up
while the daemon was already coming back (tests/processes/test_retry_soak.py failed so in CI). Here
no daemon listens when the run starts; one starts a second later. The policy allows three
attempts with backoffs of a few milliseconds, which without the wait are all spent before
the daemon listens; with it, the second attempt waits for the connection and the run
finishes.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from luosho.client import Agent, AsyncClient, Client, RetryPolicy
from tests.support.daemon_process import DaemonProcess, db_url

POLICY = RetryPolicy(max_attempts=3, initial_backoff=0.005, max_backoff=8.0, jitter=0)
AGENT = Agent("scripted:echo")


@pytest.fixture
def late_daemon(tmp_path: Path):
    """A Unix socket path where a daemon starts listening about a second after the test
    asks for it: ``start()`` starts the clock."""
    short = Path(tempfile.mkdtemp(prefix="reconn-", dir="/tmp"))  # a socket path is short
    listen = f"unix:{short}/luoshod.sock"
    daemons: list[DaemonProcess] = []

    def run_later() -> None:
        time.sleep(1.0)
        d = DaemonProcess("--store", db_url(tmp_path))
        d.args[d.args.index("127.0.0.1:0")] = listen
        daemons.append(d)
        d.start()

    thread = threading.Thread(target=run_later, daemon=True)

    class Late:
        target = listen

        @staticmethod
        def start() -> None:
            thread.start()

        @staticmethod
        def started() -> bool:
            return any(d.address for d in daemons)

    try:
        yield Late
    finally:
        thread.join(30)
        for d in daemons:
            d.stop()
        shutil.rmtree(short, ignore_errors=True)


async def test_r75_async_retry_waits_for_the_daemon_to_listen(late_daemon) -> None:
    async with AsyncClient(late_daemon.target, retry=POLICY) as client:
        late_daemon.start()
        result = await client.execute("late-1", "hello", agent=AGENT)
    assert result.status == "finished" and result.final_text
    assert 2 <= result.attempts <= 3  # the first found nobody; a later one waited and ran


def test_r75_sync_retry_waits_for_the_daemon_to_listen(late_daemon) -> None:
    with Client(late_daemon.target, retry=POLICY) as client:
        late_daemon.start()
        result = client.execute("late-2", "hello", agent=AGENT).result()
    assert result.status == "finished" and result.final_text
    assert 2 <= result.attempts <= 3


async def test_r75_retries_still_end_when_nobody_comes_back(tmp_path: Path) -> None:
    """The wait is bounded: with no daemon at all the run fails after its attempts, each
    retry having waited at most ``max_backoff`` for the connection."""
    policy = RetryPolicy(max_attempts=3, initial_backoff=0.005, max_backoff=0.5, jitter=0)
    target = f"unix:{tmp_path}/nobody.sock"
    started = time.monotonic()
    async with AsyncClient(target, retry=policy) as client:
        with pytest.raises(Exception) as caught:
            await asyncio.wait_for(client.execute("gone", "hello", agent=AGENT), 30)
    took = time.monotonic() - started
    assert type(caught.value).__name__ == "UnavailableError"
    assert 0.9 <= took < 20  # two waits of up to 0.5 s each, not forever
