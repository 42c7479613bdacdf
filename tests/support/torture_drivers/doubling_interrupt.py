"""A deliberately broken daemon for tests/processes/test_torture.py: SQLite, with an input
queue that applies an interrupting input (``if_busy`` INTERRUPT or ROLLBACK) twice. Once the
run that applied it has ended, ``InputQueue._next`` queues it again under another request
id, so the same redirect is run a second time, as a queue that lost the record of having
applied it would. ``luoshod torture`` must catch it (R68: an input applied once). Registered
as ``doublingsqlite://`` by the test; importing the driver in the daemon installs the
broken ``_next`` there."""

from __future__ import annotations

from typing import Any

from luoshod.server.queueing import InputQueue, Queued
from luoshod_sqlite.driver import SqliteStore, path_from_url

_fixed_next = InputQueue._next


async def _doubling_next(self: InputQueue, sid: str) -> bool:
    store = self.runner.store
    queued = await store.queued_inputs(sid)
    head = queued[0] if queued else None
    again = await _fixed_next(self, sid)
    if head is None or head.request_id.endswith("-again"):
        return again
    item = Queued.decode(head.data)
    applied = await store.find_request(sid, head.request_id)
    if item.interrupts and applied is not None and applied.end is not None:
        copy = type(item.request)()
        copy.CopyFrom(item.request)
        copy.request_id = head.request_id + "-again"
        await store.enqueue_input(
            sid,
            copy.request_id,
            Queued(copy).encode(),
            front=False,
            now=self.runner.engine.clock(),
        )
        return True
    return again


InputQueue._next = _doubling_next  # type: ignore[method-assign]


class DoublingInterruptStore(SqliteStore):
    @classmethod
    def from_url(cls, url: str, **kw: Any) -> DoublingInterruptStore:
        return cls(path_from_url("sqlite" + url.removeprefix("doublingsqlite")), **kw)
