"""Durable timers (docs/reference/rules.md R86): the daemon tool ``sleep``.

An agent with ``sleep_tool`` has the tool ``sleep`` (``SLEEP_TOOL``). Its call ends the
run: the loop saves the session ``sleeping`` with a :class:`~luoshod.domain.Sleep` (the
call and its wake time) and no result for the call, and the run ends with finish reason
``sleeping``. Nothing is held for it then, neither a lease nor a task: the session is a
row of the store, listed by status like any other. The daemon's waker
(``luoshod.server.waker``) finds it when it is due and resumes it as a run of the
session; that run records the call's result (:func:`result`) as any tool's, and goes on.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

from ..domain import Message, Role, Sleep, ToolCall

#: What woke a sleeping session: its time, ``Resume`` with ``wake``, or input sent with
#: ``if_busy`` INTERRUPT.
TIME, RESUME, INPUT = "time", "resume", "input"
WAKES = (TIME, RESUME, INPUT)


def rfc3339(t: float) -> str:
    """``t`` (seconds since the epoch) as RFC 3339 UTC, to the millisecond."""
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def wake_time(call: ToolCall, now: float) -> float:
    """When a ``sleep`` call wakes: ``now`` + ``seconds``, or ``until``. Raises
    ``ValueError`` (the model reads it as the call's error result) for neither or both,
    a negative or infinite duration, or an instant without a time zone."""
    try:
        args = json.loads(call.arguments_json or "{}")
    except ValueError as e:
        raise ValueError(f"arguments are not JSON: {e}") from e
    if not isinstance(args, dict):
        raise ValueError("arguments must be an object")
    seconds, until = args.get("seconds"), args.get("until")
    if (seconds is None) == (until is None):
        raise ValueError('give exactly one of "seconds" and "until"')
    if seconds is not None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise ValueError('"seconds" must be a number')
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError('"seconds" must be a finite number >= 0')
        return now + float(seconds)
    if not isinstance(until, str):
        raise ValueError('"until" must be an RFC 3339 string')
    try:
        at = datetime.fromisoformat(until.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError as e:
        raise ValueError(f'"until" is not an RFC 3339 instant: {e}') from e
    if at.tzinfo is None:
        raise ValueError('"until" needs a time zone (e.g. "Z" or "+02:00")')
    return at.timestamp()


def result(call: ToolCall, sleep: Sleep, woken: str) -> Message:
    """The ``sleep`` call's result once it wakes: when it was to wake and what woke it."""
    body = {"slept_until": rfc3339(sleep.wake_at), "woken": woken}
    return Message(Role.TOOL, json.dumps(body), (), call.id, call.name, False)
