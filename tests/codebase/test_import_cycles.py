"""No import cycle between the files of ``luoshod/`` or of a driver (``drivers/*/``).

import-linter checks the layers between packages; a cycle inside a layer (two modules of
the server, or the engine's loop and its sub-agents, importing each other) passes it. This
test reads every module with :mod:`ast`, takes each import it makes (at module level, in a
function, or under ``TYPE_CHECKING``: each says that one file needs the other), resolves
relative imports, and fails naming each cycle as ``a -> b -> a``.

An edge goes to the module an import names: ``from .engine import run_digest`` in
``luoshod.engine`` is an edge to ``luoshod.engine.engine``; ``from . import loop`` one to
``luoshod.engine.loop``; ``from luoshod.engine import Run`` one to the package
``luoshod.engine`` (its ``__init__.py``). The parents Python runs first are not edges: a
package's ``__init__.py`` that gathers its modules would otherwise be in a cycle with each.
"""

from __future__ import annotations

import ast
import shutil
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def package_roots(root: Path = ROOT) -> list[Path]:
    """The top-level packages this test looks at: luoshod/ and each driver's package."""
    drivers = sorted(p.parent for p in (root / "drivers").glob("*/luoshod_*/__init__.py"))
    return [root / "luoshod", *drivers]


def modules_of(package: Path) -> dict[str, Path]:
    """Dotted name → file, for every ``.py`` file under ``package`` (a top-level package)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _within(name: str, known: Iterable[str] | Mapping[str, Path]) -> str | None:
    """``name`` or its longest prefix that is a known module (None: outside the tree)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def imports_of(module: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of ``known`` that ``module`` (the file ``path``) imports anywhere in it."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (hit := _within(alias.name, known)) is not None:
                    targets.add(hit)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                if node.level - 1 >= len(base_parts):
                    raise ValueError(
                        f"{path}:{node.lineno}: relative import beyond the top-level package"
                    )
                base = ".".join(base_parts[: len(base_parts) - (node.level - 1)])
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                hit = submodule if submodule in known else _within(source, known)
                if hit is not None:
                    targets.add(hit)
    targets.discard(module)
    return targets


def import_graph(packages: Iterable[Path]) -> dict[str, set[str]]:
    """Module → the modules of the same trees it imports."""
    known: dict[str, Path] = {}
    for package in packages:
        known.update(modules_of(package))
    return {name: imports_of(name, path, known) for name, path in known.items()}


def _strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's components (iterative), each sorted, those of more than one module only."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _shortest_cycle(graph: Mapping[str, set[str]], component: list[str]) -> list[str]:
    """A shortest cycle through the first module of ``component``, as a closed path."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    raise AssertionError(f"no cycle through {start}")  # a component of two or more has one


def cycles(graph: Mapping[str, set[str]]) -> list[str]:
    """One line per tangle (a set of modules that reach each other): a cycle through it,
    ``a -> b -> a``, and the other modules of that set when there are more."""
    lines = []
    for component in _strongly_connected(graph):
        path = _shortest_cycle(graph, component)
        line = " -> ".join(path)
        rest = sorted(set(component) - set(path))
        lines.append(line + (f" (with {', '.join(rest)})" if rest else ""))
    return lines


def test_no_import_cycle_in_the_daemon_or_the_drivers() -> None:
    graph = import_graph(package_roots())
    assert (
        len(graph) > 100 and {"luoshod_sqlite", "luoshod_lmdb", "luoshod_postgres"} <= graph.keys()
    )
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(found)


# The checker itself, on small packages made here.


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / next(iter(files)).split("/")[0]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/a.py": "from . import b\n",
                "pkg/b.py": "from .a import x\n",
            },
            ["pkg.a -> pkg.b -> pkg.a"],
            id="module-level-relative",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "",
                "pkg/a.py": "import pkg.sub.c\n",
                "pkg/sub/__init__.py": "",
                "pkg/sub/c.py": "def f():\n    from ..b import y\n",
                "pkg/b.py": "def g():\n    from pkg import a\n",
            },
            ["pkg.a -> pkg.sub.c -> pkg.b -> pkg.a"],
            id="inside-functions-two-levels-up",
        ),
        pytest.param(
            {
                "pkg/__init__.py": "from .a import A\n",
                "pkg/a.py": (
                    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import B\n"
                ),
            },
            ["pkg -> pkg.a -> pkg"],
            id="through-the-package-init",
        ),
    ],
)
def test_the_checker_names_a_cycle(
    files: dict[str, str], expected: list[str], tmp_path: Path
) -> None:
    package = _package(tmp_path, files)
    assert cycles(import_graph([package])) == expected


def test_the_checker_passes_a_tree_without_cycles(tmp_path: Path) -> None:
    """Parents are not edges: a package gathering its modules, which import each other one
    way and the standard library, is no cycle."""
    package = _package(
        tmp_path,
        {
            "pkg/__init__.py": "from .a import A\nfrom .b import B\n",
            "pkg/a.py": "import os\nfrom .b import B\n",
            "pkg/b.py": "import json\ndef f():\n    from pkg.c import C\n",
            "pkg/c.py": "from . import d\n",
            "pkg/d.py": "",
        },
    )
    graph = import_graph([package])
    assert (
        graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.c"} and graph["pkg.c"] == {"pkg.d"}
    )
    assert cycles(graph) == []


def test_the_checker_names_each_tangle_across_packages(tmp_path: Path) -> None:
    """Two top-level packages (the daemon and a driver) and two separate tangles."""
    one = _package(
        tmp_path,
        {
            "one/__init__.py": "",
            "one/x.py": "import two.y\n",
            "one/z.py": "from . import w\n",
            "one/w.py": "from .z import q\n",
        },
    )
    two = _package(tmp_path, {"two/__init__.py": "", "two/y.py": "def f():\n    import one.x\n"})
    assert cycles(import_graph([one, two])) == [
        "one.w -> one.z -> one.w",
        "one.x -> two.y -> one.x",
    ]


@pytest.mark.parametrize(
    ("file", "line", "expected"),
    [
        pytest.param(
            "luoshod/engine/subagents.py",
            "from .loop import Run",
            "luoshod.engine.loop -> luoshod.engine.subagents -> luoshod.engine.loop",
            id="engine",
        ),
        pytest.param(
            "luoshod/server/queueing.py",
            "def f():\n    from .service import AgentService",
            "luoshod.server.queueing -> luoshod.server.service -> luoshod.server.queueing",
            id="server",
        ),
    ],
)
def test_the_checker_names_a_tangle_put_back_into_the_tree(
    file: str, line: str, expected: str, tmp_path: Path
) -> None:
    """On a copy of luoshod/, one import that ties two modules again is named."""
    shutil.copytree(
        ROOT / "luoshod",
        tmp_path / "luoshod",
        ignore=shutil.ignore_patterns("__pycache__", "static"),
    )
    with (tmp_path / file).open("a") as f:
        f.write(f"\n\n{line}\n")
    assert cycles(import_graph([tmp_path / "luoshod"])) == [expected]
