"""R68, R69: the input queue kept with a session (drivers declaring QUEUE). Inputs are
ordered by the position the store picks (last, or first with ``front``), idempotent by
request id, removable one by one (exactly one of two removals wins), listed by
``queued_sessions``, cleared by ``delete``, kept apart from the checkpoint, durable
across a reopen, and ordered across two stores (processes) sharing one store. A save or an
event append queues inputs in its own transaction (``enqueue=``: the webhooks' outbox
entry of an event is written with the event, so no crash falls between them), and a
queued input's data is replaced in place (a delivery's attempts, kept with it)."""

from __future__ import annotations

import asyncio

import pytest

from luoshod.domain import Enqueue
from luoshod.errors import LeaseLost
from luoshod.store import Capability, Store

from .backend import Backend
from .helpers import FakeClock, SessionWriter, event_range

NOW = 1_700_000_000.25


async def _ids(driver: Store, sid: str) -> list[str]:
    return [q.request_id for q in await driver.queued_inputs(sid)]


async def test_r69_queued_inputs_keep_their_order_and_bytes(
    backend: Backend, driver: Store
) -> None:
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
    assert (queued[1].data, queued[1].enqueued_at, queued[1].session_id) == (
        b"\x00one\xff",
        NOW,
        "s",
    )
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
        ("r1", b"one"),
        ("r2", b"two"),
    ]


async def test_r69_two_stores_on_one_store_queue_in_one_order(
    backend: Backend, driver: Store
) -> None:
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
        driver.enqueue_input("s", "dup", b"1", now=NOW),
        other.enqueue_input("s", "dup", b"1", now=NOW),
    )
    assert [q.request_id for q in await driver.queued_inputs("s")].count("dup") == 1


async def test_a_save_queues_inputs_in_its_own_transaction(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    await driver.enqueue_input("_box", "old", b"0", now=NOW)
    writer = SessionWriter(driver, "s")
    await writer.save(
        enqueue=[Enqueue("_box", "e1", b"one", NOW + 1), Enqueue("_box", "e2", b"two", NOW + 2)]
    )
    queued = await driver.queued_inputs("_box")
    assert [(q.request_id, q.data, q.enqueued_at) for q in queued] == [
        ("old", b"0", NOW),
        ("e1", b"one", NOW + 1),
        ("e2", b"two", NOW + 2),
    ]
    # Idempotent by request id, as enqueue_input is: a retried save's entry is not queued twice.
    await writer.save(
        enqueue=[Enqueue("_box", "e1", b"other", NOW + 3), Enqueue("s", "own", b"x", NOW)]
    )
    assert await _ids(driver, "_box") == ["old", "e1", "e2"]
    assert (await driver.queued_inputs("_box"))[1].data == b"one"
    assert await _ids(driver, "s") == ["own"]  # any key: the session's own queue too
    # A refused save (another writer saved in between) queues nothing.
    stale = await driver.load("s")
    assert stale is not None
    await writer.save()
    stale.version += 1
    with pytest.raises(LeaseLost):
        await driver.save(
            stale, stored_messages=len(stale.messages), enqueue=[Enqueue("_box", "lost", b"", NOW)]
        )
    assert await _ids(driver, "_box") == ["old", "e1", "e2"]


async def test_an_event_append_queues_inputs_in_its_own_transaction(
    backend: Backend, driver: Store
) -> None:
    backend.require(Capability.QUEUE)
    backend.require(Capability.EVENT_LOG)
    await driver.append_events("s", event_range(1, 2), enqueue=[Enqueue("_box", "e1", b"one", NOW)])
    assert (await driver.read_events("s", after_seq=0, limit=10)).last == 2
    assert await _ids(driver, "_box") == ["e1"]
    await driver.append_events("s", [], enqueue=[Enqueue("_box", "e2", b"two", NOW)])  # no events
    assert await _ids(driver, "_box") == ["e1", "e2"]


async def test_a_fenced_off_append_queues_nothing(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    backend.require(Capability.EVENT_LOG)
    backend.require(Capability.LEASES)
    driver.clock = clock = FakeClock()
    old = await driver.acquire_lease("s", owner="a", ttl=10)
    clock.now += 20
    await driver.acquire_lease("s", owner="b", ttl=10)  # the expired lease is taken over
    with pytest.raises(LeaseLost):
        await driver.append_events(
            "s", event_range(1, 1), lease=old, enqueue=[Enqueue("_box", "e", b"", NOW)]
        )
    assert await driver.queued_inputs("_box") == []


async def test_queued_by_a_save_survives_a_reopen(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    backend.require(Capability.DURABLE)
    await SessionWriter(driver, "s").save(enqueue=[Enqueue("_box", "e1", b"one", NOW)])
    await driver.close()
    again = await backend.open()
    assert [(q.request_id, q.data) for q in await again.queued_inputs("_box")] == [("e1", b"one")]


async def test_a_queued_input_is_replaced_in_place(backend: Backend, driver: Store) -> None:
    backend.require(Capability.QUEUE)
    for i in range(3):
        await driver.enqueue_input("s", f"r{i}", b"x", now=NOW + i)
    before = await driver.queued_inputs("s")
    assert await driver.replace_queued_input("s", "r1", b"\x00attempt 2") is True
    after = await driver.queued_inputs("s")
    assert [q.request_id for q in after] == ["r0", "r1", "r2"]
    assert (after[1].data, after[1].position, after[1].enqueued_at) == (
        b"\x00attempt 2",
        before[1].position,
        before[1].enqueued_at,
    )
    assert after[0] == before[0] and after[2] == before[2]
    assert await driver.replace_queued_input("s", "unknown", b"y") is False
    assert await driver.replace_queued_input("other", "r1", b"y") is False
    assert await _ids(driver, "other") == []
