"""The driver: one JSON file per session under ``<dir>/sessions/``.

It declares one capability, ``DURABLE``: a save is on disk when acknowledged (written to
a temporary file, synced, renamed over the old one, and the directory synced), so a
process killed at any moment leaves each session at a whole save. Everything it does not
declare (history, approvals, event logs, leases, several processes) it refuses, and the
conformance kit checks that too: the base class's methods raise ``NotImplementedError``,
and a second process opening the directory gets a ``StoreError``.

For brevity it rewrites a session's whole file on each save, its applied request records
(R74) included, so a save costs O(transcript); a production driver writes only
``checkpoint.messages[stored_messages:]`` and the save's new records (see the SQLite and
LMDB drivers of luoshod).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from luoshod.domain import (
    DEFAULT_REQUEST_ID_LIMIT,
    AppliedRequest,
    Approval,
    Checkpoint,
    Lease,
    Message,
    SessionSummary,
    Status,
    StoredEvent,
)
from luoshod.errors import LeaseLost, StoreError
from luoshod.store.kit import (
    DEFAULT_HISTORY_LIMIT,
    Capability,
    Store,
    chain_link,
)

T = TypeVar("T")

#: The version of this file's JSON layout, checked on read.
FORMAT = 1


class FilesStore(Store):
    """A directory of JSON files, one per session."""

    #: The store contract this driver was written for (``luoshod.store.kit.CONTRACT_VERSION``
    #: of the luoshod it was built with). A literal on purpose: a luoshod speaking another
    #: contract refuses this driver at start instead of misusing it.
    contract_version = 2
    capabilities = frozenset({Capability.DURABLE})

    def __init__(self, path: Path, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> None:
        super().__init__(history_limit=history_limit)
        self.path = path
        self._sessions = path / "sessions"
        self._lock_file: int | None = None  # held open (and flock'ed) while the store is open
        # Orders every write of this store: R7's check of the stored version and the
        # write that follows it are one step for the other tasks.
        self._write_lock = asyncio.Lock()

    @classmethod
    def from_url(cls, url: str, *, history_limit: int = DEFAULT_HISTORY_LIMIT) -> FilesStore:
        """``files:///abs/dir`` or ``files:rel/dir`` (resolved now). ``ValueError`` for
        anything else."""
        parts = urlsplit(url)
        if parts.scheme != "files":
            raise ValueError(f"not a files: URL: {url!r}")
        if parts.netloc or parts.query or parts.fragment or not parts.path:
            raise ValueError(f"files: URL takes a directory path only: {url!r}")
        return cls(Path(unquote(parts.path)).resolve(), history_limit=history_limit)

    # -- lifecycle --------------------------------------------------------------------------

    def exists(self) -> bool:
        return self._sessions.is_dir()

    def disk_bytes(self) -> int | None:
        """The bytes of the store's files now (for luoshod's metrics); 0 before the first
        open."""
        total = 0
        for p in self.path.rglob("*"):
            with contextlib.suppress(OSError):  # removed meanwhile
                total += p.stat().st_size if p.is_file() else 0
        return total

    async def _open(self) -> None:
        # Called by Store.open once per opening (a second open() does nothing).
        self._lock_file = await asyncio.to_thread(self._lock_and_tidy)

    def _lock_and_tidy(self) -> int:
        try:
            return self._take_lock()
        except OSError as e:
            raise StoreError(f"files store {self.path}: open failed: {e}", operation="open") from e

    def _take_lock(self) -> int:
        self._sessions.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path / "LOCK", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            # One process at a time (the driver does not declare MULTI_PROCESS). The lock
            # goes with the process, so a killed one does not keep the store locked.
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise StoreError(f"files store {self.path} is open in another process") from None
        for leftover in self._sessions.glob("*.tmp"):  # a save cut short by a crash
            leftover.unlink()
        return fd

    async def _close(self) -> None:
        # Called by Store.close once per opening (a second close() does nothing).
        if self._lock_file is not None:
            os.close(self._lock_file)  # releases the flock
            self._lock_file = None

    # -- the contract -----------------------------------------------------------------------

    async def load(self, session_id: str) -> Checkpoint | None:
        return await self._io("load", self._read, session_id)

    async def save(
        self,
        checkpoint: Checkpoint,
        *,
        stored_messages: int,
        events: Sequence[StoredEvent] = (),
        approval: Approval | None = None,
        claim: str | None = None,
        lease: Lease | None = None,
        requests: Sequence[AppliedRequest] = (),
        request_limit: int = DEFAULT_REQUEST_ID_LIMIT,
    ) -> None:
        if events or approval is not None or claim is not None or lease is not None:
            raise NotImplementedError("FilesStore keeps no event log, approvals or leases")
        link = chain_link(checkpoint, stored_messages)  # R91: this save's link of the chain
        header = checkpoint.header_dict()  # now: the caller may change it once we return
        header["chain"] = link
        messages = [m.to_dict() for m in checkpoint.messages]
        sid = checkpoint.session_id
        async with self._write_lock:
            stored = await self._io("save", self._read_doc, sid)
            stored_version = stored["header"]["version"] if stored else 0
            if checkpoint.version != stored_version + 1:  # R7
                raise LeaseLost(
                    f"session {sid!r} was saved by another writer",
                    session_id=sid,
                    stored_version=stored_version,
                    version=checkpoint.version,
                )
            # Request records by id, in the order first written (an update keeps its place).
            records = {r["id"]: r for r in (stored or {}).get("requests", [])}
            records.update((r.id, r.to_dict()) for r in requests)
            kept = (
                list(records.values())[max(0, len(records) - request_limit) :]
                if request_limit
                else []
            )
            await self._io("save", self._write, sid, _encode(header, messages, kept))
        checkpoint.chain = link  # saved: the next save links to it

    async def find_request(self, session_id: str, request_id: str) -> AppliedRequest | None:
        found = [r for r in await self.requests(session_id) if r.id == request_id]
        return found[0] if found else None

    async def requests(self, session_id: str) -> list[AppliedRequest]:
        doc = await self._io("requests", self._read_doc, session_id)
        return [AppliedRequest.from_dict(r) for r in (doc or {}).get("requests", [])]

    async def delete(self, session_id: str, *, keep_history: bool = False) -> bool:
        async with self._write_lock:
            return await self._io("delete", self._remove, session_id)

    async def _list_sessions(
        self, status: Status | None, after: str, limit: int
    ) -> list[SessionSummary]:
        # Store.list_sessions checks the page request and cuts the page; this finds up to
        # ``limit`` sessions after ``after``, in id order.
        found: list[SessionSummary] = []
        for sid in await self._io("list_sessions", self._ids):
            if len(found) == limit:
                break
            if sid <= after:
                continue
            cp = await self._io("list_sessions", self._read, sid)
            if cp is None or (status is not None and cp.status is not status):
                continue
            found.append(
                SessionSummary(
                    sid,
                    cp.status,
                    cp.finish_reason,
                    cp.step_index,
                    len(cp.messages),
                    cp.approval_id,
                    cp.updated_at,
                    cp.last_drift,
                    cp.total_usage,
                    cp.wake_at,
                )
            )
        return found

    async def _session_ids(self, after: str, limit: int) -> list[str]:
        return [sid for sid in await self._io("session_ids", self._ids) if sid > after][:limit]

    async def _import_session(
        self,
        session_id: str,
        latest: Checkpoint | None,
        history: list[Checkpoint],
        approvals: list[Approval],
        events: list[StoredEvent],
        requests: list[AppliedRequest],
    ) -> None:
        # Store.import_session has checked the import (and refused approvals and events,
        # which this driver does not declare); the history it keeps none of.
        async with self._write_lock:
            if latest is None:
                await self._io("import_session", self._remove, session_id)
            else:
                data = _encode(
                    latest.header_dict(),
                    [m.to_dict() for m in latest.messages],
                    [r.to_dict() for r in requests],
                )
                await self._io("import_session", self._write, session_id, data)

    # -- files ------------------------------------------------------------------------------

    async def _io(self, what: str, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` off the event loop; the library's errors become ``StoreError`` here,
        at the driver's edge."""
        if self._lock_file is None:
            raise StoreError(f"files store {self.path} is not open", operation=what)
        try:
            return await asyncio.to_thread(fn, *args)
        except StoreError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise StoreError(f"files store {self.path}: {what} failed: {e}", operation=what) from e

    def _file(self, session_id: str) -> Path:
        # Hex: any session id makes a file name, and names sort as the ids' UTF-8 bytes.
        return self._sessions / f"{session_id.encode().hex()}.json"

    def _ids(self) -> list[str]:
        names = (p.name for p in self._sessions.iterdir() if p.name.endswith(".json"))
        return sorted(bytes.fromhex(n.removesuffix(".json")).decode() for n in names)

    def _read(self, session_id: str) -> Checkpoint | None:
        doc = self._read_doc(session_id)
        if doc is None:
            return None
        messages = [Message.from_dict(m) for m in doc["messages"]]
        return Checkpoint.from_header(doc["header"], messages)

    def _read_doc(self, session_id: str) -> dict[str, Any] | None:
        try:
            data = self._file(session_id).read_bytes()
        except FileNotFoundError:
            return None
        doc = json.loads(data)
        if doc.get("format") != FORMAT:
            raise ValueError(f"a session file of format {doc.get('format')}, not {FORMAT}")
        return doc  # type: ignore[no-any-return]

    def _write(self, session_id: str, data: bytes) -> None:
        target = self._file(session_id)
        tmp = target.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)  # atomic: a reader or a crash sees the old or the new file
        self._sync_directory()

    def _remove(self, session_id: str) -> bool:
        try:
            self._file(session_id).unlink()
        except FileNotFoundError:
            return False
        self._sync_directory()
        return True

    def _sync_directory(self) -> None:
        fd = os.open(self._sessions, os.O_RDONLY)
        try:
            os.fsync(fd)  # the rename (or unlink) itself is on disk
        finally:
            os.close(fd)


def _encode(header: dict[str, Any], messages: list[Any], requests: list[Any]) -> bytes:
    doc = {"format": FORMAT, "header": header, "messages": messages, "requests": requests}
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
