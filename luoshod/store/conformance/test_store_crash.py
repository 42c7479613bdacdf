"""Crash consistency, for every durable driver: a process saving in a loop is killed with
SIGKILL at random moments, many times; after each kill the store opens, every save the
process acknowledged is there, and nothing is half-written: neither a checkpoint nor the
event log, whose ranges of 64 are sealed into blocks in the same transactions."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
import time

from luoshod.domain import EventPage
from luoshod.store import Capability, Store
from luoshod.store.kit import eventblocks
from luoshod.store.kit.eventblocks import BLOCK

from . import crash_worker
from .backend import Backend

KILLS = 15
SESSIONS = 4
HISTORY_LIMIT = 5
MAX_ACKS_BEFORE_KILL = 30
#: Not a multiple of 64: the log is pruned through its blocks as the sessions grow.
EVENT_LOG_LIMIT = 150


async def test_crash_kill_9_loses_no_acknowledged_save_and_tears_nothing(
    backend: Backend,
) -> None:
    backend.require(Capability.DURABLE)
    history = Capability.HISTORY in backend.capabilities
    log = Capability.EVENT_LOG in backend.capabilities
    rng = random.Random(20240611)
    acked: dict[str, int] = {}
    started = time.monotonic()
    for kill in range(KILLS):
        # Kill after a random number of acknowledgements (0: during start-up, maybe while
        # the store is being created); the worker goes on saving meanwhile, so the signal
        # lands at an arbitrary point of a save, a commit or a sync.
        after = rng.randint(0, MAX_ACKS_BEFORE_KILL)
        lines = await asyncio.to_thread(_run_and_kill, backend.url, after)
        for line in lines:
            if line.startswith("ACK "):
                _, sid, version = line.split()
                acked[sid] = max(acked.get(sid, 0), int(version))

        store = await backend.open(history_limit=HISTORY_LIMIT, event_log_limit=EVENT_LOG_LIMIT)
        for i in range(SESSIONS):
            sid = f"crash-{i}"
            cp = await store.load(sid)
            if cp is None:
                assert sid not in acked, f"kill {kill}: acknowledged {sid} is gone"
                continue
            # Nothing lost: at least the last acknowledged version (a save in flight may
            # have landed without its acknowledgement).
            assert cp.version >= acked.get(sid, 0), (kill, sid, cp.version, acked.get(sid))
            # Nothing torn: exactly the checkpoint of that version, and a history of whole
            # checkpoints, newest first, without gaps.
            assert cp == crash_worker.expected(sid, cp.version), (kill, sid, cp.version)
            if log:
                await _check_event_log(store, sid, cp.version, kill)
            if not history:
                continue
            entries = await store.history(sid)
            versions = list(range(cp.version, max(0, cp.version - HISTORY_LIMIT), -1))
            assert [e.checkpoint.version for e in entries] == versions, (kill, sid)
            for e in entries:
                assert e.checkpoint == crash_worker.expected(sid, e.checkpoint.version)
        await store.close()
        backend.opened.remove(store)
    assert sum(acked.values()) > KILLS, acked  # the worker did get work done
    assert time.monotonic() - started < 30


async def _check_event_log(store: Store, sid: str, version: int, kill: int) -> None:
    """The events of every save up to ``version`` (written in its transaction), as whole
    rows: each range of 64 the saves completed is one block, the rest loose; no range is
    both (its loose rows left beside its block) or neither (gone)."""
    last = crash_worker.EVENTS_PER_SAVE * version
    floor = max(0, last - store.event_log_limit)  # pruned up to it, but a block holding it
    start = floor // BLOCK * BLOCK
    first = start + 1 if start + BLOCK <= last else floor + 1
    want = [e for v in range(1, version + 1) for e in crash_worker.events(sid, v)][first - 1 :]
    page = await store.read_events(sid, after_seq=0, limit=10_000)
    assert page == EventPage(want, first, last), (kill, sid, version)
    rows = (await store._read_events(sid, 0, 10_000)).events
    blocks = [r.seq for r in rows if eventblocks.is_block(r.data)]
    assert blocks == list(range(start + BLOCK, last + 1, BLOCK)), (kill, sid, version)
    assert [r.seq for r in rows if not eventblocks.is_block(r.data)] == list(
        range(max(floor, last // BLOCK * BLOCK) + 1, last + 1)
    ), (kill, sid, version)


def _run_and_kill(url: str, after_acks: int) -> list[str]:
    """Start the worker, SIGKILL it after ``after_acks`` acknowledgements; all its lines."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            crash_worker.__name__,
            url,
            str(HISTORY_LIMIT),
            str(SESSIONS),
            str(EVENT_LOG_LIMIT),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    lines: list[str] = []
    acks = 0
    try:
        while acks < after_acks:
            line = proc.stdout.readline()
            if not line:
                break  # the worker died on its own: the check below reports it
            lines.append(line.strip())
            acks += line.startswith("ACK ")
    finally:
        proc.send_signal(signal.SIGKILL)
        rest, err = proc.communicate(timeout=30)
    lines += [ln.strip() for ln in rest.splitlines()]
    assert proc.returncode == -signal.SIGKILL, f"the worker exited by itself:\n{err}"
    return lines
