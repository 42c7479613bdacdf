"""``lmdb:``: a durable, multi-process store in an LMDB environment (:class:`LmdbStore`)."""

from .driver import LmdbStore

__all__ = ["LmdbStore"]
