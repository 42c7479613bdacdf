"""One retry policy for the providers that call a model over HTTP.

Each provider turns its SDK's exception into a :class:`Failure` at its edge; this module
decides what to do with it. Transient failures (HTTP 408, 429, 5xx, timeouts, connection
resets, a stream cut off) are retried with exponential backoff and jitter, honouring the
server's ``Retry-After``; what still fails becomes a ``ProviderError`` (UNAVAILABLE: may pass
later), anything else a ``ProviderRejected`` (FAILED_PRECONDITION: no retry can fix it),
their metadata carrying the HTTP status, the provider's error type and its message (keys
redacted). The SDKs' own retries are switched off, so this is the only policy within a
call; ``guard.py`` paces the calls of a session, and of a model, across runs.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import ProviderError, ProviderRejected

log = logging.getLogger("luoshod.providers")

T = TypeVar("T")
MAX_DETAIL = 500


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0

    def delay(
        self, retry: int, retry_after_s: float | None, rand: Callable[[], float]
    ) -> float | None:
        """Seconds to wait before retry number ``retry`` (1-based), or ``None`` to give up
        because the server asks for a longer wait than ``backoff_max_s`` (the run fails and
        can be resumed later instead of holding the session)."""
        if retry_after_s is not None:
            return max(0.0, retry_after_s) if retry_after_s <= self.backoff_max_s else None
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (retry - 1))
        return ceiling * (0.5 + rand() / 2)  # "equal jitter": never less than half


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed attempt, as the provider's edge understood it."""

    transient: bool
    error_type: str  # the provider's error type, or "timeout", "connection_error", …
    detail: str = ""
    status: int | None = None
    retry_after_s: float | None = None


def status_failure(
    status: int, headers: Mapping[str, str], error_type: str | None, detail: str
) -> Failure:
    """A failure with an HTTP status: transient per the status and ``x-should-retry``."""
    should = (headers.get("x-should-retry") or "").lower()
    transient = should == "true" or (should != "false" and (status in (408, 429) or status >= 500))
    return Failure(transient, error_type or f"http_{status}", detail, status, retry_after(headers))


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    try:
        return float(headers["retry-after-ms"]) / 1000
    except (KeyError, TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    when = email.utils.parsedate_tz(value)
    return None if when is None else max(0.0, email.utils.mktime_tz(when) - time.time())


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    classify: Callable[[Exception], Failure | None],
    policy: RetryPolicy,
    *,
    provider: str,
    model: str,
    secrets: Sequence[str] = (),
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rand: Callable[[], float] = random.random,
    on_retry: Callable[[int, str, float], Awaitable[None]] | None = None,
) -> T:
    """``attempt()`` until it succeeds, retrying what ``classify`` calls transient.

    ``classify`` returns ``None`` for an exception that is not a provider failure (a bug),
    which propagates unchanged. ``on_retry(attempt, what failed, wait)`` is awaited before
    each wait (the ``provider.retry`` event). Raises ``ProviderError``; its message and
    metadata never contain any of ``secrets``."""
    attempts = 0
    while True:
        attempts += 1
        try:
            return await attempt()
        except Exception as e:  # noqa: BLE001 - classified below
            failure = classify(e)
            if failure is None:
                raise
        wait, why = None, ""
        if failure.transient and attempts <= policy.max_retries:
            wait = policy.delay(attempts, failure.retry_after_s, rand)
            if wait is None:
                why = f" (the server asks to wait {failure.retry_after_s:g}s, over backoff_max_s)"
        what = _describe(failure, secrets)
        if wait is None:
            details: dict[str, Any] = dict(
                provider=provider,
                model=model,
                status=failure.status,
                error_type=failure.error_type,
                provider_message=_redacted(failure.detail, secrets),
                attempts=attempts,
                transient=str(failure.transient).lower(),
                retry_after_s=failure.retry_after_s,
            )
            if not failure.transient:
                raise ProviderRejected(
                    f"model call {provider}:{model} was refused, and no retry can change that: "
                    f"{what}",
                    **details,
                ) from None
            raise ProviderError(
                f"model call {provider}:{model} failed after {attempts} attempt(s): {what}{why}",
                **details,
            ) from None
        log.warning(
            "model call %s:%s attempt %d failed (%s); retrying in %.2fs",
            provider,
            model,
            attempts,
            what,
            wait,
        )
        if on_retry is not None:
            await on_retry(attempts, what, wait)
        await sleep(wait)


def _describe(f: Failure, secrets: Sequence[str]) -> str:
    head = f"HTTP {f.status} {f.error_type}" if f.status is not None else f.error_type
    detail = _redacted(f.detail, secrets)
    return f"{head}: {detail}" if detail else head


def _redacted(detail: str, secrets: Sequence[str]) -> str:
    for secret in secrets:  # before truncating, so no part of a secret survives
        if secret:
            detail = detail.replace(secret, "[redacted]")
    return detail[:MAX_DETAIL]


__all__ = ["Failure", "RetryPolicy", "call_with_retries", "retry_after", "status_failure"]
