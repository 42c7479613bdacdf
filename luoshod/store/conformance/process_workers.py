"""What each process of the multi-process test runs (a module of its own, so that
``multiprocessing``'s spawn start method can import it in the child)."""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

from luoshod.domain import Checkpoint, Message, Role, StoredEvent
from luoshod.errors import ApprovalNotFound, LeaseLost, SessionBusy
from luoshod.store import store_from_url


def write(url: str, name: str, barrier: Any, results: Any, own: int, contested: int) -> None:
    """Save ``own`` sessions of this process and race for ``contested`` shared ones.

    Puts ``(name, sessions won)`` on ``results``, or ``(name, traceback)`` on failure.
    """
    try:
        results.put((name, asyncio.run(_write(url, name, barrier, own, contested))))
    except BaseException:
        results.put((name, traceback.format_exc()))


async def _write(url: str, name: str, barrier: Any, own: int, contested: int) -> list[str]:
    store = store_from_url(url)
    await store.open()
    try:
        barrier.wait(timeout=60)  # both processes have opened the file: start together
        won = []
        for i in range(max(own, contested)):
            if i < contested:
                sid = f"contested-{i:03d}"
                cp = Checkpoint(sid, [Message(Role.USER, f"by {name}")], version=1)
                try:
                    await store.save(cp, stored_messages=0)
                    won.append(sid)
                except LeaseLost:
                    pass
            if i < own:
                # Three saves of a growing transcript per session of this process.
                sid = f"{name}-{i:03d}"
                msgs: list[Message] = []
                for v in range(1, 4):
                    stored = len(msgs)
                    msgs.append(Message(Role.USER, f"{sid} turn {v}"))
                    cp = Checkpoint(sid, list(msgs), step_index=v, version=v)
                    await store.save(cp, stored_messages=stored)
        return won
    finally:
        await store.close()


def claim(url: str, name: str, barrier: Any, results: Any, sessions: int) -> None:
    """Race for the approval ``appr-<i>`` of each session ``claim-<i>`` (saved at version 1
    with one message): save version 2 claiming it, with one event saying who claimed.

    Puts ``(name, (sessions won, error type names of the saves lost))`` on ``results``,
    or ``(name, traceback)`` on failure.
    """
    try:
        results.put((name, asyncio.run(_claim(url, name, barrier, sessions))))
    except BaseException:
        results.put((name, traceback.format_exc()))


async def _claim(url: str, name: str, barrier: Any, sessions: int) -> tuple[list[str], list[str]]:
    store = store_from_url(url)
    await store.open()
    try:
        won, lost = [], []
        for i in range(sessions):
            # Both processes have opened the store and are done with the session before:
            # each session's claims start together, so every one is contested.
            barrier.wait(timeout=60)
            sid = f"claim-{i:03d}"
            cp = Checkpoint(
                sid, [Message(Role.USER, "go"), Message(Role.USER, f"by {name}")], version=2
            )
            try:
                await store.save(
                    cp,
                    stored_messages=1,
                    claim=f"appr-{i:03d}",
                    events=[StoredEvent(1, name.encode())],
                )
                won.append(sid)
            except (ApprovalNotFound, LeaseLost) as e:
                lost.append(type(e).__name__)
        return won, lost
    finally:
        await store.close()


def fill(url: str, prefix: str, sessions: int, size: int) -> None:
    """Save ``sessions`` sessions of ``size`` bytes each (another process filling a store)."""

    async def run() -> None:
        store = store_from_url(url)
        await store.open()
        try:
            for i in range(sessions):
                cp = Checkpoint(f"{prefix}-{i}", [Message(Role.USER, "x" * size)], version=1)
                await store.save(cp, stored_messages=0)
        finally:
            await store.close()

    asyncio.run(run())


def open_and_report(url: str, results: Any) -> None:
    """Open the store at ``url`` in this process; put "opened" or the error's type name."""

    async def run() -> str:
        store = store_from_url(url)
        try:
            await store.open()
        except Exception as e:  # noqa: BLE001 - the test checks which error
            return type(e).__name__
        await store.close()
        return "opened"

    results.put(asyncio.run(run()))


def lease(url: str, name: str, barrier: Any, results: Any, sessions: int) -> None:
    """Race for the lease of each session ``lease-<i>`` and save under the leases won.

    Puts ``(name, sessions won)`` on ``results``, or ``(name, traceback)`` on failure.
    """
    try:
        results.put((name, asyncio.run(_lease(url, name, barrier, sessions))))
    except BaseException:
        results.put((name, traceback.format_exc()))


async def _lease(url: str, name: str, barrier: Any, sessions: int) -> list[str]:
    store = store_from_url(url)
    await store.open()
    try:
        won = []
        for i in range(sessions):
            barrier.wait(timeout=60)  # each session's race starts together
            sid = f"lease-{i:03d}"
            try:
                held = await store.acquire_lease(sid, owner=name, ttl=60)
            except SessionBusy:
                continue
            cp = Checkpoint(sid, [Message(Role.USER, f"by {name}")], version=1)
            await store.save(cp, stored_messages=0, lease=held)
            won.append(sid)
        return won
    finally:
        await store.close()
