#!/usr/bin/env python3
"""What a session's applied request ids (R74) cost its saves (not a test).

For 0, 100 and 1,000 applied request records in a session, on SQLite and LMDB (durable,
the drivers' defaults): the median time of 100 saves that each add one message and write
no record (most saves of a run), the median of 100 saves that each also apply one new
request (the save that records it: the store keeps the newest 1,000, so at 1,000 each
such save drops the oldest), and the bytes of the checkpoint's header. The records are
kept by the store beside the checkpoint, not in its header, so both should not depend on
how many the session holds. Target: a save with 1,000 records costs <= 1.2x one with
none.

    .venv/bin/python bench/request_ids.py

Before the records left the header (2026-12-03, the same VM), the first column read:
sqlite 0.89 / 1.95 / 12.0 ms, lmdb 0.70 / 2.16 / 12.2 ms, with a header of 407 KB at
1,000 records.
"""

from __future__ import annotations

import asyncio
import copy
import shutil
import statistics
import tempfile
import time
import uuid
from dataclasses import replace

from luoshod.domain import AppliedRequest, FinishReason, Message, Role, RunEnd, Status, Usage
from luoshod.store import store_from_url
from luoshod.store.conformance.helpers import rich_checkpoint
from luoshod.store.kit import codec

COUNTS = (0, 100, 1000)
SAVES = 100
URLS = {"sqlite": "sqlite:///{d}/x.db", "lmdb": "lmdb://{d}/l"}


def record(i: int) -> AppliedRequest:
    """A request record of an ended run (the larger kind, ~400 bytes)."""
    end = RunEnd(
        10 * i + 9, time.time(), FinishReason.STOP, Status.FINISHED, 7, Usage(), "", 40, 30
    )
    return AppliedRequest(
        str(uuid.uuid4()), f"{i:032x}", "run_" + uuid.uuid4().hex, 10 * i + 1, end
    )


async def cell(url: str, n: int) -> tuple[float, float, int]:
    """(median ms of a save without a record, of a save applying one, header bytes)."""
    d = tempfile.mkdtemp(prefix="luoshod-reqbench-")
    try:
        store = store_from_url(url.format(d=d))
        await store.open()
        cp = replace(rich_checkpoint("s"), run_requests=[])
        await store.save(
            copy.deepcopy(cp), stored_messages=0, requests=[record(i) for i in range(n)]
        )
        times: dict[bool, list[float]] = {False: [], True: []}
        for k in range(2 * SAVES):
            applies = k % 2 == 1  # interleaved, so both meet the disk at the same moments
            cp = replace(
                cp, version=cp.version + 1, messages=[*cp.messages, Message(Role.USER, f"turn {k}")]
            )
            records = [record(n + k)] if applies else []
            t = time.perf_counter()
            await store.save(cp, stored_messages=len(cp.messages) - 1, requests=records)
            times[applies].append(time.perf_counter() - t)
        kept = len(await store.requests("s"))
        assert kept == min(1000, n + SAVES), kept
        await store.close()
        return (
            statistics.median(times[False]) * 1000,
            statistics.median(times[True]) * 1000,
            len(codec.encode_header(cp)),
        )
    finally:
        shutil.rmtree(d, ignore_errors=True)


async def main() -> None:
    print("median of 100 saves each; records: the session's applied requests before them")
    print(f"{'driver':7} {'records':>7}  {'header B':>8}  {'save ms':>8}  {'+1 record ms':>12}")
    for name, url in URLS.items():
        rows = {n: await cell(url, n) for n in COUNTS}
        for n, (plain, applying, header) in rows.items():
            print(f"{name:7} {n:7,}  {header:8,}  {plain:8.3f}  {applying:12.3f}")
        r_plain = rows[1000][0] / rows[0][0]
        r_applying = rows[1000][1] / rows[0][1]
        verdict = "ok" if r_plain <= 1.2 else "MISSED"
        print(
            f"{name:7} 1,000 vs 0: save {r_plain:.2f}x, +1 record {r_applying:.2f}x"
            f"  (target <= 1.2x: {verdict})"
        )


if __name__ == "__main__":
    asyncio.run(main())
