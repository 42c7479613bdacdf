"""A daemon's lease upkeep in one write (``renew_leases``) and the operator's view of the
leases (``list_leases``), for drivers declaring ``Capability.LEASES``.

``renew_leases`` renews every lease a daemon holds at once, each exactly as
``renew_lease`` would: fencing stays per session, so a lease taken over in between is
reported lost (with the session's token now) and left to its new holder, while the other
leases of the batch are renewed.
"""

from __future__ import annotations

import pytest

from luoshod.domain import Checkpoint
from luoshod.errors import LeaseLost, SessionBusy
from luoshod.store import Capability, Store

from .backend import Backend
from .test_store_clock import FakeClock


async def _leased(backend: Backend) -> tuple[Store, FakeClock]:
    backend.require(Capability.LEASES)
    store = await backend.open()
    clock = store.clock = FakeClock()
    return store, clock


async def test_renew_leases_renews_every_lease_given_and_keeps_the_tokens(backend: Backend) -> None:
    store, clock = await _leased(backend)
    held = [await store.acquire_lease(f"s{k}", owner="daemon-a", ttl=60) for k in range(5)]
    clock.now += 50
    result = await store.renew_leases(held, ttl=60)
    assert result.lost == []
    assert [(lease.session_id, lease.owner, lease.token) for lease in result.renewed] == [
        (lease.session_id, lease.owner, lease.token) for lease in held
    ]
    assert all(
        lease.expires_at == pytest.approx(clock.now + 60, abs=1e-3) for lease in result.renewed
    )
    clock.now += 30  # past the first expiry, within the renewed one
    for lease in held:
        with pytest.raises(SessionBusy):
            await store.acquire_lease(lease.session_id, owner="daemon-b", ttl=60)
    # Renewed leases still write: the token is the one the saves carry.
    await store.save(Checkpoint("s0", version=1), stored_messages=0, lease=result.renewed[0])


async def test_renew_leases_reports_a_lease_taken_over_and_renews_the_others(
    backend: Backend,
) -> None:
    store, clock = await _leased(backend)
    a1 = await store.acquire_lease("one", owner="daemon-a", ttl=10)
    a2 = await store.acquire_lease("two", owner="daemon-a", ttl=10)
    clock.now += 11  # daemon-a froze past its TTL; daemon-b takes "one" over
    b1 = await store.acquire_lease("one", owner="daemon-b", ttl=10)
    result = await store.renew_leases([a1, a2], ttl=10)
    assert [lease.session_id for lease in result.renewed] == ["two"]
    assert len(result.lost) == 1 and isinstance(result.lost[0], LeaseLost)
    lost = result.lost[0].metadata
    assert (lost["session_id"], lost["token"], lost["current_token"]) == (
        "one",
        str(a1.token),
        str(b1.token),
    )
    # The new holder's lease is untouched: it still writes, the old holder does not.
    await store.save(Checkpoint("one", version=1), stored_messages=0, lease=b1)
    with pytest.raises(LeaseLost):
        await store.save(Checkpoint("one", version=2), stored_messages=0, lease=a1)
    listed, _ = await store.list_leases(page_size=10, page_token="")
    assert {(lease.session_id, lease.owner) for lease in listed} == {
        ("one", "daemon-b"),
        ("two", "daemon-a"),
    }
    assert next(lease for lease in listed if lease.session_id == "one").expires_at == pytest.approx(
        b1.expires_at, abs=1e-3
    )


async def test_renew_leases_checks_its_request(backend: Backend) -> None:
    store, _ = await _leased(backend)
    lease = await store.acquire_lease("s", owner="daemon-a", ttl=10)
    empty = await store.renew_leases([], ttl=10)
    assert (empty.renewed, empty.lost) == ([], [])
    with pytest.raises(ValueError):
        await store.renew_leases([lease], ttl=0)
    with pytest.raises(ValueError):
        await store.renew_leases([lease, lease], ttl=10)


async def test_list_leases_shows_live_leases_by_session_paged_and_by_owner(
    backend: Backend,
) -> None:
    store, clock = await _leased(backend)
    for k, owner in enumerate(["a", "b", "a", "b", "a"]):
        await store.acquire_lease(f"s{k}", owner=owner, ttl=60)
    gone = await store.acquire_lease("released", owner="a", ttl=60)
    await store.release_lease(gone)
    await store.acquire_lease("short", owner="a", ttl=5)
    clock.now += 10  # "short" expired, the others live
    first, token = await store.list_leases(page_size=3, page_token="")
    rest, end = await store.list_leases(page_size=3, page_token=token)
    assert [lease.session_id for lease in first + rest] == [
        "s0",
        "s1",
        "s2",
        "s3",
        "s4",
    ] and end == ""
    assert [(lease.owner, lease.token) for lease in first] == [("a", 1), ("b", 1), ("a", 1)]
    assert all(lease.expires_at > clock.now for lease in first + rest)
    mine, _ = await store.list_leases(page_size=10, page_token="", owner="a")
    assert [lease.session_id for lease in mine] == ["s0", "s2", "s4"]
    with pytest.raises(ValueError):
        await store.list_leases(page_size=0, page_token="")
