"""Fixtures of the HTTP tests (their helpers are in console_kit.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from console_kit import Console, ConsoleFactory, _token_stub, http_config
from support import Harness

from luoshod.server.app import Daemon


@pytest.fixture
async def make_console(tmp_path: Path) -> AsyncIterator[ConsoleFactory]:
    """Starts daemons (``http_config``'s keywords) and stops them all at the end."""
    made: list[Console] = []

    async def make(*, token: str | None = None, ssl: Any = None, **kw: Any) -> Console:
        folder = tmp_path / f"d{len(made)}"
        folder.mkdir()
        d = Daemon(http_config(folder, **kw))
        await d.start()
        assert d.http is not None and d.http.address
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        connector = aiohttp.TCPConnector(ssl=ssl) if ssl is not None else None
        session = aiohttp.ClientSession(headers=headers, connector=connector)
        app = Harness(d.addresses[0], d)
        if token:
            app.stub = _token_stub(app.channel, token)
        c = Console(d, d.http.url, session, app)
        made.append(c)
        return c

    try:
        yield make
    finally:
        for c in made:
            await c.http.close()
            await c.app.close()
            await c.daemon.stop()


@pytest.fixture
async def console(make_console: ConsoleFactory) -> Console:
    return await make_console()
