"""A deliberately broken driver for tests/processes/test_torture.py: SQLite whose input queue (R68,
R69) lives in the daemon's memory. ``enqueue_input`` answers at once and writes nothing to
disk, so the daemon acknowledges an input (``input.queued``) that a ``kill -9`` then loses;
everything else is SQLite's. ``luoshod torture`` must catch it and name the lost input.
Registered as ``forgetfulsqlite://`` by the test, as lazy_sqlite.py is."""

from __future__ import annotations

from typing import Any

from luoshod.domain import QueuedInput
from luoshod_sqlite.driver import SqliteStore, path_from_url


class ForgetfulQueueStore(SqliteStore):
    _memory: dict[str, dict[str, QueuedInput]]
    _next: int

    @classmethod
    def from_url(cls, url: str, **kw: Any) -> ForgetfulQueueStore:
        store = cls(path_from_url("sqlite" + url.removeprefix("forgetfulsqlite")), **kw)
        store._memory = {}  # session id -> request id -> its entry
        store._next = 0
        return store

    async def _enqueue_input(
        self, session_id: str, request_id: str, data: bytes, front: bool, now: float
    ) -> QueuedInput:
        queue = self._memory.setdefault(session_id, {})
        if request_id in queue:
            return queue[request_id]
        self._next += 1  # the broken part: acknowledged, and never written to the store
        position = -self._next if front else self._next
        queue[request_id] = QueuedInput(session_id, request_id, position, data, now)
        return queue[request_id]

    async def _queued_inputs(self, session_id: str) -> list[QueuedInput]:
        return sorted(self._memory.get(session_id, {}).values(), key=lambda q: q.position)

    async def _remove_queued_input(self, session_id: str, request_id: str) -> bool:
        return self._memory.get(session_id, {}).pop(request_id, None) is not None

    async def _queued_sessions(self, after: str, limit: int) -> list[str]:
        return sorted(sid for sid, queue in self._memory.items() if queue and sid > after)[:limit]
