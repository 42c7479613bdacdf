"""Opening and closing (``Store.open``/``close``), for every driver: both idempotent, and
a durable store used before it is opened or after it is closed raises ``StoreError``
rather than touch (or create) anything."""

from __future__ import annotations

import contextlib

import pytest

from luoshod.domain import Checkpoint
from luoshod.errors import StoreError
from luoshod.store import Capability

from .backend import Backend
from .helpers import SessionWriter


async def test_open_twice_and_close_twice_are_harmless(backend: Backend) -> None:
    store = backend.build()
    await store.close()  # never opened: nothing to release
    await store.open()
    await store.open()  # already open: nothing happens, nothing is lost
    w = SessionWriter(store, "s")
    await w.save()
    await store.open()
    assert await store.load("s") == w.snapshots[-1]
    await store.close()
    await store.close()
    if Capability.DURABLE in backend.capabilities:
        again = await backend.open()
        assert await again.load("s") == w.snapshots[-1]


async def test_a_durable_store_used_before_open_is_a_store_error(backend: Backend) -> None:
    backend.require(Capability.DURABLE)
    store = backend.build()
    with pytest.raises(StoreError):
        await store.load("s")
    with pytest.raises(StoreError):
        await store.save(Checkpoint("s", version=1), stored_messages=0)
    with pytest.raises(StoreError):
        await store.list_sessions(status=None, page_size=10, page_token="")
    if backend.on_disk_here:
        assert backend.disk_bytes() == 0  # refused before creating anything


async def test_a_durable_store_used_after_close_is_a_store_error(backend: Backend) -> None:
    backend.require(Capability.DURABLE)
    store = backend.build()
    await store.open()
    w = SessionWriter(store, "s")
    await w.save()
    await store.close()
    with pytest.raises(StoreError):
        await store.load("s")
    with pytest.raises(StoreError):
        await w.save()
    with pytest.raises(StoreError):
        await store.delete("s")
    reopened = await backend.open()
    assert await reopened.load("s") == w.snapshots[-1]  # the refused calls changed nothing


async def test_check_location_creates_nothing_and_passes_where_open_works(backend: Backend) -> None:
    """``check_location`` (asked by ``luoshod serve`` before it serves) opens and creates
    nothing, whatever it answers (a driver may refuse a directory its open would create),
    and does not refuse a store that is open where its URL says."""
    before = sorted(backend.directory.rglob("*"))
    with contextlib.suppress(ValueError):
        backend.build().check_location()
    assert sorted(backend.directory.rglob("*")) == before
    store = await backend.open()
    store.check_location()
