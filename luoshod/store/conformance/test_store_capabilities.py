"""Capabilities both ways, for every driver: what a driver declares works (the other kit
modules), and what it does not declare is refused or absent (here)."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Awaitable, Callable, Sequence

import pytest

from luoshod.domain import (
    AppliedRequest,
    Approval,
    Checkpoint,
    Enqueue,
    Lease,
    SessionSummary,
    Status,
    StoredEvent,
)
from luoshod.store import Capability, Store

from . import process_workers
from .backend import Backend
from .helpers import SessionWriter, approval, event_range


async def test_capabilities_are_declared_as_a_set_of_capabilities(backend: Backend) -> None:
    caps = backend.capabilities
    assert isinstance(caps, frozenset) and all(isinstance(c, Capability) for c in caps)


async def test_multi_process_unless_declared_is_refused_or_shares_nothing(
    backend: Backend, driver: Store
) -> None:
    if Capability.MULTI_PROCESS in backend.capabilities:
        pytest.skip(f"{backend.name} declares multi_process (test_store_processes.py)")
    await driver.save(Checkpoint("s", version=1), stored_messages=0)
    if Capability.DURABLE in backend.capabilities:
        # Its data is on disk, so a second process must be kept out, not let in to race.
        ctx = multiprocessing.get_context("spawn")
        results = ctx.Queue()
        child = ctx.Process(target=process_workers.open_and_report, args=(backend.url, results))
        child.start()
        outcome = await asyncio.to_thread(results.get, True, 60)
        await asyncio.to_thread(child.join, 30)
        assert outcome == "StoreError"
    else:
        # Nothing to share: another store of the same URL is another, empty store.
        other = await backend.open()
        assert await other.load("s") is None


def optional_calls(store: Store) -> dict[Capability, list[Callable[[], Awaitable[object]]]]:
    """Every call of each optional part of the contract (on session "s")."""
    imported = Checkpoint("imported", version=1)
    return {
        Capability.HISTORY: [lambda: store.history("s")],
        Capability.APPROVALS: [
            lambda: store.get_approval("a"),
            lambda: store.list_approvals(session_id=None, page_size=10, page_token=""),
            lambda: store.list_approvals(session_id="s", page_size=10, page_token=""),
            lambda: store.import_session(
                "imported", latest=imported, history=[], approvals=[approval("i", "imported")]
            ),
        ],
        Capability.EVENT_LOG: [
            lambda: store.append_events("s", event_range(1, 1)),
            lambda: store.read_events("s", after_seq=0, limit=10),
            lambda: store.import_session(
                "imported", latest=imported, history=[], events=event_range(1, 1)
            ),
        ],
        Capability.LEASES: [
            lambda: store.acquire_lease("s", owner="o", ttl=10),
            lambda: store.renew_lease(Lease("s", "o", 1, 0.0), ttl=10),
            lambda: store.release_lease(Lease("s", "o", 1, 0.0)),
            lambda: store.release_leases_of("o"),
            lambda: store.renew_leases([Lease("s", "o", 1, 0.0)], ttl=10),
            lambda: store.list_leases(page_size=10, page_token=""),
        ],
        Capability.QUEUE: [
            lambda: store.enqueue_input("s", "r", b"x", now=1.0),
            lambda: store.queued_inputs("s"),
            lambda: store.remove_queued_input("s", "r"),
            lambda: store.queued_sessions(page_size=10, page_token=""),
        ],
        Capability.SCHEDULES: [
            lambda: store.create_schedule("n", b"x"),
            lambda: store.get_schedule("n"),
            lambda: store.list_schedules(),
            lambda: store.update_schedule("n", b"x", version=1),
            lambda: store.delete_schedule("n"),
        ],
    }


async def test_undeclared_optional_parts_are_refused(backend: Backend, driver: Store) -> None:
    await SessionWriter(driver, "s").save()
    for capability, calls in optional_calls(driver).items():
        for call in calls:
            if capability in backend.capabilities:
                await call()  # declared: answers
            else:
                with pytest.raises(NotImplementedError):
                    await call()


class BareStore(Store):
    """A driver declaring no capability: only the abstract methods, so every optional part
    is the base class's default."""

    @classmethod
    def from_url(cls, url: str, *, history_limit: int = 50) -> BareStore:
        return cls(history_limit=history_limit)

    async def load(self, session_id: str) -> Checkpoint | None:
        return None

    async def save(
        self,
        checkpoint: Checkpoint,
        *,
        stored_messages: int,
        events: Sequence[StoredEvent] = (),
        approval: Approval | None = None,
        claim: str | None = None,
        lease: Lease | None = None,
        requests: Sequence[AppliedRequest] = (),
        request_limit: int = 1000,
        enqueue: Sequence[Enqueue] = (),
    ) -> None:
        pass

    async def find_request(self, session_id: str, request_id: str) -> AppliedRequest | None:
        return None

    async def requests(self, session_id: str) -> list[AppliedRequest]:
        return []

    async def delete(
        self, session_id: str, *, keep_history: bool = False, keep_queue: bool = False
    ) -> bool:
        return False

    async def _list_sessions(
        self, status: Status | None, after: str, limit: int
    ) -> list[SessionSummary]:
        return []

    async def _session_ids(self, after: str, limit: int) -> list[str]:
        return []

    async def _import_session(
        self,
        session_id: str,
        latest: Checkpoint | None,
        history: list[Checkpoint],
        approvals: list[Approval],
        events: list[StoredEvent],
        requests: list[AppliedRequest],
    ) -> None:
        pass


async def test_a_driver_declaring_no_capability_refuses_every_optional_part() -> None:
    store = BareStore()
    assert store.capabilities == frozenset()
    calls = optional_calls(store)
    assert set(calls) == set(Capability) - {Capability.DURABLE, Capability.MULTI_PROCESS}
    for _capability, for_capability in calls.items():
        for call in for_capability:
            with pytest.raises(NotImplementedError, match="keeps no"):
                await call()
    # Importing only what it keeps is fine.
    await store.import_session("imported", latest=Checkpoint("imported", version=1), history=[])
