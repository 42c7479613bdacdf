"""A Standard Webhooks receiver on loopback (``Receiver``), the receiver's signature check
as the README shows it (``verify``), and the daemon's metrics read back (``scrape``,
``metric``): what the webhook, retention and crash tests share."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import time
import urllib.request
from typing import Any

from aiohttp import web

from luoshod.server.app import Daemon

KEY = b"a test key of 24 bytes!!"
SECRET = "whsec_" + base64.b64encode(KEY).decode()


class Receiver:
    """An HTTP server on loopback that records each POST (headers and body)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.got: list[tuple[dict[str, str], bytes]] = []
        self.arrived = asyncio.Event()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def start(self) -> Receiver:
        async def hook(request: web.Request) -> web.Response:
            self.got.append((dict(request.headers), await request.read()))
            self.arrived.set()
            return web.Response(status=204)

        app = web.Application()
        app.router.add_post("/hook", hook)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(body) for _, body in self.got]

    async def wait_for(self, type_: str, session_id: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for b in self.bodies():
                if b["type"] == type_ and b["data"]["session_id"] == session_id:
                    return b
            left = deadline - time.monotonic()
            assert left > 0, f"no {type_} for {session_id}: {self.bodies()}"
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), left)

    async def wait_for_count(
        self, type_: str, session_id: str, n: int, timeout: float = 30
    ) -> list[dict[str, Any]]:
        """The first ``n`` bodies of ``type_`` for ``session_id``, waiting (yielding to the
        event loop, where this receiver runs) until that many have arrived."""
        deadline = time.monotonic() + timeout
        while True:
            self.arrived.clear()
            got = [
                b
                for b in self.bodies()
                if b["type"] == type_ and b["data"]["session_id"] == session_id
            ]
            if len(got) >= n:
                return got
            left = deadline - time.monotonic()
            assert left > 0, f"{len(got)} of {n} {type_} for {session_id}: {self.bodies()}"
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), left)


def verify(headers: dict[str, str], body: bytes, secret: str) -> bool:
    """The receiver's check, as the README shows it."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(expected, sig.removeprefix("v1,"))
        for sig in headers["webhook-signature"].split()
    )


async def scrape(daemon: Daemon) -> str:
    def get() -> str:
        with urllib.request.urlopen(
            f"http://{daemon.observe.metrics_address}/metrics", timeout=10
        ) as r:
            return r.read().decode()

    return await asyncio.to_thread(get)  # the daemon serves /metrics on this event loop


def metric(text: str, name: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name) and not line.startswith("#")
    )
