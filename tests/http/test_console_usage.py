"""Usage and cost in the web console (R78), in a real headless Chromium with the
fixtures and checks of test_console_browser.py: the sessions list shows each session's
usage and cost and lists the costliest first across pages (the daemon orders them); the
session page shows each turn's model and usage, the totals and the usage by model."""

from __future__ import annotations

from typing import Any

from tests.support.console import ConsoleFactory
from tests.support.harness import agent


def priced(*costs: float, model: str = "scripted:priced") -> Any:
    return agent(
        [
            {
                "text": f"answer {n}",
                "usage": {"prompt_tokens": 1000, "completion_tokens": 50, "cost_usd": cost},
            }
            for n, cost in enumerate(costs)
        ],
        [],
        model=model,
    )


async def test_r78_the_console_lists_by_cost_and_shows_each_turn(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    costs = {"s-a": 0.5, "s-b": 3.0, "s-c": 0.25, "s-d": 1.5, "s-e": 0.0}
    for sid, cost in costs.items():
        await console.app.run(sid, "go", priced(cost))
    b = await open_browser(console)
    await b.goto("/#/sessions?size=2")
    newest = b.page.locator('#sessions tr[data-session="s-e"]')  # the newest first
    await newest.wait_for()
    assert await newest.locator(".cost").inner_text() == "–"
    # Sorted by cost: the daemon orders every page, so page 1 holds the two costliest of
    # all, not the two costliest of the newest.
    await b.page.select_option("#filter-sort", "cost")
    seen: list[str] = []
    for page in range(3):
        await b.until(
            f"document.querySelector('.pager span')?.textContent === 'page {page + 1} of 3'"
        )
        seen += await b.page.locator("#sessions tbody tr").evaluate_all(
            "rs => rs.map(r => r.dataset.session)"
        )
        if page < 2:
            await b.page.click("#page-next")
    assert seen == ["s-b", "s-d", "s-a", "s-c", "s-e"]
    assert (await b.text("#page-count")).endswith("costliest first")
    last = b.page.locator('#sessions tr[data-session="s-e"]')
    assert await last.locator(".usage").inner_text() == "1,050 tok · 1 call"
    await b.page.click("#page-prev")
    await b.until("document.querySelector('.pager span')?.textContent === 'page 2 of 3'")
    cheap = b.page.locator('#sessions tr[data-session="s-c"]')
    assert await cheap.locator(".cost").inner_text() == "$0.2500"
    assert await cheap.locator(".usage").inner_text() == "1,050 tok · 1 call · $0.2500"

    # A session of two runs on two models: each turn its model and usage, the totals, and
    # the usage by model, the costliest first.
    await console.app.run("two", "first", priced(0.125, 0.0, model="scripted:small"))
    big = agent(
        [
            {"text": "x"},
            {
                "text": "thought it through",
                "usage": {
                    "prompt_tokens": 4000,
                    "completion_tokens": 300,
                    "cached_input_tokens": 3000,
                    "reasoning_tokens": 200,
                    "cost_usd": 2.0,
                },
            },
        ],
        [],
        model="scripted:big",
    )
    await console.app.run("two", "second", big)
    await b.goto("/#/session/two")
    turns = b.page.locator(".timeline > li.step .turn-usage")
    await turns.nth(1).wait_for()
    assert [t.strip(" ·") for t in await turns.all_inner_texts()] == [
        "scripted:small · 1,000 in + 50 out · $0.1250",
        "scripted:big · 4,000 in + 300 out · 3,000 cached · 200 reasoning · $2.0000",
    ]
    assert "session: 5,350 tok · 2 calls · $2.1250" in await b.text("#usage-totals")
    assert await b.page.locator("#usage-by-model li").evaluate_all(
        "ls => ls.map(l => l.dataset.model)"
    ) == ["scripted:big", "scripted:small"]
    await b.shot("session-usage")
    # Compare shows each step's model and usage beside its twin's.
    await b.goto("/#/compare?a=s-a&b=s-b")
    usages = b.page.locator("#comparison .turn-usage")
    await usages.nth(1).wait_for()
    assert [t.strip(" ·") for t in await usages.all_inner_texts()] == [
        "scripted:priced · 1,000 in + 50 out · $0.5000",
        "scripted:priced · 1,000 in + 50 out · $3.0000",
    ]
