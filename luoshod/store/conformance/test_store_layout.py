"""The O(new messages) layout (docs/storage.md, Layout), for every durable driver: a save writes
the new messages and a header, and a history entry refers to a prefix of the message log,
so a long session's store holds its transcript about once, not once per kept entry."""

from __future__ import annotations

import pytest

from luoshod.store import Capability

from .backend import Backend
from .helpers import SessionWriter

SIZE = 1000  # bytes of text per message
SAVES = 200  # two messages each: a 400 kB transcript


async def test_layout_history_entries_do_not_copy_the_transcript(backend: Backend) -> None:
    backend.require(Capability.DURABLE)
    if not backend.on_disk_here:
        pytest.skip(f"{backend.name} keeps its data outside the test's directory")
    store = await backend.open()
    w = SessionWriter(store, "long")
    for _ in range(SAVES // 2):
        await w.save(add=2, size=SIZE)
    await store.close()
    half = backend.disk_bytes()
    store = await backend.open()
    w.store = store
    for _ in range(SAVES // 2):
        await w.save(add=2, size=SIZE)
    await store.close()
    stored = backend.disk_bytes()

    transcript = sum(len(m.content) for m in w.messages)
    # What copying the transcript into every save would store: the latest plus 50 entries.
    full_copies = transcript + sum(len(m.content) for cp in w.snapshots[-50:] for m in cp.messages)
    assert stored < 2 * transcript, (stored, transcript)
    assert stored < full_copies / 20, (stored, full_copies)
    # The second hundred saves, over a transcript twice as long, cost what the first did.
    assert stored - half < 1.5 * half, (half, stored)
    # And what is stored is all there.
    store = await backend.open()
    assert await store.load("long") == w.snapshots[-1]
    if Capability.HISTORY not in backend.capabilities:
        return
    entries = await store.history("long")
    assert [e.checkpoint for e in entries] == w.snapshots[:-51:-1]
