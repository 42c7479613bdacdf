"""Any daemon answers (R89): a request for a session another daemon holds goes there.

Each daemon publishes the address it answers at with every lease it takes
(``advertise_address``). A request that only the session's holder can answer
(``SubmitToolResult``, ``Resolve``, ``Cancel``, ``DequeueInput``, a live ``Watch``) and that
reaches another daemon is forwarded to the holder over gRPC, as the public
``AgentService`` call it is:

- with the caller's metadata (its ``authorization`` among it), so the holder authorizes
  the call as the caller's and records its decisions as the caller's;
- with :data:`FORWARDED` set to the forwarding daemon's name: a forwarded call is answered
  where it arrives and never forwarded again, so no request loops, whatever the daemons
  believe about each other's leases;
- with the daemon's TLS (the holder's certificate checked against ``tls_client_ca_file``
  or the system's roots; the daemon's own certificate presented for mTLS).

The holder's answer, or its error with its ``ErrorInfo``, comes back to the caller as it
is. A holder that cannot be reached at all is :class:`~luoshod.errors.HolderUnreachable`
unless its lease has ended meanwhile: then the daemon asked answers from the store, as any
daemon does for a session nobody holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import grpc

from luosho.v1 import agent_pb2_grpc as pb_grpc

from ..domain import Lease
from ..errors import HolderUnreachable
from ..store import Capability, Store
from ..store.kit.paging import encode_page_token
from .listeners import is_unix

#: The metadata key a forwarded call carries: the name of the daemon that forwarded it.
FORWARDED = "luosho-forwarded-by"
#: ... and the name of the holder it was forwarded to: a daemon that is not that holder
#: (an address that reaches another daemon: a loopback address advertised to other hosts)
#: refuses it rather than answer for a session it does not hold.
FORWARDED_TO = "luosho-forwarded-to"

#: The longest a forwarded unary call waits for the holder's answer (a tool result is
#: answered once it is durable: a save, well within it).
FORWARD_TIMEOUT_S = 30.0

#: Metadata of the caller's call that is the transport's, not the caller's: not forwarded.
_HOP = frozenset({"user-agent", "te", "content-type", "grpc-accept-encoding", "grpc-timeout"})


def advertised(configured: str, bound: list[str]) -> str:
    """The address to publish with leases: ``configured``, else the first bound listen
    address, with this host's name for a wildcard host (other machines cannot dial
    ``0.0.0.0``)."""
    if configured or not bound:
        return configured
    first = bound[0]
    if is_unix(first):
        return first
    host, _, port = first.rpartition(":")
    if host in ("0.0.0.0", "[::]", "::", ""):
        return f"{socket.getfqdn()}:{port}"
    return first


def forwarded(context: grpc.aio.ServicerContext) -> bool:
    """Whether this call was forwarded by another daemon (it is answered here, then)."""
    return any(k == FORWARDED for k, _ in context.invocation_metadata() or ())


def unreachable(e: grpc.aio.AioRpcError) -> bool:
    """Whether ``e`` says the holder was not reached (no answer of its own: a holder's
    error always carries its ``ErrorInfo``, in ``grpc-status-details-bin``)."""
    answered = any(k == "grpc-status-details-bin" for k, _ in e.trailing_metadata() or ())
    return not answered and e.code() in (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
    )


async def held_elsewhere(store: Store, owner: str, sid: str) -> Lease | None:
    """The live lease an owner other than ``owner`` holds on ``sid`` (read only: nothing
    taken), or ``None``. Live leases are few (one per session being worked on), listed
    from just before ``sid``."""
    if Capability.LEASES not in store.capabilities:
        return None
    token = encode_page_token(sid[:-1]) if len(sid) > 1 else ""
    while True:
        page, token = await store.list_leases(page_size=100, page_token=token)
        for lease in page:
            if lease.session_id == sid:
                return lease if lease.owner != owner else None
            if lease.session_id > sid:
                return None
        if not token:
            return None


class Peers:
    """This daemon's view of the others: who holds a session (from the store's leases)
    and one channel to each holder's address."""

    def __init__(
        self,
        store: Store,
        owner: str,
        *,
        tls: tuple[Path, Path, Path | None] | None = None,
    ) -> None:
        self.store, self.owner = store, owner
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._credentials: grpc.ChannelCredentials | None = None
        if tls is not None:
            cert, key, ca = tls
            self._credentials = grpc.ssl_channel_credentials(
                root_certificates=ca.read_bytes() if ca is not None else None,
                private_key=key.read_bytes(),
                certificate_chain=cert.read_bytes(),
            )

    async def holder(self, sid: str) -> Lease | None:
        """The live lease another daemon holds on ``sid`` with an address to reach it at,
        or ``None``."""
        lease = await held_elsewhere(self.store, self.owner, sid)
        return lease if lease is not None and lease.address else None

    def stub(self, address: str) -> pb_grpc.AgentServiceStub:
        channel = self._channels.get(address)
        if channel is None:
            if self._credentials is not None and not is_unix(address):
                channel = grpc.aio.secure_channel(address, self._credentials)
            else:
                channel = grpc.aio.insecure_channel(address)
            self._channels[address] = channel
        return pb_grpc.AgentServiceStub(channel)

    def metadata(self, context: grpc.aio.ServicerContext, to: Lease) -> list[tuple[str, Any]]:
        """The caller's metadata (its token among it), marked as forwarded by us to the
        holder of ``to``."""
        given: Iterable[tuple[str, Any]] = context.invocation_metadata() or ()
        kept = [
            (k, v)
            for k, v in given
            if not k.startswith(":") and k not in _HOP and k not in (FORWARDED, FORWARDED_TO)
        ]
        return [*kept, (FORWARDED, self.owner), (FORWARDED_TO, to.owner)]

    def check_arrival(self, context: grpc.aio.ServicerContext, sid: str) -> None:
        """Refuse a call forwarded to another holder than this daemon (``HolderUnreachable``:
        the holder's advertised address reaches this daemon instead)."""
        meta = dict(context.invocation_metadata() or ())
        to, by = meta.get(FORWARDED_TO), meta.get(FORWARDED, "")
        if to is not None and to != self.owner:
            raise HolderUnreachable(
                f"daemon {by!r} forwarded a call for session {sid!r} to its holder {to!r}, "
                f"and it reached daemon {self.owner!r} instead: {to!r}'s advertise_address "
                "does not reach it from other daemons (a loopback address?); set "
                "advertise_address to an address they can dial",
                session_id=sid,
                holder=str(to),
                reached=self.owner,
                retry_after_s="1.0",
            )

    def timeout(self, context: grpc.aio.ServicerContext) -> float:
        """The forwarded call's deadline: the caller's, less a margin to answer
        ``HOLDER_UNREACHABLE`` in time when the holder does not answer (a process
        stopped, a network partition); :data:`FORWARD_TIMEOUT_S` without one."""
        left = context.time_remaining()
        if left is None or left > FORWARD_TIMEOUT_S:
            return FORWARD_TIMEOUT_S
        return max(0.05, min(left * 0.8, left - 0.5))

    async def refused(self, lease: Lease, e: grpc.aio.AioRpcError) -> HolderUnreachable:
        """The error of a holder not reached (``e``): when to retry is when its lease
        ends, unless renewed."""
        left = max(0.0, lease.expires_at - self.store.clock())
        return HolderUnreachable(
            f"session {lease.session_id!r} is held by daemon {lease.owner!r} at "
            f"{lease.address}, which cannot be reached ({e.code().name}: {e.details()}); "
            f"retry in {left:.1f} s, when its lease ends unless it is renewed",
            session_id=lease.session_id,
            holder=lease.owner,
            address=lease.address,
            retry_after_s=f"{max(left, 0.1):.1f}",
        )

    async def pass_on(self, context: grpc.aio.ServicerContext, e: grpc.aio.AioRpcError) -> None:
        """Answer the caller with the holder's error ``e`` as it is (raises)."""
        await context.abort(e.code(), e.details() or "", tuple(e.trailing_metadata() or ()))

    async def aclose(self) -> None:
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(channel.close(), 2.0)
