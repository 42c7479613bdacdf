"""A deliberately broken driver for tests/processes/test_torture.py: SQLite that acknowledges a save
before it is durable. ``save`` and ``append_events`` return at once and write a copy
``LAG_S`` later, in order, in the background; whatever a kill catches in that queue is
lost although the daemon was told it was saved (and so told its client ``ACCEPTED``).
``luoshod torture`` must catch it. Registered as ``lazysqlite://`` by the test, through a
``luoshod.drivers`` entry point it writes next to this file's folder."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import Any

from luoshod_sqlite.driver import SqliteStore, path_from_url

LAG_S = 0.3


class LazySqliteStore(SqliteStore):
    contract_version = 2

    @classmethod
    def from_url(cls, url: str, **kw: Any) -> LazySqliteStore:
        return cls(path_from_url("sqlite" + url.removeprefix("lazysqlite")), **kw)

    def _later(self, write: Any) -> None:
        before = getattr(self, "_tail", None)

        async def in_order() -> None:
            if before is not None:
                with contextlib.suppress(Exception):
                    await before
            await asyncio.sleep(LAG_S)
            with contextlib.suppress(Exception):  # the broken part: nobody hears of it
                await write

        self._tail = asyncio.ensure_future(in_order())

    async def save(self, checkpoint: Any, **kw: Any) -> None:
        self._later(SqliteStore.save(self, copy.deepcopy(checkpoint), **kw))

    async def append_events(self, session_id: str, events: Any, **kw: Any) -> None:
        self._later(SqliteStore.append_events(self, session_id, list(events), **kw))

    async def close(self) -> None:
        tail = getattr(self, "_tail", None)
        if tail is not None:
            with contextlib.suppress(Exception):
                await tail
        await super().close()
