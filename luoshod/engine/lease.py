"""A session's lease held for the length of one piece of work (R51, R52).

Every write the engine makes to an existing session happens under the session's lease:
:class:`Held` takes it before the session is read, the daemon's :class:`LeaseKeeper`
renews it (with every other lease the daemon holds, in one write) while the work goes on,
and :class:`Held` releases it at the end, so that of several daemons sharing a store only
one writes a session at a time. Every save carries the lease, and the store refuses one
whose fencing token is no longer the session's (``LeaseLost``): a daemon paused past its
lease's expiry (GC, SIGSTOP, a network partition) and taken over cannot overwrite the new
holder's work when it wakes up. A lost renewal interrupts the run at once, so a run that
lost its session does not go on calling the model or waiting for tools.

A store that does not declare ``Capability.LEASES`` gets no lease (``Held.lease`` is
``None``); within one daemon, runs are still kept apart by the service's registry.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType

from ..domain import Lease
from ..errors import LeaseLost, SessionBusy, StoreError
from ..store import Capability, Store
from .liveness import HolderState, holder_state, process_owner

log = logging.getLogger("luoshod.engine.lease")

DEFAULT_LEASE_TTL_S = 15.0
DEFAULT_LEASE_RENEW_S = 5.0


def default_owner() -> str:
    """This daemon's name as a lease holder: readable (host and pid, for an operator
    reading ``SESSION_BUSY``), unique (a restarted daemon is a new owner) and, where /proc
    allows, telling another daemon of this machine whether its process is alive
    (:mod:`.liveness`: ``host/pid/nonce/boot.pidns.start``)."""
    return process_owner() or f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


def explain_busy(e: SessionBusy) -> SessionBusy:
    """``e`` (a store's refusal naming the lease ``holder`` and ``expires_at``) saying
    whether the holder is alive (``holder_alive``: ``true``, ``false`` or ``unknown``),
    when the lease ends (``expires_at``, and ``expires_in_s`` from now) and what to do
    (``hint``), in its message and metadata. A refusal naming no holder is returned as is."""
    holder, until = e.metadata.get("holder"), e.metadata.get("expires_at")
    if holder is None or until is None or "holder_alive" in e.metadata:
        return e
    state = holder_state(holder)
    meta = dict(e.metadata)
    with contextlib.suppress(ValueError):
        left = datetime.fromisoformat(until.replace("Z", "+00:00")).timestamp() - time.time()
        meta["expires_in_s"] = f"{max(0.0, left):.1f}"
    sid = e.metadata.get("session_id", "")
    if state is HolderState.ALIVE:
        alive, hint = (
            "true",
            (
                "the holder is alive (a daemon process on this machine) and renews its lease "
                "while "
                f"its run goes on: wait for that run to end, or cancel it "
                f"(`luoshod sessions cancel {sid}`), then retry"
            ),
        )
    elif state is HolderState.DEAD:
        alive, hint = (
            "false",
            "the holder's process is gone: retry now, its lease is taken back at once",
        )
    else:
        alive, hint = (
            "unknown",
            (
                f"whether the holder is alive cannot be told from here (another machine or "
                f"container, or a --lease-owner name): retry after {until}, when its lease runs "
                f"out unless renewed; if that daemon is known to be gone, "
                f"`luoshod leases release --store URL --owner {holder}` frees it now"
            ),
        )
    meta.update(holder_alive=alive, hint=hint)
    return SessionBusy(f"{e.message}; holder alive: {alive}; {hint}", reason=e.reason, **meta)


@dataclass(frozen=True, slots=True)
class LeasePolicy:
    """Who holds leases, for how long, and where it answers. ``renew_s`` must be below
    ``ttl_s`` (a third of it leaves two renewals' slack for a slow store)."""

    owner: str = field(default_factory=default_owner)
    ttl_s: float = DEFAULT_LEASE_TTL_S
    renew_s: float = DEFAULT_LEASE_RENEW_S
    #: Where this daemon answers for the sessions it holds, published with each lease
    #: (R89: another daemon forwards a request for one of them there); "" publishes none.
    address: str = ""

    def __post_init__(self) -> None:
        if not self.ttl_s > 0:
            raise ValueError(f"lease_ttl_s must be > 0, got {self.ttl_s}")
        if not 0 < self.renew_s < self.ttl_s:
            raise ValueError(
                f"lease_renew_s must be > 0 and below lease_ttl_s ({self.ttl_s}), got "
                f"{self.renew_s}"
            )


class LeaseKeeper:
    """The daemon's lease upkeep: ONE task renews every session lease the daemon holds, in
    one store write (:meth:`Store.renew_leases`) every ``policy.renew_s``, whatever the
    number of runs. A waiting run keeps no timer or task of its own for its lease, and
    10,000 waiting runs cost the store one renewal write per interval, not 10,000.

    Fencing is unchanged: each session keeps its own lease and fencing token, and every
    save carries it. A lease the renewal finds taken over is lost at once (``on_lost`` of
    its :class:`Held`); a store that cannot be reached is tried again at the next tick (the
    tokens stay valid until taken over, and once they are the next save is refused).
    """

    def __init__(self, store: Store, policy: LeasePolicy) -> None:
        self.store, self.policy = store, policy
        self._held: dict[str, Held] = {}  # by session id: a daemon holds one lease a session
        self._task: asyncio.Task[None] | None = None
        self._in_flight: asyncio.Future[None] | None = None  # the renewal being written

    def __len__(self) -> int:
        return len(self._held)

    def add(self, held: Held) -> None:
        self._held[held.session_id] = held
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._renew(), name="lease upkeep")

    def discard(self, held: Held) -> None:
        if self._held.get(held.session_id) is held:
            del self._held[held.session_id]

    async def _renew(self) -> None:
        # Runs while the daemon holds leases; the next add() starts it again.
        while self._held:
            await asyncio.sleep(self.policy.renew_s)
            try:
                await self.renew_now()
            except Exception:  # noqa: BLE001 - the upkeep must outlive one bad renewal
                log.exception("lease renewal failed; trying again in %s s", self.policy.renew_s)

    async def renew_now(self) -> None:
        """Renew every lease held now, in one write (the upkeep task calls it each
        interval; a test may call it to renew without waiting)."""
        held = [h for h in self._held.values() if h.lease is not None]
        if not held:
            return
        self._in_flight = asyncio.get_running_loop().create_future()
        try:
            result = await self.store.renew_leases(
                [h.lease for h in held if h.lease is not None], ttl=self.policy.ttl_s
            )
        except StoreError as e:
            # The store is unreachable: keep trying. Until a lease is taken over its
            # token stays valid, and once it is, the next save is refused anyway.
            log.warning("%d session lease(s) not renewed: %s", len(held), e)
            return
        finally:
            self._in_flight.set_result(None)
            self._in_flight = None
        by_session = {h.session_id: h for h in held}
        for lease in result.renewed:
            h = by_session[lease.session_id]
            if h.lease is not None and h.lease.token == lease.token:
                h.lease = lease
        for lost in result.lost:
            h = by_session[str(lost.metadata["session_id"])]
            if self._held.get(h.session_id) is not h:
                continue  # its work ended meanwhile: nothing to interrupt
            log.warning("lease of session %s lost: %s", h.session_id, lost)
            h.lost = lost
            self.discard(h)
            h.on_lost(lost)

    async def settled(self) -> None:
        """Wait for the renewal being written, if any: a lease released while a renewal
        that still holds it is in flight could be renewed after its release (alive again
        for a TTL, and its session busy for everyone)."""
        if self._in_flight is not None:
            await asyncio.wait({self._in_flight})

    async def aclose(self) -> None:
        """Stop the upkeep task (the daemon is stopping)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


class Held:
    """``async with Held(store, policy, session_id, on_lost):`` the session's lease.

    Entering raises ``SessionBusy`` when another daemon holds it (or what ``busy`` makes of
    it). While held, the lease is renewed by ``keeper`` (the daemon's :class:`LeaseKeeper`;
    one of its own when none is given). ``on_lost`` is called (once) when a renewal finds
    the lease taken over; :attr:`lost` then holds the error.
    """

    def __init__(
        self,
        store: Store,
        policy: LeasePolicy,
        session_id: str,
        on_lost: Callable[[LeaseLost], None] = lambda e: None,
        keeper: LeaseKeeper | None = None,
        busy: Callable[[SessionBusy], Exception] | None = None,
    ) -> None:
        self.store, self.policy, self.session_id = store, policy, session_id
        self.on_lost = on_lost
        self.busy = busy
        self._keeper = keeper if keeper is not None else LeaseKeeper(store, policy)
        self.lease: Lease | None = None
        self.lost: LeaseLost | None = None

    async def __aenter__(self) -> Held:
        if Capability.LEASES not in self.store.capabilities:
            return self
        try:
            try:
                self.lease = await self._acquire()
            except SessionBusy as e:
                holder = e.metadata.get("holder")
                if holder is None or holder_state(holder) is not HolderState.DEAD:
                    raise
                # Its process is gone (kill -9, a crash): it can renew nothing and save
                # nothing, so its leases are released now, not when the TTL runs out; the
                # lease taken next has the next fencing token, as after an expiry.
                freed = await self.store.release_leases_of(holder)
                log.info(
                    "took back %d lease(s) of %s, whose process is gone, for session %s",
                    freed,
                    holder,
                    self.session_id,
                )
                self.lease = await self._acquire()
        except SessionBusy as e:
            e = explain_busy(e)
            if self.busy is None:
                raise e from None
            raise self.busy(e) from None
        self._keeper.add(self)
        return self

    async def _acquire(self) -> Lease:
        return await self.store.acquire_lease(
            self.session_id,
            owner=self.policy.owner,
            ttl=self.policy.ttl_s,
            address=self.policy.address,
        )

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._keeper.discard(self)
        if self.lease is not None and self.lost is None:
            try:
                # Shielded: a cancelled caller still frees the session for the next daemon.
                await asyncio.shield(self._release(self.lease))
            except (StoreError, asyncio.CancelledError) as e:
                # It expires by itself; until then another daemon gets SESSION_BUSY.
                log.warning("lease of session %s not released: %s", self.session_id, e)

    async def _release(self, lease: Lease) -> None:
        await self._keeper.settled()  # no renewal of this lease lands after its release
        await self.store.release_lease(lease)
