"""The child of the crash-consistency test: saves sessions in a loop until it is killed.

    python -m luoshod.store.conformance.crash_worker URL HISTORY_LIMIT SESSIONS EVENT_LOG_LIMIT

Each session continues from what the store holds (so runs after a kill go on from the
last durable save). Every checkpoint is a pure function of its session and version
(:func:`expected`), and so are the events each save writes with it (:func:`events`), so
the parent can tell a whole save from a half-written one. After
each acknowledged save the child writes ``ACK <session> <version>`` on stdout and flushes
it, before it starts that session's next save: whatever was acknowledged reaches the
parent even when the child is killed right after.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys

from luoshod.domain import Checkpoint, FinishReason, Message, Role, Status, StoredEvent, Usage
from luoshod.store import Capability, Store, store_from_url


@functools.cache
def message(session_id: str, i: int) -> Message:
    # Sizes from a few bytes to ~6 kB, so saves cross chunk and page boundaries.
    role = Role.USER if i % 2 == 0 else Role.ASSISTANT
    return Message(role, f"{session_id}/{i}:" + "abcdefghij"[i % 10] * ((i * 997) % 6000))


def expected(session_id: str, version: int) -> Checkpoint:
    """The checkpoint of ``session_id`` at ``version``: 1, 2 or 3 new messages a save."""
    count = sum(1 + v % 3 for v in range(1, version + 1))
    finished = version % 7 == 0
    return Checkpoint(
        session_id,
        [message(session_id, i) for i in range(count)],
        step_index=version,
        usage=Usage(version, 2 * version, 3 * version, version),
        business_state_json=f'{{"v": {version}}}',
        status=Status.FINISHED if finished else Status.IN_PROGRESS,
        finish_reason=FinishReason.STOP if finished else FinishReason.NONE,
        run_id=f"run-{version // 7}",
        updated_at=1_000_000.0 + version,
        version=version,
    )


#: Events each save writes with its checkpoint (so ranges of 64 are sealed by saves of
#: every kind: some complete a range, some do not; luoshod.store.kit.eventblocks).
EVENTS_PER_SAVE = 5


def events(session_id: str, version: int) -> list[StoredEvent]:
    """The events the save of ``version`` writes: seqs ``5*(version-1)+1 .. 5*version``."""
    last = EVENTS_PER_SAVE * version
    return [
        StoredEvent(seq, f"{session_id}#{seq}".encode() * (1 + seq % 4))
        for seq in range(last - EVENTS_PER_SAVE + 1, last + 1)
    ]


async def save_forever(store: Store, session_id: str) -> None:
    current = await store.load(session_id)
    version = current.version if current else 0
    stored = len(current.messages) if current else 0
    while True:
        cp = expected(session_id, version + 1)
        logged = (
            events(session_id, cp.version) if Capability.EVENT_LOG in store.capabilities else []
        )
        await store.save(cp, stored_messages=stored, events=logged)
        version, stored = cp.version, len(cp.messages)
        os.write(1, f"ACK {session_id} {version}\n".encode())  # unbuffered: no loss on kill


async def main(url: str, history_limit: int, sessions: int, event_log_limit: int) -> None:
    store = store_from_url(url, history_limit=history_limit, event_log_limit=event_log_limit)
    await store.open()
    os.write(1, b"OPEN\n")
    await asyncio.gather(*(save_forever(store, f"crash-{i}") for i in range(sessions)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
