"""``luoshod store copy``: every session of one store, with its history, pending
approvals, event log, applied request records and queued inputs, and the store's
schedules (R87), into another.

Each session is read from the source (its latest checkpoint, its history oldest first,
its pending approvals, its event log and its applied request records, R74) and written to the
destination with
:meth:`~luoshod.store.kit.base.Store.import_session`, which replaces the session there
atomically and keeps each entry's ``saved_at`` and each event's seq. Sessions the
destination holds and the source does not are left alone.

Resumable: a session whose checkpoint, history, approvals, events and request records at
the destination already equal the source's is skipped, so running the same copy again
after an interruption (Ctrl-C, a crash, a full disk) copies only what is missing or changed. A
session is either copied whole or not at all. Stop the daemons writing to the source
first, or the copy is of a moving target (a second run then picks up what changed).

Approvals (event logs) are copied when both stores declare ``Capability.APPROVALS``
(``EVENT_LOG``), as the history is when the source declares ``HISTORY``; the destination
keeps the newest ``event_log_limit`` events of each log.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from tqdm import tqdm

from ..domain import Approval, Checkpoint, HistoryEntry, StoredEvent
from ..errors import LuoshoError
from . import store_from_url
from .kit.base import DEFAULT_EVENT_LOG_LIMIT, DEFAULT_HISTORY_LIMIT, Capability, Store

PAGE_SIZE = 500


@dataclass
class CopyReport:
    """What a copy did: sessions seen, copied, and skipped as already equal."""

    sessions: int = 0
    copied: int = 0
    skipped: int = 0


async def session_ids(store: Store) -> AsyncIterator[str]:
    """Every session id of ``store``, in order, page by page."""
    token = ""
    while True:
        page, token = await store.session_ids(page_size=PAGE_SIZE, page_token=token)
        for sid in page:
            yield sid
        if not token:
            return


async def approvals_of(store: Store, session_id: str) -> list[Approval]:
    """The pending approvals of ``session_id``, in id order, page by page."""
    found: list[Approval] = []
    token = ""
    while True:
        page, token = await store.list_approvals(
            session_id=session_id, page_size=PAGE_SIZE, page_token=token
        )
        found += page
        if not token:
            return found


async def events_of(store: Store, session_id: str) -> list[StoredEvent]:
    """The whole kept event log of ``session_id``, oldest first, page by page."""
    found: list[StoredEvent] = []
    after = 0
    while True:
        page = await store.read_events(session_id, after_seq=after, limit=PAGE_SIZE)
        found += page.events
        if len(page.events) < PAGE_SIZE:
            return found
        after = page.events[-1].seq


def _both(source: Store, destination: Store, capability: Capability) -> bool:
    return capability in source.capabilities and capability in destination.capabilities


async def copy_sessions(
    source: Store,
    destination: Store,
    ids: list[str],
    *,
    on_session: Callable[[str, bool], None] = lambda sid, copied: None,
) -> CopyReport:
    """Copy the sessions ``ids`` (opened stores). ``on_session(id, copied)`` after each."""
    report = CopyReport()
    read_history = Capability.HISTORY in source.capabilities
    compare_history = Capability.HISTORY in destination.capabilities
    copy_approvals = _both(source, destination, Capability.APPROVALS)
    copy_events = _both(source, destination, Capability.EVENT_LOG)
    for sid in ids:
        latest = await source.load(sid)
        history = (await source.history(sid))[::-1] if read_history else []
        approvals = await approvals_of(source, sid) if copy_approvals else []
        events = await events_of(source, sid) if copy_events else []
        records = await source.requests(sid) if latest is not None else []
        there = await _already_there(destination, sid, latest, history, compare_history)
        if there:
            there = await destination.requests(sid) == records
        if there and copy_approvals:
            there = await approvals_of(destination, sid) == approvals
        if there and copy_events:
            limit = destination.event_log_limit
            expected = events[max(0, len(events) - limit) :] if limit else []
            there = await events_of(destination, sid) == expected
        if there:
            report.skipped += 1
            copied = False
        else:
            await destination.import_session(
                sid,
                latest=latest,
                history=history,
                approvals=approvals,
                events=events,
                requests=records,
            )
            report.copied += 1
            copied = True
        report.sessions += 1
        on_session(sid, copied)
    return report


async def copy_queues(source: Store, destination: Store) -> int:
    """Every queued input (R69: a session's queue, and the daemon's webhook outbox) when
    both stores keep a queue, in queue order; idempotent by request id, so a copy run
    again adds only what is missing. Returns how many inputs the source queues."""
    if not _both(source, destination, Capability.QUEUE):
        return 0
    count, token = 0, ""
    while True:
        ids, token = await source.queued_sessions(page_size=PAGE_SIZE, page_token=token)
        for sid in ids:
            for q in await source.queued_inputs(sid):
                await destination.enqueue_input(sid, q.request_id, q.data, now=q.enqueued_at)
                count += 1
        if not token:
            return count


async def copy_schedules(source: Store, destination: Store) -> int:
    """Every schedule (R87) when both stores keep them, as the source holds it (its next
    fire and pending fires with it); one the destination has already is made the
    source's. Returns how many schedules the source holds."""
    if not _both(source, destination, Capability.SCHEDULES):
        return 0
    found = await source.list_schedules()
    for s in found:
        while await destination.create_schedule(s.name, s.data) is None:
            there = await destination.get_schedule(s.name)
            if there is None:
                continue  # deleted in between: create it
            if there.data == s.data or await destination.update_schedule(
                s.name, s.data, version=there.version
            ):
                break
    return len(found)


async def _already_there(
    destination: Store,
    sid: str,
    latest: Checkpoint | None,
    history: list[HistoryEntry],
    compare_history: bool,
) -> bool:
    """Whether the destination holds the checkpoint and history importing would write."""
    if await destination.load(sid) != latest:
        return False
    if not compare_history:
        return True
    limit = destination.history_limit_for(latest) if latest else destination.history_limit
    expected = history[max(0, len(history) - limit) :] if limit else []
    return (await destination.history(sid))[::-1] == expected


async def copy_store(
    from_url: str,
    to_url: str,
    *,
    history_limit: int = DEFAULT_HISTORY_LIMIT,
    event_log_limit: int = DEFAULT_EVENT_LOG_LIMIT,
    progress: bool = True,
) -> CopyReport:
    """Open both stores, copy every session with a progress bar on stderr, close them.

    ``history_limit`` and ``event_log_limit`` are the destination's. Raises
    ``ValueError`` for a bad URL or limit, when both URLs are the same or when the source
    does not exist (:meth:`Store.exists`), ``StoreError`` when a store fails.
    """
    if from_url == to_url:
        raise ValueError("--from and --to name the same store")
    source = store_from_url(from_url)
    if not source.exists():
        raise ValueError(f"the source store {from_url} does not exist: there is nothing to copy")
    destination = store_from_url(
        to_url, history_limit=history_limit, event_log_limit=event_log_limit
    )
    await source.open()
    try:
        await destination.open()
        try:
            ids = [sid async for sid in session_ids(source)]
            with tqdm(total=len(ids), unit="session", file=sys.stderr, disable=not progress) as bar:

                def advance(sid: str, copied: bool) -> None:
                    bar.update(1)

                report = await copy_sessions(source, destination, ids, on_session=advance)
            await copy_queues(source, destination)
            await copy_schedules(source, destination)
            return report
        finally:
            await destination.close()
    finally:
        await source.close()


def run_copy(
    from_url: str, to_url: str, history_limit: int, event_log_limit: int, progress: bool
) -> int:
    """``luoshod store copy``: copy, print what was done; the exit status."""
    try:
        report = asyncio.run(
            copy_store(
                from_url,
                to_url,
                history_limit=history_limit,
                event_log_limit=event_log_limit,
                progress=progress,
            )
        )
    except ValueError as e:
        print(f"luoshod store copy: {e}", file=sys.stderr)
        return 2
    except LuoshoError as e:
        print(f"luoshod store copy: {e} (run it again to resume)", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("luoshod store copy: interrupted (run it again to resume)", file=sys.stderr)
        return 130
    print(
        f"{report.sessions} sessions: {report.copied} copied, "
        f"{report.skipped} already at the destination"
    )
    return 0
