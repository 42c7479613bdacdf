#!/usr/bin/env python3
"""What the compact checkpoint headers of SQLite and LMDB cost and save (not a test).

A checkpoint header is stored with every save and every history entry. The embedded
drivers store it compact (``store.kit.codec.compact_header``: raw deflate with a preset
dictionary of a header's keys); PostgreSQL keeps the JSON. Side by side, in one run:

  1. the bytes of a header, JSON against compact: a lead's header, and a lead paused in a
     sub-agent (the 50 of the 50-task session of bench/subagent_steps.py are such);
  2. the CPU of encoding one as JSON, of compressing that JSON (what a compact save adds)
     and of reading one back from each form, in µs, medians of interleaved rounds;
  3. the CPU of a whole durable save (process time, the database thread's included) on
     SQLite and LMDB, each store once with JSON headers (``compact_headers`` off, as
     before) and once compact, rounds interleaved: µs a save, and the ratio.

Targets: a compact header of a session in a sub-agent <= 1/3 of its JSON; compressing
costs <= 25 µs a header; a save with compact headers <= 1.1x the CPU of one with JSON.

    .venv/bin/python bench/headers.py            # about 20 s
    .venv/bin/python bench/headers.py --quick
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from luoshod.domain import (
    AppliedRequest,
    Checkpoint,
    Fingerprint,
    Message,
    Role,
    SubTask,
    ToolCall,
    Usage,
)
from luoshod.store import Store, store_from_url
from luoshod.store.kit import codec

BYTES_TARGET = 1 / 3
ENCODE_TARGET_US = 25.0
SAVE_TARGET = 1.1
URLS = {"sqlite": "sqlite:///{d}/x.db", "lmdb": "lmdb://{d}/l"}


def in_subagent(session_id: str = "many-tasks") -> Checkpoint:
    """A lead paused in the tool steps of its 48th task, as the bench's session saves."""
    task = SubTask(
        "worker",
        "task_48",
        1,
        ("worker",),
        [Message(Role.USER, "job 48")],
        9,
        Usage(90, 81, 171, 9),
        Fingerprint(
            "f3e47e7010f24a15", "scripted:worker", {"work": "a2c799262a3ce3c1"}, "e3b0c44298fc1c14"
        ),
    )
    return Checkpoint(
        session_id,
        [
            Message(Role.USER, "go"),
            Message(Role.ASSISTANT, "", (ToolCall("call_47_0", "task", "{}"),)),
        ],
        step_index=48,
        usage=Usage(32572, 4837, 37409, 574),
        run_id="3e9759a83f5d4833",
        updated_at=1796336557.3702054,
        version=1052,
        last_seq=2725,
        run_requests=[
            AppliedRequest(
                "01a23e00-8def-7a10-878e-a50607139ac0",
                "3f24ef65a18950527ac8a2cfb1cbd3ec",
                "3e9759a83f5d4833",
                1,
            )
        ],
        subtasks={"call_47_0": task},
        delegated_usage=Usage(6294, 4405, 10699, 526),
        task_count=48,
    )


def lead_only() -> Checkpoint:
    return Checkpoint(
        "lead",
        [Message(Role.USER, "hi")],
        step_index=7,
        usage=Usage(1200, 300, 1500, 7),
        run_id="3e9759a83f5d4833",
        updated_at=1796336557.37,
        version=15,
        last_seq=40,
    )


def per_call_us(fn: Callable[[], object], n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


async def save_cpu_us(url: str, compact: bool, saves: int) -> float:
    """Process CPU per durable save of one session paused in a sub-agent, each save one
    more sub-agent message (a sub-agent step), the store's headers compact or JSON."""
    store: Store = store_from_url(url)
    store.compact_headers = compact  # type: ignore[misc]  # the driver's class default: True
    await store.open()
    try:
        cp = in_subagent()
        cp.version = 1
        await store.save(cp, stored_messages=0)
        task = cp.subtasks["call_47_0"]
        task.stored = len(task.messages)
        start = time.process_time()
        for i in range(saves):
            task.messages.append(
                Message(Role.TOOL, f'{{"n": {i}}}', tool_call_id=f"c{i}", tool_name="work")
            )
            task.step_index += 1
            cp.version += 1
            await store.save(cp, stored_messages=len(cp.messages))
            task.stored = len(task.messages)
        return (time.process_time() - start) / saves * 1e6
    finally:
        await store.close()


async def main_async(opts: argparse.Namespace) -> int:
    ok = True
    print(
        "checkpoint header bytes, JSON vs compact (dictionary "
        f"{codec.HEADER_DICTIONARY}, {len(codec.HEADER_DICTIONARIES[codec.HEADER_DICTIONARY])} "
        "bytes):"
    )
    for name, cp in (("lead only", lead_only()), ("lead in a sub-agent", in_subagent())):
        text, compact = codec.encode_header(cp).encode(), codec.encode_compact_header(cp)
        ratio = len(compact) / len(text)
        met = ratio <= BYTES_TARGET or name == "lead only"
        ok &= met
        target = (
            f"target <= {BYTES_TARGET:.2f}: {'met' if met else 'NOT met'}"
            if name != "lead only"
            else ""
        )
        print(f"  {name:<22} {len(text):5d} -> {len(compact):4d} bytes  {ratio:5.2f}   {target}")

    cp = in_subagent()
    text, compact = codec.encode_header(cp), codec.encode_compact_header(cp)
    cells: dict[str, list[float]] = {
        k: [] for k in ("json", "compress", "read json", "read compact")
    }
    for _ in range(opts.rounds):
        cells["json"].append(per_call_us(lambda: codec.encode_header(cp), opts.calls))
        cells["compress"].append(per_call_us(lambda: codec.compact_header(text), opts.calls))
        cells["read json"].append(per_call_us(lambda: codec.decode_header(text), opts.calls))
        cells["read compact"].append(per_call_us(lambda: codec.decode_header(compact), opts.calls))
    us = {k: statistics.median(v) for k, v in cells.items()}
    met = us["compress"] <= ENCODE_TARGET_US
    ok &= met
    print(f"CPU of a header (lead in a sub-agent), median of {opts.rounds} rounds of {opts.calls}:")
    print(f"  encode its JSON          {us['json']:6.1f} µs")
    print(
        f"  compress the JSON        {us['compress']:6.1f} µs   (a save with compact headers does "
        "both)   "
        f"target <= {ENCODE_TARGET_US:.0f} µs: {'met' if met else 'NOT met'}"
    )
    print(f"  read JSON                {us['read json']:6.1f} µs")
    print(
        f"  read compact             {us['read compact']:6.1f} µs   "
        f"{us['read compact'] - us['read json']:+5.1f} µs"
    )

    root = Path(tempfile.mkdtemp(prefix="luoshod-bench-headers-"))
    try:
        saves: dict[tuple[str, bool], list[float]] = {}
        for r in range(opts.rounds):
            for driver, template in URLS.items():
                for compact_on in (False, True) if r % 2 == 0 else (True, False):
                    d = root / f"{driver}-{compact_on}-{r}"
                    d.mkdir()
                    saves.setdefault((driver, compact_on), []).append(
                        await save_cpu_us(template.format(d=d), compact_on, opts.saves)
                    )
                    shutil.rmtree(d)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(
        f"process CPU of a durable save (a sub-agent step), median of {opts.rounds} rounds of "
        f"{opts.saves} saves"
        " (the ratio: the median of each round's, the two cells of a round run one after the "
        "other):"
    )
    for driver in URLS:
        before = statistics.median(saves[(driver, False)])
        after = statistics.median(saves[(driver, True)])
        ratio = statistics.median(
            a / b for a, b in zip(saves[(driver, True)], saves[(driver, False)])
        )
        met = ratio <= SAVE_TARGET
        ok &= met
        print(
            f"  {driver:<7} JSON headers {before:7.1f} µs   compact {after:7.1f} µs   "
            f"{ratio:5.2f}x   "
            f"target <= {SAVE_TARGET}x: {'met' if met else 'NOT met'}"
        )
    return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--saves", type=int, default=200)
    p.add_argument("--quick", action="store_true", help="3 rounds of 100 saves")
    opts = p.parse_args()
    if opts.quick:
        opts.rounds, opts.calls, opts.saves = 3, 500, 100
    return asyncio.run(main_async(opts))


if __name__ == "__main__":
    raise SystemExit(main())
