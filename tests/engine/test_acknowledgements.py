"""docs/reference/rules.md R54: a submitted result is acknowledged only once it is durable, in the
engine. The service answers ``SubmitToolResult`` ``ACCEPTED`` when the ``saved`` future it
handed over with the result is done (tests/processes/test_crash.py kills a real daemon right after
``ACCEPTED``); here the engine's side: which save settles it, and how."""

from __future__ import annotations

import asyncio
import json

from luoshod.domain import FinishReason, Role
from luoshod.errors import StoreFull
from tests.support.engine_harness import EngineHarness, agent, calls


def three_calls(**kw):  # type: ignore[no-untyped-def]
    return agent(
        [calls(("add", {"a": 1}), ("add", {"a": 2}), ("add", {"a": 3})), {"text": "ok"}], **kw
    )


def saved_results(cp) -> list[str]:  # type: ignore[no-untyped-def]
    return [m.tool_call_id for m in cp.messages if m.role is Role.TOOL]


async def test_r54_each_result_is_acknowledged_after_the_save_that_holds_it(
    h: EngineHarness,
) -> None:
    """With ``tool_concurrency`` 1 the next ``tool.call`` goes out as soon as a result
    arrives, before that result is saved; its acknowledgement waits for the save — for the
    turn's last result, the save that carries the next ``step.start``."""
    durable: list[str] = []  # the results the store holds, updated as each save returns
    store = h.store
    save = store.save

    async def tracked_save(cp, **kw):  # type: ignore[no-untyped-def]
        await save(cp, **kw)
        durable[:] = saved_results(cp)

    acked: dict[str, list[str]] = {}  # call id -> what was durable when it was acknowledged
    acks: list[asyncio.Future[None]] = []

    def answer(e, port, control) -> None:  # type: ignore[no-untyped-def]
        if e.type == "tool.call":
            call = e.data["call"]
            ack: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            ack.add_done_callback(lambda f, cid=call.id: acked.setdefault(cid, list(durable)))
            acks.append(ack)
            assert port.deliver(
                call.id, json.dumps(json.loads(call.arguments_json)["a"]), saved=ack
            )

    store.save = tracked_save  # type: ignore[method-assign]
    try:
        log = await h.run("r54", "go", three_calls(), on_event=answer)
    finally:
        del store.save
    assert log.done["finish_reason"] is FinishReason.STOP
    assert all(a.done() and a.exception() is None for a in acks) and len(acks) == 3
    for call_id, seen in acked.items():
        assert call_id in seen, f"{call_id} acknowledged before it was saved (store held {seen})"


async def test_r54_a_save_that_fails_fails_the_acknowledgement(h: EngineHarness) -> None:
    store = h.store
    save = store.save

    async def full_at_the_result(cp, **kw):  # type: ignore[no-untyped-def]
        if saved_results(cp):
            raise StoreFull("no space left for the result")
        await save(cp, **kw)

    acks: list[asyncio.Future[None]] = []

    def answer(e, port, control) -> None:  # type: ignore[no-untyped-def]
        if e.type == "tool.call":
            acks.append(asyncio.get_running_loop().create_future())
            port.deliver(e.data["call"].id, "1", saved=acks[-1])

    store.save = full_at_the_result  # type: ignore[method-assign]
    try:
        log = await h.run("r54f", "go", three_calls(), on_event=answer)
    finally:
        del store.save
    assert isinstance(log.error, StoreFull)
    assert acks and isinstance(acks[0].exception(), StoreFull)
    assert saved_results(await h.get("r54f")) == []
