"""Compaction (R85) through the JSON API and the web console: ``POST
/api/v1/sessions/{id}/compact`` compacts a session by hand (its strategy in the body,
SESSION_BUSY while a run holds it), and the session page's Compact button does the same,
its History scrubber marking the compaction's save and its timeline the events."""

from __future__ import annotations

from typing import Any

from tests.support.compaction import FETCH, go, spec
from tests.support.console import Console, ConsoleFactory, assert_error

API = "/api/v1"


async def finished(console: Console, sid: str) -> None:
    # A window so large the run never compacts by itself.
    log = await console.app.run(sid, go(), spec(window=1_000_000), FETCH)
    assert log.error is None and not log.of("compaction.start")


async def test_r85_compact_over_http(console: Console) -> None:
    await finished(console, "pages")
    status, body = await console.post(
        f"{API}/sessions/pages/compact", {"strategy": "COMPACTION_STRATEGY_PRUNE"}
    )
    assert status == 200 and body["compacted"] is True
    state = body["checkpoint"]["compaction"]
    assert state["pruned_before"] > 0 and not state["summary"]
    status, body = await console.post(f"{API}/sessions/pages/compact", {})
    assert status == 200 and body["checkpoint"]["compaction"]["summary"]
    status, body = await console.post(f"{API}/sessions/pages/compact", {})
    assert (status, body["compacted"]) == (200, False)
    status, body = await console.post(f"{API}/sessions/nobody/compact", {})
    assert_error(status, body, 404, "NOT_FOUND", "CHECKPOINT_NOT_FOUND")
    status, body = await console.post(f"{API}/sessions/pages/compact", {"strategy": "SOMETIMES"})
    assert status == 400


async def test_r85_the_console_compacts_a_session(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    await finished(console, "pages")
    b = await open_browser(console)
    await b.goto("/#/session/pages")
    await b.page.locator("#compact").wait_for()
    await b.page.click("#compact")
    await b.page.locator("#compacted").wait_for()
    assert (await b.text("#compacted")).startswith("Compacted: tool results before message")
    await b.until("document.querySelector('#scrub-label')?.textContent.includes('compaction')")
    cp = await console.app.get("pages")
    assert cp.compaction.count == 1 and cp.compaction.summary
