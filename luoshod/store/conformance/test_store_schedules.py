"""R87: schedules kept by the store (drivers declaring SCHEDULES). A schedule is a named
record created once (of two creations exactly one wins), read, listed by name, changed
only by compare-and-set on its version (of writers racing from one version exactly one
wins: the claim of a fire), deleted once, durable across a reopen, and shared by two
stores (processes) on one store."""

from __future__ import annotations

import asyncio

import pytest

from luoshod.domain import StoredSchedule
from luoshod.store import Capability, Store

from .backend import Backend


async def test_r87_a_schedule_is_created_once_and_read_back(
    backend: Backend, driver: Store
) -> None:
    backend.require(Capability.SCHEDULES)
    assert await driver.get_schedule("daily") is None
    made = await driver.create_schedule("daily", b"\x00def\xff")
    assert made == StoredSchedule("daily", 1, b"\x00def\xff")
    assert await driver.get_schedule("daily") == made
    assert await driver.create_schedule("daily", b"other") is None
    assert await driver.get_schedule("daily") == made
    with pytest.raises(ValueError):
        await driver.create_schedule("", b"x")


async def test_r87_schedules_are_listed_by_name(backend: Backend, driver: Store) -> None:
    backend.require(Capability.SCHEDULES)
    assert await driver.list_schedules() == []
    for name in ("b", "a", "c.d:e"):
        await driver.create_schedule(name, name.encode())
    listed = await driver.list_schedules()
    assert [(s.name, s.data) for s in listed] == [("a", b"a"), ("b", b"b"), ("c.d:e", b"c.d:e")]


async def test_r87_an_update_is_a_compare_and_set_on_the_version(
    backend: Backend, driver: Store
) -> None:
    backend.require(Capability.SCHEDULES)
    await driver.create_schedule("s", b"v1")
    second = await driver.update_schedule("s", b"v2", version=1)
    assert second == StoredSchedule("s", 2, b"v2")
    assert await driver.update_schedule("s", b"stale", version=1) is None
    assert await driver.get_schedule("s") == second
    assert await driver.update_schedule("missing", b"x", version=1) is None
    assert await driver.get_schedule("missing") is None


async def test_r87_of_racing_updates_from_one_version_exactly_one_wins(
    backend: Backend, driver: Store
) -> None:
    backend.require(Capability.SCHEDULES)
    await driver.create_schedule("s", b"v1")
    won = await asyncio.gather(
        *(driver.update_schedule("s", f"w{i}".encode(), version=1) for i in range(8))
    )
    winners = [w for w in won if w is not None]
    assert len(winners) == 1
    assert await driver.get_schedule("s") == winners[0]


async def test_r87_a_schedule_is_deleted_once(backend: Backend, driver: Store) -> None:
    backend.require(Capability.SCHEDULES)
    await driver.create_schedule("s", b"x")
    both = await asyncio.gather(driver.delete_schedule("s"), driver.delete_schedule("s"))
    assert sorted(both) == [False, True]
    assert await driver.get_schedule("s") is None
    assert await driver.list_schedules() == []
    assert await driver.update_schedule("s", b"y", version=1) is None
    # The name is free again, at version 1.
    assert await driver.create_schedule("s", b"z") == StoredSchedule("s", 1, b"z")


async def test_r87_schedules_survive_a_reopen(backend: Backend, driver: Store) -> None:
    backend.require(Capability.SCHEDULES)
    backend.require(Capability.DURABLE)
    await driver.create_schedule("s", b"one")
    await driver.update_schedule("s", b"two", version=1)
    await driver.close()
    again = await backend.open()
    assert await again.get_schedule("s") == StoredSchedule("s", 2, b"two")


async def test_r87_two_stores_on_one_store_claim_each_version_once(
    backend: Backend, driver: Store
) -> None:
    backend.require(Capability.SCHEDULES)
    backend.require(Capability.MULTI_PROCESS)
    other = await backend.open()
    made = await asyncio.gather(driver.create_schedule("s", b"a"), other.create_schedule("s", b"b"))
    assert sum(m is not None for m in made) == 1
    for version in range(1, 11):
        won = await asyncio.gather(
            driver.update_schedule("s", b"from driver", version=version),
            other.update_schedule("s", b"from other", version=version),
        )
        assert sum(w is not None for w in won) == 1
    assert (await other.get_schedule("s")) == (await driver.get_schedule("s"))
    assert (await driver.get_schedule("s") or StoredSchedule("", 0, b"")).version == 11
