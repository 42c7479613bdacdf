"""``Store.disk_bytes``: what a store holds on disk, for every driver."""

from __future__ import annotations

from luoshod.store import Capability

from .backend import Backend
from .helpers import SessionWriter


async def test_disk_bytes_grow_with_durable_saves_and_are_none_without_files(
    backend: Backend,
) -> None:
    store = await backend.open()
    before = store.disk_bytes()
    if Capability.DURABLE not in store.capabilities or not backend.on_disk_here:
        # memory:// has no files; a database server answers None when it cannot tell
        # without a round trip.
        assert before is None or before >= 0
        return
    assert isinstance(before, int) and before >= 0
    writer = SessionWriter(store, "disk")
    for _ in range(20):
        await writer.save(add=2, size=4096)
    after = store.disk_bytes()
    assert after is not None and after > before
    # Counted from the store's own files, which are all under the test's directory.
    assert after <= backend.disk_bytes()
