"""Storage: the contract (:mod:`.base`) and the drivers, found by URL scheme through the
``luoshod.drivers`` entry-point group (third-party drivers register there too)."""

from __future__ import annotations

from importlib.metadata import entry_points

from .base import DEFAULT_EVENT_LOG_LIMIT, DEFAULT_HISTORY_LIMIT, Capability, Store

__all__ = [
    "Capability",
    "Store",
    "DEFAULT_EVENT_LOG_LIMIT",
    "DEFAULT_HISTORY_LIMIT",
    "driver_for",
    "store_from_url",
]

ENTRY_POINT_GROUP = "luoshod.drivers"


def driver_for(url: str) -> type[Store]:
    """The driver class registered for ``url``'s scheme. Raises ``ValueError`` if none."""
    scheme, sep, _ = url.partition(":")
    if not sep or not scheme:
        raise ValueError(f"store URL needs a scheme (memory://, sqlite:///path): {url!r}")
    found = entry_points(group=ENTRY_POINT_GROUP).select(name=scheme)
    for ep in found:
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, Store)):
            raise ValueError(f"entry point {ep.value!r} for {scheme!r} is not a Store")
        return cls
    known = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    raise ValueError(f"no store driver for {scheme!r}:// (installed: {', '.join(known)})")


def store_from_url(
    url: str,
    *,
    history_limit: int = DEFAULT_HISTORY_LIMIT,
    event_log_limit: int = DEFAULT_EVENT_LOG_LIMIT,
) -> Store:
    """Build (not open) the store for ``url``. Raises ``ValueError`` for a bad URL or limit."""
    if event_log_limit < 0:
        raise ValueError(f"event_log_limit must be >= 0, got {event_log_limit}")
    store = driver_for(url).from_url(url, history_limit=history_limit)
    store.event_log_limit = event_log_limit
    return store
