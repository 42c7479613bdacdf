"""Retention: finished sessions deleted by the daemon itself once they are old enough.

A session finished longer ago than its retention (its own, ``ExecuteRequest.retention_ms``,
else the daemon's ``retention_s``) is deleted with its history and event log, as
``DeleteSession`` would, under the session's lease (a session some daemon runs is skipped
and retried at the next sweep). 0 keeps sessions forever (the default). Sessions in
progress or paused on an approval are never deleted by age (``luoshod prune`` does that
when asked by name), nor a session with inputs queued. Every daemon sharing a store may
sweep it: deleting twice is harmless.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge

from ..domain import Status
from ..engine import Engine
from ..errors import LeaseLost, SessionBusy, ShuttingDown
from ..store import Capability, Store
from .periodic import Periodic
from .runs import RunRegistry

log = logging.getLogger("luoshod.server.retention")

PAGE = 500
#: The sessions with a retention of their own: the queue of a key no session id can be.
MARKS = "_retention"


class Retention:
    def __init__(
        self,
        engine: Engine,
        store: Store,
        runs: RunRegistry,
        *,
        default_s: float,
        every_s: float,
        clock: Callable[[], float],
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.engine, self.store, self.runs = engine, store, runs
        self.default_s, self.every_s, self.clock = default_s, every_s, clock
        registry = registry or CollectorRegistry()
        self.deleted = Counter(
            "luoshod_retention_deleted",
            "Finished sessions deleted by the daemon's retention",
            registry=registry,
        )
        self.sweeps = Counter(
            "luoshod_retention_sweeps", "Retention sweeps completed", registry=registry
        )
        self.last_sweep = Gauge(
            "luoshod_retention_last_sweep_timestamp_seconds",
            "When the last retention sweep ended",
            registry=registry,
        )
        self._loop = Periodic("retention sweep", self._tick, every_s, log=log)

    async def note(self, session_id: str, retention_s: float) -> None:
        """A request gave the session a retention of its own: mark the session, so that a
        sweep reads its checkpoint (where the retention is kept) without reading every
        session's. The mark is a queued input of the key :data:`MARKS` under the session's
        id; a store without a queue has no marks (its sweeps read every finished session)."""
        if Capability.QUEUE in self.store.capabilities:
            await self.store.enqueue_input(MARKS, session_id, b"", now=self.clock())

    async def sweep(self) -> list[str]:
        """Delete every finished session past its retention; return their ids. With the
        daemon's retention, the finished sessions' summaries are read (and the checkpoint
        of those old enough); the sessions marked with a retention of their own are read
        whatever the daemon's. Costs O(finished sessions) only with a daemon retention."""
        now, deleted = self.clock(), []
        queue = Capability.QUEUE in self.store.capabilities
        marked = {q.request_id for q in await self.store.queued_inputs(MARKS)} if queue else set()
        if self.default_s > 0 or not queue:
            token = ""
            while True:
                page, token = await self.store.list_sessions(
                    status=Status.FINISHED, page_size=PAGE, page_token=token
                )
                for summary in page:
                    old = now - summary.updated_at > self.default_s > 0
                    if (
                        summary.session_id not in marked
                        and (old or not queue)
                        and await self._expired(summary.session_id, now)
                    ):
                        deleted.append(summary.session_id)
                if not token:
                    break
        for sid in sorted(marked):
            cp = await self.store.load(sid)
            if cp is None:  # deleted (by anyone): the mark goes too
                await self.store.remove_queued_input(MARKS, sid)
            elif await self._expired(sid, now):
                deleted.append(sid)
                await self.store.remove_queued_input(MARKS, sid)
        self.sweeps.inc()
        self.last_sweep.set(self.clock())
        return deleted

    async def _expired(self, sid: str, now: float) -> bool:
        cp = await self.store.load(sid)
        if cp is None or cp.status is not Status.FINISHED:
            return False
        ttl = cp.retention_s if cp.retention_s is not None else self.default_s
        if ttl <= 0 or now - cp.updated_at <= ttl:
            return False
        if Capability.QUEUE in self.store.capabilities and await self.store.queued_inputs(sid):
            return False  # its next run is waiting
        try:
            claim = await self.runs.begin(sid)  # SESSION_BUSY while a run of ours holds it
            try:
                if not await self.engine.delete(sid):  # under its lease: another daemon's
                    return False
            finally:
                self.runs.end(claim)
        except (
            SessionBusy,
            LeaseLost,
            ShuttingDown,
        ) as e:  # running again: kept, looked at next time
            log.info("session %s not deleted by retention: %s", sid, e)
            return False
        self.deleted.inc()
        log.info("session %s deleted by retention (finished %.0f s ago)", sid, now - cp.updated_at)
        return True

    async def _tick(self) -> None:
        await self.sweep()

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()
