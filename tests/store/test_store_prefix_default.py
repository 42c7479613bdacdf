"""The kit's default ``_list_sessions_in`` (for a driver that does not scan a prefix's range
itself) gives the same pages as the drivers' own, reading ids before the range too."""

from __future__ import annotations

from luoshod.store import Store
from luoshod.store.conformance.helpers import SessionWriter
from luoshod.store.kit import encode_page_token
from luoshod.store.memory import MemoryStore


class _NoRangeScan(MemoryStore):
    _list_sessions_in = Store._list_sessions_in  # the kit's default


async def test_default_prefix_listing_pages_like_a_range_scan() -> None:
    ids = (
        [f"x-{i:03}" for i in range(250)]
        + ["ab", "ab.1", "ab.2", "abc", "ac", "b"]
        + [f"y-{i}" for i in range(5)]
    )
    stores = [_NoRangeScan(), MemoryStore()]
    for store in stores:
        await store.open()
        for sid in ids:
            await SessionWriter(store, sid).save()
    for prefix, size, token in [
        ("ab", 2, ""),
        ("x-1", 7, ""),
        ("y", 3, ""),
        ("x-24", 1, encode_page_token("x-240")),
        ("zz", 5, ""),
    ]:
        results = []
        for store in stores:
            seen, t = [], token
            while True:
                page, t = await store.list_sessions(
                    status=None, page_size=size, page_token=t, prefix=prefix
                )
                seen.append([s.session_id for s in page])
                if not t:
                    break
            results.append(seen)
        assert results[0] == results[1], prefix
        flat = [sid for page in results[0] for sid in page]
        assert flat == sorted(
            i for i in ids if i.startswith(prefix) and (not token or i > "x-240")
        ), prefix
