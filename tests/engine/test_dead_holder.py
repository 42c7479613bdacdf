"""A lease whose holder is a process of this machine that is gone (kill -9, a crash) is
taken back at once, with the next fencing token; a live holder, or one whose liveness
cannot be told (another machine, boot or container, a ``--lease-owner`` name), keeps its
lease until its TTL; every SESSION_BUSY says which (luoshod/engine/liveness.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from luoshod.domain import Checkpoint
from luoshod.engine.lease import Held, LeasePolicy, default_owner
from luoshod.engine.liveness import HolderState, holder_state
from luoshod.errors import LeaseLost, SessionBusy
from luoshod.store.memory import MemoryStore

TTL_S = 60.0
NAME = "import luoshod.engine.liveness as l, sys; print(l.process_owner()); sys.stdout.flush()"


@pytest.fixture
async def store():
    s = MemoryStore()
    await s.open()
    try:
        yield s
    finally:
        await s.close()


def owner_of_a_process_that_exited() -> str:
    out = subprocess.run([sys.executable, "-c", NAME], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def other_machine(owner: str) -> str:
    """``owner`` as a process of another machine (another boot id) would be named."""
    head, _, tail = owner.rpartition("/")
    boot, ns, start = tail.split(".")
    return f"{head}/{'0' if boot[0] != '0' else '1'}{boot[1:]}.{ns}.{start}"


def test_how_a_holder_is_told_alive_or_dead() -> None:
    me = default_owner()
    assert holder_state(me) is HolderState.ALIVE
    # A process killed and not reaped yet (a zombie) is dead; so is one that exited.
    child = subprocess.Popen(
        [sys.executable, "-c", NAME + "; import time; time.sleep(60)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    name = child.stdout.readline().strip()
    assert holder_state(name) is HolderState.ALIVE
    child.kill()
    try:
        for _ in range(100):  # the kill lands asynchronously; a zombie is already dead
            if holder_state(name) is HolderState.DEAD:
                break
            subprocess.run(["sleep", "0.05"])
        assert holder_state(name) is HolderState.DEAD
    finally:
        child.wait(10)
        child.stdout.close()
    assert holder_state(name) is HolderState.DEAD
    # The pid now used by another process (another start time) is not the holder.
    pid_reused = me.replace(f"/{me.split('/')[1]}/", f"/{child.pid}/", 1)
    assert holder_state(pid_reused) is not HolderState.ALIVE
    # Never presumed dead: another machine (or boot, or PID namespace), a chosen name.
    assert holder_state(other_machine(name)) is HolderState.UNKNOWN
    assert holder_state("daemon-a") is HolderState.UNKNOWN
    assert holder_state(f"other-host{name[name.index('/') :]}") is HolderState.UNKNOWN


async def test_a_dead_holder_on_this_machine_is_taken_over_at_once_and_fenced_off(
    store: MemoryStore,
) -> None:
    dead = owner_of_a_process_that_exited()
    old = await store.acquire_lease("s", owner=dead, ttl=TTL_S)
    await store.save(Checkpoint("s", version=1), stored_messages=0, lease=old)
    other = await store.acquire_lease("t", owner=dead, ttl=TTL_S)
    async with Held(store, LeasePolicy("daemon-b", TTL_S, 1.0), "s") as held:
        assert held.lease is not None and held.lease.token == old.token + 1
        # The dead holder's writes are refused (were it ever to make any).
        with pytest.raises(LeaseLost):
            await store.save(Checkpoint("s", version=2), stored_messages=0, lease=old)
        await store.save(Checkpoint("s", version=2), stored_messages=0, lease=held.lease)
    # Every lease of that process was let go: the next session is free too.
    assert (await store.acquire_lease("t", owner="daemon-c", ttl=TTL_S)).token == other.token + 1


async def test_a_live_holder_is_not_taken_over_and_busy_says_so(store: MemoryStore) -> None:
    alive = default_owner()  # this process: alive
    lease = await store.acquire_lease("s", owner=alive, ttl=TTL_S)
    with pytest.raises(SessionBusy) as e:
        async with Held(store, LeasePolicy("daemon-b", TTL_S, 1.0), "s"):
            pass
    meta = e.value.metadata
    assert meta["holder"] == alive and meta["holder_alive"] == "true"
    assert meta["expires_at"].endswith("Z") and 55 < float(meta["expires_in_s"]) <= TTL_S
    assert "sessions cancel s" in meta["hint"]
    assert f"is leased by {alive!r} until" in str(e.value) and "holder alive: true" in str(e.value)
    assert (await store.list_leases(page_size=10, page_token=""))[0] == [lease]  # untouched


@pytest.mark.parametrize("holder", ["daemon-a", "another machine"])
async def test_a_holder_whose_liveness_cannot_be_told_keeps_its_lease(
    store: MemoryStore, holder: str
) -> None:
    if holder == "another machine":
        holder = other_machine(owner_of_a_process_that_exited())  # its pid is gone here, not there
    await store.acquire_lease("s", owner=holder, ttl=TTL_S)
    with pytest.raises(SessionBusy) as e:
        async with Held(store, LeasePolicy("daemon-b", TTL_S, 1.0), "s"):
            pass
    meta = e.value.metadata
    assert meta["holder"] == holder and meta["holder_alive"] == "unknown"
    assert f"--owner {holder}" in meta["hint"] and meta["expires_at"] in meta["hint"]
    assert "holder alive: unknown" in str(e.value)
