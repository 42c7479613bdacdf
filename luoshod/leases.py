"""``luoshod leases release``: free the session leases a dead daemon left in a store.

A daemon that dies (kill -9, a lost node) keeps its leases until they expire
(``lease_ttl``, 15 s by default); meanwhile its sessions answer ``SESSION_BUSY`` naming it
as the holder. A daemon restarted with the same stable ``lease_owner`` frees them itself;
with the default owner (host/pid/random, new at each start) an operator frees them here,
opening the store directly (a daemon may be serving it)."""

from __future__ import annotations

import asyncio
import sys

from .config import redact_url
from .errors import LuoshoError
from .store import Capability, store_from_url


async def _release(url: str, owner: str) -> int:
    store = store_from_url(url)
    if Capability.LEASES not in store.capabilities:
        print(f"luoshod: {redact_url(url)} keeps no leases (one daemon per store)", file=sys.stderr)
        return 1
    await store.open()
    try:
        released = await store.release_leases_of(owner)
    finally:
        await store.close()
    print(f"released {released} lease{'s' if released != 1 else ''} of {owner} in {redact_url(url)}")
    return 0


def release(url: str, owner: str) -> int:
    try:
        return asyncio.run(_release(url, owner))
    except (LuoshoError, ValueError, OSError) as e:
        print(f"luoshod: {e}", file=sys.stderr)
        return 1


__all__ = ["release"]
