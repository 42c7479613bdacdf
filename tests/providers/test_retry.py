"""The one retry policy (providers/retry.py), without a network: which failures are
retried, how long it waits, and what the final ProviderError carries."""

from __future__ import annotations

import email.utils
import time

import pytest

from luoshod.errors import ProviderError, ProviderRejected
from luoshod.providers.retry import (
    Failure,
    RetryPolicy,
    call_with_retries,
    retry_after,
    status_failure,
)


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    policy = RetryPolicy(max_retries=10, backoff_base_s=0.5, backoff_max_s=4.0)
    lowest = [policy.delay(n, None, lambda: 0.0) for n in range(1, 6)]
    highest = [policy.delay(n, None, lambda: 1.0) for n in range(1, 6)]
    assert highest == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert lowest == [0.25, 0.5, 1.0, 2.0, 2.0]  # never less than half: no thundering herd at 0


def test_retry_after_is_honoured_up_to_the_cap() -> None:
    policy = RetryPolicy(backoff_base_s=0.5, backoff_max_s=30.0)
    assert policy.delay(1, 7.0, lambda: 0.5) == 7.0
    assert policy.delay(1, 0.0, lambda: 0.5) == 0.0
    assert policy.delay(1, 31.0, lambda: 0.5) is None  # give up: resume later instead


def test_retry_after_headers() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "1.5"}) == 1.5
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({}) is None
    assert retry_after({"retry-after": "soon"}) is None
    date = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 < retry_after({"retry-after": date}) <= 60


@pytest.mark.parametrize(
    "status, headers, transient",
    [
        (408, {}, True),
        (429, {}, True),
        (500, {}, True),
        (503, {}, True),
        (529, {}, True),
        (400, {}, False),
        (401, {}, False),
        (403, {}, False),
        (404, {}, False),
        (422, {}, False),
        (500, {"x-should-retry": "false"}, False),
        (400, {"x-should-retry": "true"}, True),
    ],
)
def test_which_statuses_are_transient(
    status: int, headers: dict[str, str], transient: bool
) -> None:
    assert status_failure(status, headers, "t", "").transient is transient


async def run(failures: list[Failure], policy: RetryPolicy, **kw):
    """call_with_retries over attempts that fail with ``failures`` then succeed."""
    attempts: list[int] = []
    waits: list[float] = []

    async def attempt() -> str:
        attempts.append(len(attempts))
        if len(attempts) <= len(failures):
            raise RuntimeError(len(attempts) - 1)
        return "ok"

    async def sleep(s: float) -> None:
        waits.append(s)

    result = await call_with_retries(
        attempt,
        lambda e: failures[e.args[0]],
        policy,
        provider="p",
        model="m",
        sleep=sleep,
        rand=lambda: 1.0,
        **kw,
    )
    return result, attempts, waits


async def test_transient_failures_are_retried() -> None:
    fails = [
        Failure(True, "rate_limit_error", status=429, retry_after_s=2.0),
        Failure(True, "timeout"),
    ]
    result, attempts, waits = await run(fails, RetryPolicy(max_retries=2, backoff_base_s=0.1))
    assert result == "ok" and len(attempts) == 3
    assert waits == [2.0, 0.2]  # Retry-After, then backoff for retry 2


async def test_exhausted_retries_raise_provider_error_with_metadata() -> None:
    fails = [Failure(True, "server_error", "boom", status=500)] * 3
    with pytest.raises(ProviderError) as err:
        await run(fails, RetryPolicy(max_retries=2))
    e = err.value
    assert e.metadata == {
        "provider": "p",
        "model": "m",
        "status": "500",
        "error_type": "server_error",
        "provider_message": "boom",
        "attempts": "3",
        "transient": "true",
    }
    assert str(e) == "model call p:m failed after 3 attempt(s): HTTP 500 server_error: boom"


async def test_non_transient_failures_are_not_retried() -> None:
    with pytest.raises(ProviderRejected) as err:
        await run([Failure(False, "invalid_request_error", status=400)], RetryPolicy(max_retries=5))
    assert err.value.metadata["attempts"] == "1" and err.value.reason == "PROVIDER_REJECTED"


async def test_secrets_are_redacted_before_truncation() -> None:
    secret = "sk-" + "x" * 40
    detail = "y" * 480 + f"bad key {secret} end"
    with pytest.raises(ProviderError) as err:
        await run(
            [Failure(False, "authentication_error", detail, status=401)],
            RetryPolicy(),
            secrets=[secret],
        )
    assert "sk-" not in str(err.value) and "xxxx" not in str(err.value)
    assert "sk-" not in err.value.metadata["provider_message"]


async def test_other_exceptions_propagate_unchanged() -> None:
    async def attempt() -> None:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        await call_with_retries(attempt, lambda e: None, RetryPolicy(), provider="p", model="m")
