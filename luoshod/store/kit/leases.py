"""What every driver's leases share: the errors they raise and the TTL check."""

from __future__ import annotations

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
