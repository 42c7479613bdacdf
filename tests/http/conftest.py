"""Fixtures of the console's browser tests: ``chromium`` (Debian's, found or the test
skipped — failed in CI) and ``open_browser`` (a headless Chromium on a console's pages;
every page opened is checked for problems when the test ends)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import executable
from tests.support.console import Console
from tests.support.console_browser import TIMEOUT_MS, Browser

try:
    from playwright import async_api as playwright_api
except ImportError:  # pragma: no cover - the dev extra installs it
    playwright_api = None


@pytest.fixture(scope="module")
def chromium() -> Path:
    if playwright_api is None:
        if os.environ.get("CI"):
            pytest.fail(
                "CI needs Playwright for Python for the console's tests: the dev extra installs it"
            )
        pytest.skip("no Playwright for Python: pip install -e '.[dev]'")
    found = executable()
    if found is None or not found.exists():
        if os.environ.get("CI"):
            pytest.fail(
                "CI needs Chromium for the console's tests: `make test` installs Debian's chromium"
            )
        pytest.skip(
            "no Chromium: install Debian's 'chromium' package (make test does), or set "
            "LUOSHOD_CHROMIUM"
        )
    return found


@pytest.fixture
async def open_browser(chromium: Path) -> AsyncIterator[Any]:
    async with playwright_api.async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=str(chromium), args=["--no-sandbox", "--disable-gpu"]
        )
        opened: list[Browser] = []

        async def open_(console: Console) -> Browser:
            context = await browser.new_context(
                viewport={"width": 1280, "height": 800}, device_scale_factor=1
            )
            context.set_default_timeout(TIMEOUT_MS)
            b = Browser(await context.new_page(), console.base)
            opened.append(b)
            return b

        try:
            yield open_
        finally:
            await browser.close()
        for b in opened:
            b.check()
