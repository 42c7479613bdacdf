"""What every driver's leases share: the errors they raise, the TTL check, and the result
of a batched renewal (one write a daemon makes for every lease it holds)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from ...domain import Lease
from ...errors import LeaseLost, SessionBusy


def lease_busy(session_id: str, holder: str, expires_at: float) -> SessionBusy:
    """The ``SessionBusy`` every driver raises for a lease held by another owner."""
    until = datetime.fromtimestamp(expires_at, UTC).isoformat(timespec="milliseconds")
    return SessionBusy(
        f"session {session_id!r} is leased by {holder!r} until {until}",
        session_id=session_id,
        holder=holder,
        expires_at=until.replace("+00:00", "Z"),
    )


def lease_lost(lease: Lease, token: int | None) -> LeaseLost:
    """The ``LeaseLost`` of a write or renewal under a stale lease (``token``: the
    session's current one, ``None`` when it has none)."""
    return LeaseLost(
        f"the lease of session {lease.session_id!r} was taken over "
        f"(token {lease.token}, now {token})",
        session_id=lease.session_id,
        token=lease.token,
        current_token=token,
    )


def check_ttl(ttl: float) -> None:
    """Raise ``ValueError`` unless ``ttl`` is a positive number of seconds."""
    if not ttl > 0:
        raise ValueError(f"lease ttl must be > 0 seconds, got {ttl}")


@dataclass(frozen=True, slots=True)
class Renewal:
    """What :meth:`Store.renew_leases` returns: the leases renewed (with their new expiry),
    and a ``LeaseLost`` for each lease taken over by another owner, in the order given."""

    renewed: list[Lease]
    lost: list[LeaseLost]


def renewal_of(leases: Sequence[Lease], current: Mapping[str, int], expires_at: float) -> Renewal:
    """The :class:`Renewal` of ``leases`` given the sessions' ``current`` tokens after a
    batched write that renewed exactly those whose token matched (to ``expires_at``)."""
    renewed, lost = [], []
    for lease in leases:
        token = current.get(lease.session_id)
        if token == lease.token:
            renewed.append(replace(lease, expires_at=expires_at))
        else:
            lost.append(lease_lost(lease, token))
    return Renewal(renewed, lost)


def check_batch(leases: Sequence[Lease]) -> None:
    """Raise ``ValueError`` when ``leases`` names a session twice (one daemon holds one
    lease a session; two of one session would renew each other's row)."""
    seen: set[str] = set()
    for lease in leases:
        if lease.session_id in seen:
            raise ValueError(f"renew_leases: session {lease.session_id!r} given twice")
        seen.add(lease.session_id)
