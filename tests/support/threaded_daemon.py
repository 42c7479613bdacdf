"""A real daemon on a loopback port, run by its own event loop in a thread, so that
blocking code (the admin CLI's ``main``, the blocking client, Hypothesis tests) can call
it from the test's thread while the test still reaches the daemon's store."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from luoshod.server.app import Config, Daemon

T = TypeVar("T")


@dataclass
class ThreadedDaemon:
    daemon: Daemon
    loop: asyncio.AbstractEventLoop

    @property
    def address(self) -> str:
        return self.daemon.addresses[0]

    def call(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        """Run ``coro`` on the daemon's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


@contextmanager
def threaded_daemon(**config: Any) -> Iterator[ThreadedDaemon]:
    """The started daemon; stopped on exit."""
    loop = asyncio.new_event_loop()
    daemon = Daemon(Config(listen=["127.0.0.1:0"], **config))
    loop.run_until_complete(daemon.start())
    thread = threading.Thread(target=loop.run_forever, name="luoshod-daemon", daemon=True)
    thread.start()
    running = ThreadedDaemon(daemon, loop)
    try:
        yield running
    finally:
        running.call(daemon.stop())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
