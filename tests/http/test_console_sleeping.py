"""Sleeping sessions in the web console (R86), in a real headless Chromium with the
fixtures and checks of test_console_browser.py: the sessions list filters them and shows
when each wakes; the session page shows its wake time and a "Wake now" button that wakes
it (Resume with wake) and shows the run that follows."""

from __future__ import annotations

from typing import Any

from tests.support.console import ConsoleFactory
from tests.support.harness import agent, calls


async def test_r86_the_console_lists_a_sleeper_with_its_wake_time_and_wakes_it(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    spec = agent(
        [calls(("sleep", {"until": "2100-01-01T09:00:00Z"})), {"text": "good morning"}],
        [],
        sleep_tool=True,
    )
    await console.app.run("nap", "wake me in 2100", spec)
    await console.app.run("awake", "hi", agent([{"text": "hello"}], []))
    b = await open_browser(console)
    await b.goto("/#/sessions?status=sleeping")
    row = b.page.locator('#sessions tr[data-session="nap"]')
    await row.wait_for()
    assert await b.page.locator("#sessions tbody tr").count() == 1
    assert "sleeping" in await row.locator(".badge").first.inner_text()
    assert (await row.locator(".wakes").inner_text()).strip() == "wakes 2100-01-01 09:00:00Z"
    await b.goto("/#/session/nap")
    await b.page.locator("#wakes").wait_for()
    assert await b.text("#wakes") == "2100-01-01 09:00:00Z"
    assert await b.text("#resume") == "Wake now"
    await b.shot("session-sleeping")
    await b.page.click("#resume")
    await b.until("document.body.textContent.includes('good morning')")
    _, got = await console.get("/api/v1/sessions/nap")
    assert got["checkpoint"]["status"] == "CHECKPOINT_STATUS_FINISHED"
