"""The commit window of group commit (luoshod/store/kit/groupcommit.py): a batch is held
back a moment only while many distinct runs save apart, never for one run alone."""

from __future__ import annotations

import asyncio

from luoshod.store.kit.groupcommit import CommitWindow, DatabaseThread, GroupCommit, Queued


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def save_as_writers(window: CommitWindow, writers: int) -> None:
    """``writers`` distinct tasks each count one save."""

    async def one() -> None:
        window.saw_save()

    await asyncio.gather(*(one() for _ in range(writers)))


async def test_one_writer_is_never_held_back() -> None:
    clock = Clock()
    window = CommitWindow(delay_s=0.005, siblings=16, period_s=0.05, clock=clock)
    for _ in range(200):  # one run saving back to back over many periods
        window.saw_save()
        clock.now += 0.001
        assert window.delay(1) == 0.0


async def test_many_writers_apart_hold_a_small_batch_back() -> None:
    clock = Clock()
    window = CommitWindow(delay_s=0.005, siblings=16, spread=8, period_s=0.05, clock=clock)
    await save_as_writers(window, 40)
    assert window.delay(1) == 0.0  # nothing is known before a whole period has passed
    clock.now += 0.05
    await save_as_writers(window, 1)  # the period ends: 40 writers in it
    assert window.delay(1) == 0.005
    assert window.delay(4) == 0.005  # 4 x 8 < 40
    assert window.delay(5) == 0.0  # a batch holding one in eight writers goes at once


async def test_few_writers_or_a_pause_turn_the_window_off() -> None:
    clock = Clock()
    window = CommitWindow(delay_s=0.005, siblings=16, period_s=0.05, clock=clock)
    await save_as_writers(window, 15)
    clock.now += 0.05
    await save_as_writers(window, 1)
    assert window.delay(1) == 0.0  # 15 < siblings
    await save_as_writers(window, 40)
    clock.now += 0.12  # no save for more than a period: nobody is writing now
    await save_as_writers(window, 1)
    assert window.delay(1) == 0.0
    assert CommitWindow(delay_s=0.0).delay(1) == 0.0


async def test_saves_arriving_apart_share_one_commit_inside_the_window() -> None:
    """20 runs saving one after the other (one loop turn apart) go in one batch when the
    window holds the first back; each is acknowledged after its batch is applied."""
    clock = Clock()
    window = CommitWindow(delay_s=1.0, siblings=16, spread=8, period_s=0.05, clock=clock)
    await save_as_writers(window, 40)
    clock.now += 0.05
    batches: list[list[int]] = []

    def apply(batch: list[Queued[int]]) -> None:
        batches.append([item.payload for item in batch])

    thread = DatabaseThread("test-window")
    thread.start()
    commit: GroupCommit[int] = GroupCommit(thread, apply, window)
    try:

        async def run(k: int) -> None:
            for _ in range(k):  # arrive k loop turns after the first
                await asyncio.sleep(0)
            await commit.submit(k)

        await asyncio.gather(*(run(k) for k in range(20)))
        assert batches == [list(range(20))]
    finally:
        await commit.close()
        await thread.stop()
