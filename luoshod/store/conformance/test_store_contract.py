"""The storage contract (``luoshod.store.kit.base``), one test per rule, for every driver."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import replace

import pytest

from luoshod.domain import Checkpoint, Message, Role, Status, Usage
from luoshod.errors import LeaseLost
from luoshod.store import Capability, Store, store_from_url
from luoshod.store.kit import encode_page_token

from .backend import Backend
from .helpers import SessionWriter, message, rich_checkpoint


def test_incomplete_driver_fails_at_construction() -> None:
    class Half(Store):
        @classmethod
        def from_url(cls, url: str, *, history_limit: int = 50) -> Half:
            return cls(history_limit=history_limit)

        async def load(self, session_id: str) -> Checkpoint | None:
            return None

    with pytest.raises(TypeError, match="abstract"):
        Half()  # type: ignore[abstract]  # what the test shows: refused at construction


async def test_r35_negative_history_limit_is_a_configuration_error(backend: Backend) -> None:
    with pytest.raises(ValueError, match="history_limit"):
        store_from_url(backend.url, history_limit=-1)


async def test_exists_says_whether_a_store_is_there_and_creates_nothing(
    backend: Backend,
) -> None:
    # ``luoshod store copy`` refuses a source that does not exist (Store.exists).
    backend.require(Capability.DURABLE)
    if backend.on_disk_here:
        assert not store_from_url(backend.url).exists()
        assert backend.disk_bytes() == 0  # asking created nothing
    store = await backend.open()
    await store.close()
    assert store_from_url(backend.url).exists()


async def test_save_load_round_trips_every_field(driver: Store) -> None:
    cp = rich_checkpoint()
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=0)
    assert await driver.load("rich") == expected


async def test_unknown_session_loads_none(driver: Store) -> None:
    assert await driver.load("nobody") is None


async def test_delete_removes_the_checkpoint_and_says_whether_it_existed(driver: Store) -> None:
    await driver.save(rich_checkpoint(), stored_messages=0)
    assert await driver.delete("rich") is True
    assert await driver.load("rich") is None
    assert await driver.delete("rich") is False
    assert await driver.delete("nobody") is False


async def test_save_writes_only_new_messages_and_load_returns_all(driver: Store) -> None:
    w = SessionWriter(driver, "grow")
    for _ in range(5):
        await w.save(add=3)
    loaded = await driver.load("grow")
    assert loaded is not None
    assert loaded.messages == w.messages
    assert loaded.version == 5


async def test_save_with_no_new_messages(driver: Store) -> None:
    w = SessionWriter(driver, "still")
    await w.save(add=2)
    await w.save(add=0, status=Status.FINISHED)
    loaded = await driver.load("still")
    assert loaded is not None and loaded.messages == w.messages
    assert loaded.status is Status.FINISHED


async def test_empty_transcript(driver: Store) -> None:
    w = SessionWriter(driver, "empty")
    await w.save(add=0)
    await w.save(add=0)
    assert await driver.load("empty") == w.snapshots[-1]


async def test_saved_state_is_isolated_from_the_callers_objects(driver: Store) -> None:
    cp = rich_checkpoint()
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=0)
    cp.usage.add(Usage(prompt_tokens=1))
    cp.messages.append(Message(Role.USER, "after save"))
    loaded = await driver.load("rich")
    assert loaded is not None
    loaded.total_usage.add(Usage(total_tokens=1))
    loaded.messages.clear()
    assert await driver.load("rich") == expected


# -- R7: saves of one session are strictly ordered ---------------------------------------


async def test_r7_first_save_must_be_version_1(driver: Store) -> None:
    with pytest.raises(LeaseLost) as info:
        await driver.save(rich_checkpoint(version=2), stored_messages=0)
    assert info.value.metadata == {"session_id": "rich", "stored_version": "0", "version": "2"}
    assert await driver.load("rich") is None


@pytest.mark.parametrize("version", [1, 2, 4], ids=["stale", "repeated", "skipping"])
async def test_r7_save_needs_the_next_version(driver: Store, version: int) -> None:
    w = SessionWriter(driver, "ordered")
    await w.save()
    await w.save()
    stray = replace(w.snapshots[-1], version=version, messages=w.messages + [message(9, "x")])
    with pytest.raises(LeaseLost) as info:
        await driver.save(stray, stored_messages=w.stored)
    assert info.value.metadata["stored_version"] == "2"
    assert info.value.metadata["version"] == str(version)
    assert await driver.load("ordered") == w.snapshots[-1]  # the refused save changed nothing
    if Capability.HISTORY in driver.capabilities:
        assert len(await driver.history("ordered")) == 2


async def test_r7_two_tasks_racing_exactly_one_wins(driver: Store) -> None:
    base = SessionWriter(driver, "race")
    await base.save()
    a = replace(base.snapshots[-1], version=2, messages=base.messages + [message(1, "a")])
    b = replace(base.snapshots[-1], version=2, messages=base.messages + [message(1, "b")])
    results = await asyncio.gather(
        driver.save(a, stored_messages=1),
        driver.save(b, stored_messages=1),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == ["LeaseLost", "NoneType"]
    winner = a if results[0] is None else b
    assert await driver.load("race") == winner


async def test_r7_concurrent_saves_of_many_sessions_all_land(driver: Store) -> None:
    writers = [SessionWriter(driver, f"s{i:02d}") for i in range(40)]

    async def run(w: SessionWriter) -> None:
        for _ in range(5):
            await w.save(add=2)

    await asyncio.gather(*(run(w) for w in writers))
    for w in writers:
        assert await driver.load(w.session_id) == w.snapshots[-1]


async def test_delete_then_save_starts_again_at_version_1(driver: Store) -> None:
    w = SessionWriter(driver, "again")
    await w.save(add=3)
    await w.save(add=3)
    assert await driver.delete("again")
    w.restart()
    w.messages = []
    await w.save(add=1)
    loaded = await driver.load("again")
    assert loaded is not None and loaded.version == 1 and loaded.messages == w.messages


# -- rewritten transcripts ---------------------------------------------------------------


async def test_rewritten_transcript_starts_a_new_log(driver: Store) -> None:
    w = SessionWriter(driver, "rewrite")
    for _ in range(3):
        await w.save(add=2)
    w.rewrite(keep=2, tag="new")
    await w.save(add=1)
    await w.save(add=1)
    loaded = await driver.load("rewrite")
    assert loaded is not None and loaded.messages == w.messages
    if Capability.HISTORY in driver.capabilities:
        entries = await driver.history("rewrite")
        assert [e.checkpoint for e in entries] == w.snapshots[::-1]


# -- capabilities: what is declared works, what is not is absent ---------------------------


async def test_durable_data_survives_reopen_and_only_then(backend: Backend) -> None:
    first = await backend.open()
    w = SessionWriter(first, "kept")
    await w.save(add=2)
    await w.save(add=2)
    await first.close()
    second = await backend.open()
    if Capability.DURABLE in backend.capabilities:
        assert await second.load("kept") == w.snapshots[-1]
        if Capability.HISTORY in backend.capabilities:
            assert [e.checkpoint for e in await second.history("kept")] == w.snapshots[::-1]
        w.store = second
        await w.save()  # the version carries over too
    else:
        assert await second.load("kept") is None


async def test_multi_process_stores_share_one_database(backend: Backend) -> None:
    backend.require(Capability.MULTI_PROCESS)
    one, two = await backend.open(), await backend.open()
    w = SessionWriter(one, "shared")
    await w.save()
    assert await two.load("shared") == w.snapshots[-1]
    with pytest.raises(LeaseLost):
        await two.save(replace(w.snapshots[-1], version=1), stored_messages=1)
    w.store = two
    await w.save()
    assert await one.load("shared") == w.snapshots[-1]


# -- list_sessions -----------------------------------------------------------------------


async def test_list_sessions_pages_in_id_order(driver: Store) -> None:
    ids = [f"s-{i}" for i in (4, 0, 6, 2, 5, 1, 3)]
    for sid in ids:
        await SessionWriter(driver, sid).save(add=2, step=3)
    seen, token, pages = [], "", 0
    while True:
        page, token = await driver.list_sessions(status=None, page_size=3, page_token=token)
        seen += [s.session_id for s in page]
        pages += 1
        if not token:
            break
    assert seen == sorted(ids)
    assert pages == 3


async def test_list_sessions_last_full_page_has_no_token(driver: Store) -> None:
    for i in range(4):
        await SessionWriter(driver, f"s-{i}").save()
    page, token = await driver.list_sessions(status=None, page_size=2, page_token="")
    page, token = await driver.list_sessions(status=None, page_size=2, page_token=token)
    assert [s.session_id for s in page] == ["s-2", "s-3"]
    assert token == ""


async def test_list_sessions_summaries(driver: Store) -> None:
    cp = rich_checkpoint()
    await driver.save(cp, stored_messages=0)
    page, token = await driver.list_sessions(status=None, page_size=10, page_token="")
    assert token == ""
    [s] = page
    assert (s.session_id, s.status, s.finish_reason, s.step_index) == (
        cp.session_id,
        cp.status,
        cp.finish_reason,
        cp.step_index,
    )
    assert (s.message_count, s.approval_id, s.updated_at) == (
        len(cp.messages),
        cp.approval_id,
        cp.updated_at,
    )


async def test_list_sessions_filters_by_status(driver: Store) -> None:
    statuses = [Status.FINISHED, Status.IN_PROGRESS, Status.AWAITING_APPROVAL] * 3
    for i, status in enumerate(statuses):
        await SessionWriter(driver, f"s-{i}").save(status=status)
    # A session whose status changed is listed under its latest status only.
    w = SessionWriter(driver, "s-9")
    await w.save(status=Status.IN_PROGRESS)
    await w.save(status=Status.FINISHED)
    for status in Status:
        seen, token = [], ""
        while True:
            page, token = await driver.list_sessions(status=status, page_size=2, page_token=token)
            assert all(s.status is status for s in page)
            seen += [s.session_id for s in page]
            if not token:
                break
        expected = [f"s-{i}" for i, st in enumerate(statuses) if st is status]
        assert seen == expected + (["s-9"] if status is Status.FINISHED else [])


async def test_list_sessions_omits_deleted_sessions(driver: Store) -> None:
    for sid in ("a", "b", "c"):
        await SessionWriter(driver, sid).save()
    await driver.delete("b", keep_history=True)
    page, _ = await driver.list_sessions(status=None, page_size=10, page_token="")
    assert [s.session_id for s in page] == ["a", "c"]


@pytest.mark.parametrize(
    "token", ["a", encode_page_token("x")[:1], "__4"], ids=["short", "cut", "not-utf8"]
)
async def test_list_sessions_rejects_a_malformed_token(driver: Store, token: str) -> None:
    await SessionWriter(driver, "s").save()
    with pytest.raises(ValueError, match="page token"):
        await driver.list_sessions(status=None, page_size=10, page_token=token)


async def test_r7_a_refused_save_does_not_affect_concurrent_saves(driver: Store) -> None:
    writers = [SessionWriter(driver, f"s{i}") for i in range(6)]
    stale = SessionWriter(driver, "stale")
    await stale.save()
    refused = replace(stale.snapshots[-1], version=1)
    results = await asyncio.gather(
        *(w.save() for w in writers[:3]),
        driver.save(refused, stored_messages=1),
        *(w.save() for w in writers[3:]),
        return_exceptions=True,
    )
    assert [type(r).__name__ for r in results].count("LeaseLost") == 1
    for w in writers:
        assert await driver.load(w.session_id) == w.snapshots[-1]
    assert await driver.load("stale") == stale.snapshots[-1]
