"""The conformance kit's pytest plugin, registered as ``pytest11: luoshod-conformance``.

It adds ``--luoshod-driver NAME=URL`` (repeatable) and runs every kit test once per driver
named, with ``NAME`` as the test id: ``test_r7_save_needs_the_next_version[mine-stale]``. The
drivers come from, in this order:

- ``--luoshod-driver`` on the command line; when there is none, the project's defaults,
  from its conftest's ``pytest_luoshod_drivers`` hook (:mod:`.hooks`);
- ``LUOSHOD_TEST_DRIVERS`` in the environment (whitespace-separated ``NAME=URL``), added.

With no driver at all, collecting a kit test is a usage error that says how to name one,
never a run of zero tests. Everything here is inert until a kit test is collected: the
plugin is loaded by every pytest of an environment where luoshod is installed.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from luoshod.store import Store

from .backend import Backend, DriverCase, from_environment, parse_case

COMMAND = "pytest --pyargs luoshod.store.conformance --luoshod-driver NAME=URL"
CASES = pytest.StashKey[list[DriverCase]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("luoshod", "luoshod store conformance kit")
    group.addoption(
        "--luoshod-driver",
        action="append",
        default=[],
        dest="luoshod_drivers",
        metavar="NAME=URL",
        help="run the store conformance kit against the driver of URL, with test id NAME "
        "(repeatable); in URL, {tmp} is a fresh directory of the test, {test_id} a unique "
        "token, any other {name} the value of the fixture name",
    )


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hooks

    pluginmanager.add_hookspecs(hooks)


def pytest_configure(config: pytest.Config) -> None:
    named = [parse_case(e, "--luoshod-driver") for e in config.option.luoshod_drivers]
    if not named:
        named = [
            case for cases in config.hook.pytest_luoshod_drivers(config=config) for case in cases
        ]
    cases = named + from_environment()
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids):
        raise pytest.UsageError(f"luoshod conformance kit: a driver is named twice: {ids}")
    config.stash[CASES] = cases


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Mark the kit's coroutine tests for pytest-asyncio, so that they run in its strict
    mode too (the default of a project without asyncio settings, such as a driver's)."""
    module = getattr(collector, "module", None)
    if (
        inspect.iscoroutinefunction(obj)
        and getattr(module, "__name__", "").startswith(__package__ + ".")
        and not any(m.name == "asyncio" for m in getattr(obj, "pytestmark", ()))
    ):
        pytest.mark.asyncio(obj)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    cases = metafunc.config.stash[CASES]
    if "backend" in metafunc.fixturenames and cases:
        metafunc.parametrize(
            "backend",
            [
                pytest.param(c, id=c.id, marks=[pytest.mark.skip(reason=c.skip)] * bool(c.skip))
                for c in cases
            ],
            indirect=True,
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any("backend" in getattr(item, "fixturenames", ()) for item in items):
        return
    cases = config.stash[CASES]
    if not cases:
        raise pytest.UsageError(
            "luoshod conformance kit: no store driver to test. Name one (or more) with "
            f"--luoshod-driver NAME=URL, e.g.\n  {COMMAND.replace('NAME=URL', 'mine=mine://{tmp}/db')}"
            "\n({tmp}: a fresh directory per test; {test_id}: a token unique to the test)"
        )
    from luoshod.store import driver_for

    for case in cases:
        if case.skip or not case.scheme_is_known:
            continue
        try:
            driver_for(case.url)
        except ValueError as e:  # not installed, or built for another contract
            raise pytest.UsageError(f"luoshod conformance kit: {case.id}={case.url}: {e}") from None


@pytest_asyncio.fixture
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """The driver under test (one parameter per driver named), whose stores are closed
    after the test."""
    case: DriverCase = request.param
    values = {name: str(request.getfixturevalue(name)) for name in case.fixtures}
    url = case.url.format(tmp=tmp_path, test_id=uuid.uuid4().hex[:12], **values)
    b = Backend(case.id, url, tmp_path)
    yield b
    for store in reversed(b.opened):
        await store.close()


@pytest_asyncio.fixture
async def driver(backend: Backend) -> Store:
    """A store of the driver under test, opened (and closed after the test)."""
    return await backend.open()
