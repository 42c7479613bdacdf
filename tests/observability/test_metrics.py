"""``luoshod serve --metrics-listen``: a real daemon process, real runs, and ``/metrics``
scraped over HTTP and parsed with Prometheus' own parser."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from luosho.client import Agent, CheckpointNotFoundError, Client, Compaction, SubAgent, Tool
from tests.support.daemon_process import DaemonProcess, db_url

SCRIPT = [
    {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
    {"text": "3"},
]
GATED = [{"tool_calls": [{"name": "pay", "arguments": {"eur": 5}}]}, {"text": "paid"}]

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[DaemonProcess, str]]:
    d = DaemonProcess("--store", db_url(tmp_path), "--metrics-listen", "127.0.0.1:0").start()
    try:
        line = d.proc.stdout.readline().strip()  # type: ignore[union-attr]
        assert line.startswith("luoshod metrics on http://127.0.0.1:"), line
        yield d, line.removeprefix("luoshod metrics on ")
    finally:
        d.stop()


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain; version=")
        text = resp.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_move_with_runs(served: tuple[DaemonProcess, str]) -> None:
    daemon, url = served
    before = scrape(url)
    assert value(before, "luoshod_active_runs") == 0
    assert value(before, "luoshod_pending_approvals") == 0
    assert value(before, "luoshod_store_size_bytes", driver="sqlite") > 0

    with Client(daemon.address) as client:
        during: list[float] = []

        def add(a: dict) -> int:  # scraped while the run waits for this tool
            mid = scrape(url)
            during.extend([value(mid, "luoshod_active_runs"), value(mid, "luoshod_leases_held")])
            return a["a"] + a["b"]

        done = client.execute(
            "m-1",
            "add",
            agent=Agent("scripted:t", tools=[Tool("add")], model_settings={"script": SCRIPT}),
            tools={"add": add},
        ).result()
        assert during == [1, 1]  # the run, and its session's lease in the store
        assert done.final_text == "3"
        paused = client.execute(
            "m-2",
            "pay",
            agent=Agent(
                "scripted:t",
                tools=[Tool("pay", needs_approval=True)],
                model_settings={"script": GATED},
            ),
        ).result()
        assert paused.finish_reason == "awaiting_approval"
        with pytest.raises(CheckpointNotFoundError):
            client.get_session("nobody")

    after = scrape(url)
    svc = "luosho.v1.AgentService"
    assert (
        value(
            after,
            "luoshod_grpc_server_handled_total",
            grpc_service=svc,
            grpc_method="Execute",
            grpc_code="OK",
        )
        == 2
    )
    assert (
        value(
            after,
            "luoshod_grpc_server_handled_total",
            grpc_service=svc,
            grpc_method="SubmitToolResult",
            grpc_code="OK",
        )
        == 1
    )
    assert (
        value(
            after,
            "luoshod_grpc_server_handled_total",
            grpc_service=svc,
            grpc_method="GetSession",
            grpc_code="NOT_FOUND",
        )
        == 1
    )
    assert (
        value(
            after,
            "luoshod_grpc_server_handling_seconds_count",
            grpc_service=svc,
            grpc_method="Execute",
        )
        == 2
    )
    assert value(after, "luoshod_runs_total", outcome="stop") == 1
    assert value(after, "luoshod_runs_total", outcome="awaiting_approval") == 1
    assert value(after, "luoshod_steps_total") == 2  # m-1's two; m-2 paused in its first
    # m-1: three saves (the turn with its tool.call, the result, the finish); m-2: one
    # (its turn and the pause together: the gated call never ran).
    assert value(after, "luoshod_store_save_seconds_count", driver="sqlite") == 4
    assert value(after, "luoshod_store_save_seconds_sum", driver="sqlite") > 0
    assert value(after, "luoshod_pending_approvals") == 1
    assert value(after, "luoshod_active_runs") == 0 and value(after, "luoshod_leases_held") == 0
    assert value(after, "luoshod_store_size_bytes", driver="sqlite") > 0


def test_only_metrics_path_is_served(served: tuple[DaemonProcess, str]) -> None:
    _, url = served
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(url.removesuffix("/metrics") + "/other", timeout=10)
    assert err.value.code == 404


def test_metrics_are_off_by_default(tmp_path: Path) -> None:
    d = DaemonProcess("--store", "memory://").start()
    try:
        assert d.proc is not None
        d.terminate()
        assert "metrics" not in d.proc.stdout.read()  # type: ignore[union-attr]
    finally:
        d.stop()


def test_r78_model_tokens_and_cost_by_model(served: tuple[DaemonProcess, str]) -> None:
    """Every model call's tokens by model and kind, and its cost by model; a sub-agent's
    calls under its own model."""
    daemon, url = served
    helper = Agent(
        "scripted:helper",
        model_settings={
            "script": [
                {
                    "text": "found",
                    "usage": {"prompt_tokens": 30, "completion_tokens": 3, "cost_usd": 0.125},
                }
            ]
        },
    )
    lead_script = [
        {
            "tool_calls": [{"name": "task", "arguments": {"agent": "helper", "prompt": "look"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 0.5},
        },
        {
            "text": "done",
            "usage": {
                "prompt_tokens": 200,
                "completion_tokens": 20,
                "cost_usd": 0.25,
                "cached_input_tokens": 150,
                "cache_write_tokens": 50,
                "reasoning_tokens": 12,
            },
        },
    ]
    with Client(daemon.address) as client:
        done = client.execute(
            "m-usage",
            "go",
            agent=Agent(
                "scripted:lead",
                model_settings={"script": lead_script},
                subagents=[SubAgent("helper", "finds", helper)],
            ),
        ).result()
        assert done.final_text == "done"
    after = scrape(url)
    tokens = "luoshod_model_tokens_total"
    assert {
        kind: value(after, tokens, model="scripted:lead", kind=kind)
        for kind in ("input", "output", "cached_input", "cache_write", "reasoning")
    } == {"input": 300, "output": 30, "cached_input": 150, "cache_write": 50, "reasoning": 12}
    assert value(after, tokens, model="scripted:helper", kind="input") == 30
    assert value(after, tokens, model="scripted:helper", kind="output") == 3
    cost = "luoshod_model_cost_usd_total"
    assert value(after, cost, model="scripted:lead") == 0.75
    assert value(after, cost, model="scripted:helper") == 0.125


def test_r85_a_summary_call_counts_under_its_model(served: tuple[DaemonProcess, str]) -> None:
    """A compaction's summary call (R85) is a model call like any: its tokens and cost
    count under the summarizing model."""
    daemon, url = served
    pages = [
        {"text": "a" * 1200, "tool_calls": [{"name": "fetch", "arguments": {"page": n}}]}
        for n in range(3)
    ] + [{"text": "read"}]
    summary = {"text": "Three pages.", "usage": {"prompt_tokens": 700, "completion_tokens": 9}}
    with Client(daemon.address) as client:
        done = client.execute(
            "m-compact",
            "read them",
            agent=Agent(
                "scripted:reader",
                tools=[Tool("fetch")],
                model_settings={"script": pages, "context_window": 1000},
                compaction=Compaction(
                    threshold=0.5, model="scripted:sum", model_settings={"script": [summary]}
                ),
            ),
            tools={"fetch": lambda a: {"body": "r" * 1500}},
        ).result()
        assert done.final_text == "read"
    after = scrape(url)
    tokens = "luoshod_model_tokens_total"
    assert value(after, tokens, model="scripted:sum", kind="input") >= 700
    assert value(after, tokens, model="scripted:sum", kind="output") >= 9
