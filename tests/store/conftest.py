"""The store conformance kit's fixtures: every kit test runs once per driver.

``DRIVERS`` lists the drivers the kit runs against, one line each. A driver is named by
its URL; ``{tmp}`` in the URL is replaced by a fresh temporary directory of the test and
``{test_id}`` by a token unique to the test (for a server-based store, to pick a fresh
database or schema). A driver is found from its URL scheme through the ``luoshod.drivers``
entry-point group, so a third-party driver only has to be installed.

More drivers come from the environment, so a third-party driver can run the kit without
editing it::

    LUOSHOD_TEST_DRIVERS='redis=redis://127.0.0.1:6379/{test_id} toy=toy://{tmp}/x' \\
        python -m pytest tests/store -k 'redis or toy'

(whitespace-separated ``id=url`` entries). The ``postgres`` entry runs on the server of
``LUOSHOD_TEST_POSTGRES_URL``, else on a throw-away server started once per session;
without either it is reported as skipped, never dropped (and fails in CI).

``backend`` builds stores of a driver (to reopen one, or to open one with another
``history_limit`` or ``event_log_limit``); ``driver`` is a store opened from it. Every store a test opens is
closed after the test.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import postgres_server
import pytest

from luoshod.store import (
    DEFAULT_EVENT_LOG_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    Capability,
    Store,
    driver_for,
    store_from_url,
)


@dataclass(frozen=True)
class DriverCase:
    """One driver the kit runs against: a test id, a URL template, or why it is skipped."""

    id: str
    url: str
    skip: str = ""


def _postgres() -> DriverCase:
    """``LUOSHOD_TEST_POSTGRES_URL``'s server, else the throw-away one of the session
    (``{server}``: the ``postgres_server`` fixture of tests/conftest.py) when PostgreSQL is
    installed, or in CI, where a missing server fails the tests instead of skipping them.
    Each test gets a schema of its own."""
    url = os.environ.get("LUOSHOD_TEST_POSTGRES_URL", "")
    if not url and (postgres_server.bin_dir() is not None or os.environ.get("CI")):
        url = "{server}"
    if not url:
        reason = (
            "no PostgreSQL server: set LUOSHOD_TEST_POSTGRES_URL, or install PostgreSQL "
            "(`python tests/postgres_server.py install`; make test does)"
        )
        return DriverCase("postgres", "", reason)
    if "{test_id}" not in url:
        url += ("&" if "?" in url else "?") + "schema=kit_{test_id}"
    return DriverCase("postgres", url)


def _from_environment() -> list[DriverCase]:
    """``LUOSHOD_TEST_DRIVERS``: whitespace-separated ``id=url`` entries."""
    cases = []
    for entry in os.environ.get("LUOSHOD_TEST_DRIVERS", "").split():
        name, sep, url = entry.partition("=")
        if not sep or not name or not url:
            raise pytest.UsageError(f"LUOSHOD_TEST_DRIVERS: expected id=url, got {entry!r}")
        cases.append(DriverCase(name, url))
    return cases


DRIVERS: list[DriverCase] = [
    DriverCase("memory", "memory://"),
    DriverCase("sqlite-file", "sqlite://{tmp}/data/luoshod.db"),  # a directory yet to exist
    DriverCase("lmdb", "lmdb://{tmp}/data/lmdb"),
    _postgres(),
    *_from_environment(),
]


@dataclass
class Backend:
    name: str
    url: str
    #: The test's temporary directory: where a file-based store keeps its files.
    directory: Path
    opened: list[Store] = field(default_factory=list)

    @property
    def capabilities(self) -> frozenset[Capability]:
        return driver_for(self.url).capabilities

    def require(self, capability: Capability) -> None:
        """Skip the test unless the driver declares ``capability``."""
        if capability not in self.capabilities:
            pytest.skip(f"{self.name} does not declare {capability.value}")

    @property
    def on_disk_here(self) -> bool:
        """Whether the store keeps its files in :attr:`directory` (so they can be measured)."""
        return str(self.directory) in self.url

    def disk_bytes(self) -> int:
        """Bytes of every file under :attr:`directory`."""
        return sum(p.stat().st_size for p in self.directory.rglob("*") if p.is_file())

    async def open(
        self,
        *,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        event_log_limit: int = DEFAULT_EVENT_LOG_LIMIT,
    ) -> Store:
        store = store_from_url(
            self.url, history_limit=history_limit, event_log_limit=event_log_limit
        )
        await store.open()
        self.opened.append(store)
        return store


def _params() -> list[object]:
    return [
        pytest.param(case, id=case.id, marks=[pytest.mark.skip(reason=case.skip)] * bool(case.skip))
        for case in DRIVERS
    ]


@pytest.fixture(params=_params())
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    case: DriverCase = request.param
    server = request.getfixturevalue("postgres_server").url if "{server}" in case.url else ""
    url = case.url.format(tmp=tmp_path, test_id=uuid.uuid4().hex[:12], server=server)
    b = Backend(case.id, url, tmp_path)
    yield b
    for store in reversed(b.opened):
        await store.close()


@pytest.fixture
async def driver(backend: Backend) -> Store:
    return await backend.open()
