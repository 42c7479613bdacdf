"""``Store.clock``: lease expiries are read through the store's clock, so a test advances
a fake one instead of sleeping out a TTL."""

from __future__ import annotations

import time

import pytest

from luoshod.errors import SessionBusy
from luoshod.store import Capability

from .backend import Backend


class FakeClock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def test_a_lease_expires_when_the_store_clock_passes_its_ttl(backend: Backend) -> None:
    backend.require(Capability.LEASES)
    store = await backend.open()
    clock = store.clock = FakeClock()
    first = await store.acquire_lease("s", owner="a", ttl=3600)
    assert first.expires_at == pytest.approx(clock.now + 3600, abs=1e-3)
    with pytest.raises(SessionBusy):
        await store.acquire_lease("s", owner="b", ttl=60)
    clock.now += 1800
    renewed = await store.renew_lease(first, ttl=60)
    assert renewed.expires_at == pytest.approx(clock.now + 60, abs=1e-3)
    clock.now += 61
    second = await store.acquire_lease("s", owner="b", ttl=60)
    assert second.token == first.token + 1
    assert await store.release_leases_of("b") == 1
    clock.now += 1
    assert await store.release_leases_of("b") == 0
