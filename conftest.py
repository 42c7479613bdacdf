"""What every test of this repository shares, wherever it lives (tests/, drivers/*/tests/,
and the conformance kit in luoshod/store/conformance/): the throw-away PostgreSQL server,
and the drivers the kit runs against when none is named on the command line.

The kit itself is the pytest plugin ``luoshod.store.conformance.plugin`` (a ``pytest11``
entry point of luoshod); this file only gives it this repository's defaults, through its
``pytest_luoshod_drivers`` hook. Outside this repository's pytest configuration (a driver
author running the kit from another folder, with luoshod installed from this checkout),
it gives none: only ``--luoshod-driver`` counts there.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))  # tests.support, whatever pytest's import mode

from luoshod.store.conformance.backend import DriverCase  # noqa: E402
from tests.support.postgres_server import PostgresServer, ServerUnavailable, bin_dir  # noqa: E402


def _postgres() -> DriverCase:
    """``LUOSHOD_TEST_POSTGRES_URL``'s server, else the throw-away one of the session (the
    ``postgres_server_url`` fixture) when PostgreSQL is installed, or in CI, where a
    missing server fails the tests instead of skipping them. Each test gets a schema of
    its own."""
    url = os.environ.get("LUOSHOD_TEST_POSTGRES_URL", "")
    if not url and (bin_dir() is not None or os.environ.get("CI")):
        url = "{postgres_server_url}"
    if not url:
        reason = (
            "no PostgreSQL server: set LUOSHOD_TEST_POSTGRES_URL, or install PostgreSQL "
            "(`python tests/support/postgres_server.py install`; make test does)"
        )
        return DriverCase("postgres", "", reason)
    if "{test_id}" not in url:
        url += ("&" if "?" in url else "?") + "schema=kit_{test_id}"
    return DriverCase("postgres", url)


def pytest_luoshod_drivers(config: pytest.Config) -> list[DriverCase]:
    """The kit's drivers here: every driver of this repository, file-backed where it can be."""
    if config.rootpath != ROOT:
        return []
    return [
        DriverCase("memory", "memory://"),
        DriverCase("sqlite-file", "sqlite://{tmp}/data/luoshod.db"),  # a directory yet to exist
        DriverCase("lmdb", "lmdb://{tmp}/data/lmdb"),
        _postgres(),
    ]


# -- PostgreSQL ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A throw-away PostgreSQL server for the whole session (tests/support/postgres_server.py),
    started by the first test that needs it and removed at the end, whatever the tests did.

    Without PostgreSQL's programs the tests that need it are skipped, except in CI (``CI``
    set), where they fail: `make test` installs PostgreSQL first. The server runs with
    ``fsync=off``: the tests kill clients, never the server, so its syncs would only cost
    time (the benchmark keeps them).
    """
    server = PostgresServer(fsync=False)
    try:
        server.start()
    except ServerUnavailable as e:
        server.remove()
        if os.environ.get("CI"):
            pytest.fail(f"CI needs PostgreSQL and it could not be started: {e}")
        pytest.skip(f"no PostgreSQL server: {e}")
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def postgres_server_url(postgres_server: PostgresServer) -> str:
    """The session's server's URL (its ``postgres`` database), for the kit's URL template."""
    return postgres_server.url


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """A ``postgresql://`` URL of a new, empty database of the session's server."""
    return postgres_server.create_database()
