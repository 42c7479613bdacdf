"""Issue 16: ``luoshod serve`` sizes Python's cyclic garbage collector for thousands of
waiting runs (server/gc_tuning.py): start-up objects frozen, young collections every
50,000 allocations, so the objects a run keeps across a model call are not promoted to
the oldest generation and no full collection walks every run's objects every second.
Two real daemons, one as started by default and one with ``--no-gc-tuning``, play the
same slow runs; their collections are read from their own ``/metrics``
(``python_gc_collections_total``). Counts, not times."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

import pytest

from luosho.client import AsyncClient
from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess

RUNS = 300
TURNS = 3


def collections(metrics: str) -> dict[str, float]:
    """The daemon's collections so far, by generation ("0", "1", "2")."""
    with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    found = {}
    for line in text.splitlines():
        if line.startswith("python_gc_collections_total{"):
            found[line.split('generation="')[1].split('"')[0]] = float(line.rsplit(" ", 1)[1])
    return found


@pytest.fixture
def daemons() -> Iterator[dict[str, tuple[DaemonProcess, str]]]:
    """A daemon as ``luoshod serve`` starts it and one with Python's defaults, each with
    its metrics address."""
    started: dict[str, tuple[DaemonProcess, str]] = {}
    try:
        for name, flag in (("tuned", "--gc-tuning"), ("python", "--no-gc-tuning")):
            d = DaemonProcess(
                "--store",
                "memory://",
                "--metrics-listen",
                "127.0.0.1:0",
                "--max-loop-lag-ms",
                "0",
                flag,
            ).start()
            assert d.proc is not None and d.proc.stdout is not None
            line = d.proc.stdout.readline()
            started[name] = (
                d,
                line.removeprefix("luoshod metrics on http://").removesuffix("/metrics\n"),
            )
        yield started
    finally:
        for d, _ in started.values():
            if d.proc and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    d.proc.wait(20)
            d.stop()


async def slow_runs(address: str) -> list[str]:
    """RUNS sessions at once, each TURNS model turns of 300 ms with a tool answered at
    once: what a daemon keeps alive across each model call is what gets promoted."""
    script = [
        {"tool_calls": [{"name": "work", "arguments": {"i": k}}], "delay_ms": 300}
        for k in range(TURNS - 1)
    ]
    script.append({"text": "done", "delay_ms": 300})
    agent = pb.AgentSpec(
        model="scripted:slow",
        tools=[pb.ToolSpec(name="work", input_schema_json='{"type":"object"}')],
        model_settings_json=json.dumps({"script": script}),
    )

    async with AsyncClient(address) as client:

        async def one(k: int) -> str:
            run = client.execute(
                f"gc-{k}", "go", agent=agent, tools={"work": lambda args: {"ok": args["i"]}}
            )
            async for _ in run:
                pass
            return (await run).finish_reason

        return await asyncio.gather(*(one(k) for k in range(RUNS)))


async def test_a_served_daemon_collects_young_objects_rarely_and_never_walks_all_of_them(
    daemons: dict[str, tuple[DaemonProcess, str]],
) -> None:
    spent: dict[str, dict[str, float]] = {}
    for name, (d, metrics) in daemons.items():
        before = collections(metrics)
        assert await slow_runs(d.address) == ["stop"] * RUNS
        after = collections(metrics)
        spent[name] = {gen: after[gen] - before[gen] for gen in ("0", "1", "2")}
    print(spent)
    tuned, python = spent["tuned"], spent["python"]
    # Python's defaults: a young collection every 700 allocations (~110 here, a full
    # one or two); tuned: a twentieth as many or fewer, and no full collection.
    assert python["0"] >= 40
    assert tuned["0"] * 20 <= python["0"]
    assert tuned["2"] == 0


def test_tune_freezes_the_objects_alive_and_sets_the_servers_thresholds() -> None:
    # In a process of its own: the test process's collector is left as it is.
    code = (
        "import gc; from luoshod.server import gc_tuning as t; frozen = t.tune(); "
        "assert frozen == gc.get_freeze_count() > 1000, frozen; "
        "assert gc.get_threshold() == t.THRESHOLDS == (50000, 20, 10), gc.get_threshold(); "
        "print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr
