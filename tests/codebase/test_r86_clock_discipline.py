"""R86's clock discipline: the code of durable timers reads wall time only through the
engine's one clock (``Engine.clock``), never the system's, so a clock moved ahead moves
every wake time with it (tests/daemon/test_r86_sleep.py moves it a day)."""

from __future__ import annotations

import ast

from tests.support import ROOT

#: The modules of R86: the tool and its waking.
TIMER_CODE = ("luoshod/engine/timers.py", "luoshod/server/waker.py")
#: Calls that read the system's clock.
WALL_CLOCK = {
    ("time", "time"),
    ("time", "time_ns"),
    ("datetime", "now"),
    ("datetime", "utcnow"),
    ("datetime", "today"),
    ("date", "today"),
    ("loop", "time"),
}


def wall_clock_reads(path: str) -> list[str]:
    tree = ast.parse((ROOT / path).read_text())
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and (node.value.id, node.attr) in WALL_CLOCK
        ):
            found.append(f"{path}:{node.lineno} {node.value.id}.{node.attr}")
        if isinstance(node, ast.ImportFrom) and node.module == "time":
            found += [f"{path}:{node.lineno} from time import {a.name}" for a in node.names]
    return found


def test_r86_timer_code_reads_time_only_through_the_engines_clock() -> None:
    assert [r for p in TIMER_CODE for r in wall_clock_reads(p)] == []
    for path in TIMER_CODE:
        assert "import time\n" not in (ROOT / path).read_text(), path
    waker = (ROOT / "luoshod/server/waker.py").read_text()
    assert waker.count("engine.clock()") >= 3  # every reading of the time is the engine's


def test_r86_the_check_finds_a_wall_clock_read() -> None:
    # The check itself: the lease module reads time.time() (a lease expiry, not a timer).
    assert wall_clock_reads("luoshod/engine/lease.py") != []
