"""The storage contract: one async abstract base class, implemented by every driver.

A driver keeps, per session: the latest checkpoint, a bounded history ring, its pending
approvals and a bounded event log (the last two for drivers declaring ``APPROVALS`` and
``EVENT_LOG``). The transcript only grows within a session, so :meth:`Store.save` is told
how many leading messages the store already holds and writes only the new ones plus a
small header; a history entry refers to a prefix of the session's message log instead of
copying it. Save time and bytes per history entry are O(new messages), never
O(transcript).

Errors: a driver translates its library's exceptions at its edge into
:class:`~luoshod.errors.StoreError` (or a subclass); it never lets a library exception
escape. An incomplete driver fails when it is constructed (``abc``), not on first use.

**Writing a driver.** The public methods are the contract callers use. What every driver
would otherwise repeat is done here, once: the checks of a request (page size and token,
TTL, history limit, what ``import_session`` is given), the cut of a page, the trimming of
an import to the limits, seqs within 64 bits, the refusal of an optional part the driver
does not declare, and idempotent ``open``/``close``. A driver implements the narrow hooks
they call, named after them with a leading underscore (``_list_sessions``,
``_read_events``, ``_acquire_lease``…), each given a request already checked; the
abstract ones are required, the others belong to an optional capability. ``load``,
``save``, ``delete``, ``append_events``, ``get_approval`` and the lease releases have
nothing to share and are implemented directly; a driver that group-commits its writes
takes ``save`` and ``append_events`` from :class:`.prepared.QueuedWrites` and writes the
plan of each batch (:mod:`.planning`).
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Sequence
from typing import ClassVar, NamedTuple, TypedDict

from ...domain import (
    DEFAULT_REQUEST_ID_LIMIT,
    AppliedRequest,
    Approval,
    Checkpoint,
    Enqueue,
    EventPage,
    HistoryEntry,
    Lease,
    QueuedInput,
    SessionSummary,
    Status,
    StoredEvent,
    StoredSchedule,
)
from ...errors import LeaseLost
from . import eventblocks
from .capabilities import Capability
from .events import MAX_SEQ, clamp_seq
from .importing import check_import, newest
from .leases import Renewal, check_batch, check_ttl
from .paging import page_of, page_start, prefix_range

#: The version of this contract. A driver names the one it was built for in
#: :attr:`Store.contract_version`; ``driver_for`` refuses any other, so a driver released
#: apart from luoshod never runs against a contract it was not written for. Raised when a
#: method is added, removed or changes its meaning.
CONTRACT_VERSION = 2

DEFAULT_HISTORY_LIMIT = 50
DEFAULT_EVENT_LOG_LIMIT = 1000
MAX_PAGE_SIZE = 1000
__all__ = [
    "CONTRACT_VERSION",
    "DEFAULT_EVENT_LOG_LIMIT",
    "DEFAULT_HISTORY_LIMIT",
    "MAX_PAGE_SIZE",
    "MAX_SEQ",  # of .events: the largest seq a driver is asked to handle
    "Capability",
    "Store",
    "check_enqueue",
]


class SaveOptions(TypedDict, total=False):
    """The optional keyword arguments of :meth:`Store.save`, for a caller that passes only
    those it has (``store.save(cp, stored_messages=n, **options)``)."""

    events: Sequence[StoredEvent]
    approval: Approval | None
    claim: str | None
    lease: Lease | None
    requests: Sequence[AppliedRequest]
    request_limit: int
    enqueue: Sequence[Enqueue]


class Store(abc.ABC):
    """A checkpoint store. Methods are coroutines and safe to call concurrently.

    Saves of one session must be strictly ordered (R7): ``save`` refuses a checkpoint whose
    ``version`` is not exactly the stored version + 1, so an older save can never land
    last, even across processes.

    **Time.** Every lease expiry (``acquire_lease``, ``renew_lease``,
    ``release_leases_of``) is read through :attr:`clock`, seconds since the epoch
    (``time.time`` by default): a test sets ``store.clock = fake`` and advances ``fake``
    instead of sleeping out a real TTL. Several stores sharing one database must share a
    clock; a driver whose leases default to another clock (PostgreSQL: the database's)
    keeps that default until :attr:`clock` is set, and then uses the clock set.
    """

    #: What this driver supports; checked both ways by the conformance tests.
    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    #: Whether the driver stores checkpoint headers in their compact form (bytes,
    #: :func:`.codec.compact_header`) rather than as JSON text: the kit then prepares its
    #: saves so (:func:`.prepared.prepare`, on the caller's side). A driver that stores
    #: bytes anyway (SQLite, LMDB) stores a header in about a third of its JSON; one
    #: whose headers an operator queries (PostgreSQL's ``json`` columns) keeps the JSON.
    compact_headers: ClassVar[bool] = False
    #: The :data:`CONTRACT_VERSION` the driver was written for. No default: a driver must
    #: say it, so one written for another luoshod is refused by name, not misused.
    contract_version: ClassVar[int]

    def __init__(
        self,
        *,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        event_log_limit: int = DEFAULT_EVENT_LOG_LIMIT,
    ) -> None:
        if history_limit < 0:
            raise ValueError(f"history_limit must be >= 0, got {history_limit}")
        if event_log_limit < 0:
            raise ValueError(f"event_log_limit must be >= 0, got {event_log_limit}")
        self.history_limit = history_limit
        self.event_log_limit = event_log_limit
        #: Where lease expiries are read (see the class docstring); seconds, like
        #: ``time.time``.
        self.clock: Callable[[], float] = time.time
        self._opened = False

    def _refuse_unless(self, capability: Capability, keeps: str) -> None:
        """Raise ``NotImplementedError`` for a part of the contract the driver does not
        declare (``keeps``: what it would keep, e.g. "leases")."""
        if capability not in self.capabilities:
            raise NotImplementedError(f"{type(self).__name__} keeps no {keeps}")

    def history_limit_for(self, checkpoint: Checkpoint) -> int:
        """The session's own limit when it has one (R35), else the store's."""
        return self.history_limit if checkpoint.history_limit is None else checkpoint.history_limit

    @classmethod
    @abc.abstractmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> Store:
        """Build the driver from its URL. Raises ``ValueError`` for a malformed URL."""

    async def open(self) -> None:
        """Acquire resources, create or migrate the schema (:meth:`_open`); nothing when
        already open. Raises ``StoreError``."""
        if not self._opened:
            await self._open()
            self._opened = True

    async def _open(self) -> None:
        """Hook of :meth:`open`, called once per opening; by default nothing."""

    def check_location(self) -> None:
        """Before a daemon serves from this store: raise ``ValueError`` naming the cause and
        the fix when the store cannot be where its URL says — a path under a file, or (for a
        store its driver would create on open) a parent that does not exist, where a typo
        would otherwise serve a new, empty store somewhere else. Opens and creates nothing;
        nothing to check by default."""

    def exists(self) -> bool:
        """Whether the store already holds data to open (without opening or creating it):
        ``luoshod store copy`` refuses a source that does not, rather than create an empty
        one at a mistyped path and report 0 sessions copied. ``True`` by default, for
        drivers that cannot tell without connecting (PostgreSQL). Raises nothing."""
        return True

    async def close(self) -> None:
        """Release resources (:meth:`_close`, once per opening), after every write
        already queued is committed (or failed, to its caller). Idempotent. Raises
        ``StoreError`` when the resources cannot be released cleanly."""
        if self._opened:
            self._opened = False
            await self._close()

    async def _close(self) -> None:
        """Hook of :meth:`close`; the store is already marked closed. By default nothing."""

    def disk_bytes(self) -> int | None:
        """The bytes the store holds on disk now (its files as they are, free pages
        included), or ``None`` when it has no files of its own or cannot tell without a
        round trip (``memory://``, a database server). Cheap and synchronous (a few
        ``stat`` calls), so a metrics scrape can call it; it needs no open store and
        raises nothing (a store whose files are not there yet holds 0 bytes)."""
        return None

    @abc.abstractmethod
    async def load(self, session_id: str) -> Checkpoint | None:
        """The latest checkpoint of ``session_id`` with its whole transcript, or ``None``.

        Raises ``StoreError`` when the store cannot be read.
        """

    @abc.abstractmethod
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
        request_limit: int = DEFAULT_REQUEST_ID_LIMIT,
        enqueue: Sequence[Enqueue] = (),
    ) -> None:
        """Make ``checkpoint`` the session's latest checkpoint and append it to its history
        (keeping ``history_limit_for(checkpoint)`` entries), all in one transaction with:

        - ``requests``: the session's applied request records (R74) this save writes,
          upserted by id: a new one is the session's newest; a stored one (whose run
          ended since) is updated in place and keeps its place. Then the session keeps
          its newest ``request_limit`` records, in the order they were first written
          (0 keeps none). O(new records): a save never rewrites the others, and one
          without ``requests`` touches none (:meth:`find_request`, :meth:`requests`);
        - ``events``: appended to the session's event log as :meth:`append_events` does
          (``EVENT_LOG``);
        - ``approval``: stored as a pending approval of the session (``APPROVALS``);
        - ``enqueue``: inputs queued as :meth:`enqueue_input` queues them (last in their
          key's queue, idempotent by request id; any key, not only this session's), in
          order (``QUEUE``): the webhooks' outbox entry of an event is durable exactly
          when the event is (:func:`check_enqueue`);
        - ``claim``: the id of a pending approval of this session, removed by this save.
          If it is not pending (unknown, of another session, or claimed by another writer)
          the save raises ``ApprovalNotFound`` and writes nothing (R33: exactly one claim
          wins). The claim is checked before the version, inside the write transaction:
          of two writers (tasks or processes) claiming one approval with the same next
          version, the loser gets ``ApprovalNotFound``, not ``LeaseLost``.

        - ``lease``: the writer's lease of the session (``LEASES``): the save is refused
          with ``LeaseLost`` unless the session's current fencing token is
          ``lease.token``, checked first, inside the write transaction. The expiry is not
          checked: a holder whose lease ran out but was not taken over still writes.
          ``None`` writes unfenced (copies, and the first save of a forked session).

        A refused save (``ApprovalNotFound``, ``LeaseLost``) writes none of the above (no
        request record either) and
        does not affect concurrent saves of other sessions.

        ``checkpoint.messages[:stored_messages]`` are guaranteed identical to the messages
        the store holds for the session (the caller loaded or saved them); only the rest
        are written. ``stored_messages`` lower than the stored count means the transcript
        was rewritten: the driver starts a new message log (history entries keep theirs).

        The store keeps no reference to ``checkpoint``'s mutable parts: changing the object
        afterwards changes nothing stored (and a loaded checkpoint is the caller's to change).
        A save cancelled by the caller may or may not have been applied.

        Raises ``LeaseLost`` when ``checkpoint.version`` is not the stored version + 1
        (0 when there is no checkpoint): another writer saved the session in between.
        Raises ``StoreFull`` when the store has no room (the previous state is intact),
        ``StoreError`` for any other failure (nothing is half-written).
        """

    @abc.abstractmethod
    async def find_request(self, session_id: str, request_id: str) -> AppliedRequest | None:
        """The session's applied request record of id ``request_id`` (R74), as the last
        save that wrote it left it, or ``None`` (never applied, fallen out of the newest
        ``request_limit``, or the session deleted). Raises ``StoreError`` when the store
        cannot be read."""

    @abc.abstractmethod
    async def requests(self, session_id: str) -> list[AppliedRequest]:
        """Every applied request record the session keeps, oldest (first written) first;
        ``[]`` for an unknown session. For ``luoshod store copy``, not the engine. Raises
        ``StoreError`` when the store cannot be read."""

    @abc.abstractmethod
    async def delete(
        self, session_id: str, *, keep_history: bool = False, keep_queue: bool = False
    ) -> bool:
        """Delete the latest checkpoint, its pending approvals, its applied request
        records and its queued inputs (``QUEUE``) unless ``keep_queue`` (a rollback to
        before a session's first run, R68: what waits stays queued); its history and
        event log too unless ``keep_history``.

        Returns ``False`` when there was no checkpoint (history kept by an earlier
        ``keep_history`` delete is still cleared unless ``keep_history``). Raises ``StoreError``.
        """

    async def list_sessions(
        self,
        *,
        status: Status | None,
        page_size: int,
        page_token: str,
        prefix: str = "",
        newest_first: bool = False,
        costliest_first: bool = False,
    ) -> tuple[list[SessionSummary], str]:
        """Sessions ordered by id, after ``page_token``, at most ``page_size``; with
        ``prefix``, only those whose id starts with it (paged the same way, each page
        costing O(page), not a scan of the other ids). ``newest_first``: ordered by
        ``updated_at``, the newest first (ties by id), each page a scan of the sessions
        listed (:meth:`_list_sorted`; a page token of one order is malformed in the
        other). ``costliest_first``: ordered by ``total_usage.cost_usd``, the costliest
        first (ties by id), each page a scan likewise (R78).

        Returns the page and the next token ("" on the last page). Raises ``ValueError``
        for a malformed token, ``page_size < 1`` (the service layer caps it at
        ``MAX_PAGE_SIZE``) or a prefix of U+10FFFF characters only, ``StoreError`` when the
        store cannot be read.
        """
        if (order := _order(newest_first, costliest_first)) is not None:
            page, token, _ = await self._list_sorted(order, status, page_size, page_token, prefix)
            return page, token
        after = page_start(page_size, page_token)
        if not prefix:
            found = await self._list_sessions(status, after, page_size + 1)
        elif (bounds := prefix_range(prefix, after)) is None:
            found = []
        else:
            found = await self._list_sessions_in(status, *bounds, after, page_size + 1)
        return page_of(found, page_size, lambda s: s.session_id)

    async def count_sessions(self, *, status: Status | None, prefix: str = "") -> int:
        """How many sessions :meth:`list_sessions` lists with ``status`` and ``prefix``
        (a scan of them). Raises ``ValueError`` for a prefix of U+10FFFF characters only,
        ``StoreError``."""
        return len(await self._every_session(status, prefix))

    async def list_sessions_counted(
        self,
        *,
        status: Status | None,
        page_size: int,
        page_token: str,
        prefix: str = "",
        newest_first: bool = False,
        costliest_first: bool = False,
    ) -> tuple[list[SessionSummary], str, int]:
        """:meth:`list_sessions` and :meth:`count_sessions` together: the page, the next
        token and how many sessions the listing has. A newest- or costliest-first listing
        reads the sessions once for both (it scans them anyway). Raises as they do."""
        if (order := _order(newest_first, costliest_first)) is not None:
            return await self._list_sorted(order, status, page_size, page_token, prefix)
        page, token = await self.list_sessions(
            status=status, page_size=page_size, page_token=page_token, prefix=prefix
        )
        return page, token, await self.count_sessions(status=status, prefix=prefix)

    async def _every_session(self, status: Status | None, prefix: str) -> list[SessionSummary]:
        found: list[SessionSummary] = []
        token = ""
        while True:
            page, token = await self.list_sessions(
                status=status, page_size=MAX_PAGE_SIZE, page_token=token, prefix=prefix
            )
            found += page
            if not token:
                return found

    async def _list_sorted(
        self, order: _Order, status: Status | None, page_size: int, page_token: str, prefix: str
    ) -> tuple[list[SessionSummary], str, int]:
        """:meth:`list_sessions` in ``order`` (newest or costliest first, ties by id):
        every listed session read in id order and sorted (a driver with an index on the
        order's value may do better). The token is the order's mark, the last session's
        value and its id, so that no token of another order reads as one; the count is of
        every session listed."""
        after = page_start(page_size, page_token)
        start: tuple[float, str] | None = None
        if after:
            value, sep, sid = after[len(order.mark) :].partition("\n")
            try:
                start = (-float(value), sid) if after.startswith(order.mark) and sep else None
            except ValueError:
                start = None
            if start is None:
                raise ValueError(
                    f"malformed page token {page_token!r} (not of a {order.name} listing)"
                )
        ordered = sorted(await self._every_session(status, prefix), key=order.key)
        found = ordered if start is None else [s for s in ordered if order.key(s) > start]
        page, token = page_of(
            found[: page_size + 1],
            page_size,
            lambda s: f"{order.mark}{order.value(s)!r}\n{s.session_id}",
        )
        return page, token, len(ordered)

    @abc.abstractmethod
    async def _list_sessions(
        self, status: Status | None, after: str, limit: int
    ) -> list[SessionSummary]:
        """Hook of :meth:`list_sessions`: up to ``limit`` sessions with a checkpoint (of
        ``status`` unless ``None``) whose id sorts after ``after``, in id order. Raises
        ``StoreError``."""

    async def _list_sessions_in(
        self, status: Status | None, low: str, high: str, skip: str, limit: int
    ) -> list[SessionSummary]:
        """Hook of :meth:`list_sessions` with a prefix: up to ``limit`` sessions with a
        checkpoint (of ``status`` unless ``None``) whose id is in ``[low, high)`` and is
        not ``skip``, in id order (the kit turns the prefix and the page token into that
        range, :func:`.paging.prefix_range`; ids sort by code point, as everywhere).
        Raises ``StoreError``.

        This default reads :meth:`_list_sessions` from ``skip`` on, so it is right for
        any driver but reads the ids between ``skip`` and ``low`` too; the bundled drivers
        scan the range itself, from an index."""
        found: list[SessionSummary] = []
        after = skip
        while True:
            batch = await self._list_sessions(status, after, max(limit, 100))
            for s in batch:
                if s.session_id >= high:
                    return found
                if s.session_id >= low and s.session_id != skip:
                    found.append(s)
                    if len(found) >= limit:
                        return found
            if len(batch) < max(limit, 100):
                return found
            after = batch[-1].session_id

    async def append_events(
        self,
        session_id: str,
        events: Sequence[StoredEvent],
        *,
        lease: Lease | None = None,
        enqueue: Sequence[Enqueue] = (),
    ) -> None:
        """Append to the session's event log, which keeps the events of its newest
        ``event_log_limit`` seqs (``seq > last - limit``; 0 keeps none): its newest
        ``limit`` events when numbered without gaps, plus the older events of a block
        holding that floor, kept whole (:mod:`.eventblocks`: a durable driver seals each
        range of 64 seqs an append or save completes into one compressed row, in the
        same transaction). Seqs are positive and increase along the log (the engine
        numbers a session's events from 1, 2, 3…); the data is opaque bytes. The
        session needs no checkpoint: its log is kept until a :meth:`delete` without
        ``keep_history``. Pruning costs O(new events), not a scan of the log. Durable when
        acknowledged on a DURABLE driver. ``lease`` fences the append as it fences
        :meth:`save` (``LeaseLost``, nothing appended). ``enqueue``: inputs queued in the
        same transaction, as :meth:`save` queues them (written even with no ``events``).
        Raises ``StoreFull`` when the
        store has no room, ``StoreError`` for any other failure. Drivers without
        ``Capability.EVENT_LOG`` raise ``NotImplementedError``."""
        raise NotImplementedError(f"{type(self).__name__} keeps no event log")

    # -- leases (``Capability.LEASES``): one writer per session across daemons ------------

    async def acquire_lease(
        self, session_id: str, *, owner: str, ttl: float, address: str = ""
    ) -> Lease:
        """Take the session's lease for ``owner`` until ``ttl`` seconds from now.

        ``address`` (the holder's advertised gRPC address, R89) is kept with the lease:
        renewals keep it and :meth:`list_leases` returns it, so another daemon knows where
        to forward a request for the session.

        Granted when nobody holds it, or when the holder's lease has expired or was
        released; the new lease has the next fencing token (1 for a session never leased),
        so every earlier lease of the session is fenced off. A live lease is refused to
        everyone, its own owner included (two pieces of work of one daemon on one session
        must not fence each other off). The
        session needs no checkpoint. Otherwise raises ``SessionBusy`` (R51) whose metadata
        names the ``holder`` and its ``expires_at`` (RFC 3339, UTC). Raises ``ValueError``
        for ``ttl <= 0``, ``StoreError`` when the store cannot be reached. Drivers without
        ``Capability.LEASES`` raise ``NotImplementedError``.
        """
        self._refuse_unless(Capability.LEASES, "leases")
        check_ttl(ttl)
        return await self._acquire_lease(session_id, owner, ttl, address)

    async def _acquire_lease(
        self, session_id: str, owner: str, ttl: float, address: str = ""
    ) -> Lease:
        """Hook of :meth:`acquire_lease` (``ttl`` checked), now by :attr:`clock`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no leases")

    async def renew_lease(self, lease: Lease, *, ttl: float) -> Lease:
        """Extend ``lease`` to ``ttl`` seconds from now; the token stays. Raises
        ``LeaseLost`` when the session's token is no longer ``lease.token`` (another owner
        took it); a lease that expired but was not taken over is renewed. Raises
        ``ValueError`` for ``ttl <= 0``, ``StoreError`` when the store cannot be reached.
        Drivers without ``Capability.LEASES`` raise ``NotImplementedError``."""
        self._refuse_unless(Capability.LEASES, "leases")
        check_ttl(ttl)
        return await self._renew_lease(lease, ttl)

    async def _renew_lease(self, lease: Lease, ttl: float) -> Lease:
        """Hook of :meth:`renew_lease` (``ttl`` checked), now by :attr:`clock`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no leases")

    async def renew_leases(self, leases: Sequence[Lease], *, ttl: float) -> Renewal:
        """Extend every lease of ``leases`` (one a session, usually all those one daemon
        holds) to ``ttl`` seconds from now, in ONE write: a daemon's lease upkeep costs one
        write per renewal interval whatever the number of sessions it holds. Each lease is
        renewed exactly as :meth:`renew_lease` would (the token stays; refused when the
        session's token is no longer ``lease.token``), but a lost lease does not refuse the
        others: the result lists the renewed leases and a ``LeaseLost`` for each lost one.
        Raises ``ValueError`` for ``ttl <= 0`` or a session given twice, ``StoreError``
        when the store cannot be reached (nothing renewed). Drivers without
        ``Capability.LEASES`` raise ``NotImplementedError``."""
        self._refuse_unless(Capability.LEASES, "leases")
        check_ttl(ttl)
        check_batch(leases)
        if not leases:
            return Renewal([], [])
        return await self._renew_leases(list(leases), ttl)

    async def _renew_leases(self, leases: list[Lease], ttl: float) -> Renewal:
        """Hook of :meth:`renew_leases` (non-empty, checked), now by :attr:`clock`. By
        default one :meth:`_renew_lease` each (correct, but a write each): a driver
        overrides it with one transaction."""
        renewed, lost = [], []
        for lease in leases:
            try:
                renewed.append(await self._renew_lease(lease, ttl))
            except LeaseLost as e:
                lost.append(e)
        return Renewal(renewed, lost)

    async def list_leases(
        self, *, page_size: int, page_token: str, owner: str | None = None
    ) -> tuple[list[Lease], str]:
        """The live leases (``expires_at`` after now, by :attr:`clock`), of ``owner``
        unless ``None``, ordered by session id, after ``page_token``, at most
        ``page_size``; the next token or "" (``luoshod leases list``). Released and expired
        leases are not listed. Raises ``ValueError`` for a malformed token or
        ``page_size < 1``, ``StoreError`` when the store cannot be read. Drivers without
        ``Capability.LEASES`` raise ``NotImplementedError``."""
        self._refuse_unless(Capability.LEASES, "leases")
        after = page_start(page_size, page_token)
        found = await self._list_leases(owner, after, page_size + 1)
        return page_of(found, page_size, lambda lease: lease.session_id)

    async def _list_leases(self, owner: str | None, after: str, limit: int) -> list[Lease]:
        """Hook of :meth:`list_leases`: up to ``limit`` live leases (of ``owner`` unless
        ``None``) whose session id sorts after ``after``, in id order."""
        raise NotImplementedError(f"{type(self).__name__} keeps no leases")

    async def release_lease(self, lease: Lease) -> None:
        """Give ``lease`` up now: the next :meth:`acquire_lease` by anyone is granted. The
        token is kept (the next lease gets a higher one). Does nothing when ``lease`` is
        stale. Raises ``StoreError`` when the store cannot be reached. Drivers without
        ``Capability.LEASES`` raise ``NotImplementedError``."""
        raise NotImplementedError(f"{type(self).__name__} keeps no leases")

    async def release_leases_of(self, owner: str) -> int:
        """Release every live lease held by ``owner``; return how many. A daemon restarted
        under a stable name (unique among the live daemons) calls it at start: what its
        previous incarnation held is free at once instead of after the TTL. Tokens are
        kept, so that incarnation, were it still alive, is fenced off. Raises
        ``StoreError`` when the store cannot be reached. Drivers without
        ``Capability.LEASES`` raise ``NotImplementedError``."""
        raise NotImplementedError(f"{type(self).__name__} keeps no leases")

    async def read_events(self, session_id: str, *, after_seq: int, limit: int) -> EventPage:
        """Kept events with ``seq > after_seq``, oldest first, at most ``limit`` (none when
        ``limit < 1``), with the first kept and the last seq of the log (0 when empty),
        blocks expanded (:func:`.eventblocks.read`: ``first_kept`` is exact).

        ``after_seq`` may be any integer: below the first kept seq it reads from the
        start; past the last (e.g. ``2**64``) it reads only ``first_kept`` and ``last``.
        Unknown session → ``EventPage([], 0, 0)``. Raises ``StoreError`` when the store
        cannot be read. Drivers without ``Capability.EVENT_LOG`` raise
        ``NotImplementedError``."""
        self._refuse_unless(Capability.EVENT_LOG, "event log")
        return await eventblocks.read(
            self._read_events, session_id, clamp_seq(after_seq), clamp_seq(limit)
        )

    async def _read_events(self, session_id: str, after_seq: int, limit: int) -> EventPage:
        """Hook of :meth:`read_events`, ``after_seq`` and ``limit`` within
        ``0..MAX_SEQ`` (:func:`.events.clamp_seq`; a ``limit`` of 0 reads only the ends):
        the log's ROWS (:mod:`.eventblocks`: loose events and blocks, each as
        ``StoredEvent(key, data)``) with keys above ``after_seq``, at most ``limit``, and
        the smallest and largest key; the kit expands the blocks."""
        raise NotImplementedError(f"{type(self).__name__} keeps no event log")

    async def get_approval(self, approval_id: str) -> Approval | None:
        """The pending approval, or ``None`` when unknown or already claimed. Raises
        ``StoreError`` when the store cannot be read. Drivers without
        ``Capability.APPROVALS`` raise ``NotImplementedError``."""
        raise NotImplementedError(f"{type(self).__name__} keeps no approvals")

    async def list_approvals(
        self, *, session_id: str | None, page_size: int, page_token: str
    ) -> tuple[list[Approval], str]:
        """Pending approvals ordered by id (ids sort by creation time), optionally of one
        session, after ``page_token``, at most ``page_size``; the next token or "" (the
        tokens of :func:`.paging.encode_page_token`). Raises ``ValueError`` for a malformed
        token or ``page_size < 1``, ``StoreError`` when the store cannot be read. Drivers
        without ``Capability.APPROVALS`` raise ``NotImplementedError``."""
        self._refuse_unless(Capability.APPROVALS, "approvals")
        after = page_start(page_size, page_token)
        found = await self._list_approvals(session_id, after, page_size + 1)
        return page_of(found, page_size, lambda a: a.approval_id)

    async def _list_approvals(
        self, session_id: str | None, after: str, limit: int
    ) -> list[Approval]:
        """Hook of :meth:`list_approvals`: up to ``limit`` pending approvals (of
        ``session_id`` unless ``None``) whose id sorts after ``after``, in id order."""
        raise NotImplementedError(f"{type(self).__name__} keeps no approvals")

    async def history(self, session_id: str, *, limit: int | None = None) -> list[HistoryEntry]:
        """The session's kept saves, newest first, at most ``limit``. Unknown session → ``[]``.

        ``saved_at`` is the checkpoint's ``updated_at`` (set by the writer when it saved).
        Raises ``ValueError`` for a negative ``limit``, ``StoreError`` when the store
        cannot be read.

        Only drivers declaring ``Capability.HISTORY`` implement it; others raise
        ``NotImplementedError``.
        """
        self._refuse_unless(Capability.HISTORY, "history")
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        return await self._history(session_id, limit)

    async def _history(self, session_id: str, limit: int | None) -> list[HistoryEntry]:
        """Hook of :meth:`history` (``limit`` ``None`` or ``>= 0``)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no history")

    # -- the input queue (``Capability.QUEUE``): inputs waiting for a busy session --------

    async def enqueue_input(
        self, session_id: str, request_id: str, data: bytes, *, front: bool = False, now: float
    ) -> QueuedInput:
        """Queue ``data`` under ``request_id`` in the session's queue: last (or first with
        ``front``), at a position the store picks (below or above every other of the
        session). Idempotent by request id: when the session already queues
        ``request_id`` the stored entry is returned unchanged and nothing is written
        (a retried enqueue never queues twice, R69, R74). The session needs no
        checkpoint. Durable when acknowledged on a DURABLE driver; atomic against
        concurrent enqueues and removals, also across processes. Raises ``ValueError`` for
        an empty ``request_id``, ``StoreFull`` when the store has no room, ``StoreError``
        for any other failure. Drivers without ``Capability.QUEUE`` raise
        ``NotImplementedError``."""
        self._refuse_unless(Capability.QUEUE, "input queue")
        if not request_id:
            raise ValueError("a queued input needs a request id")
        return await self._enqueue_input(session_id, request_id, bytes(data), front, now)

    async def _enqueue_input(
        self, session_id: str, request_id: str, data: bytes, front: bool, now: float
    ) -> QueuedInput:
        """Hook of :meth:`enqueue_input` (``request_id`` not empty)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no input queue")

    async def replace_queued_input(self, session_id: str, request_id: str, data: bytes) -> bool:
        """Replace the data of the session's queued input of ``request_id``, in place (its
        position and ``enqueued_at`` kept), atomically; ``False`` when it queues none. The
        webhooks keep a delivery's attempt count and next attempt time so, with the
        notification. Raises ``StoreError``. Drivers without ``Capability.QUEUE`` raise
        ``NotImplementedError``."""
        self._refuse_unless(Capability.QUEUE, "input queue")
        return await self._replace_queued_input(session_id, request_id, bytes(data))

    async def _replace_queued_input(self, session_id: str, request_id: str, data: bytes) -> bool:
        """Hook of :meth:`replace_queued_input`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no input queue")

    async def queued_inputs(self, session_id: str) -> list[QueuedInput]:
        """The session's queued inputs in queue order (smallest position first); ``[]``
        for an unknown session. Raises ``StoreError`` when the store cannot be read.
        Drivers without ``Capability.QUEUE`` raise ``NotImplementedError``."""
        self._refuse_unless(Capability.QUEUE, "input queue")
        return await self._queued_inputs(session_id)

    async def _queued_inputs(self, session_id: str) -> list[QueuedInput]:
        """Hook of :meth:`queued_inputs`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no input queue")

    async def remove_queued_input(self, session_id: str, request_id: str) -> bool:
        """Remove the session's queued input of ``request_id``; ``False`` when it queues
        none (never queued, or removed already: of two removals exactly one gets
        ``True``). Raises ``StoreError``. Drivers without ``Capability.QUEUE`` raise
        ``NotImplementedError``."""
        self._refuse_unless(Capability.QUEUE, "input queue")
        return await self._remove_queued_input(session_id, request_id)

    async def _remove_queued_input(self, session_id: str, request_id: str) -> bool:
        """Hook of :meth:`remove_queued_input`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no input queue")

    async def queued_sessions(self, *, page_size: int, page_token: str) -> tuple[list[str], str]:
        """The sessions with at least one queued input, ordered by id, after
        ``page_token``, at most ``page_size``; the next token or "" (the tokens of
        :meth:`list_sessions`). A daemon sweeps them to run what a crashed daemon left
        queued. Raises ``ValueError`` for a malformed token or ``page_size < 1``,
        ``StoreError`` when the store cannot be read. Drivers without
        ``Capability.QUEUE`` raise ``NotImplementedError``."""
        self._refuse_unless(Capability.QUEUE, "input queue")
        after = page_start(page_size, page_token)
        return page_of(await self._queued_sessions(after, page_size + 1), page_size, str)

    async def _queued_sessions(self, after: str, limit: int) -> list[str]:
        """Hook of :meth:`queued_sessions`: up to ``limit`` ids after ``after``, in order."""
        raise NotImplementedError(f"{type(self).__name__} keeps no input queue")

    # -- schedules (``Capability.SCHEDULES``, R87): named records, compare-and-set --------

    async def create_schedule(self, name: str, data: bytes) -> StoredSchedule | None:
        """Store a new schedule ``name`` at version 1; ``None`` (nothing written) when one
        of that name exists: of two creations exactly one wins, also across processes.
        Durable when acknowledged on a DURABLE driver. Raises ``ValueError`` for an empty
        name, ``StoreError``. Drivers without ``Capability.SCHEDULES`` raise
        ``NotImplementedError``."""
        self._refuse_unless(Capability.SCHEDULES, "schedules")
        if not name:
            raise ValueError("a schedule needs a name")
        return await self._create_schedule(name, bytes(data))

    async def _create_schedule(self, name: str, data: bytes) -> StoredSchedule | None:
        """Hook of :meth:`create_schedule` (``name`` not empty)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no schedules")

    async def get_schedule(self, name: str) -> StoredSchedule | None:
        """The schedule ``name`` as last written, or ``None``. Raises ``StoreError``.
        Drivers without ``Capability.SCHEDULES`` raise ``NotImplementedError``."""
        self._refuse_unless(Capability.SCHEDULES, "schedules")
        return await self._get_schedule(name)

    async def _get_schedule(self, name: str) -> StoredSchedule | None:
        """Hook of :meth:`get_schedule`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no schedules")

    async def list_schedules(self) -> list[StoredSchedule]:
        """Every schedule, ordered by name (a daemon keeps few: one scan). Raises
        ``StoreError``. Drivers without ``Capability.SCHEDULES`` raise
        ``NotImplementedError``."""
        self._refuse_unless(Capability.SCHEDULES, "schedules")
        return await self._list_schedules()

    async def _list_schedules(self) -> list[StoredSchedule]:
        """Hook of :meth:`list_schedules`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no schedules")

    async def update_schedule(
        self, name: str, data: bytes, *, version: int
    ) -> StoredSchedule | None:
        """Replace the data of schedule ``name`` if its stored version is ``version``
        (compare-and-set, atomic across processes) and return it at ``version + 1``;
        ``None`` (nothing written) when it is gone or another write came first. Raises
        ``StoreError``. Drivers without ``Capability.SCHEDULES`` raise
        ``NotImplementedError``."""
        self._refuse_unless(Capability.SCHEDULES, "schedules")
        return await self._update_schedule(name, bytes(data), version)

    async def _update_schedule(self, name: str, data: bytes, version: int) -> StoredSchedule | None:
        """Hook of :meth:`update_schedule`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no schedules")

    async def delete_schedule(self, name: str) -> bool:
        """Delete schedule ``name``; ``False`` when there is none (of two deletions exactly
        one gets ``True``). Raises ``StoreError``. Drivers without
        ``Capability.SCHEDULES`` raise ``NotImplementedError``."""
        self._refuse_unless(Capability.SCHEDULES, "schedules")
        return await self._delete_schedule(name)

    async def _delete_schedule(self, name: str) -> bool:
        """Hook of :meth:`delete_schedule`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no schedules")

    # -- moving a whole store (``luoshod store copy``), not used by the engine ------------

    async def session_ids(self, *, page_size: int, page_token: str) -> tuple[list[str], str]:
        """Every session the store holds anything of, ordered by id, after ``page_token``.

        Unlike :meth:`list_sessions`, this includes sessions that have only a history or
        an event log (deleted with ``keep_history``, or events appended without a save).
        Returns at most ``page_size`` ids and the next token ("" on the last page; the
        tokens are those of :meth:`list_sessions`). Raises ``ValueError`` for a malformed
        token or ``page_size < 1``, ``StoreError`` when the store cannot be read.
        """
        after = page_start(page_size, page_token)
        return page_of(await self._session_ids(after, page_size + 1), page_size, str)

    @abc.abstractmethod
    async def _session_ids(self, after: str, limit: int) -> list[str]:
        """Hook of :meth:`session_ids`: up to ``limit`` ids after ``after``, in order."""

    async def import_session(
        self,
        session_id: str,
        *,
        latest: Checkpoint | None,
        history: Sequence[HistoryEntry],
        approvals: Sequence[Approval] = (),
        events: Sequence[StoredEvent] = (),
        requests: Sequence[AppliedRequest] = (),
    ) -> None:
        """Replace everything ``session_id`` holds (its checkpoint, history, pending
        approvals, event log and applied request records) by exactly ``latest``,
        ``history``, ``approvals``, ``events`` and ``requests`` (oldest first, as
        :meth:`requests` gives them; all of them are kept, in that order).

        ``history`` is oldest first (the reverse of :meth:`history`); each entry is written
        verbatim, its ``saved_at`` included, and only the newest ``history_limit`` are kept
        (none by a driver without ``Capability.HISTORY``). ``latest`` ``None`` leaves the
        session with no checkpoint, as a ``keep_history`` delete does. Entries whose
        transcripts extend one another share a message log, as saves do.

        ``approvals`` become the session's pending approvals, as they are (an approval of
        that id held for another session is replaced). ``events`` (oldest first) become its
        event log, each with its seq and data, of which the newest ``event_log_limit`` are
        kept. Importing nothing at all removes the session. The whole replacement is
        atomic: after a failure the session is as it was.

        This is a verbatim copy, not a save: versions are taken as they are, not checked
        (the next :meth:`save` needs ``latest.version + 1``). Raises ``ValueError`` when an
        entry's ``step``, ``status`` or ``saved_at`` differ from its checkpoint's
        ``step_index``, ``status`` or ``updated_at``, a checkpoint or an approval is not of
        ``session_id``, approvals are given without ``latest`` or twice with one id, or
        the events' seqs are not positive and increasing, requests are given without
        ``latest`` or twice with one id (:func:`check_import`);
        ``NotImplementedError`` when given approvals (events) without declaring
        ``Capability.APPROVALS`` (``EVENT_LOG``); ``StoreFull`` when the store has no
        room, ``StoreError`` for any other failure.
        """
        check_import(self, session_id, latest, history, approvals, events, requests)
        limit = self.history_limit if latest is None else self.history_limit_for(latest)
        await self._import_session(
            session_id,
            latest,
            newest([e.checkpoint for e in history], limit),
            list(approvals),
            newest(events, self.event_log_limit),
            list(requests),
        )

    @abc.abstractmethod
    async def _import_session(
        self,
        session_id: str,
        latest: Checkpoint | None,
        history: list[Checkpoint],
        approvals: list[Approval],
        events: list[StoredEvent],
        requests: list[AppliedRequest],
    ) -> None:
        """Hook of :meth:`import_session`, given what is kept of it, checked: the
        ``history`` checkpoints (oldest first) and ``events`` are already trimmed to the
        limits. Replaces everything the session holds, atomically. Raises ``StoreFull``,
        ``StoreError``."""


def check_enqueue(store: Store, enqueue: Sequence[Enqueue]) -> tuple[Enqueue, ...]:
    """The ``enqueue=`` of a save or an append, checked before anything is written:
    ``NotImplementedError`` from a driver without ``Capability.QUEUE``, ``ValueError`` for
    an entry without a request id."""
    if not enqueue:
        return ()
    store._refuse_unless(Capability.QUEUE, "input queue")
    for e in enqueue:
        if not e.request_id:
            raise ValueError("a queued input needs a request id")
    return tuple(Enqueue(e.session_id, e.request_id, bytes(e.data), e.enqueued_at) for e in enqueue)


class _Order(NamedTuple):
    """A listing order of :meth:`Store.list_sessions` other than by id: the greatest
    ``value`` first, ties by id; its page tokens start with ``mark``."""

    name: str
    mark: str
    value: Callable[[SessionSummary], float]

    def key(self, s: SessionSummary) -> tuple[float, str]:
        return (-self.value(s), s.session_id)


_NEWEST_FIRST = _Order("newest-first", "", lambda s: s.updated_at)
_COSTLIEST_FIRST = _Order("costliest-first", "$", lambda s: s.total_usage.cost_usd)


def _order(newest_first: bool, costliest_first: bool) -> _Order | None:
    if newest_first and costliest_first:
        raise ValueError("newest_first and costliest_first are two orders: ask for one")
    return _NEWEST_FIRST if newest_first else _COSTLIEST_FIRST if costliest_first else None
