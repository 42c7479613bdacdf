"""The driver SDK: what a store driver is built from, inside or outside this repository.

- the contract, :class:`Store` with its :class:`Capability` set (:mod:`.capabilities`)
  and the limits (:mod:`.base`): public methods that check a request once for every
  driver, and the narrow hooks a driver implements;
- :mod:`.leases`: the lease errors every driver raises, the TTL check, and the
  :class:`Renewal` of a batched ``renew_leases``;
- :mod:`.paging`: page requests, pages and page tokens;
- :mod:`.importing`: the checks and trimming of ``import_session``;
- :mod:`.events`: seqs within 64 bits;
- :mod:`.eventblocks`: an event log's rows, loose events and compressed blocks of 64
  (pack, unpack, what a write seals, the expansion ``read_events`` does);
- :mod:`.files`: checks of drivers that keep their data in files;
- :mod:`.codec`, the on-disk encoding of checkpoints and messages, with its format version;
- :mod:`.tasklog`, the sub-agents' transcripts in the session's message log (a log of
  records: what a save appends, what a log prefix decodes to);
- :mod:`.chain`, the link of each save in the session's hash chain (R91): a driver whose
  ``save`` is :mod:`.prepared`'s records it; one with a ``save`` of its own stores
  :func:`chain_link`'s value as the header's ``chain`` and sets ``checkpoint.chain`` to it;
- :mod:`.groupcommit`, many sessions' saves in one transaction and one sync;
- :mod:`.prepared`, writes encoded before they are queued, and :mod:`.planning`, the pure
  plan of a batch of them (refusals, message logs, approvals, event logs) that a driver
  then writes.

A driver imports from here (and :mod:`luoshod.domain`, :mod:`luoshod.errors`), never from
the engine, the server or observe; ``lint-imports`` holds that line in CI.
"""

from __future__ import annotations

from .base import (
    CONTRACT_VERSION,
    DEFAULT_EVENT_LOG_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    MAX_PAGE_SIZE,
    Capability,
    Store,
    check_enqueue,
)
from .chain import link_save as chain_link
from .events import MAX_SEQ, clamp_seq
from .files import file_in_the_way, local_path, read_only
from .importing import check_import, extends, newest
from .leases import Renewal, check_ttl, lease_busy, lease_lost, renewal_of
from .paging import decode_page_token, encode_page_token, page_of, page_start

__all__ = [
    "file_in_the_way",
    "read_only",
    "local_path",
    "CONTRACT_VERSION",
    "DEFAULT_EVENT_LOG_LIMIT",
    "DEFAULT_HISTORY_LIMIT",
    "MAX_PAGE_SIZE",
    "MAX_SEQ",
    "Capability",
    "Renewal",
    "Store",
    "chain_link",
    "check_enqueue",
    "check_import",
    "renewal_of",
    "check_ttl",
    "clamp_seq",
    "decode_page_token",
    "encode_page_token",
    "extends",
    "lease_busy",
    "lease_lost",
    "newest",
    "page_of",
    "page_start",
]
