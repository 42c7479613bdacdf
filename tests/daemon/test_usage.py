"""Usage where a user looks, over gRPC on every store (R78): each turn's model and usage
in its model.turn event, the transcript, History and Compare; the totals and the usage by
model in GetSession; the session's total in ListSessions, which lists the costliest first
on request."""

from __future__ import annotations

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import Harness, agent, calls, error_info


def add(args):
    return args["a"] + 1


def turn(text: str, prompt: int, completion: int, cost: float, **kw: int) -> dict:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": cost, **kw}
    return {"text": text, "usage": usage}


def priced(cost: float) -> list[dict]:
    """A run of two turns whose costs add up to ``cost`` (binary fractions: exact sums)."""
    first = {**calls(("add", {"a": 1})), "usage": {"prompt_tokens": 50, "cost_usd": cost / 4}}
    last = turn("done", 70, 5, cost * 3 / 4, cached_input_tokens=40, reasoning_tokens=2)
    return [first, last]


async def test_r78_each_turn_shows_its_model_and_usage_everywhere(h: Harness) -> None:
    log = await h.run("u", "go", agent(priced(1.0), model="scripted:metered"), {"add": add})
    turns = [e.model_turn for e in log.of("model.turn")]
    assert [t.message.model for t in turns] == ["scripted:metered"] * 2
    assert [t.message.usage.cost_usd for t in turns] == [0.25, 0.75]
    assert turns[1].message.usage == turns[1].usage  # the event's usage is the turn's
    cp = await h.get("u")
    said = [m for m in cp.messages if m.role == pb.ROLE_ASSISTANT]
    assert said[1].usage == pb.Usage(
        prompt_tokens=70,
        completion_tokens=5,
        total_tokens=75,
        model_calls=1,
        cost_usd=0.75,
        cached_input_tokens=40,
        reasoning_tokens=2,
    )
    assert not any(m.HasField("usage") or m.model for m in cp.messages if m not in said)
    assert cp.total_usage == cp.usage and cp.usage.cost_usd == 1.0
    assert cp.usage.prompt_tokens == 120 and cp.usage.cached_input_tokens == 40

    got = await h.stub.GetSession(pb.GetSessionRequest(session_id="u"))
    assert dict(got.usage_by_model) == {"scripted:metered": cp.total_usage}

    history = await h.stub.History(pb.HistoryRequest(session_id="u", page_size=100))
    newest = history.entries[0]
    assert (newest.model, newest.usage.cost_usd, newest.total_usage.cost_usd) == (
        "scripted:metered",
        0.75,
        1.0,
    )
    assert {(e.model, e.usage.cost_usd) for e in history.entries} <= {
        ("scripted:metered", 0.25),
        ("scripted:metered", 0.75),
    }

    await h.run("v", "go", agent(priced(0.5), model="scripted:cheaper"), {"add": add})
    compared = await h.stub.Compare(pb.CompareRequest(session_id_a="u", session_id_b="v"))
    assert [(s.model, s.usage.cost_usd) for s in compared.a] == [
        ("scripted:metered", 0.25),
        ("scripted:metered", 0.75),
    ]
    assert [(s.model, s.usage.cost_usd) for s in compared.b] == [
        ("scripted:cheaper", 0.125),
        ("scripted:cheaper", 0.375),
    ]


async def test_r78_a_session_totals_its_runs_and_lists_by_cost(h: Harness) -> None:
    script = [turn("one", 10, 1, 0.5), turn("two", 20, 2, 1.5)]
    await h.run("b-two-runs", "first", agent(script))
    await h.run("b-two-runs", "second", agent(script))  # the second turn of the script
    cp = await h.get("b-two-runs")
    assert (cp.usage.cost_usd, cp.total_usage.cost_usd) == (1.5, 2.0)
    await h.run("a-cheap", "go", agent([turn("hi", 5, 1, 0.25)]))
    await h.run("c-dear", "go", agent([turn("hi", 5, 1, 4.0)]))
    await h.run("d-free", "go", agent([turn("hi", 5, 1, 0.0)]))

    listed = await h.stub.ListSessions(pb.ListSessionsRequest(page_size=10))
    costs = {s.session_id: s.total_usage.cost_usd for s in listed.sessions}
    assert costs == {"a-cheap": 0.25, "b-two-runs": 2.0, "c-dear": 4.0, "d-free": 0.0}
    assert {s.session_id: s.total_usage.model_calls for s in listed.sessions}["b-two-runs"] == 2

    seen, token = [], ""
    while True:
        page = await h.stub.ListSessions(
            pb.ListSessionsRequest(page_size=3, page_token=token, costliest_first=True)
        )
        seen += [s.session_id for s in page.sessions]
        token = page.next_page_token
        if not token:
            break
    assert seen == ["c-dear", "b-two-runs", "a-cheap", "d-free"]

    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.stub.ListSessions(pb.ListSessionsRequest(newest_first=True, costliest_first=True))
    code, reason, _ = error_info(err.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
