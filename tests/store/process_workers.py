"""What each process of the multi-process test runs (a module of its own, so that
``multiprocessing``'s spawn start method can import it in the child)."""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

from luoshod.domain import Checkpoint, Message, Role
from luoshod.errors import LeaseLost
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
