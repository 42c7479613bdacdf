"""A loopback TCP proxy between a daemon and PostgreSQL, with the network's faults on demand:
a connection cut right after a COMMIT went through (the database committed, the daemon
never heard), a COMMIT that never arrives (the connection cut just before it), every
connection dropped, a connection stalled."""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit, urlunsplit

#: A transaction's COMMIT as psycopg sends it (the statement's text, then its NUL): not
#: the name of a table that merely starts with "commit".
COMMIT = b"COMMIT\x00"


class Proxy:
    """Loopback TCP between the daemon and PostgreSQL, with faults on demand."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.conns: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self.cut_after_commit = False
        self.cut_before_commit = False
        self.cuts = 0
        # Connections whose COMMIT went through with ``cut_after_commit`` set: what the
        # server answers is held back until its answer to the COMMIT is among it (the
        # transaction is committed), then the connection is cut, that answer never sent on.
        self.swallowing: dict[tuple[asyncio.StreamWriter, asyncio.StreamWriter], bytes] = {}
        # A stall: the connection whose client sends ``stall_on`` forwards nothing, either
        # way, for ``stall_s`` (what it sent included), then flows again.
        self.stall_on: bytes | None = None
        self.stall_s = 0.0
        self.stalls: list[bytes] = []
        self.flowing: dict[tuple[asyncio.StreamWriter, asyncio.StreamWriter], asyncio.Event] = {}
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def _serve(self, cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        sr, sw = await asyncio.open_connection(*self.target)
        pair = (cw, sw)
        self.conns.add(pair)
        self.flowing[pair] = asyncio.Event()
        self.flowing[pair].set()
        try:
            await asyncio.gather(
                self._pump(cr, sw, pair, to_server=True), self._pump(sr, cw, pair, to_server=False)
            )
        finally:
            self.conns.discard(pair)
            self.flowing.pop(pair, None)
            self.swallowing.pop(pair, None)
            self._close(pair)

    async def _pump(
        self, r: asyncio.StreamReader, w: asyncio.StreamWriter, pair, *, to_server: bool
    ) -> None:  # type: ignore[no-untyped-def]
        with contextlib.suppress(Exception):
            while data := await r.read(65536):
                if to_server and self.stall_on and self.stall_on in data.upper():
                    self.stalls.append(self.stall_on)
                    self.stall_on = None
                    flow = self.flowing[pair]
                    flow.clear()
                    asyncio.get_running_loop().call_later(self.stall_s, flow.set)
                await self.flowing[pair].wait()
                if to_server and self.cut_before_commit and COMMIT in data:
                    # The COMMIT never reaches the server: the transaction is rolled back.
                    self.cut_before_commit = False
                    self.cuts += 1
                    self._close(pair)
                    return
                if to_server and self.cut_after_commit and COMMIT in data:
                    # The COMMIT reaches the server; its answer never reaches the daemon.
                    self.cut_after_commit = False
                    self.swallowing[pair] = b""
                if not to_server and pair in self.swallowing:
                    held = self.swallowing[pair] + data
                    if COMMIT not in held:  # the server's CommandComplete for it: not yet
                        self.swallowing[pair] = held
                        continue
                    del self.swallowing[pair]
                    self.cuts += 1
                    self._close(pair)
                    return
                w.write(data)
                await w.drain()
        self._close(pair)

    @staticmethod
    def _close(pair) -> None:  # type: ignore[no-untyped-def]
        for w in pair:
            with contextlib.suppress(Exception):
                w.transport.abort()

    def stall(self, on: bytes, seconds: float) -> None:
        """Stall the next connection that sends ``on`` (a statement's text, upper case)."""
        self.stall_on, self.stall_s = on, seconds

    def drop_all(self) -> int:
        n = len(self.conns)
        for pair in list(self.conns):
            self._close(pair)
        return n


def through(url: str, port: int) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)
    host = f"127.0.0.1:{port}"
    return urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))
