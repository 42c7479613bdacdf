"""The ``driver`` fixture: every conformance test runs once per driver, with a readable id.

``backend`` builds stores from a driver's URL (to reopen one, or to open one with another
``history_limit``); ``driver`` is a store opened from it. Every store a test opens is closed
after the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from luoshod.store import DEFAULT_HISTORY_LIMIT, Capability, Store, driver_for, store_from_url

DRIVERS = ["memory", "sqlite-file"]


def url_for(name: str, tmp_path: Path) -> str:
    if name == "memory":
        return "memory://"
    if name == "sqlite-file":
        # A directory that does not exist yet: the driver creates it.
        return f"sqlite://{tmp_path}/data/luoshod.db"
    raise AssertionError(name)


@dataclass
class Backend:
    name: str
    url: str
    opened: list[Store] = field(default_factory=list)

    @property
    def capabilities(self) -> frozenset[Capability]:
        return driver_for(self.url).capabilities

    def require(self, capability: Capability) -> None:
        """Skip the test unless the driver declares ``capability``."""
        if capability not in self.capabilities:
            pytest.skip(f"{self.name} does not declare {capability.value}")

    async def open(self, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> Store:
        store = store_from_url(self.url, history_limit=history_limit)
        await store.open()
        self.opened.append(store)
        return store


@pytest.fixture(params=DRIVERS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    b = Backend(request.param, url_for(request.param, tmp_path))
    yield b
    for store in reversed(b.opened):
        await store.close()


@pytest.fixture
async def driver(backend: Backend) -> Store:
    return await backend.open()
