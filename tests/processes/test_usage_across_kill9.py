"""The usage a limit counts is exact across ``kill -9`` (docs/reference/rules.md R78, R79):
a daemon killed between a paid model call and the next, on an SQLite file and on LMDB,
restarted, and the run resumed — the run's and the session's usage are the sum of the
turns the transcript holds, each paid once, and the limit still stops the run where it
should."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import Harness, agent, assert_valid_transcript, calls

pytestmark = pytest.mark.asyncio

PRICE = {"prompt_per_mtok": 1000.0, "completion_per_mtok": 2000.0}
#: Turn k reports 100 + k prompt and 10 + k completion tokens: each turn's usage differs, so
#: a turn counted twice, or lost, shows in the sums.
TURNS = [
    {**calls(("add", {"a": k})), "usage": {"prompt_tokens": 100 + k, "completion_tokens": 10 + k}}
    for k in range(6)
]


def spec(model_calls: int) -> pb.AgentSpec:
    s = agent(TURNS)
    s.model_settings_json = json.dumps({"script": TURNS, "price": PRICE, "max_tokens": 20})
    s.limits.run.model_calls = model_calls
    s.limits.session.cost_usd = 10.0
    return s


def paid(k: int) -> tuple[int, int, float]:
    prompt, completion = 100 + k, 10 + k
    return (
        prompt,
        completion,
        (prompt * PRICE["prompt_per_mtok"] + completion * PRICE["completion_per_mtok"]) / 1e6,
    )


@pytest.mark.parametrize("store", ["sqlite", "lmdb"])
async def test_r78_usage_is_exact_after_a_kill9_between_paid_model_calls(
    tmp_path: Path, store: str
) -> None:
    log_file = tmp_path / "calls.jsonl"
    url = db_url(tmp_path) if store == "sqlite" else f"lmdb://{tmp_path}/lmdb"
    args = ("--store", url, "--scripted-call-log", str(log_file), "--lease-owner", "d1")
    first = DaemonProcess(*args).start()
    try:
        h = Harness(first.address, call_log=log_file)

        async def answer_then_kill(e: pb.Event) -> None:
            if e.type != "tool.call":
                return
            if e.tool_call.call.id == "call_2_0":  # the third call is paid and saved
                first.kill9()
                return
            await h.submit("paid", e.tool_call.call.id, "1")

        log = await h.run("paid", "go", spec(5), on_event=answer_then_kill)
        assert log.error is not None and log.error.code() == grpc.StatusCode.UNAVAILABLE
        await h.close()
    finally:
        first.stop()

    second = DaemonProcess(*args).start()
    try:
        h = Harness(second.address, call_log=log_file)
        cp = await h.get("paid")
        assert cp.usage.model_calls == 3 and h.model_calls("paid") == 3
        want = [paid(k) for k in range(3)]
        assert cp.usage.prompt_tokens == sum(p for p, _, _ in want)
        assert cp.usage.cost_usd == pytest.approx(sum(c for _, _, c in want))
        # Resumed: the saved turn's call runs, then calls 4 and 5; the limit (5) stops the
        # sixth, counted from the usage saved before the kill, not from zero.
        log = await h.run("paid", None, spec(5), {"add": lambda a: 1}, resume=True)
        assert log.error is None, log.error
        assert log.done.finish_reason == pb.FINISH_REASON_BUDGET_EXCEEDED
        assert h.model_calls("paid") == 5  # every turn generated once
        cp = await h.get("paid")
        assert_valid_transcript(cp)
        turns = sum(1 for m in cp.messages if m.role == pb.ROLE_ASSISTANT)
        want = [paid(k) for k in range(turns)]
        for usage in (cp.usage, cp.total_usage):
            assert usage.model_calls == turns == 5
            assert usage.prompt_tokens == sum(p for p, _, _ in want)
            assert usage.completion_tokens == sum(c for _, c, _ in want)
            assert usage.cost_usd == pytest.approx(sum(c for _, _, c in want))
        await h.close()
    finally:
        second.stop()
