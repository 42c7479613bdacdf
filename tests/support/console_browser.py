"""The console in a real headless Chromium, for the tests under tests/http: a page that
records what would make it wrong (script errors, CSP violations, requests leaving the
daemon's origin, 5xx answers), where screenshots go, and the app side of a console test
(a crashed run, a client answering tool calls). The fixtures that open browsers are in
tests/http/conftest.py.

The README's screenshots are retaken into docs/console/ only when asked
(``LUOSHOD_SCREENSHOTS=1``); otherwise a run of the tests leaves the tree as it was.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from luosho.v1 import agent_pb2 as pb
from tests.support.console import Console, trip_agent

SHOTS = (
    Path(__file__).parents[2] / "docs" / "console"
    if os.environ.get("LUOSHOD_SCREENSHOTS") == "1"
    else Path(tempfile.mkdtemp(prefix="luoshod-console-shots-"))
)
if not SHOTS.is_relative_to(Path(__file__).parents[2]):
    atexit.register(shutil.rmtree, SHOTS, True)
TIMEOUT_MS = 10_000


class Browser:
    """One headless Chromium with a page, recording what would make a page wrong."""

    def __init__(self, page: Any, origin: str) -> None:
        self.page = page
        self.origin = origin
        self.problems: list[str] = []
        self.urls: list[str] = []
        self.bytes = 0
        page.on("pageerror", lambda e: self.problems.append(f"script error: {e}"))
        # A refused request (a 404 the page asked for on purpose) is logged by the browser
        # as "Failed to load resource"; what the daemon answered is checked below instead.
        page.on(
            "console",
            lambda m: (
                self.problems.append(f"console {m.type}: {m.text}")
                if m.type == "error" and not m.text.startswith("Failed to load resource")
                else None
            ),
        )
        page.on("request", self._request)
        page.on("response", self._response)

    def _request(self, request: Any) -> None:
        self.urls.append(request.url)
        if not (request.url.startswith(self.origin + "/") or request.url.startswith("data:")):
            self.problems.append(f"request outside the daemon's origin: {request.url}")

    def _response(self, response: Any) -> None:
        if response.status >= 500:
            self.problems.append(f"{response.status} from {response.url}")
        length = response.headers.get("content-length")
        if length:
            self.bytes += int(length)

    async def goto(self, path: str) -> None:
        await self.page.goto(self.origin + path)

    async def text(self, selector: str) -> str:
        return await self.page.locator(selector).inner_text(timeout=TIMEOUT_MS)

    async def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        await self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)

    async def until(self, expression: str) -> None:
        """Polls ``expression`` in the page until it is true (``wait_for_function`` would
        evaluate a string in the page, which the console's CSP rightly forbids)."""
        deadline = asyncio.get_running_loop().time() + TIMEOUT_MS / 1000
        while not await self.page.evaluate(expression):
            assert asyncio.get_running_loop().time() < deadline, f"never true: {expression}"
            await asyncio.sleep(0.05)

    def check(self) -> None:
        assert self.problems == [], self.problems


async def crashed_run(console: Console, session_id: str, spec: pb.AgentSpec | None = None) -> None:
    """A run whose client died at its first tool call: the session is in progress."""
    await console.app.run(
        session_id,
        "Plan a day in Lisbon",
        spec or trip_agent(),
        stop_at=lambda e: e.type == "tool.call",
    )
    await console.app.idle(session_id)


async def answer_tools(console: Console, session_id: str, results: dict[str, Any]) -> None:
    """The app: follows the session's events over gRPC and answers each tool call."""
    async for resp in console.app.stub.Watch(pb.WatchRequest(session_id=session_id, follow=True)):
        e = resp.event
        if e.type == "tool.call":
            await console.app.submit(
                session_id, e.tool_call.call.id, json.dumps(results[e.tool_call.call.name])
            )
