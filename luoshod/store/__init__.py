"""Storage: the contract and driver SDK (:mod:`.kit`), the in-memory driver, and the
lookup of a driver by URL scheme through the ``luoshod.drivers`` entry-point group.

The durable drivers are distributions of their own (``drivers/`` in the repository:
``luoshod-sqlite``, ``luoshod-lmdb``, ``luoshod-postgres``); a third-party driver registers
in the same group and is found the same way.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

from .kit.base import (
    CONTRACT_VERSION,
    DEFAULT_EVENT_LOG_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    MAX_PAGE_SIZE,
    Capability,
    SaveOptions,
    Store,
)

__all__ = [
    "CONTRACT_VERSION",
    "Capability",
    "SaveOptions",
    "Store",
    "DEFAULT_EVENT_LOG_LIMIT",
    "DEFAULT_HISTORY_LIMIT",
    "MAX_PAGE_SIZE",
    "driver_for",
    "store_from_url",
]

ENTRY_POINT_GROUP = "luoshod.drivers"


def _provider(ep: EntryPoint) -> str:
    """The distribution that registered ``ep``, for error messages."""
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else ep.value


def driver_for(url: str) -> type[Store]:
    """The driver class registered for ``url``'s scheme.

    Raises ``ValueError`` when the URL has no scheme, no driver is installed for it, the
    entry point is not a :class:`Store`, or the driver was built for another
    :data:`CONTRACT_VERSION` (the message names both versions and the distribution).
    """
    scheme, sep, _ = url.partition(":")
    if not sep or not scheme:
        raise ValueError(f"store URL needs a scheme (memory://, sqlite:///path): {url!r}")
    for ep in entry_points(group=ENTRY_POINT_GROUP).select(name=scheme):
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, Store)):
            raise ValueError(f"entry point {ep.value!r} for {scheme!r} is not a Store")
        built_for = getattr(cls, "contract_version", None)
        if built_for != CONTRACT_VERSION:
            said = (
                "declares no contract_version"
                if built_for is None
                else (f"is built for store contract {built_for}")
            )
            raise ValueError(
                f"the {scheme}:// driver {cls.__qualname__} ({_provider(ep)}) {said}; this "
                f"luoshod speaks store contract {CONTRACT_VERSION}: install a release of "
                "the driver made for it"
            )
        return cls
    known = sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
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
