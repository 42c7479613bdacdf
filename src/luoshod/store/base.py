"""The storage contract: one async abstract base class, implemented by every driver.

A driver keeps, per session: the latest checkpoint, a bounded history ring, and (later)
pending approvals, the lease and an event log. The transcript only grows within a
session, so :meth:`Store.save` is told how many leading messages the store already holds
and writes only the new ones plus a small header; a history entry refers to a prefix of
the session's message log instead of copying it. Save time and bytes per history entry
are O(new messages), never O(transcript).

Errors: a driver translates its library's exceptions at its edge into
:class:`~luoshod.errors.StoreError` (or a subclass); it never lets a library exception
escape. An incomplete driver fails when it is constructed (``abc``), not on first use.
"""

from __future__ import annotations

import abc
import base64
from enum import StrEnum
from typing import ClassVar

from ..domain import Checkpoint, HistoryEntry, SessionSummary, Status

DEFAULT_HISTORY_LIMIT = 50
MAX_PAGE_SIZE = 1000


class Capability(StrEnum):
    """What a driver declares it supports; the conformance tests check both directions."""

    #: A save is on disk when acknowledged; data survives a restart of the process.
    DURABLE = "durable"
    #: Several processes may open the same store at once.
    MULTI_PROCESS = "multi_process"
    #: ``history`` keeps the newest ``history_limit`` saves of each session.
    HISTORY = "history"


class Store(abc.ABC):
    """A checkpoint store. Methods are coroutines and safe to call concurrently.

    Saves of one session must be strictly ordered (R7): ``save`` refuses a checkpoint whose
    ``version`` is not exactly the stored version + 1, so an older save can never land
    last, even across processes.
    """

    #: What this driver supports; checked both ways by the conformance tests.
    capabilities: ClassVar[frozenset[Capability]] = frozenset()

    def __init__(self, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        if history_limit < 0:
            raise ValueError(f"history_limit must be >= 0, got {history_limit}")
        self.history_limit = history_limit

    @classmethod
    @abc.abstractmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> Store:
        """Build the driver from its URL. Raises ``ValueError`` for a malformed URL."""

    async def open(self) -> None:
        """Acquire resources, create or migrate the schema. Raises ``StoreError``."""

    async def close(self) -> None:
        """Release resources. Idempotent."""

    @abc.abstractmethod
    async def load(self, session_id: str) -> Checkpoint | None:
        """The latest checkpoint of ``session_id`` with its whole transcript, or ``None``.

        Raises ``StoreError`` when the store cannot be read.
        """

    @abc.abstractmethod
    async def save(self, checkpoint: Checkpoint, *, stored_messages: int) -> None:
        """Make ``checkpoint`` the session's latest checkpoint and append it to its history.

        ``checkpoint.messages[:stored_messages]`` are guaranteed identical to the messages
        the store holds for the session (the caller loaded or saved them); only the rest
        are written. ``stored_messages`` lower than the stored count means the transcript
        was rewritten: the driver starts a new message log (history entries keep theirs).

        The store keeps no reference to ``checkpoint``'s mutable parts: changing the object
        afterwards changes nothing stored (and a loaded checkpoint is the caller's to change).
        A save cancelled by the caller may or may not have been applied.

        Raises ``LeaseLost`` when ``checkpoint.version`` is not the stored version + 1
        (0 when there is no checkpoint): another writer saved the session in between.
        Raises ``StoreFull`` when the store has no room (the previous state is intact),
        ``StoreError`` for any other failure (nothing is half-written).
        """

    @abc.abstractmethod
    async def delete(self, session_id: str, *, keep_history: bool = False) -> bool:
        """Delete the latest checkpoint; its history too unless ``keep_history``.

        Returns ``False`` when there was no checkpoint (history kept by an earlier
        ``keep_history`` delete is still cleared unless ``keep_history``). Raises ``StoreError``.
        """

    @abc.abstractmethod
    async def list_sessions(
        self, *, status: Status | None, page_size: int, page_token: str
    ) -> tuple[list[SessionSummary], str]:
        """Sessions ordered by id, after ``page_token``, at most ``page_size``.

        Returns the page and the next token ("" on the last page). Raises ``ValueError``
        for a malformed token or ``page_size < 1`` (the service layer caps it at
        ``MAX_PAGE_SIZE``), ``StoreError`` when the store cannot be read.
        """

    async def history(self, session_id: str, *, limit: int | None = None) -> list[HistoryEntry]:
        """The session's kept saves, newest first, at most ``limit``. Unknown session → ``[]``.

        ``saved_at`` is the checkpoint's ``updated_at`` (set by the writer when it saved).
        Raises ``ValueError`` for a negative ``limit``.

        Only drivers declaring ``Capability.HISTORY`` implement it; others raise
        ``NotImplementedError``.
        """
        raise NotImplementedError(f"{type(self).__name__} keeps no history")


def encode_page_token(last_session_id: str) -> str:
    return base64.urlsafe_b64encode(last_session_id.encode()).decode().rstrip("=")


def decode_page_token(token: str) -> str:
    """The session id a page token continues after ("" for the first page)."""
    if not token:
        return ""
    try:
        padded = token + "=" * (-len(token) % 4)
        return base64.b64decode(padded, altchars=b"-_", validate=True).decode()
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"malformed page token {token!r}") from e
