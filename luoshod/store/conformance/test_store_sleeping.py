"""Sleeping sessions (docs/reference/rules.md R86): a checkpoint saved ``sleeping`` keeps
its sleep (the call and the wake time) and is found by a listing by status, with its wake
time in the summary: what a daemon's waker reads to find the sessions that are due, on
every driver. Nothing else is asked of a driver for timers."""

from __future__ import annotations

from luoshod.domain import Checkpoint, Message, Role, Sleep, Status
from luoshod.store import Capability, Store

from .backend import Backend


def sleeping(session_id: str, wake_at: float, *, version: int = 1) -> Checkpoint:
    return Checkpoint(
        session_id,
        [Message(Role.USER, "check again tomorrow")],
        step_index=1,
        status=Status.SLEEPING,
        version=version,
        updated_at=1000.0,
        sleep=Sleep("call_1", wake_at),
    )


async def _sleepers(store: Store, prefix: str = "") -> dict[str, float | None]:
    found, token = {}, ""
    while True:
        page, token = await store.list_sessions(
            status=Status.SLEEPING, page_size=2, page_token=token, prefix=prefix
        )
        found.update({s.session_id: s.wake_at for s in page})
        if not token:
            return found


async def test_r86_a_sleeping_session_is_listed_by_status_with_its_wake_time(
    driver: Store,
) -> None:
    for i, sid in enumerate(["nap-1", "nap-2", "nap-3"]):
        await driver.save(sleeping(sid, 2_000_000_000.0 + i), stored_messages=0)
    awake = sleeping("awake", 5.0)
    awake.status, awake.sleep = Status.IN_PROGRESS, None
    await driver.save(awake, stored_messages=0)
    cp = await driver.load("nap-2")
    assert cp is not None and cp.status is Status.SLEEPING
    assert cp.sleep == Sleep("call_1", 2_000_000_001.0) and cp.wake_at == 2_000_000_001.0
    assert await _sleepers(driver) == {
        "nap-1": 2_000_000_000.0,
        "nap-2": 2_000_000_001.0,
        "nap-3": 2_000_000_002.0,
    }
    assert await _sleepers(driver, "nap-3") == {"nap-3": 2_000_000_002.0}
    page, _ = await driver.list_sessions(status=None, page_size=10, page_token="")
    assert {s.session_id: s.wake_at for s in page}["awake"] is None
    assert await driver.count_sessions(status=Status.SLEEPING) == 3
    # Woken: saved again with its sleep marked woken and no longer sleeping, it leaves
    # the listing (and its summary has no wake time).
    woken = sleeping("nap-1", 2_000_000_000.0, version=2)
    woken.status, woken.sleep = Status.IN_PROGRESS, Sleep("call_1", 2_000_000_000.0, "time")
    await driver.save(woken, stored_messages=1)
    assert set(await _sleepers(driver)) == {"nap-2", "nap-3"}
    got = await driver.load("nap-1")
    assert got is not None and got.sleep == Sleep("call_1", 2_000_000_000.0, "time")
    assert got.wake_at is None


async def test_r86_a_sleeping_session_is_still_listed_after_reopen(backend: Backend) -> None:
    backend.require(Capability.DURABLE)
    first = await backend.open()
    await first.save(sleeping("kept", 2_000_000_000.5), stored_messages=0)
    await first.close()
    second = await backend.open()
    assert await _sleepers(second) == {"kept": 2_000_000_000.5}
