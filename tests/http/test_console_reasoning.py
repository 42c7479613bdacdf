"""R84 in the web console, in a real headless Chromium (the fixtures of
test_console_browser.py): a turn's kept reasoning shows collapsed on the session page, its
readable text inside, a redacted block named as such, never as the turn's text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.console import ConsoleFactory
from tests.support.model_fakes import REDACTED, FakeAnthropic, turn
from tests.support.providers import KEY_ENV, provider_toml


async def test_r84_the_session_page_shows_reasoning_collapsed_per_turn(
    make_console: ConsoleFactory,
    open_browser: Any,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = await FakeAnthropic().start()
    try:
        monkeypatch.setenv(KEY_ENV, fake.key)
        config = tmp_path / "providers.toml"
        config.write_text(provider_toml(fake))
        fake.script = [
            turn("", ("lookup", {}), thinking=("First I look it up.", f"{REDACTED}x")),
            turn("Found it."),
        ]
        console = await make_console(config_file=config)
        spec = pb.AgentSpec(
            model="llm:test-model",
            tools=[pb.ToolSpec(name="lookup", input_schema_json='{"type":"object"}')],
            reasoning=pb.Reasoning(budget_tokens=1024),
        )
        log = await console.app.run("thought", "look it up", spec, {"lookup": lambda a: "ok"})
        assert log.error is None, log.error
        assert not fake.violations

        b = await open_browser(console)
        await b.goto("/#/session/thought")
        details = b.page.locator(".timeline > li.step details.reasoning")
        await details.first.wait_for(state="attached")
        assert await details.count() == 1  # only the turn that reasoned
        assert await details.get_attribute("open") is None  # collapsed
        assert await details.locator("summary").inner_text() == "reasoning · 2 blocks"
        assert not await details.locator(".reasoning-text").is_visible()
        await details.locator("summary").click()
        assert await details.locator(".reasoning-text").inner_text() == "First I look it up."
        assert "redacted or encrypted" in await details.inner_text()
        step = b.page.locator('.timeline > li.step[data-step="1"]')
        assert "First I look it up." not in await step.locator(":scope > .text").all_inner_texts()
        await b.shot("session-reasoning")
    finally:
        await fake.close()
