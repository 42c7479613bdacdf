"""R74 + R75, bounded soak: sessions driven by the Python client with its default retries
while a real ``luoshod serve`` on a real SQLite file is killed (-9) and restarted at
random, again and again. Every session's transcript must hold each user input exactly
once, in order, and every tool call exactly one result.

Bounded: 30 sessions, 30 kills, well under two minutes on two cores. The daemon listens
on a Unix socket, as a sidecar does: each incarnation on the same path (a restart on the
same TCP port is refused by the start-up port check while the killed one's connections
are in TIME_WAIT, see the report of issue 21).
"""

from __future__ import annotations

import asyncio
import random
import shutil
import tempfile
import threading
from collections import Counter
from pathlib import Path

from luosho.client import Agent, AsyncClient, Tool
from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess, db_url
from tests.support.harness import assert_valid_transcript

SESSIONS = 30
KILLS = 30
MAX_INPUTS = 12  # the script below covers this many inputs
# One input's run: two tool turns, then text. The scripted model plays the turn numbered
# by the assistant turns already in the transcript, so input k plays turns 3k..3k+2.
SCRIPT = [
    turn
    for _ in range(MAX_INPUTS)
    for turn in (
        {
            "tool_calls": [
                {"name": "add", "arguments": {"a": 1}},
                {"name": "add", "arguments": {"a": 2}},
            ],
            "delay_ms": 15,
        },
        {"tool_calls": [{"name": "add", "arguments": {"a": 3}}], "delay_ms": 15},
        {"text": "sum", "delay_ms": 15},
    )
]
AGENT = Agent(
    "scripted:soak", tools=[Tool("add")], model_settings={"script": SCRIPT}, tool_concurrency=2
)


class Killer:
    """Restarts the daemon on the same port and kills it -9 after a random while, until
    told to stop and ``KILLS`` kills are done."""

    def __init__(self, args: list[str], listen: str) -> None:
        self.args, self.listen = args, listen
        self.kills = 0
        self.stop = threading.Event()
        self.daemon: DaemonProcess | None = None

    def start_daemon(self) -> None:
        d = DaemonProcess(*self.args)
        d.args[d.args.index("127.0.0.1:0")] = self.listen
        self.daemon = d.start()

    def run(self) -> None:
        rng = random.Random(21)
        while not (self.stop.is_set() and self.kills >= KILLS):
            self.stop.wait(rng.uniform(0.3, 1.5))  # up and serving for a random while
            assert self.daemon is not None
            self.daemon.kill9()
            self.daemon.stop()
            self.kills += 1
            self.start_daemon()


async def drive(client: AsyncClient, sid: str, killer: Killer, attempts: Counter[str]) -> int:
    """Inputs one after the other (each awaited to the end, retried by the client) until
    the killer has done its kills; returns how many were sent."""

    async def add(args: dict[str, int]) -> int:
        await asyncio.sleep(random.uniform(0, 0.03))  # tools of many sessions interleave
        return args["a"]

    k = 0
    while k < 2 or (killer.kills < KILLS and k < MAX_INPUTS):
        result = await client.execute(sid, f"{sid} input {k}", agent=AGENT, tools={"add": add})
        assert result.final_text == "sum" and result.status == "finished", (sid, k, result)
        attempts[sid] += result.attempts
        k += 1
    return k


async def test_r74_r75_soak_kill9_restart_with_client_retries(tmp_path: Path) -> None:
    short = Path(tempfile.mkdtemp(prefix="soak-", dir="/tmp"))  # a socket path is short
    listen = f"unix:{short}/luoshod.sock"
    args = ["--store", db_url(tmp_path), "--lease-owner", "soak"]
    killer = Killer(args, listen)
    killer.start_daemon()
    thread = threading.Thread(target=killer.run, name="killer", daemon=True)
    thread.start()
    attempts: Counter[str] = Counter()
    try:
        async with AsyncClient(listen) as client:  # the default retries
            sids = [f"soak-{i}" for i in range(SESSIONS)]
            sent = await asyncio.gather(*(drive(client, sid, killer, attempts) for sid in sids))
        killer.stop.set()
        thread.join(60)
        assert not thread.is_alive()
        assert killer.kills >= KILLS
        assert sum(attempts.values()) > sum(sent)  # the kills did break streams: retries ran

        async with AsyncClient(listen) as client:
            for sid, n in zip(sids, sent):
                cp = await client.get_session(sid)
                users = [m.content for m in cp.messages if m.role == pb.ROLE_USER]
                assert users == [f"{sid} input {k}" for k in range(n)], sid  # each once, in order
                assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
                assert_valid_transcript(cp)
                calls = [c.id for m in cp.messages for c in m.tool_calls]
                results = Counter(m.tool_call_id for m in cp.messages if m.role == pb.ROLE_TOOL)
                assert (
                    all(results[c] == 1 for c in calls) and len(results) == len(calls) == 3 * n
                ), sid
    finally:
        killer.stop.set()
        killer.kills = max(killer.kills, KILLS)  # let the thread end if the test failed early
        thread.join(60)
        if killer.daemon is not None:
            killer.daemon.stop()
        shutil.rmtree(short, ignore_errors=True)
