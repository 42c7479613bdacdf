"""Notifications: webhooks POSTed when a run needs someone or ends.

The daemon's configuration names one webhook: its URL, the events it wants
(``approval.requested``, ``approval.expired``, ``run.done``, ``run.failed``), its secret
and whether bodies carry what a run said (``include_payloads``: the tool call's arguments
of an approval, a run's final text; off by default, so that neither tool arguments nor
results leave the daemon unless asked).

**At least once, from the store.** A notification is written to the store in the same
transaction as the event that causes it (the engine's save or event append carries it:
``LoopSettings.notifications``, ``Store.save(enqueue=...)``; an expired approval's, by the
sweep's save that resolves it), so no crash falls between the event and its notification;
it is then delivered by a background worker, and removed only once the receiver answered
2xx: a daemon killed with undelivered notifications delivers them after its restart; a
receiver that is down gets them when it is back (retried with exponential backoff and
jitter, up to ``max_backoff_s`` between attempts). A delivery's attempt count and the time
of its next attempt are kept in the outbox entry with the notification
(``Store.replace_queued_input``), so a restarted daemon keeps backing off where the last
one stopped. The outbox is the input queue (``Capability.QUEUE``) of the key
:data:`OUTBOX`, which no session id can take (ids start with a letter or digit): it is
ordered, durable and shared by the daemons of one store like a session's queue. Every
notification has a stable id (``webhook-id``, and ``id`` in the body), the same on every
attempt and from every daemon, so a receiver drops duplicates by it.

**Signed as Standard Webhooks do.** Headers ``webhook-id``, ``webhook-timestamp`` (Unix
seconds) and ``webhook-signature: v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>``;
the key is the secret's bytes, or for a secret written ``whsec_<base64>`` the decoded
base64, so the Standard Webhooks libraries verify it as they are.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from ..domain import Approval, Enqueue
from ..engine import APPROVAL_REQUESTED as APPROVAL_REQUESTED_EVENT
from ..engine import RUN_DONE as RUN_DONE_EVENT
from ..engine import Event
from ..errors import StoreError
from ..store import Capability, Store
from .periodic import Periodic

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger("luoshod.server.webhooks")

APPROVAL_REQUESTED = "approval.requested"
APPROVAL_EXPIRED = "approval.expired"
RUN_DONE = "run.done"
RUN_FAILED = "run.failed"
EVENTS = (APPROVAL_REQUESTED, APPROVAL_EXPIRED, RUN_DONE, RUN_FAILED)
#: The outbox: the input queue of a key that is never a session id.
OUTBOX = "_webhooks"


def parse_events(text: str) -> frozenset[str]:
    """``approval.requested,run.done`` → the set; ``ValueError`` naming an unknown one."""
    names = {n.strip() for n in text.split(",") if n.strip()}
    if unknown := sorted(names - set(EVENTS)):
        raise ValueError(
            f"unknown webhook event(s) {', '.join(unknown)}; known: {', '.join(EVENTS)}"
        )
    if not names:
        raise ValueError(f"no webhook event named; known: {', '.join(EVENTS)}")
    return frozenset(names)


def signing_key(secret: str) -> bytes:
    """The HMAC key of a secret: ``whsec_<base64>`` is decoded, anything else is its bytes."""
    if secret.startswith("whsec_"):
        return base64.b64decode(secret.removeprefix("whsec_"))
    return secret.encode()


def sign(key: bytes, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header's value."""
    mac = hmac.new(key, f"{webhook_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    url: str
    secret: str = field(repr=False)
    events: frozenset[str] = frozenset(EVENTS)
    include_payloads: bool = False
    timeout_s: float = 10.0
    #: The first retry waits this long, each next one twice as long, up to max_backoff_s.
    backoff_s: float = 1.0
    max_backoff_s: float = 300.0
    poll_s: float = 1.0


def _plain(v: Any) -> Any:
    if isinstance(v, Enum):
        return v.value
    return v


def _event_id(*parts: object) -> str:
    return "evt_" + hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:32]


@dataclass(slots=True)
class Attempts:
    """A delivery's past: how many attempts failed, and when the next one is due."""

    count: int = 0
    next_at: float = 0.0


def encode_entry(body: bytes, attempts: Attempts) -> bytes:
    """An outbox entry's data: the notification's body (the exact bytes that are signed
    and POSTed) with its delivery's attempts."""
    return json.dumps(
        {"attempts": attempts.count, "next_at": attempts.next_at, "body": body.decode()},
        separators=(",", ":"),
    ).encode()


def decode_entry(data: bytes) -> tuple[bytes, Attempts]:
    """The body and attempts of an outbox entry (an entry that is a bare body, as the first
    daemons with webhooks wrote them, has had no attempt yet)."""
    d = json.loads(data)
    if isinstance(d, dict) and isinstance(d.get("body"), str) and "attempts" in d:
        return d["body"].encode(), Attempts(int(d["attempts"]), float(d["next_at"]))
    return data, Attempts()


class Notifier:
    """Writes notifications to the outbox and delivers them in the background."""

    def __init__(
        self,
        store: Store,
        config: WebhookConfig,
        *,
        clock: Callable[[], float] = time.time,
        registry: CollectorRegistry | None = None,
    ) -> None:
        if Capability.QUEUE not in store.capabilities:
            raise ValueError(
                f"webhooks need a store that keeps a queue; {type(store).__name__} does not"
            )
        self.store, self.config, self.clock = store, config, clock
        self.key = signing_key(config.secret)
        self._worker = Periodic("webhook delivery", self._tick, config.poll_s, log=log)
        self._http: aiohttp.ClientSession | None = None
        self._pending_puts: set[asyncio.Task[None]] = set()
        registry = registry or CollectorRegistry()
        self.pending = Gauge(
            "luoshod_webhooks_pending",
            "Notifications in the store's outbox, not yet delivered (as last read)",
            registry=registry,
        )
        self.delivered = Counter(
            "luoshod_webhooks_delivered",
            "Notifications delivered (the receiver answered 2xx), by event",
            ["event"],
            registry=registry,
        )
        self.failed = Counter(
            "luoshod_webhook_attempts_failed",
            "Delivery attempts that failed (retried with backoff)",
            registry=registry,
        )

    # -- what to send ------------------------------------------------------------------

    def of_event(self, e: Event) -> list[Enqueue]:
        """The outbox entries of a run event, which the engine writes in the same store
        transaction as the event (``LoopSettings.notifications``)."""
        if e.type == APPROVAL_REQUESTED_EVENT and APPROVAL_REQUESTED in self.config.events:
            approval: Approval = e.data["approval"]
            data = self._approval(approval)
            data["run_id"] = e.run_id
            return [
                self.entry(
                    APPROVAL_REQUESTED, _event_id(e.session_id, e.run_id, e.seq, e.type), data
                )
            ]
        if e.type == RUN_DONE_EVENT and RUN_DONE in self.config.events:
            d = e.data
            data = {
                "session_id": e.session_id,
                "run_id": e.run_id,
                "finish_reason": _plain(d.get("finish_reason")),
                "status": _plain(d.get("status")),
                "step_index": d.get("step_index"),
                "approval_id": d.get("approval_id") or None,
            }
            if self.config.include_payloads:
                data["final_text"] = d.get("final_text", "")
                if output := d.get("output_json"):  # R83: the structured answer, parsed
                    data["output"] = json.loads(output)
            if errors := d.get("output_errors"):
                data["output_errors"] = list(errors)
            return [self.entry(RUN_DONE, _event_id(e.session_id, e.run_id, e.seq, e.type), data)]
        return []

    def of_expiry(self, approval: Approval) -> list[Enqueue]:
        """The outbox entries of an approval the sweep expires, written by the save that
        resolves it."""
        if APPROVAL_EXPIRED not in self.config.events:
            return []
        return [
            self.entry(
                APPROVAL_EXPIRED,
                _event_id(approval.approval_id, APPROVAL_EXPIRED),
                self._approval(approval),
            )
        ]

    async def event(self, e: Event) -> None:
        """Called with each run event once it is durable (its outbox entries with it):
        the worker is woken for those that notify."""
        if e.type in (APPROVAL_REQUESTED_EVENT, RUN_DONE_EVENT):
            self.wake()

    def wake(self) -> None:
        """Deliver now what is due (entries written by the engine's saves)."""
        self._worker.nudge()

    def run_failed(
        self, session_id: str, run_id: str, error: BaseException
    ) -> asyncio.Task[None] | None:
        """A run ended with an error (provider, store, drift…): no run.done says so. No
        store write records a failure, so its notification is written on its own; the
        returned task is that write, which the caller's stream awaits before it reports
        the failure: a caller told of a failure is sure its notification is kept, and a
        daemon killed before the write had, for everyone, not failed the run yet (its
        checkpoint is as it was; a retry or a Resume runs it again)."""
        if RUN_FAILED not in self.config.events:
            return None
        data = {
            "session_id": session_id,
            "run_id": run_id or None,
            "finish_reason": "error",
            "reason": getattr(error, "reason", type(error).__name__),
        }
        if self.config.include_payloads:
            data["message"] = str(error)
        return self._later(
            self.put(RUN_FAILED, _event_id(session_id, run_id, "failed", self.clock()), data)
        )

    def _approval(self, a: Approval) -> dict[str, Any]:
        data: dict[str, Any] = {
            "session_id": a.session_id,
            "approval_id": a.approval_id,
            "tool_call_id": a.call.id,
            "tool_name": a.call.name,
            "subagent_path": list(getattr(a, "subagent_path", ()) or ()),
            "expires_at": _iso(a.expires_at) if a.expires_at else None,
            "kind": "question" if a.is_question else "approval",  # R88
        }
        if self.config.include_payloads:
            data["arguments"] = json.loads(a.call.arguments_json or "null")
            if a.is_question:
                data["question"] = a.question
        return data

    def _later(self, put: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(put)
        self._pending_puts.add(task)
        task.add_done_callback(self._pending_puts.discard)
        return task

    def entry(self, type_: str, event_id: str, data: dict[str, Any]) -> Enqueue:
        """One notification as an outbox entry (queued under ``event_id``: idempotent)."""
        body = {"id": event_id, "type": type_, "timestamp": _iso(self.clock()), "data": data}
        encoded = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        return Enqueue(OUTBOX, event_id, encode_entry(encoded, Attempts()), self.clock())

    async def put(self, type_: str, event_id: str, data: dict[str, Any]) -> None:
        """Write one notification to the outbox on its own (idempotent by ``event_id``):
        for what no store write records (a run that failed with an error)."""
        entry = self.entry(type_, event_id, data)
        try:
            await self.store.enqueue_input(OUTBOX, event_id, entry.data, now=entry.enqueued_at)
        except StoreError as e:  # the run goes on; the notification is lost with the store
            log.error("webhook %s %s not written to the outbox: %s", type_, event_id, e)
            return
        self._worker.nudge()

    # -- delivering --------------------------------------------------------------------

    def start(self) -> None:
        self._worker.start()

    async def stop(self) -> None:
        if self._pending_puts:
            await asyncio.wait(set(self._pending_puts), timeout=5)
        await self._worker.stop()
        if self._http is not None:
            await self._http.close()
            self._http = None

    async def _tick(self) -> None:
        await self.deliver_due()

    async def deliver_due(self) -> int:
        """POST every notification of the outbox that is due; return how many were
        delivered."""
        entries = await self.store.queued_inputs(OUTBOX)
        self.pending.set(len(entries))
        done = 0
        for entry in entries:
            body, tries = decode_entry(entry.data)
            if tries.next_at > self.clock():
                continue
            type_ = json.loads(body).get("type", "")
            if await self._post(entry.request_id, body):
                await self.store.remove_queued_input(OUTBOX, entry.request_id)
                self.delivered.labels(event=type_).inc()
                done += 1
            else:
                tries.count += 1
                wait = min(
                    self.config.max_backoff_s, self.config.backoff_s * 2 ** (tries.count - 1)
                )
                tries.next_at = self.clock() + wait * random.uniform(0.5, 1.0)
                self.failed.inc()
                # Kept with the notification: a restart goes on backing off from here.
                await self.store.replace_queued_input(
                    OUTBOX, entry.request_id, encode_entry(body, tries)
                )
        self.pending.set(len(entries) - done)
        return done

    async def _post(self, webhook_id: str, body: bytes) -> bool:
        import aiohttp  # here: a daemon without webhooks (or HTTP listener) loads no HTTP stack

        if self._http is None:
            self._http = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.config.timeout_s)
            )
        ts = int(self.clock())
        headers = {
            "content-type": "application/json",
            "webhook-id": webhook_id,
            "webhook-timestamp": str(ts),
            "webhook-signature": sign(self.key, webhook_id, ts, body),
            "user-agent": "luoshod-webhooks",
        }
        try:
            async with self._http.post(self.config.url, data=body, headers=headers) as resp:
                if 200 <= resp.status < 300:
                    return True
                log.warning(
                    "webhook %s: the receiver answered %d; retried later", webhook_id, resp.status
                )
        except (aiohttp.ClientError, TimeoutError, OSError) as e:
            log.warning(
                "webhook %s not delivered (%s); retried later", webhook_id, e or type(e).__name__
            )
        return False


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")
