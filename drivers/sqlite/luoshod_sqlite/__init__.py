"""``sqlite:``: a durable, multi-process store in one SQLite file (:class:`SqliteStore`)."""

from .driver import SqliteStore

__all__ = ["SqliteStore"]
