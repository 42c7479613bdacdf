"""R68, R69: the input queue kept with a session (drivers declaring QUEUE). Inputs are
ordered by the position the store picks (last, or first with ``front``), idempotent by
request id, removable one by one (exactly one of two removals wins), listed by
``queued_sessions``, cleared by ``delete``, kept apart from the checkpoint, durable
across a reopen, and ordered across two stores (processes) sharing one store."""

from __future__ import annotations

import asyncio

from luoshod.store import Capability, Store

from .backend import Backend
from .helpers import SessionWriter

NOW = 1_700_000_000.25


async def _ids(driver: Store, sid: str) -> list[str]:
    return [q.request_id for q in await driver.queued_inputs(sid)]


async def test_r69_queued_inputs_keep_their_order_and_bytes(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    assert await driver.queued_inputs("s") == []
    first = await driver.enqueue_input("s", "r1", b"\x00one\xff", now=NOW)
    await driver.enqueue_input("s", "r2", b"two", now=NOW + 1)
    await driver.enqueue_input("s", "r3", b"", now=NOW + 2)
    await driver.enqueue_input("s", "r0", b"urgent", front=True, now=NOW + 3)
    queued = await driver.queued_inputs("s")
    assert [q.request_id for q in queued] == ["r0", "r1", "r2", "r3"]
    assert [q.position for q in queued] == sorted(q.position for q in queued)
    assert len({q.position for q in queued}) == 4
    assert queued[1] == first
    assert (queued[1].data, queued[1].enqueued_at, queued[1].session_id) == (b"\x00one\xff", NOW, "s")
    assert queued[3].data == b""
    # Sessions are kept apart.
    assert await driver.queued_inputs("other") == []


async def test_r69_an_enqueue_is_idempotent_by_request_id(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    a = await driver.enqueue_input("s", "r1", b"one", now=NOW)
    await driver.enqueue_input("s", "r2", b"two", now=NOW)
    again = await driver.enqueue_input("s", "r1", b"other bytes", front=True, now=NOW + 9)
    assert again == a
    assert await _ids(driver, "s") == ["r1", "r2"]
    assert (await driver.queued_inputs("s"))[0].data == b"one"


async def test_r69_queued_inputs_are_removed_one_by_one(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    for i in range(4):
        await driver.enqueue_input("s", f"r{i}", b"x", now=NOW)
    assert await driver.remove_queued_input("s", "r1") is True
    assert await driver.remove_queued_input("s", "r1") is False
    assert await driver.remove_queued_input("s", "unknown") is False
    assert await driver.remove_queued_input("other", "r2") is False
    assert await _ids(driver, "s") == ["r0", "r2", "r3"]
    # Two concurrent removals of one input: exactly one wins.
    won = await asyncio.gather(*(driver.remove_queued_input("s", "r2") for _ in range(2)))
    assert sorted(won) == [False, True]
    # A removed id may be queued again, last.
    await driver.enqueue_input("s", "r1", b"again", now=NOW)
    assert await _ids(driver, "s") == ["r0", "r3", "r1"]


async def test_r69_queued_sessions_pages_in_id_order(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    for sid in ["c", "a", "b/2", "b", "é"]:
        await driver.enqueue_input(sid, "r1", b"x", now=NOW)
        await driver.enqueue_input(sid, "r2", b"x", now=NOW)
    seen, token = [], ""
    while True:
        page, token = await driver.queued_sessions(page_size=2, page_token=token)
        seen += page
        if not token:
            break
    assert seen == sorted(["c", "a", "b/2", "b", "é"])
    for rid in ("r1", "r2"):
        await driver.remove_queued_input("b", rid)
    assert (await driver.queued_sessions(page_size=10, page_token=""))[0] == ["a", "b/2", "c", "é"]


async def test_r69_the_queue_is_apart_from_the_checkpoint_and_goes_with_delete(
    backend: Backend, driver: Store
) -> None:
    backend.require(Capability.QUEUE)
    await driver.enqueue_input("q", "r1", b"x", now=NOW)
    assert await driver.load("q") is None  # queueing writes no checkpoint
    writer = SessionWriter(driver, "q")
    await writer.save()
    await driver.enqueue_input("q", "r2", b"y", now=NOW)
    await writer.save()  # a save leaves the queue alone
    assert await _ids(driver, "q") == ["r1", "r2"]
    assert await driver.delete("q", keep_history=True, keep_queue=True)
    assert await _ids(driver, "q") == ["r1", "r2"]  # a rollback's delete keeps the queue
    await driver.delete("q", keep_history=True)  # no checkpoint left: the queue goes still
    assert await driver.queued_inputs("q") == []
    assert (await driver.queued_sessions(page_size=10, page_token=""))[0] == []


async def test_r69_queued_inputs_survive_a_reopen(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    backend.require(Capability.DURABLE)
    await driver.enqueue_input("s", "r1", b"one", now=NOW)
    await driver.enqueue_input("s", "r2", b"two", now=NOW)
    await driver.close()
    again = await backend.open()
    assert [(q.request_id, q.data) for q in await again.queued_inputs("s")] == [
        ("r1", b"one"), ("r2", b"two")
    ]


async def test_r69_two_stores_on_one_store_queue_in_one_order(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    backend.require(Capability.MULTI_PROCESS)
    other = await backend.open()
    await asyncio.gather(
        *(
            (driver if i % 2 else other).enqueue_input("s", f"r{i:02d}", b"x", now=NOW)
            for i in range(20)
        )
    )
    a, b = await driver.queued_inputs("s"), await other.queued_inputs("s")
    assert a == b
    assert sorted(q.request_id for q in a) == [f"r{i:02d}" for i in range(20)]
    assert len({q.position for q in a}) == 20
    # The same id from both at once: queued once.
    await asyncio.gather(
        driver.enqueue_input("s", "dup", b"1", now=NOW), other.enqueue_input("s", "dup", b"1", now=NOW)
    )
    assert [q.request_id for q in await driver.queued_inputs("s")].count("dup") == 1
