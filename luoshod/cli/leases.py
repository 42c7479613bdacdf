"""``luoshod leases list`` (who holds which session, with its fencing token and expiry)
and ``luoshod leases release``: free the session leases a dead daemon left in a store.

A daemon that dies (kill -9, a lost node) keeps its leases until they expire
(``lease_ttl_s``, 15 s by default); meanwhile its sessions answer ``SESSION_BUSY`` naming it
as the holder. A daemon restarted with the same stable ``lease_owner`` frees them itself;
with the default owner (host/pid/random, new at each start) an operator frees them here,
opening the store directly (a daemon may be serving it): every lease of one owner, or one
session's lease (``--session``)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from datetime import UTC, datetime

from ..config import redact_url
from ..domain import Lease
from ..errors import LuoshoError
from ..store import MAX_PAGE_SIZE, Capability, Store, store_from_url


async def _with_store(url: str, work: Callable[[Store], Awaitable[int]]) -> int:
    store = store_from_url(url)
    if Capability.LEASES not in store.capabilities:
        print(f"luoshod: {redact_url(url)} keeps no leases (one daemon per store)", file=sys.stderr)
        return 1
    await store.open()
    try:
        return await work(store)
    finally:
        await store.close()


async def _leases(store: Store, owner: str | None = None) -> AsyncIterator[Lease]:
    token = ""
    while True:
        page, token = await store.list_leases(
            page_size=MAX_PAGE_SIZE, page_token=token, owner=owner
        )
        for lease in page:
            yield lease
        if not token:
            return


def _expiry(lease: Lease) -> str:
    return (
        datetime.fromtimestamp(lease.expires_at, UTC)
        .isoformat(timespec="seconds")
        .replace("+00:00", "Z")
    )


async def _list(store: Store, owner: str | None, as_json: bool) -> int:
    leases = [lease async for lease in _leases(store, owner)]
    if as_json:
        rows = [
            {
                "session_id": lease.session_id,
                "holder": lease.owner,
                "token": lease.token,
                "expires_at": _expiry(lease),
            }
            for lease in leases
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not leases:
        print("no live leases" + (f" held by {owner}" if owner else ""))
        return 0
    width = max(len("SESSION"), *(len(lease.session_id) for lease in leases))
    holders = max(len("HOLDER"), *(len(lease.owner) for lease in leases))
    print(f"{'SESSION':<{width}}  {'HOLDER':<{holders}}  {'TOKEN':>5}  EXPIRES")
    for lease in leases:
        print(
            f"{lease.session_id:<{width}}  {lease.owner:<{holders}}  {lease.token:>5}  "
            f"{_expiry(lease)}"
        )
    return 0


async def _release_owner(store: Store, url: str, owner: str) -> int:
    released = await store.release_leases_of(owner)
    print(
        f"released {released} lease{'s' if released != 1 else ''} of {owner} in {redact_url(url)}"
    )
    return 0


async def _release_session(store: Store, url: str, session_id: str) -> int:
    # A scan of the live leases: an operator's command, not a daemon's path.
    lease = None
    async for found in _leases(store):
        if found.session_id == session_id:
            lease = found
            break
    if lease is None:
        print(
            f"luoshod: session {session_id!r} holds no live lease in {redact_url(url)}",
            file=sys.stderr,
        )
        return 1
    await store.release_lease(lease)
    print(
        f"released the lease of session {session_id} (holder {lease.owner}, token {lease.token}) "
        f"in {redact_url(url)}"
    )
    return 0


def _run(work: Callable[[], Coroutine[None, None, int]]) -> int:
    try:
        return asyncio.run(work())
    except (LuoshoError, ValueError, OSError) as e:
        print(f"luoshod: {e}", file=sys.stderr)
        return 1


def release(url: str, owner: str | None, session_id: str | None = None) -> int:
    """``leases release``: every lease of ``owner``, or the lease of ``session_id``."""
    if session_id is not None:
        return _run(lambda: _with_store(url, lambda s: _release_session(s, url, session_id)))
    assert owner is not None
    return _run(lambda: _with_store(url, lambda s: _release_owner(s, url, owner)))


def list_leases(url: str, owner: str | None, as_json: bool) -> int:
    """``leases list``: the live leases of the store (of ``owner`` if given)."""
    return _run(lambda: _with_store(url, lambda s: _list(s, owner, as_json)))


__all__ = ["list_leases", "release"]
