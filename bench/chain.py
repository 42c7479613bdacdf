#!/usr/bin/env python3
"""What the hash chain (R91) costs: with it and without it, side by side (not a test).

1. Per step, through the daemon: ``bench/steps.py``'s scripted agent (20 tool steps and
   a final turn, driven over gRPC by the Python client), on ``sqlite://`` and
   ``lmdb://``, by the daemon as released and by the same daemon with the link replaced
   by none (both started by this script, as ``serve-chained`` and ``serve-unchained``:
   the headers of the latter carry no ``chain``). Steps/s and the daemon's CPU a step,
   the median of ``--rounds`` rounds in which the two alternate.
2. Per save, through the store API alone (no engine, no gRPC: the chain's share is the
   largest it can be): the process's CPU a save, the two modes alternating, median of
   the rounds; 16 sessions, two saves a turn as a run makes them (a turn with a tool
   call; its 1 KiB result and the answer).
3. The link alone, for a save adding two messages to transcripts of 10 to 10,000
   messages: flat, since a save hashes only what it adds.

    .venv/bin/python bench/chain.py            # a few minutes
    .venv/bin/python bench/chain.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from luoshod.domain import Checkpoint, Message, Role, ToolCall
from luoshod.store import store_from_url
from luoshod.store.kit import chain

RESULT = '{"rows": [' + ",".join(['{"id": 1, "name": "a row of a result"}'] * 25) + "]}"
REAL_LINK = chain.link_save


def _no_link(cp: Checkpoint, stored_messages: int) -> str:
    return ""


# -- 1. per step, through the daemon ------------------------------------------------------


async def engine_cells(rounds: int, sessions: int, concurrency: int) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from _common import PYTHON
    from steps import Target, bench_target

    def daemon(store: str, linked: bool) -> Target:
        """A daemon started by this script (the same way with the chain and without)."""
        mode = "serve-chained" if linked else "serve-unchained"

        def argv(port: int, tmp: Path) -> list[str]:
            url = store.format(tmp=tmp)
            listen = f"127.0.0.1:{port}"
            return [PYTHON, __file__, mode, "--listen", listen, "--store", url]

        return Target(f"{store.split(':')[0]}:// {mode}", argv, True)

    stores = {"sqlite": "sqlite://{tmp}/bench.db", "lmdb": "lmdb://{tmp}/bench-lmdb"}
    print(f"per step: {sessions} sessions, {concurrency} at once, median of {rounds} rounds")
    print(f"{'store':8} {'steps/s with':>13} {'without':>9} {'CPU/step with':>14} {'without':>9}")
    for name, template in stores.items():
        got: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for r in range(rounds):
            for linked in (True, False) if r % 2 == 0 else (False, True):
                target = daemon(template, linked)
                tmp = Path(tempfile.mkdtemp(prefix="chain-steps-"))
                try:
                    (cell,) = await bench_target(target, [(concurrency, sessions)], tmp)
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
                if cell.error:
                    raise SystemExit(f"{target.name}: {cell.error}")
                got[linked].append((cell.steps_per_s, cell.cpu_us_per_step))
        rate = {k: statistics.median(x for x, _ in v) for k, v in got.items()}
        cpu = {k: statistics.median(y for _, y in v) for k, v in got.items()}
        print(
            f"{name:8} {rate[True]:>11,.0f}/s {rate[False]:>7,.0f}/s "
            f"{cpu[True]:>11,.0f} µs {cpu[False]:>6,.0f} µs  ({cpu[True] / cpu[False]:.2f}x CPU)"
        )


# -- 2. per save, through the store API ---------------------------------------------------


async def one_session(store, sid: str, turns: int) -> int:  # type: ignore[no-untyped-def]
    cp = Checkpoint(sid, [Message(Role.SYSTEM, "You look things up."), Message(Role.USER, "go")])
    stored, saves = 0, 0
    for t in range(turns):
        call = ToolCall(f"call_{t}", "lookup", '{"q": "rows"}')
        cp.messages.append(Message(Role.ASSISTANT, "", (call,)))
        cp.step_index += 1
        cp.usage.total_tokens += 100
        cp.version += 1
        await store.save(cp, stored_messages=stored)
        stored = len(cp.messages)
        cp.messages.append(Message(Role.TOOL, RESULT, (), call.id, "lookup"))
        cp.messages.append(Message(Role.ASSISTANT, f"answer {t}"))
        cp.version += 1
        await store.save(cp, stored_messages=stored)
        stored = len(cp.messages)
        saves += 2
    return saves


async def store_cell(url: str, sessions: int, turns: int, linked: bool) -> float:
    """The process's CPU µs a save (the database threads' included)."""
    chain.link_save = REAL_LINK if linked else _no_link
    store = store_from_url(url)
    await store.open()
    try:
        start = time.process_time()
        done = await asyncio.gather(*(one_session(store, f"s{i}", turns) for i in range(sessions)))
        return (time.process_time() - start) / sum(done) * 1e6
    finally:
        await store.close()
        chain.link_save = REAL_LINK


async def store_cells(rounds: int, sessions: int, turns: int) -> None:
    print(f"\nper save: {sessions} sessions x {turns} turns, median of {rounds} rounds")
    print(f"{'driver':8} {'CPU/save with':>14} {'without':>9}")
    for driver in ("memory", "sqlite", "lmdb"):
        got: dict[bool, list[float]] = {True: [], False: []}
        for r in range(rounds):
            for linked in (True, False) if r % 2 == 0 else (False, True):
                tmp = Path(tempfile.mkdtemp(prefix="chain-"))
                try:
                    url = {
                        "memory": "memory://",
                        "sqlite": f"sqlite:///{tmp}/c.db",
                        "lmdb": f"lmdb://{tmp}/lmdb",
                    }[driver]
                    got[linked].append(await store_cell(url, sessions, turns, linked))
                finally:
                    shutil.rmtree(tmp, ignore_errors=True)
        w, wo = statistics.median(got[True]), statistics.median(got[False])
        print(f"{driver:8} {w:>11,.1f} µs {wo:>6,.1f} µs  (+{w - wo:.1f} µs)")


# -- 3. the link alone --------------------------------------------------------------------


def link_us(transcript: int, repeat: int = 2000) -> float:
    cp = Checkpoint("s", [Message(Role.USER, RESULT) for _ in range(transcript)], version=7)
    cp.chain = "0" * 64
    stored = transcript - 2
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat // 5):
            chain.link_save(cp, stored)
        best = min(best, (time.perf_counter() - start) / (repeat // 5) * 1e6)
    return best


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-engine", action="store_true", help="skip the daemon cells")
    ap.add_argument("--no-store", action="store_true", help="skip the store cells")
    args = ap.parse_args()
    rounds = 1 if args.quick else args.rounds
    if not args.no_engine:
        await engine_cells(rounds, 8 if args.quick else 64, 8 if args.quick else 16)
    if not args.no_store:
        await store_cells(rounds, 4 if args.quick else 16, 10 if args.quick else 40)
    print("\nthe link alone (best of 5), a save adding 2 messages (a 1 KiB result):")
    for n in (10, 1_000, 10_000):
        print(f"  transcript of {n:>6,} messages: {link_us(n):6.1f} µs")


if __name__ == "__main__":
    if sys.argv[1:2] in (["serve-chained"], ["serve-unchained"]):  # a daemon, and whether
        from luoshod.cli import main as luoshod_main  # its saves record the chain

        if sys.argv[1] == "serve-unchained":
            chain.link_save = _no_link
        sys.exit(luoshod_main(["serve", *sys.argv[2:]]))
    asyncio.run(main())
