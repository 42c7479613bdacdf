"""``memory://``: the in-process driver. Real, not a mock: the engine tests and the
scripted demo run on it. Nothing survives the process."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field, replace

from ..domain import Checkpoint, HistoryEntry, Message, SessionSummary, Status
from ..errors import LeaseLost
from .base import DEFAULT_HISTORY_LIMIT, Capability, Store, decode_page_token, encode_page_token


@dataclass(slots=True)
class _Entry:
    """A saved header over a prefix of a message log (shared, never copied)."""

    header: Checkpoint  # messages left empty
    log: list[Message]
    count: int

    def checkpoint(self) -> Checkpoint:
        return _detached(self.header, self.log[: self.count])


@dataclass(slots=True)
class _Session:
    latest: _Entry | None = None
    history: deque[_Entry] = field(default_factory=deque)


class MemoryStore(Store):
    capabilities = frozenset({Capability.HISTORY})

    def __init__(self, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        super().__init__(history_limit=history_limit)
        self._sessions: dict[str, _Session] = {}
        # Saves are synchronous dict updates; the lock only orders them against each other.
        self._lock = asyncio.Lock()

    @classmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> MemoryStore:
        if url.rstrip("/") not in ("memory:", "memory:/", "memory://"):
            raise ValueError(f"memory store URL takes no path: {url!r}")
        return cls(history_limit=history_limit)

    async def load(self, session_id: str) -> Checkpoint | None:
        s = self._sessions.get(session_id)
        return s.latest.checkpoint() if s and s.latest else None

    async def save(self, checkpoint: Checkpoint, *, stored_messages: int) -> None:
        async with self._lock:
            s = self._sessions.setdefault(checkpoint.session_id, _Session())
            stored_version = s.latest.header.version if s.latest else 0
            if checkpoint.version != stored_version + 1:
                raise LeaseLost(
                    f"session {checkpoint.session_id!r} was saved by another writer",
                    session_id=checkpoint.session_id,
                    stored_version=stored_version,
                    version=checkpoint.version,
                )
            msgs = checkpoint.messages
            if s.latest is not None and stored_messages == s.latest.count == len(s.latest.log):
                log = s.latest.log
                log.extend(msgs[stored_messages:])
            else:
                log = list(msgs)  # a new session, or a rewritten transcript: a new log
            entry = _Entry(_detached(checkpoint, []), log, len(msgs))
            s.latest = entry
            if self.history_limit:
                s.history.append(entry)
                while len(s.history) > self.history_limit:
                    s.history.popleft()

    async def delete(self, session_id: str, *, keep_history: bool = False) -> bool:
        async with self._lock:
            s = self._sessions.get(session_id)
            existed = bool(s and s.latest)
            if s is None:
                return False
            if keep_history and s.history:
                s.latest = None
            else:
                del self._sessions[session_id]
            return existed

    async def list_sessions(
        self, *, status: Status | None, page_size: int, page_token: str
    ) -> tuple[list[SessionSummary], str]:
        if page_size < 1:
            raise ValueError(f"page_size must be >= 1, got {page_size}")
        after = decode_page_token(page_token)
        ids = sorted(
            sid
            for sid, s in self._sessions.items()
            if s.latest and sid > after and (status is None or s.latest.header.status is status)
        )
        page = [_summary(self._sessions[sid].latest) for sid in ids[:page_size]]  # type: ignore[arg-type]
        more = len(ids) > page_size
        return page, encode_page_token(page[-1].session_id) if more else ""

    async def history(self, session_id: str, *, limit: int | None = None) -> list[HistoryEntry]:
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0, got {limit}")
        s = self._sessions.get(session_id)
        if s is None:
            return []
        entries = list(reversed(s.history))[:limit]
        return [
            HistoryEntry(e.header.step_index, e.header.updated_at, e.header.status, e.checkpoint())
            for e in entries
        ]


def _detached(cp: Checkpoint, messages: list[Message]) -> Checkpoint:
    """A copy sharing no mutable part with ``cp`` (messages and specs are immutable)."""
    fp = cp.fingerprint
    return replace(
        cp,
        messages=messages,
        usage=cp.usage.copy(),
        total_usage=cp.total_usage.copy(),
        fingerprint=replace(fp, tool_schema_hashes=dict(fp.tool_schema_hashes)) if fp else None,
    )


def _summary(e: _Entry) -> SessionSummary:
    h = e.header
    return SessionSummary(
        h.session_id, h.status, h.finish_reason, h.step_index, e.count, h.approval_id, h.updated_at
    )
