"""What a driver declares it supports (``Store.capabilities``): its own module, so that
the kit's helpers (:mod:`.importing`) check a store's capabilities without importing the
contract (:mod:`.base`), which uses them."""

from __future__ import annotations

from enum import StrEnum


class Capability(StrEnum):
    """What a driver declares it supports; the conformance tests check both directions."""

    #: A save is on disk when acknowledged; data survives a restart of the process.
    DURABLE = "durable"
    #: Several processes may open the same store at once.
    MULTI_PROCESS = "multi_process"
    #: ``history`` keeps the newest ``history_limit`` saves of each session.
    HISTORY = "history"
    #: Pending approvals stored with their checkpoint and claimed exactly once.
    APPROVALS = "approvals"
    #: A bounded per-session event log (``append_events``/``read_events``).
    EVENT_LOG = "event_log"
    #: Per-session leases with fencing tokens (``acquire_lease`` and ``lease=`` on writes).
    LEASES = "leases"
    #: A per-session queue of inputs waiting for a busy session (R68, R69):
    #: ``enqueue_input``, ``queued_inputs``, ``remove_queued_input``, ``queued_sessions``.
    QUEUE = "queue"
    #: Schedules (R87), each a named record changed by compare-and-set on its version:
    #: ``create_schedule``, ``get_schedule``, ``list_schedules``, ``update_schedule``,
    #: ``delete_schedule``.
    SCHEDULES = "schedules"
