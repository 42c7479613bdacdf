"""Leases with fencing tokens (``Capability.LEASES``): one writer per session (R51, R52).

A lease is granted to one owner at a time; its token only ever increases, per session, and
every write under a lease is refused once a newer token exists, so a holder that was paused
and taken over cannot overwrite the new holder's work.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from dataclasses import replace

import pytest
import pytest_asyncio

from luoshod.domain import Checkpoint, Message, Role
from luoshod.errors import ApprovalNotFound, LeaseLost, SessionBusy
from luoshod.store import Capability, Store

from . import process_workers
from .backend import Backend
from .helpers import FakeClock, SessionWriter, approval, event_range

TTL = 30.0


@pytest_asyncio.fixture
async def leases(backend: Backend, driver: Store) -> Store:
    backend.require(Capability.LEASES)
    return driver


async def test_a_lease_is_granted_with_token_1_and_needs_no_checkpoint(leases: Store) -> None:
    before = time.time()
    lease = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    assert (lease.session_id, lease.owner, lease.token) == ("s", "daemon-a", 1)
    # The store's clock may be another machine's: allow a little skew.
    assert before + TTL - 5 <= lease.expires_at <= time.time() + TTL + 5
    assert await leases.load("s") is None


async def test_r51_a_held_lease_is_refused_with_holder_and_expiry(leases: Store) -> None:
    lease = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    with pytest.raises(SessionBusy) as e:
        await leases.acquire_lease("s", owner="daemon-b", ttl=TTL)
    assert e.value.metadata["holder"] == "daemon-a"
    assert e.value.metadata["session_id"] == "s"
    expires = e.value.metadata["expires_at"]
    assert expires.endswith("Z") and expires[:4].isdigit()
    # Other sessions are not affected.
    assert (await leases.acquire_lease("t", owner="daemon-b", ttl=TTL)).token == 1
    # The refused attempt changed nothing: the holder still writes.
    await leases.save(Checkpoint("s", version=1), stored_messages=0, lease=lease)


async def test_a_live_lease_is_refused_to_its_own_owner_too(leases: Store) -> None:
    first = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    with pytest.raises(SessionBusy):
        await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    await leases.save(Checkpoint("s", version=1), stored_messages=0, lease=first)
    await leases.release_lease(first)
    second = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    assert second.token == first.token + 1
    with pytest.raises(LeaseLost):
        await leases.save(Checkpoint("s", version=2), stored_messages=0, lease=first)


async def test_r52_an_expired_lease_is_taken_over_and_fenced_off(leases: Store) -> None:
    clock = leases.clock = FakeClock()
    writer = SessionWriter(leases, "s")
    old = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    await writer.save(lease=old)
    clock.now += TTL + 1
    new = await leases.acquire_lease("s", owner="daemon-b", ttl=TTL)
    assert new.token == old.token + 1 and new.owner == "daemon-b"

    stored = await leases.load("s")
    assert stored is not None
    # The old holder wakes up: its save is refused and writes nothing...
    stale = replace(stored, messages=[*stored.messages, Message(Role.USER, "stale")])
    stale.version = stored.version + 1
    with pytest.raises(LeaseLost) as e:
        await leases.save(stale, stored_messages=len(stored.messages), lease=old)
    assert e.value.metadata["session_id"] == "s"
    assert await leases.load("s") == stored
    # ... and so is its renewal.
    with pytest.raises(LeaseLost):
        await leases.renew_lease(old, ttl=TTL)
    # The new holder writes.
    await writer.save(lease=new)
    loaded = await leases.load("s")
    assert loaded is not None and loaded.version == stored.version + 1


async def test_a_stale_lease_appends_no_events(backend: Backend, leases: Store) -> None:
    backend.require(Capability.EVENT_LOG)
    old = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    await leases.append_events("s", event_range(1, 2), lease=old)
    await leases.release_lease(old)
    new = await leases.acquire_lease("s", owner="daemon-b", ttl=TTL)
    with pytest.raises(LeaseLost):
        await leases.append_events("s", event_range(3, 3), lease=old)
    await leases.append_events("s", event_range(3, 4), lease=new)
    page = await leases.read_events("s", after_seq=0, limit=10)
    assert [e.seq for e in page.events] == [1, 2, 3, 4]


async def test_a_stale_lease_is_checked_before_the_claim(backend: Backend, leases: Store) -> None:
    backend.require(Capability.APPROVALS)
    old = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    await leases.save(
        Checkpoint("s", version=1), stored_messages=0, approval=approval("appr-1", "s"), lease=old
    )
    await leases.release_lease(old)
    new = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    with pytest.raises(LeaseLost):
        await leases.save(Checkpoint("s", version=2), stored_messages=0, claim="appr-1", lease=old)
    assert await leases.get_approval("appr-1") is not None  # still pending
    await leases.save(Checkpoint("s", version=2), stored_messages=0, claim="appr-1", lease=new)
    assert await leases.get_approval("appr-1") is None
    with pytest.raises(ApprovalNotFound):
        await leases.save(Checkpoint("s", version=3), stored_messages=0, claim="appr-1", lease=new)


async def test_renewal_extends_the_lease_and_keeps_the_token(leases: Store) -> None:
    clock = leases.clock = FakeClock()
    lease = await leases.acquire_lease("s", owner="daemon-a", ttl=10)
    renewed = await leases.renew_lease(lease, ttl=TTL)
    assert renewed.token == lease.token and renewed.owner == "daemon-a"
    assert renewed.expires_at > lease.expires_at
    clock.now += 20  # past the first expiry: the renewal holds it
    with pytest.raises(SessionBusy):
        await leases.acquire_lease("s", owner="daemon-b", ttl=TTL)


async def test_an_expired_lease_not_taken_over_is_renewed_and_still_writes(leases: Store) -> None:
    clock = leases.clock = FakeClock()
    lease = await leases.acquire_lease("s", owner="daemon-a", ttl=10)
    clock.now += 20
    await leases.save(Checkpoint("s", version=1), stored_messages=0, lease=lease)
    renewed = await leases.renew_lease(lease, ttl=TTL)
    assert renewed.token == lease.token
    with pytest.raises(SessionBusy):
        await leases.acquire_lease("s", owner="daemon-b", ttl=TTL)


async def test_release_frees_the_lease_at_once(leases: Store) -> None:
    lease = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    await leases.release_lease(lease)
    taken = await leases.acquire_lease("s", owner="daemon-b", ttl=TTL)
    assert taken.token == lease.token + 1
    await leases.release_lease(lease)  # stale: does nothing
    with pytest.raises(SessionBusy):
        await leases.acquire_lease("s", owner="daemon-c", ttl=TTL)
    with pytest.raises(LeaseLost):
        await leases.save(Checkpoint("s", version=1), stored_messages=0, lease=lease)


async def test_release_leases_of_an_owner_frees_its_live_leases_only(leases: Store) -> None:
    held = [await leases.acquire_lease(f"s{i}", owner="daemon-a", ttl=TTL) for i in range(3)]
    other = await leases.acquire_lease("t", owner="daemon-b", ttl=TTL)
    await leases.release_lease(held[2])  # not live any more: not counted
    assert await leases.release_leases_of("daemon-a") == 2
    assert await leases.release_leases_of("daemon-a") == 0
    for old in held:
        new = await leases.acquire_lease(old.session_id, owner="daemon-c", ttl=TTL)
        assert new.token == old.token + 1
        with pytest.raises(LeaseLost):  # the previous incarnation, were it alive, is fenced
            await leases.save(Checkpoint(old.session_id, version=1), stored_messages=0, lease=old)
    with pytest.raises(SessionBusy):
        await leases.acquire_lease("t", owner="daemon-c", ttl=TTL)
    await leases.save(Checkpoint("t", version=1), stored_messages=0, lease=other)


async def test_tokens_only_increase_across_delete(leases: Store) -> None:
    lease = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    await leases.save(Checkpoint("s", version=1), stored_messages=0, lease=lease)
    assert await leases.delete("s")
    await leases.release_lease(lease)
    again = await leases.acquire_lease("s", owner="daemon-b", ttl=TTL)
    assert again.token > lease.token
    # A holder from before the delete cannot write the new session of that id.
    with pytest.raises(LeaseLost):
        await leases.save(Checkpoint("s", version=1), stored_messages=0, lease=lease)


async def test_leases_and_tokens_survive_reopening(backend: Backend, leases: Store) -> None:
    backend.require(Capability.DURABLE)
    lease = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL)
    await leases.close()
    reopened = await backend.open()
    with pytest.raises(SessionBusy):
        await reopened.acquire_lease("s", owner="daemon-b", ttl=TTL)
    await reopened.release_lease(lease)
    assert (await reopened.acquire_lease("s", owner="daemon-b", ttl=TTL)).token == lease.token + 1


async def test_a_ttl_must_be_positive(leases: Store) -> None:
    for ttl in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="ttl"):
            await leases.acquire_lease("s", owner="daemon-a", ttl=ttl)


async def test_concurrent_acquires_grant_one_lease(leases: Store) -> None:
    outcomes = await asyncio.gather(
        *(leases.acquire_lease("s", owner=f"daemon-{i}", ttl=TTL) for i in range(16)),
        return_exceptions=True,
    )
    granted = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(granted) == 1 and granted[0].token == 1
    assert all(isinstance(o, SessionBusy) for o in outcomes if o not in granted)


async def test_two_processes_racing_for_leases_each_session_has_one_holder(
    backend: Backend, leases: Store
) -> None:
    backend.require(Capability.MULTI_PROCESS)
    sessions = 30
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(
            target=process_workers.lease,
            args=(backend.url, name, barrier, results, sessions),
            daemon=True,
        )
        for name in ("p1", "p2")
    ]
    for p in procs:
        p.start()
    try:
        outcomes = dict([await asyncio.to_thread(results.get, True, 90) for _ in procs])
    finally:
        for p in procs:
            await asyncio.to_thread(p.join, 30)
            if p.is_alive():
                p.kill()
    failures = {n: o for n, o in outcomes.items() if isinstance(o, str)}
    assert not failures, failures
    won1, won2 = set(outcomes["p1"]), set(outcomes["p2"])
    assert won1.isdisjoint(won2)
    assert won1 | won2 == {f"lease-{i:03d}" for i in range(sessions)}
    # Each winner's save, made under its lease, is the stored one.
    for name, won in (("p1", won1), ("p2", won2)):
        for sid in won:
            cp = await leases.load(sid)
            assert cp is not None and cp.messages == [Message(Role.USER, f"by {name}")]


async def test_r89_a_lease_keeps_the_address_its_holder_answers_at(leases: Store) -> None:
    """The holder's advertised address is kept with its lease: renewed (alone or in a
    batch) it stays, listed it is there, and the next holder's replaces it."""
    clock = leases.clock = FakeClock()
    a = await leases.acquire_lease("s", owner="daemon-a", ttl=TTL, address="10.0.0.1:50051")
    assert a.address == "10.0.0.1:50051"
    a = await leases.renew_lease(a, ttl=TTL)
    assert a.address == "10.0.0.1:50051"
    bare = await leases.acquire_lease("t", owner="daemon-a", ttl=TTL)  # none published
    renewal = await leases.renew_leases([a, bare], ttl=TTL)
    assert [lease.address for lease in renewal.renewed] == ["10.0.0.1:50051", ""]
    listed, _ = await leases.list_leases(page_size=10, page_token="")
    assert [(lease.session_id, lease.owner, lease.address) for lease in listed] == [
        ("s", "daemon-a", "10.0.0.1:50051"),
        ("t", "daemon-a", ""),
    ]
    clock.now += TTL + 1
    b = await leases.acquire_lease("s", owner="daemon-b", ttl=TTL, address="unix:/run/b.sock")
    listed, _ = await leases.list_leases(page_size=10, page_token="", owner="daemon-b")
    assert [(lease.token, lease.address) for lease in listed] == [(b.token, "unix:/run/b.sock")]
