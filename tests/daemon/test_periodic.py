"""The daemon's one background loop (``luoshod/server/periodic.py``): the waker, the
scheduler, the sweeps and the webhooks' delivery each run a :class:`Periodic`."""

from __future__ import annotations

import asyncio
import logging

import pytest

from luoshod.errors import StoreError
from luoshod.server.periodic import Periodic

log = logging.getLogger("tests.periodic")


async def until(check: object, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_it_ticks_every_interval_and_at_once_when_nudged() -> None:
    ticks: list[float] = []

    async def tick() -> None:
        ticks.append(asyncio.get_running_loop().time())

    loop = Periodic("test", tick, 60.0, log=log)
    loop.start()
    try:
        await until(lambda: len(ticks) == 1)  # the first tick at start
        await asyncio.sleep(0.2)
        assert len(ticks) == 1  # the next one a minute on
        loop.nudge()
        await until(lambda: len(ticks) == 2)
    finally:
        await loop.stop()
    assert not loop.running


async def test_a_tick_says_when_the_next_one_comes() -> None:
    ticks = 0

    async def tick() -> float:
        nonlocal ticks
        ticks += 1
        return 0.05

    loop = Periodic("test", tick, 60.0, log=log)
    loop.start()
    try:
        await until(lambda: ticks >= 5)
    finally:
        await loop.stop()


async def test_a_failed_tick_is_logged_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        ticks += 1
        if ticks == 1:
            raise RuntimeError("first tick broke")
        if ticks == 2:
            raise StoreError("store down")

    loop = Periodic("flaky", tick, 60.0, log=log, retry_s=0.02)
    with caplog.at_level(logging.WARNING, logger="tests.periodic"):
        loop.start()
        try:
            await until(lambda: ticks >= 3)
        finally:
            await loop.stop()
    failed = [r for r in caplog.records if r.name == "tests.periodic"]
    assert [r.exc_info is not None for r in failed] == [True, False]  # a store error: one line
    assert "first tick broke" in failed[0].exc_text  # type: ignore[operator]
    assert "store down" in failed[1].getMessage()


async def test_stop_waits_for_the_tick_in_progress_and_starts_no_other() -> None:
    began, ended, ticks = asyncio.Event(), asyncio.Event(), 0

    async def tick() -> float:
        nonlocal ticks
        ticks += 1
        began.set()
        await asyncio.sleep(0.2)
        ended.set()
        return 0.0  # at once again, were it not stopped

    loop = Periodic("test", tick, 60.0, log=log)
    loop.start()
    await asyncio.wait_for(began.wait(), 5)
    await loop.stop()
    assert ended.is_set() and ticks == 1


async def test_stop_cancels_a_tick_that_outlasts_the_grace() -> None:
    began, cancelled = asyncio.Event(), asyncio.Event()

    async def tick() -> None:
        began.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    loop = Periodic("test", tick, 60.0, log=log)
    loop.start()
    await asyncio.wait_for(began.wait(), 5)
    await asyncio.wait_for(loop.stop(grace_s=0.1), 5)
    assert cancelled.is_set()
