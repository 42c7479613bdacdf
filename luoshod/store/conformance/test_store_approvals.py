"""Pending approvals (``save(approval=, claim=)``, ``get_approval``, ``list_approvals``),
one test per rule, for every driver that declares APPROVALS. R33: of any number of writers
claiming one approval (tasks or processes), exactly one wins; the others get
``ApprovalNotFound`` and write nothing."""

from __future__ import annotations

import asyncio
import multiprocessing
from dataclasses import replace

import pytest
import pytest_asyncio

from luoshod.domain import Approval, Checkpoint, EventPage, Message, Role, Status, StoredEvent
from luoshod.errors import ApprovalNotFound
from luoshod.store import Capability, Store
from luoshod.store.kit import encode_page_token

from . import process_workers
from .backend import Backend
from .helpers import SessionWriter, approval, event_range, message

PAUSED = Status.AWAITING_APPROVAL


@pytest_asyncio.fixture
async def approvals_driver(backend: Backend) -> Store:
    backend.require(Capability.APPROVALS)
    return await backend.open()


async def all_approvals(
    store: Store, session_id: str | None = None, page_size: int = 100
) -> list[Approval]:
    found, token = [], ""
    while True:
        page, token = await store.list_approvals(
            session_id=session_id, page_size=page_size, page_token=token
        )
        assert len(page) <= page_size
        found += page
        if not token:
            return found


async def test_an_approval_saved_with_its_checkpoint_is_pending(approvals_driver: Store) -> None:
    d = approvals_driver
    rich = approval("appr-1", "s")
    plain = replace(approval("appr-2", "t"), remaining=(), fingerprint=None, expires_at=None)
    w, t = SessionWriter(d, "s"), SessionWriter(d, "t")
    await w.save(status=PAUSED, approval=rich)
    await t.save(status=PAUSED, approval=plain)
    assert await d.get_approval("appr-1") == rich  # every field, as given
    assert await d.get_approval("appr-2") == plain
    assert await all_approvals(d) == [rich, plain]
    cp = await d.load("s")
    assert cp is not None and cp.approval_id == "appr-1" and cp.version == 1


async def test_an_unknown_approval_is_none(approvals_driver: Store) -> None:
    await SessionWriter(approvals_driver, "s").save()
    assert await approvals_driver.get_approval("nope") is None
    assert await approvals_driver.list_approvals(session_id=None, page_size=10, page_token="") == (
        [],
        "",
    )
    assert await all_approvals(approvals_driver, "s") == []


async def test_list_approvals_pages_in_id_order_and_filters_by_session(
    approvals_driver: Store,
) -> None:
    d = approvals_driver
    writers = {sid: SessionWriter(d, sid) for sid in ("s1", "s2", "s3")}
    made = {}
    for aid, sid in [
        ("a-05", "s1"),
        ("a-01", "s2"),
        ("a-03", "s1"),
        ("a-02", "s3"),
        ("a-04", "s2"),
    ]:
        made[aid] = approval(aid, sid)
        await writers[sid].save(status=PAUSED, approval=made[aid])
    ordered = [made[aid] for aid in sorted(made)]
    for page_size in (1, 2, 5, 10):
        assert await all_approvals(d, page_size=page_size) == ordered, page_size
    # Pages of two: three of them, the last (one approval) without a token.
    page, token = await d.list_approvals(session_id=None, page_size=2, page_token="")
    assert [a.approval_id for a in page] == ["a-01", "a-02"] and token
    page, token = await d.list_approvals(session_id=None, page_size=2, page_token=token)
    assert [a.approval_id for a in page] == ["a-03", "a-04"] and token
    page, token = await d.list_approvals(session_id=None, page_size=2, page_token=token)
    assert [a.approval_id for a in page] == ["a-05"] and token == ""
    # A last full page has no token either.
    page, token = await d.list_approvals(session_id="s1", page_size=2, page_token="")
    assert [a.approval_id for a in page] == ["a-03", "a-05"] and token == ""
    for page_size in (1, 2, 10):
        assert await all_approvals(d, "s1", page_size) == [made["a-03"], made["a-05"]]
        assert await all_approvals(d, "s2", page_size) == [made["a-01"], made["a-04"]]
        assert await all_approvals(d, "s3", page_size) == [made["a-02"]]
        assert await all_approvals(d, "nobody", page_size) == []
    # A token continues after its id, whether or not that id is still pending.
    after = encode_page_token("a-02")
    page, _ = await d.list_approvals(session_id="s2", page_size=10, page_token=after)
    assert [a.approval_id for a in page] == ["a-04"]


@pytest.mark.parametrize(
    "token", ["a", encode_page_token("x")[:1], "__4"], ids=["short", "cut", "not-utf8"]
)
async def test_list_approvals_rejects_bad_paging(approvals_driver: Store, token: str) -> None:
    await SessionWriter(approvals_driver, "s").save(status=PAUSED, approval=approval("a", "s"))
    for session_id in (None, "s"):
        with pytest.raises(ValueError, match="page_size"):
            await approvals_driver.list_approvals(session_id=session_id, page_size=0, page_token="")
        with pytest.raises(ValueError, match="page token"):
            await approvals_driver.list_approvals(
                session_id=session_id, page_size=10, page_token=token
            )


async def test_a_save_claiming_an_approval_removes_it(approvals_driver: Store) -> None:
    d = approvals_driver
    w = SessionWriter(d, "s")
    await w.save(status=PAUSED, approval=approval("appr-1", "s"))
    # Claimed with the next save, which pauses again on another approval (R31).
    second = approval("appr-2", "s", step=2)
    await w.save(claim="appr-1", status=PAUSED, approval=second)
    assert await d.get_approval("appr-1") is None
    assert await all_approvals(d) == [second]
    await w.save(claim="appr-2")
    assert await d.get_approval("appr-2") is None
    assert await all_approvals(d) == [] and await all_approvals(d, "s") == []
    assert await d.load("s") == w.snapshots[-1]


@pytest.mark.parametrize("claim", ["unknown", "claimed", "of-another-session"])
async def test_claiming_what_is_not_pending_is_refused_and_writes_nothing(
    backend: Backend, approvals_driver: Store, claim: str
) -> None:
    d = approvals_driver
    logs = Capability.EVENT_LOG in backend.capabilities
    w = SessionWriter(d, "s")
    await w.save(status=PAUSED, approval=approval("claimed", "s"), events=event_range(1, 1))
    await w.save(claim="claimed", events=event_range(2, 2))
    other = approval("of-another-session", "t")
    await SessionWriter(d, "t").save(status=PAUSED, approval=other)
    before = w.snapshots[-1]
    # Even with the right next version, messages, events and an approval of its own.
    with pytest.raises(ApprovalNotFound) as info:
        await w.save(add=2, claim=claim, events=event_range(3, 4), approval=approval("new", "s"))
    assert info.value.metadata["approval_id"] == claim
    assert await d.load("s") == before  # version unchanged
    if Capability.HISTORY in backend.capabilities:
        assert [e.checkpoint for e in await d.history("s")] == w.snapshots[::-1]
    if logs:
        assert await d.read_events("s", after_seq=0, limit=10) == EventPage(event_range(1, 2), 1, 2)
    assert await d.get_approval("new") is None
    assert await d.get_approval("of-another-session") == other  # not taken from "t"
    # Nothing was used up: the same save without the claim lands.
    await w.save(add=0, events=event_range(3, 4))
    assert await d.load("s") == w.snapshots[-1] and w.snapshots[-1].version == 3


async def test_r33_the_claim_is_checked_before_the_version(approvals_driver: Store) -> None:
    d = approvals_driver
    w = SessionWriter(d, "s")
    await w.save(status=PAUSED, approval=approval("appr", "s"))
    paused = w.snapshots[-1]
    mine = replace(
        paused, version=2, status=Status.IN_PROGRESS, messages=w.messages + [message(1, "mine")]
    )
    theirs = replace(mine, messages=w.messages + [message(1, "theirs")])
    await d.save(mine, stored_messages=1, claim="appr")
    # The second writer read the same checkpoint: its version is stale too, but what it
    # is told is that the approval was resolved (R33), not that it lost the session.
    with pytest.raises(ApprovalNotFound):
        await d.save(theirs, stored_messages=1, claim="appr")
    assert await d.load("s") == mine


async def test_r33_two_tasks_claiming_one_approval_exactly_one_wins(
    backend: Backend, approvals_driver: Store
) -> None:
    d = approvals_driver
    base = SessionWriter(d, "race")
    await base.save(status=PAUSED, approval=approval("appr", "race"))
    a = replace(base.snapshots[-1], version=2, messages=base.messages + [message(1, "a")])
    b = replace(base.snapshots[-1], version=2, messages=base.messages + [message(1, "b")])
    results = await asyncio.gather(
        d.save(a, stored_messages=1, claim="appr", events=[StoredEvent(1, b"a")]),
        d.save(b, stored_messages=1, claim="appr", events=[StoredEvent(1, b"b")]),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == ["ApprovalNotFound", "NoneType"]
    winner, tag = (a, b"a") if results[0] is None else (b, b"b")
    assert await d.load("race") == winner
    assert await d.get_approval("appr") is None
    if Capability.EVENT_LOG in backend.capabilities:
        page = await d.read_events("race", after_seq=0, limit=10)
        assert page.events == [StoredEvent(1, tag)]  # only the winner's


async def test_a_refused_claim_does_not_affect_concurrent_saves(
    approvals_driver: Store,
) -> None:
    d = approvals_driver
    writers = [SessionWriter(d, f"s{i}") for i in range(6)]
    for w in writers:
        await w.save(status=PAUSED, approval=approval(f"a-{w.session_id}", w.session_id))
    loser = SessionWriter(d, "loser")
    await loser.save()
    results = await asyncio.gather(
        *(w.save(claim=f"a-{w.session_id}") for w in writers[:3]),
        loser.save(claim="nope"),
        *(
            w.save(status=PAUSED, approval=approval(f"b-{w.session_id}", w.session_id))
            for w in writers[3:]
        ),
        return_exceptions=True,
    )
    assert [type(r).__name__ for r in results].count("ApprovalNotFound") == 1
    assert isinstance(results[3], ApprovalNotFound)
    for w in writers:
        assert await d.load(w.session_id) == w.snapshots[-1]
    assert [a.approval_id for a in await all_approvals(d)] == [
        "a-s3",
        "a-s4",
        "a-s5",
        "b-s3",
        "b-s4",
        "b-s5",
    ]
    assert await d.load("loser") == loser.snapshots[-1]


SESSIONS = 20


async def test_r33_two_processes_claiming_one_approval_exactly_one_wins(
    backend: Backend,
) -> None:
    backend.require(Capability.APPROVALS)
    backend.require(Capability.MULTI_PROCESS)
    store = await backend.open()
    for i in range(SESSIONS):
        sid = f"claim-{i:03d}"
        cp = Checkpoint(sid, [Message(Role.USER, "go")], status=PAUSED, version=1)
        await store.save(cp, stored_messages=0, approval=approval(f"appr-{i:03d}", sid))
    await store.close()
    backend.opened.remove(store)

    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    names = ["p1", "p2"]
    procs = [
        ctx.Process(
            target=process_workers.claim,
            args=(backend.url, name, barrier, results, SESSIONS),
            daemon=True,
        )
        for name in names
    ]
    for p in procs:
        p.start()
    try:
        outcomes = dict([await asyncio.to_thread(results.get, True, 90) for _ in procs])
    finally:
        for p in procs:
            await asyncio.to_thread(p.join, 30)
            if p.is_alive():
                p.kill()
    failures = {n: o for n, o in outcomes.items() if isinstance(o, str)}
    assert not failures, failures
    assert [p.exitcode for p in procs] == [0, 0]

    won = {name: set(outcomes[name][0]) for name in names}
    assert won["p1"].isdisjoint(won["p2"])
    assert won["p1"] | won["p2"] == {f"claim-{i:03d}" for i in range(SESSIONS)}
    # Every loser was told the approval was resolved (the claim is checked first).
    lost = [error for name in names for error in outcomes[name][1]]
    assert lost == ["ApprovalNotFound"] * SESSIONS
    store = await backend.open()
    assert await all_approvals(store) == []
    for name in names:
        for sid in won[name]:
            loaded = await store.load(sid)
            assert loaded is not None and loaded.version == 2
            assert loaded.messages[-1] == Message(Role.USER, f"by {name}")
            if Capability.EVENT_LOG in backend.capabilities:
                page = await store.read_events(sid, after_seq=0, limit=10)
                assert page.events == [StoredEvent(1, name.encode())]


@pytest.mark.parametrize("keep_history", [False, True], ids=["delete", "keep-history"])
async def test_delete_removes_the_sessions_approvals(
    approvals_driver: Store, keep_history: bool
) -> None:
    d = approvals_driver
    w = SessionWriter(d, "s")
    await w.save(status=PAUSED, approval=approval("s-1", "s"))
    await w.save(status=PAUSED, approval=approval("s-2", "s"))  # two pending at once
    kept = approval("t-1", "t")
    await SessionWriter(d, "t").save(status=PAUSED, approval=kept)
    assert await d.delete("s", keep_history=keep_history) is True
    assert await d.get_approval("s-1") is None and await d.get_approval("s-2") is None
    assert await all_approvals(d, "s") == []
    assert await all_approvals(d) == [kept]
    # The session starts again; its old approvals cannot be claimed any more.
    w.restart()
    with pytest.raises(ApprovalNotFound):
        await w.save(claim="s-1")
    await w.save(status=PAUSED, approval=approval("s-3", "s"))
    assert [a.approval_id for a in await all_approvals(d)] == ["s-3", "t-1"]


async def test_durable_approvals_survive_reopen(backend: Backend) -> None:
    backend.require(Capability.APPROVALS)
    backend.require(Capability.DURABLE)
    first = await backend.open()
    w = SessionWriter(first, "s")
    pending = approval("appr", "s")
    await w.save(status=PAUSED, approval=pending)
    await first.close()
    second = await backend.open()
    assert await second.get_approval("appr") == pending
    assert await all_approvals(second, "s") == [pending]
    w.store = second
    await w.save(claim="appr")  # and it is claimed there exactly once
    with pytest.raises(ApprovalNotFound):
        await second.save(
            replace(w.snapshots[-1], version=3), stored_messages=w.stored, claim="appr"
        )
    assert await second.get_approval("appr") is None
