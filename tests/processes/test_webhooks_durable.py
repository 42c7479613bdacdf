"""Webhooks that survive crashes at their worst moments (server/webhooks.py):

- a notification is written in the same store transaction as the event that causes it: a
  daemon SIGKILLed the instant the event's save returned (tests/support/fault_daemon.py's kill
  point, before anything else runs) delivers the notification after its restart;
- a delivery's attempt count and next attempt time are kept in the store with the
  notification: a restarted daemon does not start its backoff over."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.server.webhooks import OUTBOX, Notifier, WebhookConfig, decode_entry
from luoshod.store import store_from_url
from tests.support import free_port
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, calls
from tests.support.webhooks import SECRET, Receiver, verify

pytestmark = pytest.mark.asyncio

STORES = {
    "sqlite": lambda tmp: f"sqlite:///{tmp}/luoshod.db",
    "lmdb": lambda tmp: f"lmdb://{tmp}/lmdb",
}


def store_url(store: str, tmp: Path, request: pytest.FixtureRequest) -> str:
    if store == "postgres":  # a new database of the session's throw-away server
        return str(request.getfixturevalue("postgres_url"))
    return STORES[store](tmp)


@pytest.mark.parametrize("store", [*sorted(STORES), "postgres"])
@pytest.mark.parametrize("kill_at", ["approval.requested", "run.done"])
async def test_a_kill9_right_after_the_event_is_saved_loses_no_notification(
    tmp_path: Path, store: str, kill_at: str, request: pytest.FixtureRequest
) -> None:
    receiver = Receiver(free_port())  # down while the first daemon lives: it delivers nothing
    args = ("--store", store_url(store, tmp_path, request), "--webhook-url", receiver.url)
    env = {"LUOSHOD_WEBHOOK_SECRET": SECRET}
    if kill_at == "approval.requested":
        spec = agent([calls(("pay", {"eur": 5})), {"text": "paid"}], ["pay"])
        spec.tools[0].needs_approval = True
    else:
        spec = agent([{"text": "hello"}], [])
    first = DaemonProcess(*args, env=env, kill_at=kill_at).start()
    try:
        h = Harness(first.address)
        log = await h.run("k9", "go", spec, {})
        await h.close()
        assert first.proc is not None and first.proc.wait(10) == -signal.SIGKILL
        assert log.error is not None and not log.of(kill_at)  # killed before anyone saw it
    finally:
        first.stop()
    await receiver.start()
    second = DaemonProcess(*args, env=env).start()
    try:
        h = Harness(second.address)
        got = await receiver.wait_for(kill_at, "k9")
        cp = await h.get("k9")
        assert got["data"]["run_id"] == cp.run_id
        if kill_at == "approval.requested":
            pending = (
                await h.stub.ListApprovals(pb.ListApprovalsRequest(session_id="k9"))
            ).approvals
            assert [a.approval_id for a in pending] == [got["data"]["approval_id"]]
        else:
            assert got["data"]["finish_reason"] == "stop"
        assert all(verify(hd, body, SECRET) for hd, body in receiver.got)
        await h.close()
    finally:
        second.stop()
        await receiver.stop()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_a_restart_goes_on_backing_off_where_the_last_daemon_stopped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/luoshod.db"
    receiver = Receiver(free_port())  # down at first
    config = WebhookConfig(receiver.url, SECRET, backoff_s=100, max_backoff_s=1000, timeout_s=5)
    clock = Clock(1_800_000_000.0)

    store = store_from_url(url)
    await store.open()
    notifier = Notifier(store, config, clock=clock)
    await notifier.put("run.done", "evt_1", {"session_id": "s", "run_id": "r"})
    assert await notifier.deliver_due() == 0  # refused: the receiver is down
    assert await notifier.deliver_due() == 0  # not due again yet: no second attempt
    [entry] = await store.queued_inputs(OUTBOX)
    body, tries = decode_entry(entry.data)
    assert tries.count == 1 and clock.now + 50 <= tries.next_at <= clock.now + 100
    assert json.loads(body)["id"] == "evt_1"
    await notifier.stop()
    await store.close()

    # A new daemon on the same store, the receiver back: it waits for the next attempt
    # time the store kept instead of trying at once.
    await receiver.start()
    try:
        store = store_from_url(url)
        await store.open()
        notifier = Notifier(store, config, clock=clock)
        clock.now = tries.next_at - 1
        assert await notifier.deliver_due() == 0
        assert receiver.got == []
        clock.now = tries.next_at
        assert await notifier.deliver_due() == 1
        [(headers, posted)] = receiver.got
        assert posted == body and verify(headers, posted, SECRET)  # the very bytes first signed
        assert await store.queued_inputs(OUTBOX) == []
        await notifier.stop()
        await store.close()
    finally:
        await receiver.stop()

    # The count goes on too: the second failure backs off twice as long.
    store = store_from_url(url)
    await store.open()
    notifier = Notifier(store, config, clock=clock)
    await notifier.put("run.done", "evt_2", {"session_id": "s", "run_id": "r2"})
    assert await notifier.deliver_due() == 0
    await notifier.stop()
    await store.close()
    store = store_from_url(url)
    await store.open()
    notifier = Notifier(store, config, clock=clock)
    clock.now = decode_entry((await store.queued_inputs(OUTBOX))[0].data)[1].next_at
    assert await notifier.deliver_due() == 0
    _, tries = decode_entry((await store.queued_inputs(OUTBOX))[0].data)
    assert tries.count == 2 and clock.now + 100 <= tries.next_at <= clock.now + 200
    await notifier.stop()
    await store.close()
