"""The layout's boundaries: the ``[tool.importlinter]`` contracts of pyproject.toml hold
(``make test`` runs ``lint-imports`` too; this is for a plain pytest run), and they look
at every module of the tree, so none holds only because it checks nothing."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

from tests.support import ROOT

CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on ``tree`` (its pyproject.toml; its packages shadow the installed ones:
    lint-imports puts its working directory first on the path)."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports; "
            "sys.exit(lint_imports(no_cache=True, no_logo=True))",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_import_contracts_are_kept() -> None:
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def _modules_on_disk(package: Path) -> set[str]:
    names = set()
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_contracts_see_every_module() -> None:
    """grimp skips a folder without ``__init__.py`` inside a regular package (it took
    engine/ and server/ for orphans once): every contract about them then passed."""
    roots = CONFIG["root_packages"]
    graph = grimp.build_graph(*roots, include_external_packages=True, cache_dir=None)
    folders = [
        ROOT / "luoshod",
        *(ROOT / "drivers" / r.removeprefix("luoshod_") / r for r in roots if r != "luoshod"),
    ]
    on_disk = set().union(*(_modules_on_disk(f) for f in folders))
    assert on_disk - graph.modules == set()


#: contract id → (file, relative to a copy of the tree with the drivers beside luoshod/; an
#: import that breaks that contract alone; the line lint-imports prints for it).
VIOLATIONS = {
    "layers": (
        "luoshod/observe/tracing.py",
        "from ..server import status",
        "luoshod.observe.tracing -> luoshod.server.status",
    ),
    "engine": (
        "luoshod/engine/merge.py",
        "import grpc",
        "luoshod.engine is not allowed to import grpc",
    ),
    "engine-surface": (
        "luoshod/server/retention.py",
        "from ..engine import lease",
        "luoshod.server.retention -> luoshod.engine.lease",
    ),
    "run-port": (
        "luoshod/engine/subagents.py",
        "from .loop import Run",
        "luoshod.engine.subagents -> luoshod.engine.loop",
    ),
    "runner": (
        "luoshod/server/queueing.py",
        "from . import service",
        "luoshod.server.queueing -> luoshod.server.service",
    ),
    "no-driver-imports": (
        "luoshod/store/copy.py",
        "import luoshod_lmdb",
        "luoshod is not allowed to import luoshod_lmdb",
    ),
    "drivers": (
        "luoshod_sqlite/queries.py",
        "from luoshod.engine import merge",
        "luoshod_sqlite is not allowed to import luoshod.engine",
    ),
    "drivers-apart": (
        "luoshod_postgres/queries.py",
        "import luoshod_lmdb",
        "luoshod_postgres is not allowed to import luoshod_lmdb",
    ),
    "client-cli": (
        "luoshod/cli/admin/render.py",
        "import pydantic",
        "luoshod.cli.admin is not allowed to import pydantic",
    ),
}


def test_every_contract_is_checked() -> None:
    assert {c["id"] for c in CONFIG["contracts"]} == VIOLATIONS.keys()


@pytest.mark.parametrize("contract", VIOLATIONS)
def test_a_contract_fails_on_its_violation(contract: str, tmp_path: Path) -> None:
    """Each contract, on a copy of the tree with one import across its boundary, is the
    one contract broken, and lint-imports names the import."""
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "static")
    shutil.copytree(ROOT / "luoshod", tmp_path / "luoshod", ignore=skip)
    for root in CONFIG["root_packages"][1:]:
        shutil.copytree(
            ROOT / "drivers" / root.removeprefix("luoshod_") / root, tmp_path / root, ignore=skip
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    file, line, expected = VIOLATIONS[contract]
    with (tmp_path / file).open("a") as f:
        f.write(f"\n{line}  # noqa\n")
    done = lint(tmp_path)
    assert done.returncode == 1, done.stdout
    text = " ".join(done.stdout.split())
    assert f"Contracts: {len(VIOLATIONS) - 1} kept, 1 broken." in text
    name = next(c["name"] for c in CONFIG["contracts"] if c["id"] == contract)
    assert f"{name} BROKEN" in text
    assert expected in text


def test_a_daemon_without_an_http_listener_loads_no_http_stack() -> None:
    """aiohttp and the console are imported only when ``http_listen`` asks for them: a
    sidecar without the console pays nothing for it (~10 MB of RSS)."""
    code = (
        "import sys, luoshod.server.app, luoshod.settings, luoshod.cli;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'aiohttp' or "
        "m.startswith('luoshod.http')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def imports_between_test_modules(root: Path) -> list[str]:
    """``file: module`` for each import of a test module (``test_*.py``) by another module
    of ``root``'s tests: what several test modules share lives in tests/support (helpers)
    or a folder's conftest.py (fixtures), so a test module never runs another's import-time
    set-up, nor its tests when a fixture is imported by name."""
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [
                f"{path.relative_to(root)}: {n}"
                for n in names
                if n.startswith("tests.") and n.rsplit(".", 1)[-1].startswith("test_")
            ]
    return found


def test_no_test_module_imports_another() -> None:
    assert imports_between_test_modules(ROOT) == []


def test_the_check_names_a_test_module_imported_by_another(tmp_path: Path) -> None:
    (tmp_path / "tests" / "http").mkdir(parents=True)
    (tmp_path / "tests" / "http" / "test_a.py").write_text("X = 1\n")
    (tmp_path / "tests" / "http" / "test_b.py").write_text(
        "import tests.support.harness\nfrom tests.http.test_a import X\n"
    )
    assert imports_between_test_modules(tmp_path) == ["tests/http/test_b.py: tests.http.test_a"]
