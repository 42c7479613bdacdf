#!/usr/bin/env python3
"""``luoshod torture`` benchmark: what a kill cycle costs, and where its time goes (not a test).

In one run, side by side, in interleaved rounds (so that this shared VM's drift meets both
alike), ``--cycles`` cycles (20) on a fresh SQLite and LMDB store each:

  * ``--cold-start``: every daemon started as ``python -m luoshod serve`` (~0.9 s of imports);
  * the default: every daemon forked from torture's fork server, which imported luoshod once.

Both kill a real daemon process a cycle (kill -9 by pid); the figures are seconds a cycle
(the median of the rounds) and the report's split (waiting for daemons to listen, running
sessions until the kill, checking the store). ``--ci`` also runs the configuration of
``tests/processes/test_torture.py`` (SQLite 140, LMDB 140 and PostgreSQL 24 cycles with two
daemons, at
once) when ``LUOSHOD_TEST_POSTGRES_URL`` names a server, and prints its wall time against the
target (300 cycles, 0 violations, under 5 minutes).

    .venv/bin/python bench/torture.py                # 2 rounds of 20 cycles
    .venv/bin/python tests/support/postgres_server.py run -- .venv/bin/python bench/torture.py --ci
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable  # run it with the project's .venv/bin/python
CI_RUN = {"sqlite": 140, "lmdb": 140, "postgresql": 24}
CI_TARGET_S = 300


def torture(store: str, work: Path, *args: str) -> tuple[float, dict]:
    """One ``luoshod torture`` run: its wall seconds and its JSON report."""
    report = work / "report.json"
    start = time.perf_counter()
    done = subprocess.run(
        [
            PYTHON,
            "-m",
            "luoshod",
            "torture",
            "--store",
            store,
            "--quiet",
            "--report",
            str(report),
            "--work-dir",
            str(work / "work"),
            *args,
        ],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or not report.exists():
        raise RuntimeError(
            f"torture on {store}: exit "
            f"{done.returncode}\n{done.stdout[-3000:]}{done.stderr[-2000:]}"
        )
    return elapsed, json.loads(report.read_text())


def side_by_side(cycles: int, rounds: int, root: Path) -> None:
    modes = {"cold start": ["--cold-start"], "fork server": []}
    rows: dict[tuple[str, str], list[tuple[float, dict]]] = {}
    for r in range(rounds):
        for driver in ("sqlite", "lmdb"):
            for mode, extra in modes.items():
                work = root / f"{driver}-{mode.replace(' ', '-')}-{r}"
                work.mkdir(parents=True)
                url = f"{driver}:///{work}/store"
                rows.setdefault((driver, mode), []).append(
                    torture(url, work, "--cycles", str(cycles), "--seed", str(14 + r), *extra)
                )
    print(
        f"luoshod torture, {cycles} cycles a run, {rounds} round(s) interleaved; medians of the "
        "rounds"
    )
    print(
        f"{'driver':<7} {'daemons started by':<12} {'s/cycle':>8} {'listen s':>9} {'runs s':>7} "
        f"{'checks s':>9} {'vs cold':>8}"
    )
    for driver in ("sqlite", "lmdb"):
        cold = statistics.median(w / cycles for w, _ in rows[(driver, "cold start")])
        for mode in modes:
            got = rows[(driver, mode)]
            per = statistics.median(w / cycles for w, _ in got)
            spent = [r["seconds_spent"] for _, r in got]

            def phase(name: str, spent: list[dict] = spent) -> float:
                return statistics.median(s.get(name, 0.0) for s in spent)

            print(
                f"{driver:<7} {mode:<12} {per:>8.3f} "
                f"{phase('waiting for daemons to listen'):>9.1f} "
                f"{phase('running sessions until the kill'):>7.1f} "
                f"{phase('checking the store'):>9.1f} "
                f"{per / cold:>7.2f}x"
            )
            assert all(not r["violations"] for _, r in got), (
                "a violation: see the reports under " + str(root)
            )


def ci_run(root: Path) -> int:
    pg = os.environ.get("LUOSHOD_TEST_POSTGRES_URL", "")
    if not pg:
        print(
            "--ci: LUOSHOD_TEST_POSTGRES_URL is not set "
            "(run under tests/support/postgres_server.py run --)"
        )
        return 1
    stores = {
        "sqlite": f"sqlite:///{root}/ci-sqlite/t.db",
        "lmdb": f"lmdb:///{root}/ci-lmdb/t.lmdb",
        "postgresql": pg,
    }
    start = time.perf_counter()
    procs = {}
    for name, cycles in CI_RUN.items():
        work = root / f"ci-{name}"
        work.mkdir(parents=True, exist_ok=True)
        daemons = "2" if name == "postgresql" else "1"
        procs[name] = (
            subprocess.Popen(
                [
                    PYTHON,
                    "-m",
                    "luoshod",
                    "torture",
                    "--store",
                    stores[name],
                    "--cycles",
                    str(cycles),
                    "--seed",
                    "14",
                    "--daemons",
                    daemons,
                    "--quiet",
                    "--report",
                    str(work / "report.json"),
                    "--work-dir",
                    str(work / "work"),
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            ),
            work,
        )
    total, violations = 0, 0
    lines = []
    for name, (proc, work) in procs.items():
        proc.communicate()
        r = json.loads((work / "report.json").read_text())
        total += r["cycles"]
        violations += len(r["violations"])
        lines.append(
            f"  {name:<10} {r['cycles']:>4} cycles in {r['stats']['seconds']:>4} s, kills "
            f"{r['kills']}, "
            f"{len(r['violations'])} violation(s); {r['seconds_spent']}"
        )
    wall = time.perf_counter() - start
    print(
        "CI run (tests/processes/test_torture.py's configuration, the three at once): "
        f"{total} cycles, "
        f"{violations} violation(s), {wall:.0f} s wall"
    )
    print("\n".join(lines))
    ok = total >= 300 and violations == 0 and wall < CI_TARGET_S
    print(f"target: >= 300 cycles, 0 violations, < {CI_TARGET_S} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cycles", type=int, default=20, help="cycles a run (20)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds (2)")
    ap.add_argument(
        "--ci", action="store_true", help="also the CI configuration (needs PostgreSQL)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="luoshod-bench-torture-") as tmp:
        side_by_side(args.cycles, args.rounds, Path(tmp))
        if args.ci:
            return ci_run(Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
