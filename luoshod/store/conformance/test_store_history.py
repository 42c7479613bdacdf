"""The history ring (docs/reference/rules.md R35–R39), for every driver that declares HISTORY."""

from __future__ import annotations

import pytest
import pytest_asyncio

from luoshod.domain import Status
from luoshod.store import Capability, Store

from .backend import Backend
from .helpers import SessionWriter


@pytest_asyncio.fixture
async def history_driver(backend: Backend) -> Store:
    backend.require(Capability.HISTORY)
    return await backend.open()


async def test_history_is_refused_unless_declared(backend: Backend, driver: Store) -> None:
    await SessionWriter(driver, "s").save()
    if Capability.HISTORY in backend.capabilities:
        assert len(await driver.history("s")) == 1
    else:
        with pytest.raises(NotImplementedError):
            await driver.history("s")


async def test_r35_every_save_appends_an_entry_newest_first(history_driver: Store) -> None:
    w = SessionWriter(history_driver, "s")
    statuses = [Status.IN_PROGRESS, Status.AWAITING_APPROVAL, Status.IN_PROGRESS, Status.FINISHED]
    for status in statuses:
        await w.save(add=2, status=status)
    entries = await history_driver.history("s")
    assert [e.checkpoint for e in entries] == w.snapshots[::-1]
    assert [e.status for e in entries] == statuses[::-1]
    assert [e.step for e in entries] == [cp.step_index for cp in w.snapshots[::-1]]
    assert [e.saved_at for e in entries] == [cp.updated_at for cp in w.snapshots[::-1]]


async def test_r35_default_limit_is_50(history_driver: Store) -> None:
    w = SessionWriter(history_driver, "s")
    for _ in range(52):
        await w.save()
    entries = await history_driver.history("s")
    assert [e.checkpoint for e in entries] == w.snapshots[:-51:-1]


async def test_r35_limit_zero_keeps_none(backend: Backend) -> None:
    backend.require(Capability.HISTORY)
    store = await backend.open(history_limit=0)
    w = SessionWriter(store, "s")
    for _ in range(3):
        await w.save(add=2)
    assert await store.history("s") == []
    assert await store.load("s") == w.snapshots[-1]


async def test_r36_two_saves_of_one_step_make_two_entries(history_driver: Store) -> None:
    w = SessionWriter(history_driver, "s")
    await w.save(step=1)  # before the turn's tools
    await w.save(step=1)  # with their results (R8)
    entries = await history_driver.history("s")
    assert [e.step for e in entries] == [1, 1]
    assert [e.checkpoint for e in entries] == w.snapshots[::-1]


async def test_r36_past_the_limit_the_oldest_go(backend: Backend) -> None:
    backend.require(Capability.HISTORY)
    store = await backend.open(history_limit=3)
    w = SessionWriter(store, "s")
    for _ in range(7):
        await w.save(add=2)
    entries = await store.history("s")
    assert [e.checkpoint for e in entries] == w.snapshots[:-4:-1]


async def test_r37_limit_returns_the_newest_n(history_driver: Store) -> None:
    w = SessionWriter(history_driver, "s")
    for _ in range(5):
        await w.save()
    newest = [e.checkpoint for e in await history_driver.history("s", limit=2)]
    assert newest == w.snapshots[:-3:-1]
    assert len(await history_driver.history("s", limit=10)) == 5
    assert await history_driver.history("s", limit=0) == []


async def test_r37_unknown_session_has_an_empty_history(history_driver: Store) -> None:
    assert await history_driver.history("nobody") == []


async def test_r38_sessions_are_kept_apart(history_driver: Store) -> None:
    a, b = SessionWriter(history_driver, "a"), SessionWriter(history_driver, "b")
    for _ in range(3):
        await a.save(add=2)
        await b.save(add=1)
    await history_driver.delete("b")
    assert [e.checkpoint for e in await history_driver.history("a")] == a.snapshots[::-1]
    assert await history_driver.history("b") == []
    assert await history_driver.load("a") == a.snapshots[-1]


async def test_r38_delete_clears_the_history(history_driver: Store) -> None:
    w = SessionWriter(history_driver, "s")
    for _ in range(3):
        await w.save()
    assert await history_driver.delete("s")
    assert await history_driver.history("s") == []


async def test_r38_keep_history_keeps_it_and_it_keeps_growing(backend: Backend) -> None:
    backend.require(Capability.HISTORY)
    store = await backend.open(history_limit=4)
    w = SessionWriter(store, "s")
    for _ in range(3):
        await w.save(add=2)
    assert await store.delete("s", keep_history=True)
    assert await store.load("s") is None
    assert [e.checkpoint for e in await store.history("s")] == w.snapshots[::-1]
    w.restart()
    w.messages = []
    for _ in range(2):
        await w.save(add=1)
    entries = await store.history("s")
    # The new run's saves (versions 1, 2) over the old ones, still within the limit of 4.
    assert [e.checkpoint for e in entries] == w.snapshots[:-5:-1]
    assert [e.checkpoint.version for e in entries] == [2, 1, 3, 2]
    # Deleting again without keep_history clears everything.
    await store.delete("s")
    assert await store.history("s") == []


async def test_r38_delete_of_a_kept_history_only_session(history_driver: Store) -> None:
    w = SessionWriter(history_driver, "s")
    await w.save()
    await history_driver.delete("s", keep_history=True)
    assert await history_driver.delete("s") is False  # no checkpoint ...
    assert await history_driver.history("s") == []  # ... but the history goes


async def test_r39_load_returns_only_the_latest(history_driver: Store) -> None:
    w = SessionWriter(history_driver, "s")
    for _ in range(4):
        await w.save(add=2)
    assert await history_driver.load("s") == w.snapshots[-1]
    assert len(await history_driver.history("s")) == 4


async def test_r35_a_sessions_own_history_limit_overrides_the_stores(backend: Backend) -> None:
    backend.require(Capability.HISTORY)
    store = await backend.open(history_limit=4)
    own = SessionWriter(store, "own", history_limit=2)
    none = SessionWriter(store, "none", history_limit=0)
    more = SessionWriter(store, "more", history_limit=6)
    default = SessionWriter(store, "default")
    for _ in range(8):
        for w in (own, none, more, default):
            await w.save(add=1)
    assert [e.checkpoint for e in await store.history("own")] == own.snapshots[:-3:-1]
    assert await store.history("none") == []
    assert [e.checkpoint for e in await store.history("more")] == more.snapshots[:-7:-1]
    assert [e.checkpoint for e in await store.history("default")] == default.snapshots[:-5:-1]
    # A limit lowered by a later save applies from that save on.
    own.history_limit = 1
    await own.save()
    assert [e.checkpoint for e in await store.history("own")] == own.snapshots[-1:]
    own.history_limit = 0
    await own.save()
    assert await store.history("own") == []
    assert await store.load("own") == own.snapshots[-1]
