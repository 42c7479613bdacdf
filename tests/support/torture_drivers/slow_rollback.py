"""A daemon for tests/processes/test_torture.py whose ROLLBACK leaves its session without
a checkpoint for a while: SQLite, with ``InputQueue._rollback`` waiting ``WINDOW_S`` after
it has put back the checkpoint of before the rolled-back run (for a session's first run:
none) and before the redirect's own run starts. Nothing it does is wrong (R68: the session
as before that run, then the input runs; R69: the input shown queued meanwhile); it holds
open the moment a check can read ``GetSession`` answering the queue and no checkpoint,
which a restarted daemon's rollback opens for about 100 ms. Registered as
``slowrollbacksqlite://`` by the test.

``luosho_rollback_interrupts``, a second entry point, is a broken daemon on top of it:
an INTERRUPT, too, rolls the run it aborts back (the results that run saved are gone,
which R68 allows a ROLLBACK only), as ``interruptrollbacksqlite://``."""

from __future__ import annotations

import asyncio
from typing import Any

from luosho.v1 import agent_pb2 as pb
from luoshod.server.queueing import InputQueue, Queued
from luoshod_sqlite.driver import SqliteStore, path_from_url

#: How long a rollback leaves its session as it put it back before the input's run.
WINDOW_S = 4.0

_fixed_rollback = InputQueue._rollback
_fixed_enqueue = InputQueue._enqueue


async def _slow_rollback(self: InputQueue, sid: str, run_id: str, rid: str) -> None:
    await _fixed_rollback(self, sid, run_id, rid)
    await asyncio.sleep(WINDOW_S)


InputQueue._rollback = _slow_rollback  # type: ignore[method-assign]


class SlowRollbackStore(SqliteStore):
    @classmethod
    def from_url(cls, url: str, **kw: Any) -> SlowRollbackStore:
        return cls(path_from_url("sqlite" + url.removeprefix("slowrollbacksqlite")), **kw)


async def _rolling_enqueue(self: InputQueue, request: pb.ExecuteRequest, rid: str) -> None:
    """An INTERRUPT queued as a ROLLBACK: the run to roll back recorded with it."""
    if request.if_busy == pb.IF_BUSY_INTERRUPT:
        store, sid = self.runner.store, request.session_id
        cp = await store.load(sid)
        item = Queued(request, cp.run_id if cp is not None else "")
        await store.enqueue_input(
            sid, rid, item.encode(), front=True, now=self.runner.engine.clock()
        )
        self._abort_local(sid, rid)
        return
    await _fixed_enqueue(self, request, rid)


class InterruptRollbackStore(SlowRollbackStore):
    """Installs :func:`_rolling_enqueue` when the daemon loads it."""

    @classmethod
    def from_url(cls, url: str, **kw: Any) -> InterruptRollbackStore:
        InputQueue._enqueue = _rolling_enqueue  # type: ignore[method-assign]
        return cls(path_from_url("sqlite" + url.removeprefix("interruptrollbacksqlite")), **kw)
