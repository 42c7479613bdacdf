"""The web console in a real headless Chromium (Debian's ``chromium``, driven by
Playwright), against a real daemon on the SQLite store: list and filter sessions, watch a
run's steps arrive live, approve from the inbox and see the run continue, reject with a
note, fork from a step and compare, see an agent's drift, the token refused and accepted.

Every page is checked for script errors, Content-Security-Policy violations and requests
that leave the daemon's origin. The screenshots of docs/console/ (shown in the README) are
taken by these tests when ``LUOSHOD_SCREENSHOTS=1`` (elsewhere under the temporary folder). Without
Chromium they are skipped, with the reason; in CI (``CI``
set) they fail instead: `make test` installs it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.config import Secret
from tests.support.console import QUESTION, ConsoleFactory, trip_agent
from tests.support.console_browser import answer_tools, crashed_run
from tests.support.harness import agent

pytestmark = pytest.mark.timeout(90)


async def test_sessions_list_filter_and_page(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    for i in (1, 2, 3):
        await console.finished_trip(f"trip-{i}")
    await console.paused_refund("refund-1")
    await crashed_run(console, "crashed-1")
    b = await open_browser(console)
    await b.goto("/")
    rows = b.page.locator("#sessions tbody tr")
    await rows.nth(4).wait_for()
    assert await rows.count() == 5
    # Usage and cost come with the listing, the model per row from GetSession.
    trip = b.page.locator('#sessions tr[data-session="trip-1"]')
    await b.until(
        '!document.querySelector(\'#sessions tr[data-session="trip-1"] '
        ".model').textContent.includes('…')"
    )
    assert await trip.locator(".model").inner_text() == "scripted:trip"
    assert "tok" in await trip.locator(".usage").inner_text()
    assert await trip.locator("[data-status]").inner_text() == "finished (stop)"
    await b.shot("sessions")
    assert b.bytes < 200_000, b.bytes  # the whole first page, data included

    await b.page.select_option("#filter-status", "awaiting-approval")
    await b.until("document.querySelectorAll('#sessions tbody tr').length === 1")
    assert await b.text("#sessions tbody tr td a") == "refund-1"
    await b.page.select_option("#filter-status", "in-progress")
    await b.until(
        "[...document.querySelectorAll('#sessions tbody tr')].map(r => r.dataset.session).join() "
        "=== 'crashed-1'"
    )

    await b.page.select_option("#filter-status", "")
    await b.page.fill("#filter-id", "trip-2")
    await b.page.click("#filters button[type=submit]")
    await b.until(
        "[...document.querySelectorAll('#sessions tbody tr')].map(r => r.dataset.session).join()"
        " === 'trip-2'"
    )
    await b.page.fill("#filter-id", "trip-")  # a prefix of the id; the newest first
    await b.page.click("#filters button[type=submit]")
    await b.until(
        "[...document.querySelectorAll('#sessions tbody tr')].map(r => r.dataset.session).join()"
        " === 'trip-3,trip-2,trip-1'"
    )
    assert await b.text("#page-count") == "3 shown of 3 sessions, newest first"
    await b.page.fill("#filter-id", "nobody")
    await b.page.click("#filters button[type=submit]")
    await b.page.locator(
        "#sessions-note", has_text="No session whose id starts with nobody"
    ).wait_for()

    # Pages of two: 5 sessions are three pages, the most recently updated first; Next and
    # Previous walk them.
    await b.goto("/#/sessions?size=2")
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
    assert await b.page.locator("#page-next").is_disabled()
    assert seen == ["crashed-1", "refund-1", "trip-3", "trip-2", "trip-1"]  # newest first
    await b.page.click("#page-prev")
    await b.until("document.querySelector('.pager span')?.textContent === 'page 2 of 3'")


async def test_a_session_shows_its_steps_live(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    b = await open_browser(console)
    await b.goto("/#/session/live-1")
    await b.page.wait_for_selector("#live-state.live-live")
    events = b.page.locator("#events li")

    async def weather(args: dict[str, Any]) -> dict[str, Any]:
        # The app answers only once the page shows the call: the run cannot finish unless
        # the page follows it live.
        await events.filter(has_text="tool.call").wait_for()
        assert (
            await b.page.locator('#timeline .call[data-call="call_0_0"] .muted').inner_text()
            == "no result yet"
        )
        return {"city": args["city"], "sky": "sunny", "celsius": 24}

    log = await console.app.run(
        "live-1", "Plan a day in Lisbon", trip_agent(), {"get_weather": weather}
    )
    assert log.done is not None
    await events.filter(has_text="run.done").wait_for()
    await b.page.locator("#timeline .step", has_text="Lisbon is sunny today.").wait_for()
    assert await b.page.locator("#timeline .step").count() == 2
    result = await b.text('#timeline .call[data-call="call_0_0"] .result')
    assert json.loads(result.removeprefix("→ ")) == {
        "city": "Lisbon",
        "sky": "sunny",
        "celsius": 24,
    }
    assert "finished" in await b.text("#session-head h1")
    seqs = await events.evaluate_all("ls => ls.map(l => Number(l.dataset.seq))")
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) == len(log.events)
    await b.shot("session")

    # The scrubber: the first save had the model's first turn and no result yet.
    await b.page.locator("#scrubber").fill("0")
    assert "step 1" in await b.text("#scrub-note")
    assert await b.page.locator("#timeline .step").count() == 1
    assert await b.page.locator('#timeline .call[data-call="call_0_0"] .result').count() == 0
    await b.page.click("#scrub-note button")
    await b.page.locator("#timeline .step").nth(1).wait_for()


async def test_approve_from_the_inbox_and_the_run_goes_on(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    await console.paused_refund("refund-1")
    await console.paused_refund("refund-2")
    app = asyncio.create_task(answer_tools(console, "refund-1", {"refund": {"refunded": 42}}))
    try:
        b = await open_browser(console)
        await b.goto("/#/approvals")
        cards = b.page.locator("#inbox .approval")
        await cards.nth(1).wait_for()
        assert await cards.evaluate_all("cs => cs.map(c => c.dataset.session)") == [
            "refund-1",
            "refund-2",
        ]
        card = cards.nth(0)
        assert await card.locator(".tool").inner_text() == "refund"
        assert json.loads(await card.locator(".args").inner_text()) == {"order": 42}
        assert "no expiry" in await card.inner_text()
        await card.locator("textarea.note").fill("ok by Ana")
        await b.shot("approvals")
        await card.locator("button.approve").click()
        await card.locator(".outcome .result", has_text="is finished (stop)").wait_for()
        assert "Done with the refund." in await card.locator(".outcome .result").inner_text()
        assert await card.locator('.events li[data-type="tool.result"]').count() == 1
        # The session page says who decided, with the note (R92; a daemon without tokens).
        await b.goto("/#/session/refund-1")
        decided = b.page.locator('#events li[data-type="approval.resolved"]')
        await decided.wait_for()
        assert "refund approved by anonymous · “ok by Ana”" in await decided.inner_text()
    finally:
        app.cancel()
    cp = await console.app.get("refund-1")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    assert json.loads(next(m.content for m in cp.messages if m.role == pb.ROLE_TOOL)) == {
        "refunded": 42
    }


async def test_reject_with_a_note(make_console: ConsoleFactory, open_browser: Any) -> None:
    console = await make_console()
    await console.paused_refund("refund-2")
    b = await open_browser(console)
    await b.goto("/#/approvals")
    card = b.page.locator('#inbox .approval[data-session="refund-2"]')
    await card.locator("textarea.note").fill("no receipt")
    await card.locator("button.reject").click()
    await card.locator(
        ".outcome .result", has_text="Rejected: session refund-2 is finished (stop)"
    ).wait_for()
    cp = await console.app.get("refund-2")
    rejection = json.loads(next(m.content for m in cp.messages if m.role == pb.ROLE_TOOL))
    assert rejection["rejected"] is True and rejection["note"] == "no receipt"
    # Gone from the inbox once decided.
    await b.goto("/#/compare")
    await b.goto("/#/approvals")
    await b.page.locator("#inbox-empty").wait_for()


async def test_r88_answer_a_question_from_the_inbox(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    await console.paused_question("report-1")
    b = await open_browser(console)
    await b.goto("/#/approvals")
    card = b.page.locator('#inbox .approval[data-kind="question"]')
    await card.wait_for()
    assert await card.locator(".question-text").inner_text() == QUESTION
    assert await card.locator("button.approve").inner_text() == "Answer"
    await card.locator("textarea.answer").fill("weekly, please")
    await b.shot("question")
    await card.locator("button.approve").click()
    await card.locator(
        ".outcome .result", has_text="Answered: session report-1 is finished (stop)"
    ).wait_for()
    cp = await console.app.get("report-1")
    answer = next(m for m in cp.messages if m.role == pb.ROLE_TOOL)
    assert json.loads(answer.content) == {"answer": "weekly, please"}
    # The session page says who answered, and what.
    await b.goto("/#/session/report-1")
    decided = b.page.locator('#events li[data-type="approval.resolved"]')
    await decided.wait_for()
    assert "ask answered by anonymous: “weekly, please”" in await decided.inner_text()


async def test_fork_from_a_step_and_compare(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    await console.finished_trip("trip-1")
    b = await open_browser(console)
    await b.goto("/#/session/trip-1")
    await b.page.locator("#scrubber").wait_for()
    await b.page.locator("#scrubber").fill("1")  # the save of step 1 with its result
    assert "Fork from step 1" in await b.text("#fork h2")
    await b.page.select_option("#fork-call", "call_0_0")
    await b.page.fill("#fork-result", '{"city": "Lisbon", "sky": "rain"}')
    await b.page.click("#fork-form button[type=submit]")
    await b.page.wait_for_url("**/#/session/trip-1.fork-1?forked_from=trip-1")
    await b.page.locator("#session-head h1", has_text="in-progress").wait_for()
    result = await b.text('#timeline .call[data-call="call_0_0"] .result')
    assert json.loads(result.removeprefix("→ "))["sky"] == "rain"

    await b.page.click("#compare-with-source")
    await b.page.locator("#diverged", has_text="They diverge at step 1.").wait_for()
    assert await b.page.locator(".side-by-side .step.diverged").count() == 2
    assert (
        "rain"
        in await b.page.locator(".side-by-side section")
        .nth(1)
        .locator(".step.diverged .result")
        .inner_text()
    )
    assert "2 vs 1" in await b.text("#drift-summary")
    await b.shot("compare")
    source = await console.app.get("trip-1")
    assert source.status == pb.CHECKPOINT_STATUS_FINISHED  # untouched (R40)


async def test_a_resume_that_drifted_shows_the_agents_diff(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    await crashed_run(console, "drift-1")
    other = agent(
        [{"text": "done"}],
        ["get_weather", "get_forecast"],
        instructions="You are a travel agent.",
        model="scripted:trip-v2",
    )
    log = await console.app.run(
        "drift-1", None, other, {"get_weather": lambda a: {"sky": "sunny"}}, resume=True
    )
    assert "agent.drift" in log.types and log.done is not None, log.types
    b = await open_browser(console)
    await b.goto("/#/session/drift-1")
    drift = b.page.locator("#drift .drift")
    await drift.wait_for()
    text = await drift.inner_text()
    assert "scripted:trip → scripted:trip-v2" in text and "get_forecast" in text

    # The sessions list marks the session whose last resume drifted, and no other.
    await console.finished_trip("calm-1")
    await b.goto("/#/sessions")
    badge = b.page.locator('#sessions tr[data-session="drift-1"] .drift-badge')
    await badge.wait_for()
    assert await badge.inner_text() == "drifted"
    title = await badge.get_attribute("title")
    assert "scripted:trip → scripted:trip-v2" in title and "tools added: get_forecast" in title
    await b.page.locator('#sessions tr[data-session="calm-1"]').wait_for()
    assert await b.page.locator('#sessions tr[data-session="calm-1"] .drift-badge').count() == 0
    await b.shot("sessions-drift")
    # The drift shows after a reload too, from the checkpoint's last_drift.
    await b.goto("/#/session/drift-1")
    await b.page.locator("#drift .drift", has_text="the last resume warned").wait_for()


async def test_a_resume_refused_for_drift_shows_the_diff(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    await crashed_run(console, "strict-1")
    strict = agent(
        [{"text": "done"}],
        ["get_weather"],
        instructions="You are a stricter travel agent.",
        model="scripted:trip-v3",
        on_agent_drift=pb.AGENT_DRIFT_POLICY_ERROR,
    )
    log = await console.app.run("strict-1", None, strict, resume=True)
    assert log.reason == "AGENT_DRIFT", log.types
    b = await open_browser(console)
    await b.goto("/#/session/strict-1")  # a page opened after the refusal: it is in the event log
    refused = b.page.locator("#drift .drift.refused")
    await refused.wait_for()
    text = await refused.inner_text()
    assert "Resume refused: agent drifted" in text and "scripted:trip → scripted:trip-v3" in text
    assert "instructions" in text
    assert await b.page.locator('#events li[data-type="agent.drift"]').count() == 1
    await b.shot("session-drift-refused")

    # The app's own agent resumes: the refusal is past, the page no longer shows it.
    done = await console.app.run(
        "strict-1", None, trip_agent(), {"get_weather": lambda a: {"sky": "sunny"}}, resume=True
    )
    assert done.done is not None
    await b.until("document.querySelectorAll('#events li[data-type=\"run.done\"]').length === 1")
    await b.until("document.querySelector('#drift .drift') === null")

    # A page already open sees a refusal as it is recorded (Watch hands it on live).
    await crashed_run(console, "strict-2")
    await b.goto("/#/session/strict-2")
    await b.until("document.querySelector('#live-state')?.textContent === 'live'")
    log = await console.app.run("strict-2", None, strict, resume=True)
    assert log.reason == "AGENT_DRIFT", log.types
    await b.page.locator(
        "#drift .drift.refused", has_text="scripted:trip → scripted:trip-v3"
    ).wait_for()


async def test_the_token_is_refused_then_accepted(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    token = "console-token-7c1d"
    console = await make_console(token=token, auth_tokens=(Secret(token),))
    await console.finished_trip("trip-1")
    b = await open_browser(console)
    await b.goto("/")
    await b.page.locator("#login").wait_for()
    assert await b.page.locator("#sessions").count() == 0
    await b.shot("login")
    await b.page.fill("#token", "wrong-token")
    await b.page.click("#login button[type=submit]")
    await b.page.locator("#login .error", has_text="TOKEN_INVALID").wait_for()
    await b.page.fill("#token", token)
    await b.page.click("#login button[type=submit]")
    await b.page.locator('#sessions tr[data-session="trip-1"]').wait_for()
    # Kept for the tab, sent as a header: never in a URL.
    assert all(token not in url for url in b.urls), b.urls
    assert await b.page.evaluate("sessionStorage.getItem('luoshod.token')") == token
    await b.page.click("#signout")
    await b.page.locator("#login").wait_for()


async def test_a_session_shows_its_queue_and_removes_an_input(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    """R69 in the console: the inputs queued on a paused session, in order, with their mode
    and text; one queued after the page opened appears; Remove dequeues it (its caller's
    stream ends with INPUT_DEQUEUED)."""
    import grpc

    from tests.support.harness import error_info, user

    console = await make_console()
    await console.paused_refund("queued-1")
    spec = (await console.app.get("queued-1")).agent

    async def enqueue(text: str, rid: str) -> Any:
        stream = console.app.stub.Execute(
            pb.ExecuteRequest(
                session_id="queued-1",
                input=[user(text)],
                agent=spec,
                if_busy=pb.IF_BUSY_ENQUEUE,
                request_id=rid,
            )
        )
        assert (await stream.read()).event.type == "input.queued"
        return stream

    first = await enqueue("and refund order 43", "later-1")
    b = await open_browser(console)
    await b.goto("/#/session/queued-1")
    await b.page.locator('#queue-list li[data-request="later-1"]').wait_for()
    item = await b.text('#queue-list li[data-request="later-1"]')
    assert "enqueue" in item and "and refund order 43" in item
    second = await enqueue("then close the ticket", "later-2")
    await b.until(
        "document.querySelectorAll('#queue-list li').length === 2"
    )  # read again while open
    assert await b.page.locator("#queue-list li").evaluate_all(
        "ls => ls.map(l => l.dataset.request)"
    ) == ["later-1", "later-2"]
    await b.page.click('#queue-list li[data-request="later-1"] .dequeue')
    await b.page.locator("#queue-note", has_text="Removed later-1").wait_for()
    await b.until("document.querySelectorAll('#queue-list li').length === 1")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await first.read()
    assert error_info(err.value)[:2] == (grpc.StatusCode.ABORTED, "INPUT_DEQUEUED")
    shown = await console.app.stub.GetSession(pb.GetSessionRequest(session_id="queued-1"))
    assert [q.request_id for q in shown.queue] == ["later-2"]
    second.cancel()


async def test_the_session_page_cli_and_api_say_why_a_model_call_failed(
    make_console: ConsoleFactory,
    open_browser: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A provider that refuses the continuation (HTTP 400): the run ends PROVIDER_REJECTED,
    and GetSession's last_model_failure reaches the API's JSON, `sessions show` and the
    session page, with the provider's status and message."""
    from luoshod.cli import main
    from tests.support.model_fakes import FakeAnthropic, Fault, turn
    from tests.support.providers import KEY_ENV, provider_toml

    fake = await FakeAnthropic().start()
    try:
        monkeypatch.setenv(KEY_ENV, fake.key)
        config = tmp_path / "providers.toml"
        config.write_text(provider_toml(fake))
        fake.script = [turn("", ("lookup", {}))]
        fake.rule = lambda seen: (
            Fault(400, "invalid_request_error", message="Expected `thinking`")
            if seen.turn
            else None
        )
        console = await make_console(config_file=config)
        spec = pb.AgentSpec(
            model="llm:test-model",
            tools=[pb.ToolSpec(name="lookup", input_schema_json='{"type":"object"}')],
        )
        log = await console.app.run("refused-1", "look it up", spec, {"lookup": lambda a: "found"})
        assert log.error is not None and len(fake.requests) == 2

        status, got = await console.get("/api/v1/sessions/refused-1")
        assert status == 200 and got["last_model_failure"]["reason"] == "PROVIDER_REJECTED"
        assert got["last_model_failure"]["metadata"]["status"] == "400"

        code = await asyncio.to_thread(
            main, ["sessions", "show", "refused-1", "--address", console.daemon.addresses[0]]
        )
        out = capsys.readouterr().out
        assert code == 0
        assert "last model call failed: PROVIDER_REJECTED (HTTP 400 invalid_request_error)" in out
        assert "Expected `thinking`" in out and "no retry can fix it" in out

        b = await open_browser(console)
        await b.goto("/#/session/refused-1")
        text = await b.text("#model-failure")
        assert "PROVIDER_REJECTED" in text and "HTTP 400" in text and "Expected `thinking`" in text
        assert "No retry can fix this" in text
        await b.shot("model-failure")
    finally:
        await fake.close()


WIDTHS = (360, 768, 1440)
#: The narrowest a column of a page may be before its words wrap one per line.
MIN_COLUMN_PX = 220
_NO_OVERFLOW = """() => {
  const doc = document.documentElement;
  const wide = [...document.querySelectorAll("main *")].filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.right > doc.clientWidth + 1
      && !e.closest(".table-wrap") && !e.closest(".events");
  }).map((e) => {
    const right = Math.round(e.getBoundingClientRect().right);
    return `${e.tagName.toLowerCase()}#${e.id}.${e.className}: right ${right}`;
  });
  const narrow = [...document.querySelectorAll(".columns > *, .side-by-side > *, .inbox > *")]
    .filter((e) => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().width < %d)
    .map((e) => {
      const width = Math.round(e.getBoundingClientRect().width);
      return `${e.tagName.toLowerCase()}.${e.className}: ${width}px`;
    });
  return { scroll: doc.scrollWidth - doc.clientWidth, wide: wide.slice(0, 5), narrow };
}"""
# %-formatting: an f-string would double every brace of the JavaScript.
NO_OVERFLOW = _NO_OVERFLOW % MIN_COLUMN_PX  # noqa: UP031


async def test_every_page_fits_every_width_in_every_state(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    """Each page and state at 360, 768 and 1440 px: nothing wider than the page (a table
    scrolls inside its box), no column narrower than MIN_COLUMN_PX; screenshots of each
    (docs/console/ with LUOSHOD_SCREENSHOTS=1). The states: an empty list, a list, a filter
    the daemon refuses (the form stays), an unknown session (said so, and followed in case
    it starts), a finished session (nothing to resume or cancel), a new fork (no events yet),
    the inbox with a call the app must run (a way out), and a comparison."""
    empty = await make_console()
    console = await make_console()
    await console.finished_trip("trip-1")
    for n in range(3):
        await console.finished_trip(f"a-rather-long-session-id-for-a-narrow-screen-{n}")
    await console.paused_refund("refund-1")
    fork = await console.app.stub.Fork(pb.ForkRequest(session_id="trip-1", from_step=1))
    daily = pb.ScheduleSpec(
        name="a-rather-long-schedule-name-for-a-narrow-screen",
        cron=pb.ScheduleCron(expression="0 9 * * 1-5", time_zone="America/Argentina/Buenos_Aires"),
        agent=agent([{"text": "ok"}]),
        input=[pb.Message(role=pb.ROLE_USER, content="go")],
    )
    await console.app.stub.CreateSchedule(pb.CreateScheduleRequest(spec=daily))
    pages = {
        "sessions-empty": (empty, "/#/sessions", "#sessions-note"),
        "sessions": (console, "/#/sessions", "#sessions tbody tr"),
        "sessions-bad-filter": (console, "/#/sessions?id=bad%20id!", "#sessions-note .error"),
        "session-not-found": (console, "/#/session/nobody-here", "#not-found"),
        "session": (console, "/#/session/trip-1", "#timeline .step"),
        "session-fork": (console, f"/#/session/{fork.session_id}", "#no-events"),
        "approvals": (console, "/#/approvals", "#inbox .approval"),
        "compare": (console, f"/#/compare?a=trip-1&b={fork.session_id}", ".side-by-side"),
        "schedules-empty": (empty, "/#/schedules", "#schedules-empty"),
        "schedules": (console, "/#/schedules", "#schedules tbody tr[data-schedule]"),
    }
    problems = []
    for width in WIDTHS:
        for name, (c, path, ready) in pages.items():
            b = await open_browser(c)
            await b.page.set_viewport_size({"width": width, "height": 900})
            await b.goto(path)
            await b.page.locator(ready).first.wait_for()
            found = await b.page.evaluate(NO_OVERFLOW)
            if found["scroll"] > 0 or found["wide"] or found["narrow"]:
                problems.append(f"{name} at {width}px: {found}")
            if width == 360:
                await b.shot(f"{name}-360")
            await b.page.context.close()
    assert not problems, "\n".join(problems)

    # The states themselves, at one width.
    b = await open_browser(console)
    await b.goto("/#/sessions?id=bad%20id!")
    assert (
        await b.page.locator("#filter-id").input_value() == "bad id!"
    )  # the form stays, to correct
    await b.goto("/#/session/nobody-here")
    assert "this page shows it if it starts" in await b.text("#not-found")  # watched, and said so
    await b.goto("/#/session/trip-1")
    await b.page.locator("#resume").wait_for()
    assert (
        await b.page.locator("#resume").is_disabled()
        and await b.page.locator("#cancel").is_disabled()
    )
    assert "History (" in await b.text("#history h2")
    await b.goto("/#/sessions?size=2")
    await b.page.locator("#page-next").click()
    await b.page.wait_for_url("**/#/sessions?size=2&page=*")
    await b.goto("/#/approvals")
    card = b.page.locator('#inbox .approval[data-session="refund-1"]')
    await card.locator("button.approve").click()
    await card.locator("button.leave").click()  # no app answers: leave the call to it
    await card.locator(".outcome .result", has_text="left to the app").wait_for()
    await asyncio.sleep(0.5)
    cp = await console.app.get("refund-1")
    assert cp.status == pb.CHECKPOINT_STATUS_IN_PROGRESS  # the app's next Resume runs refund


async def test_r83_the_session_page_shows_the_structured_answer(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    schema = {"type": "object", "required": ["city", "sights"]}
    answer = '{"sights": ["Belém", "Alfama"], "city": "Lisbon", "note": "' + "long " * 40 + '"}'
    spec = agent([{"text": answer}], [], output_schema_json=json.dumps(schema))
    log = await console.app.run("structured-1", "Where to?", spec)
    assert log.done is not None and log.done.output_json
    plain = await console.app.run("plain-1", "Where to?", agent([{"text": answer}], []))
    assert plain.done is not None and plain.done.finish_reason == pb.FINISH_REASON_STOP
    b = await open_browser(console)
    await b.goto("/#/session/structured-1")
    box = b.page.locator("#structured-answer pre.json")
    await box.wait_for()
    shown = await box.inner_text()
    # Pretty-printed, keys sorted as output_json has them, the same value.
    assert shown == json.dumps(json.loads(answer), indent=2, sort_keys=True, ensure_ascii=False)
    assert json.loads(shown) == json.loads(log.done.output_json)
    # It fits a narrow screen (a long line scrolls inside its box).
    await b.page.set_viewport_size({"width": 360, "height": 900})
    found = await b.page.evaluate(NO_OVERFLOW)
    assert found["scroll"] == 0 and not found["wide"], found
    await b.shot("session-structured-answer-360")
    # Without an output schema there is none.
    await b.goto("/#/session/plain-1")
    await b.page.locator("#session-head h1", has_text="finished").wait_for()
    assert await b.page.locator("#structured-answer").count() == 0


async def test_r87_the_schedules_page_pauses_resumes_and_triggers(
    make_console: ConsoleFactory, open_browser: Any
) -> None:
    console = await make_console()
    spec = pb.ScheduleSpec(
        name="daily-report",
        cron=pb.ScheduleCron(expression="0 9 * * 1-5", time_zone="Europe/Berlin"),
        agent=agent([{"text": "Report sent."}], [], model="scripted:report"),
        input=[pb.Message(role=pb.ROLE_USER, content="Write today's report.")],
    )
    await console.app.stub.CreateSchedule(pb.CreateScheduleRequest(spec=spec))
    b = await open_browser(console)
    await b.goto("/#/schedules")
    row = b.page.locator('#schedules tr[data-schedule="daily-report"]')
    await row.wait_for()
    assert "0 9 * * 1-5 (Europe/Berlin)" in await row.inner_text()
    await row.locator("button.pause").click()
    await b.page.locator(
        '#schedules tr[data-schedule="daily-report"][data-paused="true"]'
    ).wait_for()
    assert (await console.app.stub.ListSchedules(pb.ListSchedulesRequest())).schedules[0].paused
    await b.page.locator('#schedules tr[data-schedule="daily-report"] button.resume').click()
    await b.page.locator(
        '#schedules tr[data-schedule="daily-report"][data-paused="false"]'
    ).wait_for()
    await b.page.locator('#schedules tr[data-schedule="daily-report"] button.trigger').click()
    fired = b.page.locator("#schedules-outcome .result a")
    await fired.wait_for()
    sid = await fired.inner_text()
    assert sid.startswith("schedule:daily-report:")
    await b.shot("schedules")
    await fired.click()
    await b.page.locator("#events li[data-type='run.done']").wait_for()
