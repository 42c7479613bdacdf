"""Live events of each session, for ``Watch``: runs publish their events once the events
are in the store's log; watchers subscribe. ``END`` marks the end of a run."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from luosho.v1 import agent_pb2 as pb

END = None
SHUTDOWN_MARK: pb.Event = pb.Event(type="daemon.shutdown")  # compared by identity


class EventHub:
    def __init__(self) -> None:
        self._subs: dict[str, set[asyncio.Queue[pb.Event | None]]] = defaultdict(set)

    def publish(self, session_id: str, event: pb.Event | None) -> None:
        for q in self._subs.get(session_id, ()):
            q.put_nowait(event)

    def shutdown(self) -> None:
        """End every watcher's stream (the daemon is draining)."""
        for subs in self._subs.values():
            for q in subs:
                q.put_nowait(SHUTDOWN_MARK)

    @contextmanager
    def subscribe(self, session_id: str) -> Iterator[asyncio.Queue[pb.Event | None]]:
        q: asyncio.Queue[pb.Event | None] = asyncio.Queue()
        self._subs[session_id].add(q)
        try:
            yield q
        finally:
            subs = self._subs.get(session_id)
            if subs is not None:
                subs.discard(q)
                if not subs:
                    del self._subs[session_id]
