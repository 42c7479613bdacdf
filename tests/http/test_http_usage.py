"""Usage over the JSON API (R78), against a real daemon over real HTTP: the listing's total
usage and its costliest-first order, a bad order flag answered by its reason, and the
session's usage by model and each turn's model and usage."""

from __future__ import annotations

from tests.support.console import Console, assert_error
from tests.support.harness import agent

API = "/api/v1"


def priced(cost: float, model: str = "scripted:priced") -> object:
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": cost}
    return agent([{"text": "done", "usage": usage}], [], model=model)


async def test_r78_the_json_api_lists_by_cost_and_shows_usage(console: Console) -> None:
    for sid, cost in {"h-a": 0.5, "h-b": 2.0, "h-c": 1.0}.items():
        await console.app.run(sid, "go", priced(cost))
    status, body = await console.get(
        f"{API}/sessions", params={"costliest_first": "true", "page_size": "2"}
    )
    assert status == 200
    assert [s["session_id"] for s in body["sessions"]] == ["h-b", "h-c"]
    assert body["sessions"][0]["total_usage"]["cost_usd"] == 2.0
    status, body = await console.get(
        f"{API}/sessions",
        params={"costliest_first": "true", "page_size": "2", "page_token": body["next_page_token"]},
    )
    assert [s["session_id"] for s in body["sessions"]] == ["h-a"]

    status, body = await console.get(f"{API}/sessions", params={"costliest_first": "maybe"})
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_COSTLIEST_FIRST")
    status, body = await console.get(
        f"{API}/sessions", params={"costliest_first": "true", "newest_first": "true"}
    )
    assert_error(status, body, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")

    status, body = await console.get(f"{API}/sessions/h-b")
    assert status == 200
    assert body["usage_by_model"]["scripted:priced"]["cost_usd"] == 2.0
    (turn,) = [m for m in body["checkpoint"]["messages"] if m["role"] == "ROLE_ASSISTANT"]
    assert turn["model"] == "scripted:priced" and turn["usage"]["prompt_tokens"] == "100"
    status, body = await console.get(f"{API}/sessions/h-b/history")
    assert status == 200 and body["entries"][0]["model"] == "scripted:priced"
