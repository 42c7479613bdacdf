"""A deliberately broken daemon for tests/test_torture.py: SQLite, with the input queue's
``InputQueue._next`` as it was before issue 29's fix. A queued input that a run applied
(its request recorded) is dropped from the queue even when a kill cut that run short:
its caller gone, nobody answers it, or the next queued input runs on top of it and one
merged turn answers both. ``luoshod torture`` must catch it (R69). Registered as
``droppingsqlite://`` by the test; importing the driver in the daemon installs the old
``_next`` there."""

from __future__ import annotations

from typing import Any

from luoshod.server.queueing import InputQueue
from luoshod_sqlite.driver import SqliteStore, path_from_url

_fixed_next = InputQueue._next


async def _old_next(self: InputQueue, sid: str) -> bool:
    """The head of the queue is dropped once its request is recorded, ended or not."""
    runner, store = self.runner, self.runner.store
    if runner.runs.get(sid) is None and not runner.runs.draining:
        queued = await store.queued_inputs(sid)
        if (
            queued
            and await store.load(sid) is not None
            and await store.find_request(sid, queued[0].request_id) is not None
        ):
            await store.remove_queued_input(sid, queued[0].request_id)
            return True
    return await _fixed_next(self, sid)


InputQueue._next = _old_next  # type: ignore[method-assign]


class DroppingQueueStore(SqliteStore):
    @classmethod
    def from_url(cls, url: str, **kw: Any) -> DroppingQueueStore:
        return cls(path_from_url("sqlite" + url.removeprefix("droppingsqlite")), **kw)
