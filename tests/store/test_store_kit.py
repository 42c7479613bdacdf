"""The kit itself: a third-party driver, installed and registered like any other (an entry
point of the ``luoshod.drivers`` group), runs it through ``LUOSHOD_TEST_DRIVERS``; a
driver that breaks the contract fails it; a postgres entry is skipped, never dropped."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import postgres_server

from .conftest import DRIVERS

ROOT = Path(__file__).resolve().parents[2]

TOY_DRIVER = '''
from luoshod.store.memory import MemoryStore


class ToyStore(MemoryStore):
    """A third-party driver: the memory store under its own scheme."""

    @classmethod
    def from_url(cls, url, *, history_limit=50):
        if not url.startswith("toy://"):
            raise ValueError(url)
        return cls(history_limit=history_limit)


class SloppyStore(ToyStore):
    """Breaks R7: accepts any version."""

    async def save(self, checkpoint, **kwargs):
        s = self._sessions.get(checkpoint.session_id)
        if s is not None and s.latest is not None:
            s.latest.header.version = checkpoint.version - 1
        await super().save(checkpoint, **kwargs)

    @classmethod
    def from_url(cls, url, *, history_limit=50):
        return cls(history_limit=history_limit)
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory to put on PYTHONPATH that holds an "installed" third-party driver."""
    site = tmp_path_factory.mktemp("site")
    (site / "toy_driver.py").write_text(TOY_DRIVER)
    dist = site / "toy_driver-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-driver\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [luoshod.drivers]
            toy = toy_driver:ToyStore
            sloppy = toy_driver:SloppyStore
            """
        )
    )
    return site


def run_kit(site: Path, drivers: str, select: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "LUOSHOD_TEST_DRIVERS": drivers,
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "tests/store", "-q", "-p", "no:cacheprovider",
         "-k", select, "-o", "addopts="],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )


def test_a_third_party_driver_runs_the_kit(site: Path) -> None:
    result = run_kit(site, "toy=toy://{tmp}", "toy")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = result.stdout.strip().splitlines()[-1]
    passed = int(summary.split(" passed")[0].split()[-1])
    assert passed >= 40, summary  # the kit's rules, each run against the toy driver


def test_a_driver_that_breaks_the_contract_fails_the_kit(site: Path) -> None:
    result = run_kit(site, "sloppy=sloppy://", "sloppy and r7")
    assert result.returncode == 1, result.stdout[-3000:]
    assert "FAILED tests/store/test_store_contract.py::test_r7_save_needs_the_next_version" in (
        result.stdout
    )


def test_postgres_is_listed_even_without_a_server() -> None:
    [postgres] = [case for case in DRIVERS if case.id == "postgres"]
    if os.environ.get("LUOSHOD_TEST_POSTGRES_URL") or postgres_server.bin_dir() is not None:
        assert not postgres.skip
    elif os.environ.get("CI"):
        assert not postgres.skip  # CI runs it, and fails when no server starts
    else:
        assert "LUOSHOD_TEST_POSTGRES_URL" in postgres.skip
