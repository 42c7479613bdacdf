"""A session's lease held for the length of one piece of work (R51, R52).

Every write the engine makes to an existing session happens under the session's lease:
:class:`Held` takes it before the session is read, renews it in the background while the
work goes on, and releases it at the end, so that of several daemons sharing a store only
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
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType

from ..domain import Lease
from ..errors import LeaseLost, SessionBusy, StoreError
from ..store import Capability, Store

log = logging.getLogger("luoshod.engine.lease")

DEFAULT_LEASE_TTL_S = 15.0
DEFAULT_LEASE_RENEW_S = 5.0


def default_owner() -> str:
    """This daemon's name as a lease holder: readable (host and pid, for an operator
    reading ``SESSION_BUSY``) and unique (a restarted daemon is a new owner)."""
    return f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, slots=True)
class LeasePolicy:
    """Who holds leases and for how long. ``renew_s`` must be below ``ttl_s`` (a third of
    it leaves two renewals' slack for a slow store)."""

    owner: str = field(default_factory=default_owner)
    ttl_s: float = DEFAULT_LEASE_TTL_S
    renew_s: float = DEFAULT_LEASE_RENEW_S

    def __post_init__(self) -> None:
        if not self.ttl_s > 0:
            raise ValueError(f"lease_ttl_s must be > 0, got {self.ttl_s}")
        if not 0 < self.renew_s < self.ttl_s:
            raise ValueError(
                f"lease_renew_s must be > 0 and below lease_ttl_s ({self.ttl_s}), got {self.renew_s}"
            )


class Held:
    """``async with Held(store, policy, session_id, on_lost):`` the session's lease.

    Entering raises ``SessionBusy`` when another daemon holds it (or what ``busy`` makes of
    it). ``on_lost`` is called
    (once) when a renewal finds the lease taken over; :attr:`lost` then holds the error.
    """

    def __init__(
        self,
        store: Store,
        policy: LeasePolicy,
        session_id: str,
        on_lost: Callable[[LeaseLost], None] = lambda e: None,
        holding: set[Held] | None = None,
        busy: Callable[[SessionBusy], Exception] | None = None,
    ) -> None:
        self.store, self.policy, self.session_id = store, policy, session_id
        self.on_lost = on_lost
        self.busy = busy
        self._holding = holding if holding is not None else set()  # the daemon's leases
        self.lease: Lease | None = None
        self.lost: LeaseLost | None = None
        self._renewer: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Held:
        if Capability.LEASES not in self.store.capabilities:
            return self
        try:
            self.lease = await self.store.acquire_lease(
                self.session_id, owner=self.policy.owner, ttl=self.policy.ttl_s
            )
        except SessionBusy as e:
            if self.busy is None:
                raise
            raise self.busy(e) from None
        self._renewer = asyncio.create_task(self._renew(), name=f"lease {self.session_id}")
        self._holding.add(self)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._holding.discard(self)
        if self._renewer is not None:
            self._renewer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewer
        if self.lease is not None and self.lost is None:
            try:
                # Shielded: a cancelled caller still frees the session for the next daemon.
                await asyncio.shield(self.store.release_lease(self.lease))
            except (StoreError, asyncio.CancelledError) as e:
                # It expires by itself; until then another daemon gets SESSION_BUSY.
                log.warning("lease of session %s not released: %s", self.session_id, e)

    async def _renew(self) -> None:
        assert self.lease is not None
        while True:
            await asyncio.sleep(self.policy.renew_s)
            try:
                self.lease = await self.store.renew_lease(self.lease, ttl=self.policy.ttl_s)
            except LeaseLost as e:
                log.warning("lease of session %s lost: %s", self.session_id, e)
                self.lost = e
                self._holding.discard(self)
                self.on_lost(e)
                return
            except StoreError as e:
                # The store is unreachable: keep trying. Until the lease is taken over the
                # token stays valid, and once it is, the next save is refused anyway.
                log.warning("lease of session %s not renewed: %s", self.session_id, e)
