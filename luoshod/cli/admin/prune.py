"""``luoshod prune``: which sessions are old enough to delete. Durations read like
``90s``, ``15m``, ``12h``, ``30d``, ``2w`` or a sum of them (``1d12h``)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from luosho.v1 import agent_pb2 as pb

_PART = r"(\d+)([smhdw])"  # compiled at the first duration read (re caches it)
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str) -> timedelta:
    """``ValueError`` for anything but a positive sum of ``<n><s|m|h|d|w>``."""
    text = text.strip().lower()
    parts = re.findall(_PART, text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"{text!r} is not a duration like 90s, 15m, 12h, 30d, 2w or 1d12h")
    total = sum((timedelta(**{_UNIT[u]: int(n)}) for n, u in parts), timedelta())
    if total <= timedelta():
        raise ValueError(f"{text!r} is not a positive duration")
    return total


def stale(
    sessions: Iterable[pb.SessionSummary], cutoff: datetime, statuses: Collection[int] = ()
) -> list[pb.SessionSummary]:
    """The sessions last saved before ``cutoff`` (of ``statuses`` when given), oldest first.
    A session with no ``updated_at`` has an unknown age and is kept."""
    chosen = [
        s
        for s in sessions
        if s.HasField("updated_at")
        and s.updated_at.ToDatetime(tzinfo=cutoff.tzinfo) < cutoff
        and (not statuses or s.status in statuses)
    ]
    return sorted(chosen, key=lambda s: (s.updated_at.seconds, s.updated_at.nanos, s.session_id))
