"""What the durable drivers share: one database thread, and group commit.

A driver whose library blocks (SQLite, LMDB) gives every call to one dedicated thread
(:class:`DatabaseThread`), so the event loop never waits on the disk and the library
handle is only ever touched by that thread.

Writes go through :class:`GroupCommit`: ``submit`` queues a prepared write and waits. The
queued writes are handed to the thread as one batch, which the driver's ``apply`` writes in
one transaction and one sync; while that sync runs, later writes queue up and form the
next batch, so throughput is not capped at one fsync per save. Each write is acknowledged
(its ``submit`` returns) only after ``apply`` returned, that is after its data is on disk.
Per-session order is the driver's version check, run inside the transaction (R7). The
event loop is woken once per batch, not once per write.

A driver whose library is itself async (PostgreSQL) needs no thread: its batches go
through :class:`AsyncGroupCommit`, one task that writes a batch while the next one queues.

When many runs save now and then rather than all at once (thousands of runs waiting on
slow models: each wakes alone), a batch would hold a save or two and each pays a whole
commit and sync, and the event loop's wake-up with it. :class:`CommitWindow` then holds a
batch back a few milliseconds so that the saves arriving meanwhile join it (PostgreSQL's
``commit_delay`` and ``commit_siblings``): only while many distinct writers saved in the
last moment and the queue is still short, so one run alone, or a burst that already fills
its batches, is not delayed.

On the database thread, a batch that does not fit as a whole (``apply`` raises
``StoreFull``: an LMDB map at its ``max_map_size``, a full disk) is written again save by
save, each in its own transaction, so that the saves that fit still land and only the
others fail (:func:`apply_or_split`); a driver's ``apply`` need not know. (A database
server that is full refuses small transactions as well as large ones: the batches of
:class:`AsyncGroupCommit` are not split.)
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, TypeVar

from ...errors import StoreError, StoreFull

T = TypeVar("T")
P = TypeVar("P")


class DatabaseThread:
    """One thread that runs every blocking call of a driver, first in, first out."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._executor: ThreadPoolExecutor | None = None

    @property
    def running(self) -> bool:
        return self._executor is not None

    def start(self) -> None:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self.name)

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Queue ``fn(*args)`` without waiting for it (from any thread); its future."""
        return self._require("submit").submit(fn, *args)

    async def call(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the thread and return its result (or raise its exception).

        Raises ``StoreError`` when the thread is not running (the store is not open).
        """
        executor = self._require(what)
        return await asyncio.get_running_loop().run_in_executor(executor, partial(fn, *args))

    async def stop(self) -> None:
        """Wait for queued calls, then end the thread. Idempotent."""
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.get_running_loop().run_in_executor(None, executor.shutdown, True)

    def _require(self, what: str) -> ThreadPoolExecutor:
        if self._executor is None:
            raise StoreError(f"{self.name}: the store is not open", operation=what)
        return self._executor


class CommitWindow:
    """Whether to hold the next batch back so that more saves join it, and how long.

    A batch is held back ``delay_s`` when at least ``siblings`` distinct writers (asyncio
    tasks: one a run) submitted a save in the last ``period_s`` and the queue holds fewer
    than one in ``spread`` of them. A writer's saves are sequential (it waits for each),
    so one run alone never waits for company it cannot have; and when saves already come
    in crowds (the fast regime: the loop is busy, each batch holds a good share of the
    writers) nothing is delayed. ``delay_s`` 0 turns the window off. Only touched on the
    event loop.
    """

    __slots__ = (
        "delay_s",
        "siblings",
        "spread",
        "period_s",
        "_clock",
        "_writers",
        "_ends",
        "_recent",
    )

    def __init__(
        self,
        delay_s: float = 0.005,
        siblings: int = 16,
        spread: int = 8,
        period_s: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.delay_s = delay_s
        self._clock = clock
        self.siblings = siblings
        self.spread = spread
        self.period_s = period_s
        self._writers: set[int] = set()
        self._ends = 0.0
        self._recent = 0  # distinct writers of the last whole period

    def saw_save(self) -> None:
        """Count the current task as a writer (at each ``submit``)."""
        now = self._clock()
        if now >= self._ends:
            # A period with no save at all in between means nobody is writing now.
            self._recent = len(self._writers) if now < self._ends + self.period_s else 0
            self._writers.clear()
            self._ends = now + self.period_s
        self._writers.add(id(asyncio.current_task()))

    def delay(self, queued: int) -> float:
        """Seconds to wait before starting a batch of ``queued`` saves (0: at once)."""
        recent = self._recent
        if self.delay_s and recent >= self.siblings and queued * self.spread < recent:
            return self.delay_s
        return 0.0


@dataclass(slots=True, eq=False)
class Queued(Generic[P]):
    """One queued save: the driver's prepared payload, and how its caller is told."""

    payload: P
    future: asyncio.Future[None]
    #: Set by ``apply`` when this save (alone) is refused or fails.
    error: BaseException | None = field(default=None)
    #: What ``apply`` returned for this write, if anything (``submit`` returns it).
    result: Any = field(default=None)


class GroupCommit(Generic[P]):
    """Batches saves queued on a :class:`DatabaseThread` into one ``apply`` call each.

    ``apply(batch)`` runs on the thread; it writes every save of ``batch`` in one
    transaction and sets ``item.error`` on the saves it refuses (the others still commit).
    An exception raised by ``apply`` itself fails every save of the batch.

    A batch is handed to the thread from the event loop, by a callback queued behind the
    tasks that are ready to run: the tasks woken by one commit queue their next saves
    before the next batch starts. That makes batches large, and keeps the thread's many
    short library calls (each of which releases the GIL) from running while the event
    loop is busy, which would make each of them wait for the GIL. One instance serves
    one event loop (the one running at the first ``submit``).
    """

    def __init__(
        self,
        thread: DatabaseThread,
        apply: Callable[[list[Queued[P]]], None],
        window: CommitWindow | None = None,
    ) -> None:
        self._thread = thread
        self._apply = apply
        self._window = window if window is not None else CommitWindow()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()  # the queue is taken on the thread
        self._queue: list[Queued[P]] = []
        # A batch is scheduled or in flight; only touched on the event loop.
        self._busy = False
        self._idle: asyncio.Event | None = None
        self._closed = False

    async def submit(self, payload: P) -> Any:
        """Queue a save and return once it is committed (with the ``result`` ``apply`` set
        for it, if any); raise what ``apply`` set for it.

        Raises ``StoreError`` when the store is not open. A save cancelled while still
        queued is never applied; once taken into a batch, it commits or not like any
        write whose acknowledgement was lost.
        """
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        if self._closed or not self._thread.running:
            raise StoreError(f"{self._thread.name}: the store is not open", operation="save")
        item = Queued(payload, loop.create_future())
        self._window.saw_save()
        with self._lock:
            self._queue.append(item)
            queued = len(self._queue)
        if not self._busy:
            self._busy = True
            self._schedule(loop, queued)
        try:
            await item.future
        except asyncio.CancelledError:
            with self._lock:
                if item in self._queue:
                    self._queue.remove(item)
            raise
        return item.result

    async def close(self) -> None:
        """Refuse new saves and wait until every queued one is committed (or failed)."""
        self._closed = True
        if self._busy:
            self._idle = asyncio.Event()
            await self._idle.wait()

    def _schedule(self, loop: asyncio.AbstractEventLoop, queued: int) -> None:
        """Start the next batch behind the ready tasks, or after the commit window."""
        delay = self._window.delay(queued)
        if delay:
            loop.call_later(delay, self._start_batch)
        else:
            loop.call_soon(self._start_batch)

    def _start_batch(self) -> None:
        """On the event loop: hand the queued saves to the thread."""
        try:
            self._thread.submit(self._drain)
        except StoreError as e:
            with self._lock:
                batch, self._queue = self._queue, []
            for item in batch:
                item.error = e
            self._settled(batch)

    def _drain(self) -> None:
        """On the thread: apply every queued save, then let the event loop settle them."""
        with self._lock:
            batch, self._queue = self._queue, []
        if batch:
            try:
                apply_or_split(self._apply, batch)
            except BaseException as e:  # the whole batch failed, nothing was written
                for item in batch:
                    item.error = e
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._settled, batch)

    def _settled(self, batch: list[Queued[P]]) -> None:
        """On the event loop: wake the callers, then start the next batch behind them."""
        settle(batch)
        with self._lock:
            queued = len(self._queue)
        if queued:
            self._schedule(asyncio.get_running_loop(), queued)
        else:
            self._busy = False
            if self._idle is not None:
                self._idle.set()


def apply_or_split(apply: Callable[[list[Queued[P]]], None], batch: list[Queued[P]]) -> None:
    """``apply(batch)``; when the batch as a whole does not fit (``StoreFull``), each save
    on its own, so that those that fit still land and only the others fail. Raises what
    ``apply`` raised for the batch otherwise (or for a batch of one)."""
    try:
        apply(batch)
    except StoreFull:
        if len(batch) == 1:
            raise
        for item in batch:
            item.error = None
            try:
                apply([item])
            except Exception as e:  # noqa: BLE001 - this save alone failed
                item.error = e


def settle(batch: list[Queued[P]]) -> None:
    """Wake the callers of a batch: each gets its ``error`` or ``None``."""
    for item in batch:
        if item.future.done():  # cancelled by its caller meanwhile
            continue
        if item.error is None:
            item.future.set_result(None)
        else:
            item.future.set_exception(item.error)


class AsyncGroupCommit(Generic[P]):
    """Group commit for a driver whose library is async: one task writes the queued
    saves as one batch (``apply``, one transaction), wakes their callers, and takes the
    saves queued meanwhile as the next batch.

    ``apply(batch)`` sets ``item.error`` on the saves it refuses (the others still
    commit); an exception it raises fails every save of the batch. Like
    :class:`GroupCommit`, a batch starts behind the tasks the last commit woke, so those
    that save again join it. One instance serves one event loop.
    """

    def __init__(
        self,
        name: str,
        apply: Callable[[list[Queued[P]]], Awaitable[None]],
        window: CommitWindow | None = None,
    ) -> None:
        self.name = name
        self._apply = apply
        self._window = window if window is not None else CommitWindow()
        self._queue: list[Queued[P]] = []
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    async def submit(self, payload: P) -> Any:
        """Queue a save and return once it is committed (with the ``result`` ``apply`` set
        for it, if any); raise what ``apply`` set for it.

        Raises ``StoreError`` when closed. A save cancelled while still queued is never
        applied; once taken into a batch, it commits or not like any write whose
        acknowledgement was lost.
        """
        if self._closed:
            raise StoreError(f"{self.name}: the store is not open", operation="save")
        loop = asyncio.get_running_loop()
        item = Queued(payload, loop.create_future())
        self._window.saw_save()
        self._queue.append(item)
        if self._task is None:
            self._task = loop.create_task(self._run(), name=f"{self.name}-group-commit")
        try:
            await item.future
        except asyncio.CancelledError:
            if item in self._queue:
                self._queue.remove(item)
            raise
        return item.result

    async def close(self) -> None:
        """Refuse new saves and wait until every queued one is committed (or failed)."""
        self._closed = True
        if self._task is not None:
            await asyncio.shield(self._task)

    async def _run(self) -> None:
        batch: list[Queued[P]] = []
        try:
            while self._queue:
                # Behind the callers woken by the last commit: their next saves join (and,
                # while many writers save apart, those of the commit window).
                await asyncio.sleep(self._window.delay(len(self._queue)))
                batch, self._queue = self._queue, []
                try:
                    await self._apply(batch)
                except Exception as e:  # the whole batch failed, nothing was written
                    for item in batch:
                        item.error = e
                settle(batch)
        except BaseException:  # cancelled (the loop is going away): nobody waits forever
            stopped = StoreError(f"{self.name}: the store was stopped", operation="save")
            for item in [*batch, *self._queue]:
                if not item.future.done():
                    item.future.set_exception(stopped)
            raise
        finally:
            self._task = None
