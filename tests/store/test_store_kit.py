"""The conformance kit as a product: a driver written, installed and run outside this
repository proves itself with the documented command, and a broken copy of it fails with
the broken rule named; a driver built for another store contract is refused, by the kit
and by the daemon, with both versions named.

The driver is examples/luoshod-driver-example (``files://``), copied to a temporary folder
outside the repository's tree and installed from there (``pip install --target``, found
through ``PYTHONPATH``); the kit runs with its working directory there too, so nothing of
this repository's pytest configuration applies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from luoshod.store import CONTRACT_VERSION
from luoshod.store.conformance.plugin import CASES
from tests.support import ROOT

EXAMPLE = ROOT / "examples" / "luoshod-driver-example"
DRIVER = "luoshod_files/driver.py"
BIN = Path(sys.executable).parent
#: The documented command, word for word (docs/storage.md, the example's README).
KIT = [
    str(BIN / "pytest"),
    "--pyargs",
    "luoshod.store.conformance",
    "--luoshod-driver",
    "files=files://{tmp}/store",
]
R7_CHECK = "if checkpoint.version != stored_version + 1:  # R7"
CONTRACT = "contract_version = 2\n"


def install(tmp: Path, name: str, edit: tuple[str, str] | None = None) -> Path:
    """Copy the example to ``tmp/name`` (changing ``edit[0]`` into ``edit[1]`` in its
    driver), install it from there into ``tmp/name-site``, and return that folder."""
    src, site = tmp / name, tmp / f"{name}-site"
    shutil.copytree(
        EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    if edit is not None:
        driver = src / DRIVER
        text = driver.read_text()
        assert text.count(edit[0]) == 1, f"{DRIVER} no longer has {edit[0]!r}"
        driver.write_text(text.replace(edit[0], edit[1]))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(src),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return site


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the repository's tree (the kit's working directory)."""
    folder = tmp_path_factory.mktemp("outside")
    assert not folder.resolve().is_relative_to(ROOT)
    return folder


def run(cmd: list[str], cwd: Path, site: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LUOSHOD_TEST_DRIVERS", "PYTHONPATH")}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def summary(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout.strip().splitlines()[-1]


def test_the_example_driver_passes_the_kit_from_outside_the_repository(outside: Path) -> None:
    site = install(outside, "good")
    result = run(KIT, outside, site)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    line = summary(result)
    passed = int(line.split(" passed")[0].split()[-1])
    assert passed >= 40 and "failed" not in line and "error" not in line, line


def test_a_broken_copy_fails_the_kit_naming_the_rule(outside: Path) -> None:
    # One line changed: the version check of R7 is gone, so any version is accepted.
    site = install(outside, "broken", (R7_CHECK, "if False:  # R7 (broken on purpose)"))
    result = run(KIT, outside, site)
    assert result.returncode == 1, result.stdout[-5000:] + result.stderr[-3000:]
    failed = [ln for ln in result.stdout.splitlines() if ln.startswith("FAILED ")]
    assert any(
        "test_store_contract.py::test_r7_save_needs_the_next_version[files" in ln for ln in failed
    ), failed
    assert all("[files" in ln for ln in failed), failed  # each failure names the driver


def test_with_no_driver_named_the_kit_says_how_to_name_one(outside: Path) -> None:
    result = run(KIT[:3], outside, None)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, result.stdout + result.stderr
    assert "--luoshod-driver NAME=URL" in result.stderr
    assert "passed" not in result.stdout


def test_a_driver_built_for_another_contract_is_refused_naming_both_versions(
    outside: Path,
) -> None:
    other = CONTRACT_VERSION + 1
    site = install(outside, "future", (CONTRACT, f"contract_version = {other}\n"))
    both = (f"built for store contract {other}", f"speaks store contract {CONTRACT_VERSION}")

    serve = [
        str(BIN / "luoshod"),
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--store",
        f"files://{outside}/future-store",
    ]
    result = run(serve, outside, site)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert all(words in lines[0] for words in both), lines[0]
    assert not (outside / "future-store").exists()  # refused before anything was made

    kit = run(KIT, outside, site)
    assert kit.returncode == pytest.ExitCode.USAGE_ERROR, kit.stdout[-3000:] + kit.stderr
    assert all(words in kit.stderr for words in both), kit.stderr


def test_postgres_is_listed_here_even_without_a_server(pytestconfig: pytest.Config) -> None:
    [postgres] = [case for case in pytestconfig.stash[CASES] if case.id == "postgres"]
    from tests.support import postgres_server

    if os.environ.get("LUOSHOD_TEST_POSTGRES_URL") or postgres_server.bin_dir() is not None:
        assert not postgres.skip
    elif os.environ.get("CI"):
        assert not postgres.skip  # CI runs it, and fails when no server starts
    else:
        assert "LUOSHOD_TEST_POSTGRES_URL" in postgres.skip
