"""The driver SDK: what a store driver is built from, inside or outside this repository.

- the contract, :class:`Store` with its :class:`Capability` set (:mod:`.base`);
- the helpers every driver shares: lease errors, TTL and import checks, paging
  (re-exported here from :mod:`.base`);
- :mod:`.codec`, the on-disk encoding of checkpoints and messages;
- :mod:`.groupcommit`, many sessions' saves in one transaction and one sync;
- :mod:`.prepared`, writes checked for their lease, claim and version before they are
  applied, for drivers that queue writes for a batch.

A driver imports from here (and :mod:`luoshod.domain`, :mod:`luoshod.errors`), never from
the engine, the server or observe; ``lint-imports`` holds that line in CI.
"""

from __future__ import annotations

from .base import (
    CONTRACT_VERSION,
    DEFAULT_EVENT_LOG_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    MAX_PAGE_SIZE,
    MAX_SEQ,
    Capability,
    Store,
    check_import,
    check_ttl,
    clamp_seq,
    decode_page_token,
    encode_page_token,
    extends,
    lease_busy,
    lease_lost,
    page_of,
    page_start,
)

__all__ = [
    "CONTRACT_VERSION",
    "DEFAULT_EVENT_LOG_LIMIT",
    "DEFAULT_HISTORY_LIMIT",
    "MAX_PAGE_SIZE",
    "MAX_SEQ",
    "Capability",
    "Store",
    "check_import",
    "check_ttl",
    "clamp_seq",
    "decode_page_token",
    "encode_page_token",
    "extends",
    "lease_busy",
    "lease_lost",
    "page_of",
    "page_start",
]
