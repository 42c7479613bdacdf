"""``luoshod store copy`` carries queued inputs (R69) and the webhook outbox: in order, and
a copy run again queues nothing twice."""

from __future__ import annotations

from pathlib import Path

from luoshod.store import store_from_url
from luoshod.store.copy import copy_store


async def test_store_copy_carries_queued_inputs_in_order(tmp_path: Path) -> None:
    src_url, dst_url = f"sqlite:///{tmp_path}/src.db", f"lmdb://{tmp_path}/dst"
    src = store_from_url(src_url)
    await src.open()
    await src.enqueue_input("chat", "r1", b"one", now=1.0)
    await src.enqueue_input("chat", "r2", b"two", now=2.0)
    await src.enqueue_input("chat", "r0", b"zero", front=True, now=3.0)
    await src.enqueue_input("_webhooks", "evt_1", b"{}", now=4.0)
    await src.close()
    for _ in range(2):  # again: idempotent
        await copy_store(src_url, dst_url, progress=False)
    dst = store_from_url(dst_url)
    await dst.open()
    try:
        assert [(q.request_id, q.data, q.enqueued_at) for q in await dst.queued_inputs("chat")] == [
            ("r0", b"zero", 3.0),
            ("r1", b"one", 1.0),
            ("r2", b"two", 2.0),
        ]
        assert [q.request_id for q in await dst.queued_inputs("_webhooks")] == ["evt_1"]
    finally:
        await dst.close()


async def test_r87_store_copy_carries_the_schedules(tmp_path: Path) -> None:
    src_url, dst_url = f"sqlite:///{tmp_path}/src.db", f"lmdb://{tmp_path}/dst"
    src = store_from_url(src_url)
    await src.open()
    await src.create_schedule("daily", b"one")
    await src.update_schedule("daily", b"two", version=1)
    await src.create_schedule("hourly", b"h")
    await src.close()
    for _ in range(2):  # again: nothing doubled, nothing lost
        await copy_store(src_url, dst_url, progress=False)
    dst = store_from_url(dst_url)
    await dst.open()
    try:
        assert [(s.name, s.data) for s in await dst.list_schedules()] == [
            ("daily", b"two"),
            ("hourly", b"h"),
        ]
    finally:
        await dst.close()
