"""What ``luoshod serve`` checks before it serves, so that a daemon that cannot work stops
at once with one line naming the cause and the fix (``ConfigError``, exit status 2)
instead of a traceback, or worse, a daemon that serves an empty store somewhere else.

- :func:`check_store_location`: the store's place, as its driver judges it (a SQLite
  file's directory must exist, else a typo in the path would serve a new, empty store; no
  part of a file-backed store's path may be a file).
- :func:`open_store`: opening the store, its library's complaints (psycopg's pool warns
  once per failed connection) held back and the last one told as the cause; a store written
  by a newer luoshod (the driver's ``StoreError`` says ``written_by``) is told to be
  upgraded for, not to be looked for elsewhere.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

from ..config import ConfigError, redact_url
from ..errors import NEWER_LUOSHOD, StoreError
from ..store import Store, store_from_url

log = logging.getLogger("luoshod.server")
#: How long an open may take before the daemon says what it waits for (a PostgreSQL
#: server that does not answer holds it for the driver's connect timeout).
SAY_WAITING_AFTER_S = 2.0

#: Schemes whose URL path is a file or directory on this host (for absolute_store_url).
FILE_BACKED = frozenset({"sqlite", "lmdb"})


def check_store_location(url: str) -> None:
    """Raises ``ConfigError`` when the store of ``url`` cannot be where it says: the driver
    knows its own URL, so it answers (:meth:`~luoshod.store.Store.check_location`); a bad
    URL is left to the start, which names it."""
    try:
        store = store_from_url(url)
    except ValueError:
        return
    try:
        store.check_location()
    except ValueError as e:
        raise ConfigError(f"store: {e}") from None


class _HeldBack(logging.Filter):
    """Keeps the records of other libraries than luoshod (they are the cause of a failed
    open, told once in the error, not a screenful of warnings)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "luoshod" or record.name.startswith("luoshod."):
            return True
        self.records.append(record)
        return False


async def open_store(store: Store, url: str) -> None:
    """``store.open()``; raises ``ConfigError`` naming the store, the cause and the fix."""
    held = _HeldBack()
    handlers = list(logging.getLogger().handlers)
    for h in handlers:
        h.addFilter(held)

    def say_waiting() -> None:
        said = [
            r.getMessage().splitlines()[0] for r in held.records if r.levelno >= logging.WARNING
        ]
        log.warning(
            "waiting for the store %s%s; still trying, until its connect timeout",
            redact_url(url),
            f": {said[-1]}" if said else " to answer",
        )

    said_waiting = asyncio.get_running_loop().call_later(SAY_WAITING_AFTER_S, say_waiting)
    try:
        await store.open()
    except StoreError as e:
        cause = str(e)
        said = [
            r.getMessage().splitlines()[0] for r in held.records if r.levelno >= logging.WARNING
        ]
        if said:
            cause = f"{said[-1]} ({e})"
        if e.metadata.get("written_by") == NEWER_LUOSHOD:
            # The URL is right and the store is there: this luoshod is too old for it.
            fix = (
                "upgrade luoshod (and the store's driver) to serve it, or point --store at a "
                "store this version wrote"
            )
        else:
            fix = "check the --store URL and that the store is reachable"
        raise ConfigError(f"store: cannot open {redact_url(url)}: {cause}; {fix}") from None
    finally:
        said_waiting.cancel()
        for h in handlers:
            h.removeFilter(held)
    # Opened after all: what the library said was a passing problem; it still goes to the log.
    seen: set[str] = set()
    for record in held.records:
        if record.getMessage() not in seen:
            seen.add(record.getMessage())
            for h in handlers:
                h.handle(record)


def absolute_store_url(url: str) -> str:
    """``url`` with a relative file path made absolute against the working directory, so
    the daemon names (and keeps) the same store whichever folder it is started from."""
    parts = urlsplit(url)
    if parts.scheme not in FILE_BACKED or parts.netloc or not parts.path:
        return url
    if parts.path.startswith("/"):
        return url
    path = Path(unquote(parts.path)).absolute()
    return f"{parts.scheme}://{quote(str(path))}" + (f"?{parts.query}" if parts.query else "")


__all__ = ["absolute_store_url", "check_store_location", "open_store"]
