"""A deliberately broken driver for tests/processes/test_torture.py: SQLite that ignores a save's
``claim``, so a decided approval stays stored as pending, and two resolutions of one
approval can both win (R33). ``luoshod torture`` must catch it. Registered as
``stickysqlite://`` by the test, as lazy_sqlite.py is."""

from __future__ import annotations

from typing import Any

from luoshod_sqlite.driver import SqliteStore, path_from_url


class StickyApprovalsStore(SqliteStore):
    @classmethod
    def from_url(cls, url: str, **kw: Any) -> StickyApprovalsStore:
        return cls(path_from_url("sqlite" + url.removeprefix("stickysqlite")), **kw)

    async def save(self, checkpoint: Any, **kw: Any) -> None:
        kw.pop("claim", None)  # the broken part: the approval is never claimed
        await SqliteStore.save(self, checkpoint, **kw)
