"""Listing sessions by id prefix (the console's id filter) and the drift a summary carries."""

from __future__ import annotations

from dataclasses import replace

import pytest

from luoshod.domain import Checkpoint, Drift, Message, Role, Status, Usage
from luoshod.store import Store
from luoshod.store.kit import encode_page_token

from .helpers import SessionWriter, rich_checkpoint

IDS = ["a", "aa", "ab", "ab.1", "ab.2", "ab:x", "abc", "ac", "b", "ab-0"]


async def _all(
    store: Store, prefix: str, *, size: int, status: Status | None = None
) -> tuple[list[str], int]:
    seen, token, pages = [], "", 0
    while True:
        page, token = await store.list_sessions(
            status=status, page_size=size, page_token=token, prefix=prefix
        )
        assert len(page) <= size
        seen += [s.session_id for s in page]
        pages += 1
        if not token:
            return seen, pages


async def test_list_sessions_by_id_prefix_pages_in_id_order(driver: Store) -> None:
    for sid in IDS:
        await SessionWriter(driver, sid).save()
    want = sorted(i for i in IDS if i.startswith("ab"))  # the prefix itself included
    assert want == ["ab", "ab-0", "ab.1", "ab.2", "ab:x", "abc"]
    for size in (1, 2, 4, 6, 50):
        seen, pages = await _all(driver, "ab", size=size)
        assert seen == want, size
        assert pages == max(1, -(-len(want) // size)), size
    assert (await _all(driver, "z", size=3))[0] == []
    assert (await _all(driver, "abc.", size=3))[0] == []
    assert (await _all(driver, "b", size=3))[0] == ["b"]
    assert (await _all(driver, "", size=100))[0] == sorted(IDS)  # no prefix: every session


async def test_list_sessions_by_prefix_and_status(driver: Store) -> None:
    for i, sid in enumerate(["job-1", "job-2", "job-3", "job-4", "jobs", "joc-1"]):
        await SessionWriter(driver, sid).save(
            status=Status.FINISHED if i % 2 else Status.IN_PROGRESS
        )
    assert (await _all(driver, "job-", size=1, status=Status.FINISHED))[0] == ["job-2", "job-4"]
    assert (await _all(driver, "job", size=2, status=Status.IN_PROGRESS))[0] == [
        "job-1",
        "job-3",
        "jobs",
    ]


async def test_list_sessions_by_prefix_with_a_token_of_another_listing(driver: Store) -> None:
    for sid in IDS:
        await SessionWriter(driver, sid).save()
    before = encode_page_token("a")  # before the prefix's ids: the page starts at them
    page, _ = await driver.list_sessions(status=None, page_size=10, page_token=before, prefix="ab")
    assert [s.session_id for s in page] == ["ab", "ab-0", "ab.1", "ab.2", "ab:x", "abc"]
    past = encode_page_token("ac")  # past them: nothing
    page, token = await driver.list_sessions(
        status=None, page_size=10, page_token=past, prefix="ab"
    )
    assert (page, token) == ([], "")


async def test_list_sessions_refuses_a_prefix_without_upper_bound(driver: Store) -> None:
    with pytest.raises(ValueError, match="no upper bound"):
        await driver.list_sessions(status=None, page_size=10, page_token="", prefix="\U0010ffff")


async def test_summary_and_checkpoint_carry_the_last_drift(driver: Store) -> None:
    drifted = replace(
        rich_checkpoint(), last_drift=Drift("p:a", "p:b", ("new",), ("old",), ("changed",), True)
    )
    await driver.save(drifted, stored_messages=0)
    plain = replace(rich_checkpoint(), session_id="plain", messages=[], last_drift=None)
    await driver.save(plain, stored_messages=0)
    page, _ = await driver.list_sessions(status=None, page_size=10, page_token="")
    by_id = {s.session_id: s for s in page}
    assert by_id[drifted.session_id].last_drift == drifted.last_drift
    assert by_id["plain"].last_drift is None
    loaded = await driver.load(drifted.session_id)
    assert loaded is not None and loaded.last_drift == drifted.last_drift


async def _newest_first(
    store: Store, *, size: int, prefix: str = "", status: Status | None = None
) -> list[str]:
    seen, token = [], ""
    while True:
        page, token = await store.list_sessions(
            status=status, page_size=size, page_token=token, prefix=prefix, newest_first=True
        )
        assert len(page) <= size
        seen += [s.session_id for s in page]
        if not token:
            return seen


async def test_list_sessions_newest_first_pages_by_update_then_id_and_counts(driver: Store) -> None:
    """The console's list: the most recently updated first (ties by id), paged, with the
    count of the whole listing."""
    saves = {"a": 1, "b": 3, "c": 2, "d": 3, "e": 1, "bx": 2}
    for sid, n in saves.items():
        w = SessionWriter(driver, sid)
        for k in range(n):
            await w.save(
                status=Status.FINISHED if sid == "e" and k == n - 1 else Status.IN_PROGRESS
            )
    want = ["b", "d", "bx", "c", "a", "e"]  # updated_at 1002, 1002, 1001, 1001, 1000, 1000
    for size in (1, 2, 4, 6, 50):
        assert await _newest_first(driver, size=size) == want, size
    assert await _newest_first(driver, size=1, prefix="b") == ["b", "bx"]
    assert await _newest_first(driver, size=2, status=Status.FINISHED) == ["e"]
    assert await driver.count_sessions(status=None) == 6
    assert await driver.count_sessions(status=None, prefix="b") == 2
    assert await driver.count_sessions(status=Status.IN_PROGRESS) == 5
    assert await driver.count_sessions(status=None, prefix="zz") == 0
    # The page and the count in one call, in either order.
    for newest in (True, False):
        page, token, total = await driver.list_sessions_counted(
            status=None, page_size=2, page_token="", prefix="b", newest_first=newest
        )
        assert ([s.session_id for s in page], total) == (["b", "bx"], 2), newest
        assert token == ""
        page, token, total = await driver.list_sessions_counted(
            status=Status.IN_PROGRESS, page_size=2, page_token="", newest_first=newest
        )
        assert (len(page), total) == (2, 5) and token, newest
    # A token of the id order is not one of this order (and the other way round).
    _, by_id = await driver.list_sessions(status=None, page_size=1, page_token="")
    with pytest.raises(ValueError, match="malformed page token"):
        await driver.list_sessions(status=None, page_size=1, page_token=by_id, newest_first=True)


async def _costliest_first(store: Store, *, size: int, prefix: str = "") -> list[str]:
    seen, token = [], ""
    while True:
        page, token = await store.list_sessions(
            status=None, page_size=size, page_token=token, prefix=prefix, costliest_first=True
        )
        assert len(page) <= size
        seen += [s.session_id for s in page]
        if not token:
            return seen


async def test_r78_list_sessions_costliest_first_pages_by_cost_then_id(driver: Store) -> None:
    """The console's list sorted by cost: each summary carries the session's total usage,
    and the listing pages by it, the costliest first (ties by id)."""
    costs = {"a": 0.5, "b": 2.25, "c": 0.0, "d": 2.25, "bx": 1.0}
    for sid, cost in costs.items():
        run = Usage(10, 2, 12, 1, cost / 2, cached_input_tokens=4)
        life = Usage(20, 4, 24, 2, cost, cached_input_tokens=8, reasoning_tokens=1)
        cp = Checkpoint(sid, [Message(Role.USER, "hi")], version=1, usage=run, total_usage=life)
        await driver.save(cp, stored_messages=0)
    want = ["b", "d", "bx", "a", "c"]
    for size in (1, 2, 3, 5, 50):
        assert await _costliest_first(driver, size=size) == want, size
    assert await _costliest_first(driver, size=1, prefix="b") == ["b", "bx"]
    page, _ = await driver.list_sessions(status=None, page_size=50, page_token="")
    by_id = {s.session_id: s.total_usage for s in page}
    assert by_id["b"] == Usage(20, 4, 24, 2, 2.25, cached_input_tokens=8, reasoning_tokens=1)
    # A token of another order is not one of this order, and asking for two orders fails.
    _, newest = await driver.list_sessions(
        status=None, page_size=1, page_token="", newest_first=True
    )
    with pytest.raises(ValueError, match="malformed page token"):
        await driver.list_sessions(
            status=None, page_size=1, page_token=newest, costliest_first=True
        )
    with pytest.raises(ValueError, match="two orders"):
        await driver.list_sessions(
            status=None, page_size=1, page_token="", newest_first=True, costliest_first=True
        )
