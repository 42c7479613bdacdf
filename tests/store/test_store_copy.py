"""``luoshod store copy``: SQLite → LMDB → SQLite (and through PostgreSQL) keeps everything
(checkpoints, histories,
pending approvals, event logs), and an interrupted copy resumes where it stopped."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import replace
from pathlib import Path

import pytest

from luoshod import cli
from luoshod.domain import EventPage, Status, StoredEvent
from luoshod.errors import ApprovalNotFound
from luoshod.store import Store, store_from_url
from luoshod.store.conformance.helpers import SessionWriter, approval, event_range, rich_checkpoint
from luoshod.store.copy import copy_sessions, copy_store, events_of, session_ids

LIMIT = 5
SESSIONS = 25


async def fill(store: Store) -> None:
    """Sessions of every shape: long with a long event log, rewritten and paused on two
    approvals, deleted with kept history and event log, only an event log, rich."""
    long = SessionWriter(store, "long")
    for i in range(12):  # past the history limit
        logged = event_range(i * 5 + 1, i * 5 + 3)
        await long.save(add=2, size=300 * (i % 4), step=i // 2, events=logged)
        await store.append_events("long", event_range(i * 5 + 4, i * 5 + 5))
    rewritten = SessionWriter(store, "rewritten")
    for _ in range(3):
        await rewritten.save(add=2)
    rewritten.rewrite(keep=2, tag="other")
    paused = Status.AWAITING_APPROVAL
    await rewritten.save(add=1, status=paused, approval=approval("appr-1", "rewritten"))
    await rewritten.save(add=0, status=paused, approval=approval("appr-0", "rewritten"))
    kept = SessionWriter(store, "kept-history")
    for i in range(3):
        await kept.save(add=1, events=[StoredEvent(i + 1, bytes(range(256)) * (i + 1))])
    await store.delete("kept-history", keep_history=True)
    await store.append_events("only-events", event_range(40, 44, "only"))
    gone = SessionWriter(store, "gone")
    await gone.save(approval=approval("appr-gone", "gone"), events=event_range(1, 2))
    await store.delete("gone")
    rich = rich_checkpoint("rich")
    await store.save(rich, stored_messages=0, approval=approval("appr-9", "rich"))
    for i in range(20):
        await SessionWriter(store, f"small-{i:02d}").save(add=1, status=Status.FINISHED)


async def snapshot(store: Store) -> dict[str, object]:
    """Everything a store holds, comparable across drivers."""
    ids = [sid async for sid in session_ids(store)]
    listed, token = [], ""
    while True:
        page, token = await store.list_sessions(status=None, page_size=7, page_token=token)
        listed += page
        if not token:
            break
    approvals, token = [], ""
    while True:
        page, token = await store.list_approvals(session_id=None, page_size=2, page_token=token)
        approvals += page
        if not token:
            break
    return {
        "ids": ids,
        "listed": listed,
        "approvals": approvals,
        "sessions": {
            sid: (
                await store.load(sid),
                await store.history(sid),
                await store.read_events(sid, after_seq=0, limit=10_000),
            )
            for sid in ids
        },
    }


async def open_store(url: str) -> Store:
    store = store_from_url(url, history_limit=LIMIT)
    await store.open()
    return store


async def test_copy_sqlite_to_lmdb_and_back_keeps_everything(tmp_path: Path) -> None:
    await round_trip(
        f"sqlite://{tmp_path}/first.db", f"lmdb://{tmp_path}/via", f"sqlite://{tmp_path}/back.db"
    )


async def test_copy_lmdb_to_postgres_to_sqlite_keeps_everything(
    tmp_path: Path, postgres_url: str
) -> None:
    await round_trip(f"lmdb://{tmp_path}/first", postgres_url, f"sqlite://{tmp_path}/back.db")


async def test_copy_postgres_to_lmdb_keeps_everything(tmp_path: Path, postgres_url: str) -> None:
    await round_trip(postgres_url, f"lmdb://{tmp_path}/via", f"{postgres_url}?schema=back")


async def round_trip(first: str, via: str, back: str) -> None:
    """``fill`` ``first``, copy it to ``via`` and on to ``back``: both hold exactly what
    ``first`` held, and ``back`` goes on like the original."""
    source = await open_store(first)
    await fill(source)
    expected = await snapshot(source)
    await source.close()
    assert len(expected["ids"]) == SESSIONS  # type: ignore[arg-type]
    # What the copy has to carry: approvals, event logs, one of them with no checkpoint.
    assert [a.approval_id for a in expected["approvals"]] == [  # type: ignore[attr-defined]
        "appr-0",
        "appr-1",
        "appr-9",
    ]
    sessions = expected["sessions"]
    assert sessions["long"][2] == EventPage(event_range(1, 60), 1, 60)  # type: ignore[index]
    assert sessions["only-events"][0] is None  # type: ignore[index]
    assert len(sessions["kept-history"][2].events) == 3  # type: ignore[index]

    for a, b in ((first, via), (via, back)):
        report = await copy_store(a, b, history_limit=LIMIT, progress=False)
        assert (report.sessions, report.copied, report.skipped) == (SESSIONS, SESSIONS, 0)
    for url in (via, back):
        store = await open_store(url)
        try:
            assert await snapshot(store) == expected, url
        finally:
            await store.close()

    # The copy continues like the original: a next save of the long session lands, the
    # copied approvals are claimed exactly once.
    store = await open_store(back)
    try:
        cp = await store.load("long")
        assert cp is not None
        nxt = replace(copy.deepcopy(cp), version=cp.version + 1, updated_at=cp.updated_at + 1)
        await store.save(nxt, stored_messages=len(cp.messages), events=event_range(61, 61))
        assert [e.checkpoint for e in await store.history("long", limit=2)] == [nxt, cp]
        assert (await store.read_events("long", after_seq=59, limit=5)).events == event_range(
            60, 61
        )
        paused = await store.load("rewritten")
        assert paused is not None and paused.approval_id == "appr-0"
        resumed = replace(paused, version=paused.version + 1, status=Status.IN_PROGRESS)
        await store.save(resumed, stored_messages=len(paused.messages), claim="appr-0")
        with pytest.raises(ApprovalNotFound):
            await store.save(
                replace(resumed, version=resumed.version + 1),
                stored_messages=len(paused.messages),
                claim="appr-0",
            )
    finally:
        await store.close()


async def test_copy_keeps_the_newest_events_the_destination_keeps(tmp_path: Path) -> None:
    src_url, dst_url = f"sqlite://{tmp_path}/src.db", f"lmdb://{tmp_path}/dst"
    source = await open_store(src_url)
    await fill(source)
    await source.close()
    report = await copy_store(
        src_url, dst_url, history_limit=LIMIT, event_log_limit=7, progress=False
    )
    assert report.copied == SESSIONS
    destination = await open_store(dst_url)
    try:
        assert await events_of(destination, "long") == event_range(54, 60)
        assert await events_of(destination, "only-events") == event_range(40, 44, "only")
    finally:
        await destination.close()
    # Run again with the same limit: nothing to do.
    report = await copy_store(
        src_url, dst_url, history_limit=LIMIT, event_log_limit=7, progress=False
    )
    assert (report.copied, report.skipped) == (0, SESSIONS)


async def test_an_interrupted_copy_resumes(tmp_path: Path) -> None:
    src_url, dst_url = f"sqlite://{tmp_path}/src.db", f"lmdb://{tmp_path}/dst"
    source = await open_store(src_url)
    await fill(source)
    expected = await snapshot(source)
    destination = await open_store(dst_url)
    ids = [sid async for sid in session_ids(source)]

    done: list[str] = []

    def interrupt_after_five(sid: str, copied: bool) -> None:
        done.append(sid)
        if len(done) == 5:
            task.cancel()  # as Ctrl-C would: at the next await, mid-copy

    task = asyncio.ensure_future(
        copy_sessions(source, destination, ids, on_session=interrupt_after_five)
    )
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(done) == 5
    # Every session is whole or absent at the destination, never half-copied.
    partial = await snapshot(destination)
    for sid in partial["ids"]:  # type: ignore[attr-defined]
        assert partial["sessions"][sid] == expected["sessions"][sid]  # type: ignore[index]
    await source.close()
    await destination.close()

    report = await copy_store(src_url, dst_url, history_limit=LIMIT, progress=False)
    assert report.skipped >= 5 and report.copied == SESSIONS - report.skipped
    destination = await open_store(dst_url)
    try:
        assert await snapshot(destination) == expected
    finally:
        await destination.close()


def test_cli_store_copy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = f"sqlite://{tmp_path}/src.db", f"lmdb://{tmp_path}/dst"

    async def make() -> None:
        store = await open_store(src)
        await fill(store)
        await store.close()

    asyncio.run(make())
    argv = ["store", "copy", "--from", src, "--to", dst, "--history-limit", str(LIMIT)]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert "25 sessions: 25 copied, 0 already at the destination" in out
    assert "25/25" in err  # the progress bar
    # Again: nothing left to copy. Then a session changes at the source and is copied again.
    assert cli.main([*argv, "--no-progress"]) == 0
    assert "0 copied, 25 already" in capsys.readouterr().out

    async def change() -> None:
        store = await open_store(src)
        await store.delete("rich")
        await store.close()

    asyncio.run(change())
    assert cli.main([*argv, "--no-progress"]) == 0
    assert "24 sessions: 0 copied, 24 already" in capsys.readouterr().out

    # Only an event log (at the source) or only the approvals (lost at the destination)
    # differ: the session is copied again.
    async def change_events_and_approvals() -> None:
        store = await open_store(src)
        await store.append_events("only-events", event_range(45, 45, "only"))
        await store.close()
        store = await open_store(dst)
        cp, history = await store.load("rewritten"), await store.history("rewritten")
        await store.import_session("rewritten", latest=cp, history=history[::-1])
        await store.close()

    asyncio.run(change_events_and_approvals())
    assert cli.main([*argv, "--no-progress"]) == 0
    assert "24 sessions: 2 copied, 22 already" in capsys.readouterr().out

    async def check() -> None:
        store = await open_store(dst)
        page, _ = await store.list_approvals(session_id="rewritten", page_size=9, page_token="")
        assert [a.approval_id for a in page] == ["appr-0", "appr-1"]
        assert (await store.read_events("only-events", after_seq=44, limit=9)).events == (
            event_range(45, 45, "only")
        )
        await store.close()

    asyncio.run(check())


def test_cli_store_copy_refuses_bad_urls(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["store", "copy", "--from", "memory://", "--to", "memory://"]) == 2
    assert "same store" in capsys.readouterr().err
    assert cli.main(["store", "copy", "--from", "nope://x", "--to", "memory://"]) == 2
    assert "no store driver" in capsys.readouterr().err


@pytest.mark.parametrize("source", ["sqlite://{tmp}/typo.db", "lmdb://{tmp}/typo", "memory://"])
def test_cli_store_copy_refuses_a_source_that_does_not_exist(
    source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A mistyped --from is an error, not "0 sessions copied" and a new empty store there.
    src, dst = source.format(tmp=tmp_path), f"lmdb://{tmp_path}/dst"
    assert cli.main(["store", "copy", "--from", src, "--to", dst, "--no-progress"]) == 2
    assert f"the source store {src} does not exist" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # neither store was created
