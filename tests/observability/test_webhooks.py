"""Webhooks against a real HTTP receiver on loopback, started by each test: signed as
Standard Webhooks sign (verified here with the documented secret, independently of the
daemon's code), no tool arguments or results unless configured, at least once with a
stable id from the store's outbox (a receiver down for a while gets everything once it is
back; a daemon killed with undelivered notifications delivers them after its restart),
and delivered/pending in the metrics."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.config import Secret
from luoshod.server.app import Config, Daemon
from luoshod.server.webhooks import OUTBOX, decode_entry
from tests.support import free_port
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, agent, calls
from tests.support.webhooks import SECRET, Receiver, metric, scrape, verify

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    r = await Receiver(free_port()).start()
    try:
        yield r
    finally:
        await r.stop()


async def start_daemon(tmp_path: Path, url: str, **kw: Any) -> Daemon:
    d = Daemon(
        Config(
            listen=["127.0.0.1:0"],
            store=f"sqlite:///{tmp_path}/db.db",
            metrics_listen="127.0.0.1:0",
            webhook_url=url,
            webhook_secret=Secret(SECRET),
            tool_timeout_s=30,
            **kw,
        )
    )
    await d.start()
    return d


async def test_webhooks_are_signed_and_carry_no_tool_arguments(
    receiver: Receiver, tmp_path: Path
) -> None:
    daemon = await start_daemon(tmp_path, receiver.url)
    try:
        h = Harness(daemon.addresses[0], daemon)
        spec = agent(
            [calls(("pay", {"card": "4111 1111"})), {"text": "paid, secret text"}], ["pay"]
        )
        spec.tools[0].needs_approval = True
        paused = await h.run("wh", "pay", spec, {})
        approval_id = paused.of("approval.requested")[0].approval_requested.approval.approval_id
        requested = await receiver.wait_for("approval.requested", "wh")
        assert requested["data"]["approval_id"] == approval_id
        assert requested["data"]["tool_name"] == "pay"
        assert requested["data"]["kind"] == "approval" and "question" not in requested["data"]
        assert requested["data"]["run_id"] == paused.events[0].run_id
        done = await receiver.wait_for("run.done", "wh")
        assert done["data"]["finish_reason"] == "awaiting-approval"
        async for resp in h.stub.Resolve(pb.ResolveRequest(approval_id=approval_id, approved=True)):
            if resp.event.type == "tool.call":
                await h.submit("wh", resp.event.tool_call.call.id, '"ok"')
        finished = await receiver.wait_for_count("run.done", "wh", 2)
        assert finished[-1]["data"]["finish_reason"] == "stop"
        for headers, body in receiver.got:
            assert verify(headers, body, SECRET)
            assert json.loads(body)["id"] == headers["webhook-id"]
            assert abs(int(headers["webhook-timestamp"]) - time.time()) < 60
            assert not verify(headers, body + b" ", SECRET)  # a changed body fails
            assert b"4111" not in body and b"secret text" not in body  # not unless configured
        text = await scrape(daemon)
        assert metric(text, "luoshod_webhooks_delivered_total") >= 3
        assert metric(text, "luoshod_webhooks_pending") == 0
        await h.close()
    finally:
        await daemon.stop()


async def test_payloads_only_when_configured(receiver: Receiver, tmp_path: Path) -> None:
    daemon = await start_daemon(
        tmp_path, receiver.url, webhook_include_payloads=True, webhook_events="approval.requested"
    )
    try:
        h = Harness(daemon.addresses[0], daemon)
        spec = agent([calls(("pay", {"card": "4111"}))], ["pay"])
        spec.tools[0].needs_approval = True
        await h.run("wh2", "pay", spec, {})
        got = await receiver.wait_for("approval.requested", "wh2")
        assert got["data"]["arguments"] == {"card": "4111"}
        assert {b["type"] for b in receiver.bodies()} == {
            "approval.requested"
        }  # only what was asked
        await h.close()
    finally:
        await daemon.stop()


async def test_r83_run_done_carries_the_structured_answer_with_payloads(
    receiver: Receiver, tmp_path: Path
) -> None:
    daemon = await start_daemon(tmp_path, receiver.url, webhook_include_payloads=True)
    try:
        h = Harness(daemon.addresses[0], daemon)
        schema = '{"type": "object", "required": ["n"]}'
        spec = agent([{"text": '{"n": 1}'}], [], output_schema_json=schema)
        await h.run("wh-r83", "count", spec, {})
        got = await receiver.wait_for("run.done", "wh-r83")
        assert got["data"]["output"] == {"n": 1}
        bad = agent([{"text": "one"}, {"text": "{}"}], [], output_schema_json=schema)
        await h.run("wh-r83-bad", "count", bad, {})
        got = await receiver.wait_for("run.done", "wh-r83-bad")
        assert got["data"]["finish_reason"] == "output_invalid"
        assert got["data"]["output_errors"] == ["(root): 'n' is a required property"]
        assert "output" not in got["data"]
        await h.close()
    finally:
        await daemon.stop()


async def test_r88_a_questions_notification_says_it_is_one_and_asks_only_with_payloads(
    receiver: Receiver, tmp_path: Path
) -> None:
    daemon = await start_daemon(
        tmp_path, receiver.url, webhook_include_payloads=True, webhook_events="approval.requested"
    )
    try:
        h = Harness(daemon.addresses[0], daemon)
        spec = agent([calls(("ask", {"question": "Which card?"}))], [])
        spec.tools.append(pb.ToolSpec(name="ask", input_schema_json="{}", question=True))
        await h.run("wh-q", "pay", spec, {})
        got = await receiver.wait_for("approval.requested", "wh-q")
        assert (got["data"]["kind"], got["data"]["question"]) == ("question", "Which card?")
        await h.close()
    finally:
        await daemon.stop()


async def test_a_receiver_down_for_a_while_gets_every_event_once_back(tmp_path: Path) -> None:
    port = free_port()
    receiver = Receiver(port)
    daemon = await start_daemon(tmp_path, receiver.url)
    try:
        h = Harness(daemon.addresses[0], daemon)
        for n in range(3):
            log = await h.run(f"down-{n}", "hi", agent([{"text": "hello"}], []), {})
            assert log.done is not None
        deadline = time.monotonic() + 20
        while metric((await scrape(daemon)), "luoshod_webhook_attempts_failed_total") < 3:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        assert metric((await scrape(daemon)), "luoshod_webhooks_pending") == 3
        await receiver.start()
        try:
            for n in range(3):
                await receiver.wait_for("run.done", f"down-{n}")
            ids = {b["id"] for b in receiver.bodies()}
            assert len(ids) == 3  # duplicates, if any, share their id
            while metric((await scrape(daemon)), "luoshod_webhooks_pending") != 0:
                await asyncio.sleep(0.1)
        finally:
            await receiver.stop()
        await h.close()
    finally:
        await daemon.stop()


async def test_a_daemon_killed_with_undelivered_notifications_delivers_them_after_restart(
    tmp_path: Path,
) -> None:
    receiver = Receiver(free_port())  # not listening yet
    args = ("--store", db_url(tmp_path), "--webhook-url", receiver.url)
    env = {"LUOSHOD_WEBHOOK_SECRET": SECRET}
    first = DaemonProcess(*args, env=env).start()
    try:
        h = Harness(first.address)
        log = await h.run("k9hook", "hi", agent([{"text": "hello"}], []), {})
        assert log.done is not None
        await h.close()
        first.kill9()
    finally:
        first.stop()
    await receiver.start()
    second = DaemonProcess(*args, env=env).start()
    try:
        got = await receiver.wait_for("run.done", "k9hook")
        assert got["data"]["run_id"] == log.events[0].run_id
        assert all(verify(hd, body, SECRET) for hd, body in receiver.got)
    finally:
        second.stop()
        await receiver.stop()


async def test_an_expired_approval_is_notified(receiver: Receiver, tmp_path: Path) -> None:
    daemon = await start_daemon(
        tmp_path, receiver.url, approval_sweep_s=0.1, webhook_events="approval.expired"
    )
    try:
        h = Harness(daemon.addresses[0], daemon)
        spec = agent([calls(("pay", {"eur": 5}))], ["pay"], approval_timeout_ms=1)
        spec.tools[0].needs_approval = True
        paused = await h.run("exp", "pay", spec, {})
        approval = paused.of("approval.requested")[0].approval_requested.approval
        got = await receiver.wait_for("approval.expired", "exp")
        assert got["data"]["approval_id"] == approval.approval_id
        assert got["data"]["tool_name"] == "pay" and got["data"]["expires_at"]
        assert {b["type"] for b in receiver.bodies()} == {"approval.expired"}
        await h.close()
    finally:
        await daemon.stop()


async def test_a_failed_run_is_notified(receiver: Receiver, tmp_path: Path) -> None:
    daemon = await start_daemon(tmp_path, receiver.url, webhook_events="run.failed,run.done")
    try:
        h = Harness(daemon.addresses[0], daemon)
        log = await h.run("fail", "go", agent([{"error": "the model is down"}], []), {})
        assert log.reason == "PROVIDER_ERROR"
        got = await receiver.wait_for("run.failed", "fail")
        assert (
            got["data"]["reason"] == "PROVIDER_ERROR"
            and got["data"]["run_id"] == log.events[0].run_id
        )
        assert "message" not in got["data"]  # the error's text only with include_payloads
        assert all(verify(hd, body, SECRET) for hd, body in receiver.got)
        await h.close()
    finally:
        await daemon.stop()


async def test_a_failed_runs_caller_hears_of_it_once_its_notification_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No store write records a failure, so run.failed is written to the outbox on its own:
    the caller's stream reports the failure only once that write is done, so a caller
    told of a failure knows the notification is kept (a daemon killed before it had not
    failed the run for anyone). The write is slowed down here; the receiver is down, so the
    entry stays in the outbox to be seen."""
    receiver = Receiver(free_port())  # never started
    daemon = await start_daemon(tmp_path, receiver.url, webhook_events="run.failed")
    assert daemon.notifier is not None
    put = daemon.notifier.put

    async def slow_put(*args: Any, **kw: Any) -> None:
        await asyncio.sleep(0.5)
        await put(*args, **kw)

    monkeypatch.setattr(daemon.notifier, "put", slow_put)
    try:
        h = Harness(daemon.addresses[0], daemon)
        log = await h.run("fail-kept", "go", agent([{"error": "the model is down"}], []), {})
        assert log.reason == "PROVIDER_ERROR"
        kept = [
            json.loads(decode_entry(q.data)[0]) for q in await daemon.store.queued_inputs(OUTBOX)
        ]
        assert [(b["type"], b["data"]["session_id"]) for b in kept] == [("run.failed", "fail-kept")]
        await h.close()
    finally:
        await daemon.stop()
