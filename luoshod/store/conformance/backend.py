"""What a kit test is handed: the driver under test (:class:`DriverCase`, from the command
line, the environment or the project's defaults) and :class:`Backend`, which opens stores
of it and closes them after the test."""

from __future__ import annotations

import os
import string
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from luoshod.store import (
    DEFAULT_EVENT_LOG_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    Capability,
    Store,
    driver_for,
    store_from_url,
)

#: The placeholders the kit fills in itself; any other ``{name}`` is a pytest fixture's value.
BUILTIN_FIELDS = frozenset({"tmp", "test_id"})


@dataclass(frozen=True)
class DriverCase:
    """One driver the kit runs against: its test id, a URL template, or why it is skipped.

    In the URL, ``{tmp}`` is a fresh temporary directory of the test, ``{test_id}`` a token
    unique to the test (to pick a fresh database or schema of a server), and any other
    ``{name}`` the value of the pytest fixture ``name`` (a project's conftest can start a
    server in a session fixture and name it here).
    """

    id: str
    url: str
    skip: str = ""

    @property
    def fixtures(self) -> list[str]:
        """The fixtures the URL names."""
        return [
            name
            for _, name, _, _ in string.Formatter().parse(self.url)
            if name and name not in BUILTIN_FIELDS
        ]

    @property
    def scheme_is_known(self) -> bool:
        """Whether the driver can be looked up before a test runs (the scheme is literal)."""
        scheme, sep, _ = self.url.partition(":")
        return bool(sep) and "{" not in scheme


def parse_case(entry: str, where: str) -> DriverCase:
    """``NAME=URL`` as given to ``--luoshod-driver`` or in ``LUOSHOD_TEST_DRIVERS``."""
    name, sep, url = entry.partition("=")
    if not sep or not name.strip() or not url.strip() or any(c.isspace() for c in name):
        raise pytest.UsageError(
            f"{where}: expected NAME=URL (e.g. mine=mine://{{tmp}}/db), got {entry!r}"
        )
    return DriverCase(name, url)


def from_environment() -> list[DriverCase]:
    """``LUOSHOD_TEST_DRIVERS``: whitespace-separated ``NAME=URL`` entries."""
    return [
        parse_case(entry, "LUOSHOD_TEST_DRIVERS")
        for entry in os.environ.get("LUOSHOD_TEST_DRIVERS", "").split()
    ]


@dataclass
class Backend:
    """The driver of one test: builds and opens stores of ``url`` (all closed after the test)."""

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

    def build(self, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> Store:
        """A store of the driver, built but not opened (nor closed after the test)."""
        return store_from_url(self.url, history_limit=history_limit)

    async def open(
        self,
        *,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        event_log_limit: int = DEFAULT_EVENT_LOG_LIMIT,
    ) -> Store:
        """A store of the driver, opened now and closed after the test."""
        store = store_from_url(
            self.url, history_limit=history_limit, event_log_limit=event_log_limit
        )
        await store.open()
        self.opened.append(store)
        return store
