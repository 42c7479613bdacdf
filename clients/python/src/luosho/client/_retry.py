"""Retries without duplicates (docs/reference/rules.md R75): every Execute, Resume and Resolve
carries
a request id, the same on each attempt, so the daemon applies it once (R74) however many
times the client has to send it.

A run retries, after a backoff, when its stream fails with ``UNAVAILABLE`` (the daemon
restarting or draining, the network gone; at any point of the stream), or with another
transport failure before any event of that attempt arrived. What the earlier attempts
delivered is not delivered again: the retried stream resumes the run (the daemon runs what
is left) or replays it (events already seen are skipped).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from luosho.v1 import agent_pb2

from ._errors import LuoshoError

__all__ = [
    "ADMISSION_REASONS",
    "NO_RETRY",
    "Delivered",
    "Refusals",
    "RetryPolicy",
    "attempt_starter",
    "channel_options",
    "new_request_id",
    "retry_after",
    "wait_until_ready",
    "wait_until_ready_async",
]

log = logging.getLogger("luosho.client")

# Failures of the connection itself rather than answers of the daemon (which always
# carry an ErrorInfo reason): before any event they mean the request may not have arrived.
_TRANSPORT = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}

#: The daemon's admission refusing a run before it starts, with a ``retry_after_s``: its
#: event loop too busy for one more run, or its count of active runs full.
ADMISSION_REASONS = frozenset({"DAEMON_OVERLOADED", "TOO_MANY_RUNS"})


class Refusals:
    """A run's attempts refused by the daemon's admission: how many, and since when
    (``time.monotonic()`` of the first). (A plain class: a dataclass costs the CLI's
    start-up a quarter of a millisecond to make.)"""

    __slots__ = ("count", "since")

    def __init__(self, count: int = 0, since: float = 0.0) -> None:
        self.count = count
        self.since = since


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a run retries. ``max_attempts`` bounds the attempts in a row that make no
    progress (1: never retry). An attempt makes progress when it delivers a new
    ``model.turn`` or ``tool.result`` (a model answer or a tool result recorded that was not
    there before); that starts the count again, so a run that keeps moving keeps going
    however often its stream breaks, while a run that fails at the same point every time
    (``run.start`` and ``step.start`` are new each attempt, but are no progress) gives up
    with its last error after ``max_attempts``. The n-th retry in a row waits
    ``initial_backoff * multiplier**(n-1)`` seconds, at most ``max_backoff``, each spread
    by ``±jitter`` (a fraction) so that many clients do not come back at once, and never
    less than the ``retry_after_s`` the daemon's answer named (its failure backoff of a
    model, its admission); then the retry waits, at most ``max_backoff`` seconds more, for
    the channel to connect, so that an attempt is not spent while gRPC's own reconnect
    backoff still refuses every call. The default rides out a daemon that stays away 30
    seconds to a minute.

    An attempt the daemon's admission refused before the run started (``RESOURCE_EXHAUSTED``
    with reason ``DAEMON_OVERLOADED`` or ``TOO_MANY_RUNS``, or with gRPC's
    ``grpc-retry-pushback-ms`` trailer) is not counted there: the run comes back after the
    wait the daemon named (the trailer's when present, else ``retry_after_s``, else the
    backoff), lengthened by up to ``jitter`` of it so that a refused burst comes back
    spread, with the same request id. ``overload_attempts`` bounds those attempts in all (1:
    an admission refusal is the run's failure) and ``overload_max_wait`` the seconds from the
    first refusal: a wait that would end later gives up at once with the refusal. A negative
    pushback (the server asking not to retry) is final."""

    max_attempts: int = 20
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0
    jitter: float = 0.2
    overload_attempts: int = 30
    overload_max_wait: float = 300.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.multiplier < 1:
            raise ValueError("backoffs must be non-negative and the multiplier at least 1")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter is a fraction between 0 and 1, got {self.jitter}")
        if self.overload_attempts < 1 or self.overload_max_wait < 0:
            raise ValueError(
                "overload_attempts must be at least 1 and overload_max_wait non-negative"
            )

    def next_wait(
        self,
        session_id: str,
        error: BaseException,
        attempt: int,
        events_in_attempt: int,
        refusals: Refusals,
    ) -> float | None:
        """The wait before the attempt after one that failed with ``error``, or ``None``
        when the run gives up: an admission refusal as :meth:`overload_wait` says (counted
        in ``refusals``), any other failure as :meth:`should_retry` and :meth:`pause` say,
        ``attempt`` being its number in the current row without progress (from 1)."""
        if refused_by_admission(error, events_in_attempt):
            return self.overload_wait(session_id, error, refusals)
        if not self.should_retry(error, attempt, events_in_attempt):
            return None
        return self.pause(session_id, attempt, error)

    def overload_wait(
        self, session_id: str, error: BaseException, refusals: Refusals
    ) -> float | None:
        """The wait before trying again a run the daemon's admission refused (see the
        class), or ``None`` when it gives up; counts the refusal in ``refusals``."""
        now = time.monotonic()
        if refusals.count == 0:
            refusals.since = now
        refusals.count += 1
        pushback = getattr(error, "pushback_s", None)
        if refusals.count >= self.overload_attempts or (pushback is not None and pushback < 0):
            return None
        hint = pushback if pushback is not None else retry_after(error)
        if hint <= 0:
            hint = self.backoff(refusals.count)
        wait = hint * (1 + _random().uniform(0, self.jitter))
        if now + wait - refusals.since > self.overload_max_wait:
            return None
        log.info(
            "run of session %r: %s; refused %d time(s), trying again in %.1fs",
            session_id,
            error,
            refusals.count,
            wait,
        )
        return wait

    def should_retry(self, error: BaseException, attempt: int, events_in_attempt: int) -> bool:
        """Whether an attempt that failed with ``error`` after ``events_in_attempt``
        events is tried again, ``attempt`` being its number in the current row of
        attempts without a new event (from 1)."""
        if attempt >= self.max_attempts or not isinstance(error, LuoshoError):
            return False
        if error.code == grpc.StatusCode.UNAVAILABLE:
            return True
        return events_in_attempt == 0 and not error.reason and error.code in _TRANSPORT

    def pause(self, session_id: str, attempt: int, error: BaseException) -> float:
        """The wait before the next attempt (:meth:`backoff`), said in a warning of the
        ``luosho.client`` logger, so a caller whose daemon is away hears why it waits."""
        wait = self.backoff(attempt, error)
        log.warning(
            "run of session %r: %s; attempt %d of %d without progress, the next in %.1fs",
            session_id,
            error,
            attempt + 1,
            self.max_attempts,
            wait,
        )
        return wait

    def backoff(self, attempt: int, error: BaseException | None = None) -> float:
        """Seconds to wait after the ``attempt``-th failed attempt in a row (from 1), at
        least the ``retry_after_s`` that ``error`` carries."""
        base = min(self.max_backoff, self.initial_backoff * self.multiplier ** (attempt - 1))
        wait = max(0.0, base * (1 + _random().uniform(-self.jitter, self.jitter)))
        return max(wait, retry_after(error))


def _random() -> Any:
    """The ``random`` module, imported at the first retry (not at the client's start)."""
    import random

    return random


def refused_by_admission(error: BaseException, events_in_attempt: int) -> bool:
    """Whether ``error`` refused a run before it started (no event of the attempt), telling
    when to come back: the daemon's admission, or a server's ``grpc-retry-pushback-ms``."""
    if events_in_attempt or not isinstance(error, LuoshoError):
        return False
    if error.code != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return False
    return error.reason in ADMISSION_REASONS or error.pushback_s is not None


def retry_after(error: BaseException | None) -> float:
    """The ``retry_after_s`` of a daemon's answer (its ErrorInfo metadata), or 0; gRPC's
    ``grpc-retry-pushback-ms`` trailer instead when the answer has one (not negative)."""
    pushback = getattr(error, "pushback_s", None)
    if pushback is not None and pushback >= 0:
        return float(pushback)
    try:
        return max(0.0, float(getattr(error, "metadata", {}).get("retry_after_s", 0)))
    except (TypeError, ValueError):
        return 0.0


#: The events that show a run got further: a model answer or a tool result recorded.
PROGRESS = frozenset({"model.turn", "tool.result"})


def channel_options(policy: RetryPolicy) -> list[tuple[str, int]]:
    """Options of a channel the client makes: gRPC's own reconnect backoff (1 s growing
    to 2 minutes by default) would otherwise keep a restarted daemon unreachable for
    longer than the retries wait, each failing at once without trying to connect."""
    if policy.max_attempts == 1:
        return []
    most = max(100, int(policy.max_backoff * 1000))
    return [
        ("grpc.initial_reconnect_backoff_ms", min(100, most)),
        ("grpc.min_reconnect_backoff_ms", min(100, most)),
        ("grpc.max_reconnect_backoff_ms", most),
    ]


def wait_until_ready(channel: grpc.Channel, timeout: float) -> None:
    """Connect ``channel`` and wait up to ``timeout`` seconds for it to be READY; return
    early when it is, quietly when it is not (the next attempt then fails and counts).
    While a channel is in TRANSIENT_FAILURE every call fails at once ("failed to connect
    to all addresses") until its reconnect backoff ends: a retry sent in that window is an
    attempt spent on a daemon that may already be back."""
    try:
        future = grpc.channel_ready_future(channel)
    except (AttributeError, NotImplementedError):  # a channel that cannot report its state
        return
    try:
        future.result(timeout=timeout)
    except grpc.FutureTimeoutError:
        pass
    finally:
        future.cancel()


async def wait_until_ready_async(channel: grpc.aio.Channel, timeout: float) -> None:
    """:func:`wait_until_ready` for an asyncio channel."""
    ready = getattr(channel, "channel_ready", None)
    if ready is None:
        return
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(ready(), timeout)


#: Never retry: one attempt, and its failure raised.
NO_RETRY = RetryPolicy(max_attempts=1, overload_attempts=1)


def new_request_id() -> str:
    """A UUIDv7 (RFC 9562): time-ordered, so the ids of a session sort by when they were
    made, and random enough that two clients never pick the same one."""
    import uuid  # at first use: the blocking client's start-up does without it

    make = getattr(uuid, "uuid7", None)  # Python 3.14
    if make is not None:
        return str(make())
    ms = time.time_ns() // 1_000_000 & (1 << 48) - 1
    rand = int.from_bytes(os.urandom(10), "big")
    value = ms << 80 | 0x7 << 76 | (rand >> 62 & 0xFFF) << 64 | 0b10 << 62 | rand & (1 << 62) - 1
    return str(uuid.UUID(int=value))


class Delivered:
    """What a run's attempts delivered, for :class:`~luosho.client.Run` and
    :class:`~luosho.client.AsyncRun` alike: the events in order and the highest seq, so a
    retried stream's events already delivered by an earlier attempt are skipped."""

    session_id: str
    _events: list[agent_pb2.Event]
    _seen: int

    def _take(self, event: agent_pb2.Event) -> bool:
        """Record ``event``; ``False`` when an earlier attempt delivered it already."""
        if 0 < event.seq <= self._seen:
            return False
        self._seen = max(self._seen, event.seq)
        self._events.append(event)
        if not self.session_id:  # a Resolve run learns its session here
            self.session_id = event.session_id
        return True

    @staticmethod
    def _progress(event: agent_pb2.Event) -> bool:
        """Whether a newly delivered event shows the run got further (see RetryPolicy)."""
        return event.type in PROGRESS and not event.replayed

    @staticmethod
    def _asks_for_a_tool(event: agent_pb2.Event) -> bool:
        """A ``tool.call`` to answer: a replayed one already has its result, and a daemon
        tool's (``executor`` DAEMON, an MCP tool) is run by the daemon itself. Or a
        ``tool.reconcile`` to answer (R77), unless replayed."""
        if event.type == "tool.reconcile":
            return event.HasField("tool_reconcile") and not event.replayed
        return (
            event.type == "tool.call"
            and event.HasField("tool_call")
            and not event.replayed
            and event.tool_call.executor != agent_pb2.TOOL_EXECUTOR_DAEMON
        )


def attempt_starter(
    method: Callable[..., Any], request: Any, metadata: Any, learnt_session: Callable[[], str]
) -> Callable[[], Any]:
    """What starts one attempt of a run, for the blocking and the async client alike: the
    same request every time, with a request id (a UUIDv7 unless the caller gave one); a
    Resolve sent without its session takes the one an earlier attempt's events named, so
    the daemon recognises the retry once the first attempt claimed the approval."""
    if not request.request_id:
        request.request_id = new_request_id()
    resolve = isinstance(request, agent_pb2.ResolveRequest)

    def start() -> Any:
        if resolve and not request.session_id:
            request.session_id = learnt_session()
        return method(request, metadata=metadata)

    return start
