"""Pages of ids (AIP-158): the checks of a page request, the cut of a page, and the page
tokens, which every driver shares so that a token of one store reads in another."""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def page_start(page_size: int, page_token: str) -> str:
    """Check a page request; the key the page continues after ("" for the first page).
    Raises ``ValueError`` for ``page_size < 1`` or a malformed token."""
    if page_size < 1:
        raise ValueError(f"page_size must be >= 1, got {page_size}")
    return decode_page_token(page_token)


def prefix_range(prefix: str, after: str) -> tuple[str, str] | None:
    """The ids of a page filtered by ``prefix`` (after ``after``), as the range
    ``low <= id < high`` with ``id != after`` that a driver scans in id order: every id
    starting with ``prefix`` lies in ``[prefix, high)``. ``None`` when ``after`` is past
    the prefix's ids (a token of another listing: the page is empty). Raises
    ``ValueError`` for a prefix whose ids have no upper bound (only U+10FFFF characters)."""
    head = prefix.rstrip("\U0010ffff")
    if not head:
        raise ValueError(f"session id prefix {prefix[:40]!r} has no upper bound")
    following = ord(head[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:  # surrogates are no characters: the next one is
        following = 0xE000
    high = head[:-1] + chr(following)
    if after >= high:
        return None
    return (after, high) if after >= prefix else (prefix, high)


def page_of(found: Sequence[T], page_size: int, key: Callable[[T], str]) -> tuple[list[T], str]:
    """The page out of up to ``page_size + 1`` items found after the start (ordered by
    ``key``), and the token of the next page ("" when there is none)."""
    page = list(found[:page_size])
    return page, encode_page_token(key(page[-1])) if len(found) > page_size else ""


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
