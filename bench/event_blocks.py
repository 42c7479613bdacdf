#!/usr/bin/env python3
"""The event log in compressed blocks: CPU of a save with events, and the log's bytes on
disk, with and without sealing, side by side in one run (not a test).

Per driver (sqlite, lmdb; files in a temporary directory), two stores take the same
saves in alternating rounds: each save adds one message and EVENTS events of ~80 bytes
(the size of a stored event, luoshod/server/stored_events.py) to its session, so a range
of 64 seqs is sealed every 64 / EVENTS saves. "blocks" is the store as it is; "loose"
the same code with sealing off (``eventblocks.BLOCK`` set past any seq, the rows every
event log had before blocks). The figure is this process's CPU (user + system, the
drivers' database threads included) per save, the median of the rounds; then the event
log's bytes (the file after - before, the session's messages being the same in both).

    .venv/bin/python bench/event_blocks.py            # 5 rounds of 640 saves a store
    .venv/bin/python bench/event_blocks.py --quick    # 2 rounds of 128
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
from pathlib import Path

from luoshod.domain import Checkpoint, Message, Role, StoredEvent
from luoshod.store import Store, store_from_url
from luoshod.store.kit import eventblocks

EVENTS = 8
REAL_BLOCK = eventblocks.BLOCK


def event_bytes(rng: random.Random, seq: int) -> bytes:
    """~80 bytes like a stored event: a protobuf tag first, some JSON-ish text."""
    body = (
        f'{{"type":"tool.result","call":"call_{seq}","step":{seq // 9},"ok":{rng.random() < 0.9}}}'
    )
    return b"\x12" + bytes([len(body)]) + body.encode() + rng.randbytes(8)


def cpu() -> float:
    t = os.times()
    return t.user + t.system


class Cell:
    def __init__(self, name: str, store: Store, sealing: bool) -> None:
        self.name, self.store, self.sealing = name, store, sealing
        self.cp = Checkpoint("bench", [])
        self.seq = 0
        self.per_save: list[float] = []

    async def saves(self, rng: random.Random, n: int) -> None:
        eventblocks.BLOCK = REAL_BLOCK if self.sealing else 2**62
        try:
            started = cpu()
            for _ in range(n):
                stored = len(self.cp.messages)
                self.cp.messages.append(Message(Role.USER, f"m{stored}"))
                self.cp.version += 1
                events = [
                    StoredEvent(s, event_bytes(rng, s))
                    for s in range(self.seq + 1, self.seq + EVENTS + 1)
                ]
                self.seq += EVENTS
                await self.store.save(self.cp, stored_messages=stored, events=events)
            self.per_save.append((cpu() - started) / n * 1000)
        finally:
            eventblocks.BLOCK = REAL_BLOCK


async def run(driver: str, tmp: Path, rounds: int, saves: int) -> list[str]:
    cells = []
    for name, sealing in (("blocks", True), ("loose", False)):
        path = tmp / driver / name
        url = f"sqlite://{path}/luoshod.db" if driver == "sqlite" else f"lmdb://{path}"
        store = store_from_url(url, event_log_limit=1000)
        await store.open()
        cells.append(Cell(name, store, sealing))
    rng = random.Random(7)
    for r in range(rounds):
        for cell in cells if r % 2 == 0 else cells[::-1]:
            await cell.saves(rng, saves)
    lines = []
    for cell in cells:
        page = await cell.store.read_events("bench", after_seq=0, limit=10_000)
        seqs = [e.seq for e in page.events]  # the newest 1000 (and a straddled block's rest)
        assert seqs == list(range(page.first_kept, cell.seq + 1)) and len(seqs) >= 1000, cell.name
        rows = (await cell.store._read_events("bench", 0, 10_000)).events
        await cell.store.close()
        size = sum(p.stat().st_size for p in (tmp / driver / cell.name).rglob("*") if p.is_file())
        lines.append(
            f"  {driver:6} {cell.name:6} {statistics.median(cell.per_save):6.3f} ms CPU/save"
            f"   {len(rows):5} event rows   file {size / 1000:7.1f} kB"
        )
    ratio = statistics.median(b / lo for b, lo in zip(cells[0].per_save, cells[1].per_save))
    lines.append(
        f"  {driver:6} blocks/loose CPU per save: {ratio:.2f}x (median of the rounds' ratios)"
    )
    return lines


async def main_async(opts: argparse.Namespace) -> int:
    rounds, saves = (2, 128) if opts.quick else (opts.rounds, opts.saves)
    print(
        f"a save = 1 message + {EVENTS} events of ~80 B; event log limit 1000; {rounds} rounds x "
        f"{saves} saves a store"
    )
    with tempfile.TemporaryDirectory(prefix="luoshod-eventblocks-") as tmp:
        for driver in ("sqlite", "lmdb"):
            for line in await run(driver, Path(tmp), rounds, saves):
                print(line)
    return 0


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--saves", type=int, default=640)
    p.add_argument("--quick", action="store_true")
    return asyncio.run(main_async(p.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
