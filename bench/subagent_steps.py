#!/usr/bin/env python3
"""Sub-agent steps against lead steps: the daemon's CPU per step, and bytes on disk of a
session with many tasks (not a test; issue 15's targets).

One daemon (``luoshod serve``, a SQLite file in a temporary directory: every save
durable) runs two kinds of sessions side by side, in rounds that alternate their order:

  * lead      a lead agent of TOOL_STEPS client tool steps, then its final text;
  * subagent  a lead whose one turn delegates to a sub-agent (the ``task`` tool) of
              TOOL_STEPS client tool steps and its final text, then the lead's final text.

The figure is the daemon process's CPU (user + system, from /proc) per model step of the
whole session (a sub-agent kind's session makes TOOL_STEPS + 3 model calls); each round
gives the ratio subagent/lead, the result is the median of the rounds. Target: at most
1.2x.

Then sessions of TASKS tasks of TOOL_STEPS steps each run on a daemon over each embedded
durable store, SQLite and LMDB (their scripts in the daemon's ``--scripts-dir``, so
that its agent spec is the size of a real one, not a 50-turn script repeated in every
checkpoint header), and a session's bytes are compared with its raw transcript (every
message's JSON, the lead's and every sub-agent's). Two such sessions run one after the
other on the same store, and the store's files are measured empty (a daemon started on a
new store and stopped: its tables and indexes, a page each), after the first session and
after the second. The second session's bytes — the files after it minus the files before
it — are what a session adds to a store in use, and the target is on them: at most 1.5x,
on each store. The first session's (files minus empty) are printed beside them: they
also hold what the store itself takes once in use, chiefly LMDB's free pages (its
copy-on-write B-trees keep ~32 pages of the file free for the next writes, whatever the
number of sessions: 33, 30 and 33 after each of three sessions). Each is printed part by
part (SQLite: ``dbstat``; LMDB: each named database's pages): the message log (every
level's messages, each written once, the agent spec among them, with its index), the
checkpoint headers (the latest and the 50 history entries), the event log for Watch (the
newest 1000 events), the other tables (leases, request records) and the free pages; then
the empty store and the whole file. The exit status is 1 when a target is not met.

    .venv/bin/python bench/subagent_steps.py            # 5 rounds of 16 sessions a kind
    .venv/bin/python bench/subagent_steps.py --quick    # 2 rounds of 4
    .venv/bin/python bench/subagent_steps.py --rounds 0 # the bytes alone
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import PYTHON, ServerProcess, free_port
from _common import run_sessions as common_run_sessions

from luosho.client import AsyncClient
from luosho.v1 import agent_pb2

TOOL_STEPS = 10
TASKS = 50
CPU_TARGET = 1.2
BYTES_TARGET = 1.5
KINDS = ("lead", "subagent")


def worker_script() -> list[dict[str, Any]]:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "work", "arguments": {"i": k}}]} for k in range(TOOL_STEPS)
    ]
    return [*script, {"text": "done"}]


def worker_agent(model: str) -> agent_pb2.AgentSpec:
    return agent_pb2.AgentSpec(
        model=model,
        max_steps=TOOL_STEPS + 5,
        model_settings_json=json.dumps({"script": worker_script()}),
        tools=[agent_pb2.ToolSpec(name="work", input_schema_json='{"type":"object"}')],
    )


def lead_script(tasks: int) -> list[dict[str, Any]]:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "task", "arguments": {"agent": "worker", "prompt": f"job {k}"}}]}
        for k in range(tasks)
    ]
    return [*script, {"text": "all delegated"}]


def delegating_agent(tasks: int, *, scripts_dir: Path | None = None) -> agent_pb2.AgentSpec:
    """The lead of ``tasks`` tasks; with ``scripts_dir``, its and its worker's scripts are
    written there (``lead.json``, ``worker.json``) instead of into the spec."""
    worker = worker_agent("scripted:worker")
    settings = json.dumps({"script": lead_script(tasks)})
    if scripts_dir is not None:
        (scripts_dir / "lead.json").write_text(json.dumps(lead_script(tasks)))
        (scripts_dir / "worker.json").write_text(json.dumps(worker_script()))
        worker.model_settings_json, settings = "", ""
    spec = agent_pb2.AgentSpec(
        model="scripted:lead", max_steps=tasks + 5, model_settings_json=settings
    )
    spec.subagents.add(name="worker", description="does the work", agent=worker)
    return spec


AGENTS = {"lead": worker_agent("scripted:bench"), "subagent": delegating_agent(1)}


async def work(args: dict[str, Any]) -> dict[str, Any]:
    return {"ok": args.get("i")}


async def run_sessions(
    address: str, agent: agent_pb2.AgentSpec, sessions: int, concurrency: int
) -> int:
    """Run ``sessions`` sessions of ``agent``; the model steps they made."""
    return await common_run_sessions(address, agent, sessions, concurrency, {"work": work})


#: The stores whose bytes are measured, by the URL of a store named ``name`` in ``tmp``.
STORES = {
    "sqlite": lambda tmp, name: f"sqlite://{tmp / (name + '.db')}",
    "lmdb": lambda tmp, name: f"lmdb://{tmp / name}",
}


def daemon(tmp: Path, name: str, *extra: str, store: str = "sqlite") -> ServerProcess:
    port = free_port()
    return ServerProcess(
        name,
        [
            PYTHON,
            "-m",
            "luoshod",
            "serve",
            "--listen",
            f"127.0.0.1:{port}",
            "--store",
            STORES[store](tmp, name),
            "--log-level",
            "WARNING",
            *extra,
        ],
        port,
        tmp / f"{name}.log",
    )


async def cpu_rounds(opts: argparse.Namespace, tmp: Path) -> list[dict[str, float]]:
    server = daemon(tmp, "cpu")
    await server.start()
    try:
        for kind in KINDS:  # warm up: connections, caches
            await run_sessions(server.address, AGENTS[kind], 2, 2)
        rows = []
        for r in range(opts.rounds):
            per_step: dict[str, float] = {}
            for kind in KINDS[r % 2 :] + KINDS[: r % 2]:
                cpu = server.cpu_seconds()
                steps = await run_sessions(
                    server.address, AGENTS[kind], opts.sessions, opts.concurrency
                )
                per_step[kind] = (server.cpu_seconds() - cpu) / steps
            rows.append(per_step)
            print(
                f"  round {r + 1}: "
                + ", ".join(f"{k} {v * 1e3:.2f} ms CPU/step" for k, v in per_step.items()),
                file=sys.stderr,
            )
        return rows
    finally:
        await server.stop()


#: What holds a store's bytes, by table and index (SQLite, ``dbstat``) or named database
#: (LMDB).
PARTS = {
    "sqlite": {
        "message log": ("messages", "sqlite_autoindex_messages_1", "logs", "logs_by_session"),
        "checkpoint headers": (
            "sessions",
            "sessions_by_status",
            "sqlite_autoindex_sessions_1",
            "history",
            "history_by_session",
        ),
        "event log": ("events", "events_by_session", "event_logs", "sqlite_autoindex_event_logs_1"),
    },
    "lmdb": {
        "message log": ("chunks", "logs"),
        "checkpoint headers": ("sessions", "by_status", "history", "history_ends"),
        "event log": ("events", "event_counts"),
    },
}
OTHER = "other tables"
FREE = "free pages"


def sqlite_parts(path: Path) -> tuple[int, dict[str, int]]:
    """(bytes of the store's files, bytes by part) of a closed SQLite store."""
    disk = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    with sqlite3.connect(path) as conn:
        sizes = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0] * page_size
    conn.close()
    parts = {
        part: sum(sizes.pop(name, 0) for name in names) for part, names in PARTS["sqlite"].items()
    }
    parts[FREE] = free
    parts[OTHER] = disk - sum(parts.values())
    return disk, parts


def lmdb_parts(path: Path) -> tuple[int, dict[str, int]]:
    """(bytes of the store's data file, bytes by part) of a closed LMDB store: each named
    database's pages (branch, leaf, overflow), the main database's and the pages of the
    file that none of them uses (free, or the free list's own)."""
    import lmdb

    disk = (path / "data.mdb").stat().st_size
    env = lmdb.open(str(path), readonly=True, lock=False, max_dbs=64, subdir=True)
    try:
        page = env.stat()["psize"]
        used = {"main": env.stat()["leaf_pages"] + env.stat()["branch_pages"]}
        with env.begin() as txn:
            names = [bytes(k) for k, _ in txn.cursor()]
        for name in names:
            db = env.open_db(name, create=False)
            with env.begin() as txn:
                st = txn.stat(db)
            used[name.decode()] = st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"]
        # The two meta pages at the start of the file.
        used["meta pages"] = 2
    finally:
        env.close()
    parts = {
        part: page * sum(used.pop(n, 0) for n in names_) for part, names_ in PARTS["lmdb"].items()
    }
    parts[OTHER] = page * sum(used.values())
    parts[FREE] = disk - sum(parts.values())
    return disk, parts


def store_parts(tmp: Path, name: str, store: str) -> tuple[int, dict[str, int]]:
    return sqlite_parts(tmp / (name + ".db")) if store == "sqlite" else lmdb_parts(tmp / name)


async def empty_store(tmp: Path, store: str) -> tuple[int, dict[str, int]]:
    """The bytes of the same store with no session: a daemon started on a new store and
    stopped (its tables and indexes, a page each, are the store's, not a session's)."""
    server = daemon(tmp, f"empty-{store}", store=store)
    await server.start()
    await server.stop()
    return store_parts(tmp, f"empty-{store}", store)


async def run_many_tasks(tmp: Path, tasks: int, store: str, session_id: str) -> int:
    """Run one session of ``tasks`` tasks of TOOL_STEPS steps each on a daemon over the
    store ``bytes-STORE`` (created by the first call, reopened by the next); the bytes of
    its raw transcript."""
    scripts = tmp / f"scripts-{store}"
    scripts.mkdir(exist_ok=True)
    server = daemon(tmp, f"bytes-{store}", "--scripts-dir", str(scripts), store=store)
    await server.start()
    raw = 0
    try:
        async with AsyncClient(server.address) as client:
            agent = delegating_agent(tasks, scripts_dir=scripts)
            run = client.execute(session_id, "go", agent=agent, tools={"work": work})
            async for event in run:
                if event.type == "model.turn":  # every assistant turn, lead's and sub-agents'
                    m = event.model_turn.message
                    raw += len(
                        json.dumps(
                            {
                                "content": m.content,
                                "tool_calls": [
                                    {"id": c.id, "name": c.name, "arguments": c.arguments_json}
                                    for c in m.tool_calls
                                ],
                            }
                        )
                    )
                elif event.type == "tool.result":
                    r = event.tool_result
                    raw += len(
                        json.dumps({"tool_call_id": r.tool_call_id, "content": r.result_json})
                    )
            if run.result is None or run.result.finish_reason != "stop":
                raise RuntimeError(f"the session {session_id} did not finish")
            # The sub-agents' prompts and instructions-free system parts: one user turn each.
            raw += tasks * len(json.dumps({"content": "job 00"}))
    finally:
        await server.stop()
    return raw


@dataclass
class Measured:
    """One store's bytes: empty, with a first session, with a second one like it."""

    raw: int
    #: (bytes of the files, bytes by part) empty, after the first session, after the second.
    empty: tuple[int, dict[str, int]]
    first: tuple[int, dict[str, int]]
    second: tuple[int, dict[str, int]]


async def bytes_on_disk(tmp: Path, tasks: int, store: str) -> Measured:
    """The bytes of ``store`` empty, then with one session of ``tasks`` tasks, then with a
    second one like it (the raw transcript is the second session's; both are alike)."""
    empty = await empty_store(tmp, store)
    await run_many_tasks(tmp, tasks, store, "many-tasks-1")
    first = store_parts(tmp, f"bytes-{store}", store)
    raw = await run_many_tasks(tmp, tasks, store, "many-tasks-2")
    second = store_parts(tmp, f"bytes-{store}", store)
    return Measured(raw, empty, first, second)


def print_bytes(store: str, tasks: int, m: Measured) -> bool:
    """Print one store's bytes part by part; whether the target is met (on the second
    session: the bytes a session adds to a store in use)."""
    (e_disk, e_parts), (f_disk, f_parts), (s_disk, s_parts) = m.empty, m.first, m.second
    raw = m.raw
    first, second = f_disk - e_disk, s_disk - f_disk
    ok = second <= BYTES_TARGET * raw
    print(
        f"bytes on disk of a session of {tasks} tasks x {TOOL_STEPS} steps ({store}, store "
        "closed), "
        f"raw transcript {raw / 1e3:.1f} kB:"
    )
    print(f"  {'':<30} {'first session':>19}   {'second session':>19}")
    print(f"  {'':<30} {'(files - empty)':>19}   {'(files - first)':>19}")

    def row(name: str, a: int, b: int, note: str = "") -> None:
        print(
            f"  {name:<30} {a / 1e3:7.1f} kB {a / raw:5.2f}x   {b / 1e3:7.1f} kB "
            f"{b / raw:5.2f}x{note}"
        )

    row("the session", first, second, f"   target <= {BYTES_TARGET}x: {'met' if ok else 'NOT met'}")
    for part in s_parts:
        row("  " + part, f_parts[part] - e_parts[part], s_parts[part] - f_parts[part])
    row(
        "the session but its event log",
        first - (f_parts["event log"] - e_parts["event log"]),
        second - (s_parts["event log"] - f_parts["event log"]),
        "   (not the target)",
    )
    print(
        f"  {'the empty store':<30} {e_disk / 1e3:7.1f} kB          (its tables and indexes, a "
        "page each)"
    )
    print(f"  {'the whole file, two sessions':<30} {s_disk / 1e3:7.1f} kB")
    return ok


async def main_async(opts: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="luoshod-bench-sub-") as tmp_dir:
        tmp = Path(tmp_dir)
        rows = await cpu_rounds(opts, tmp) if opts.rounds else []
        measured = {store: await bytes_on_disk(tmp, opts.tasks, store) for store in opts.stores}
    cpu_ok = True
    if rows:
        ms = {k: statistics.median(row[k] for row in rows) * 1e3 for k in KINDS}
        ratio = statistics.median(row["subagent"] / row["lead"] for row in rows)
        cpu_ok = ratio <= CPU_TARGET
        print(
            f"daemon CPU per model step (sqlite), {opts.sessions} sessions x {TOOL_STEPS} tool "
            "steps a kind, "
            f"{opts.concurrency} at once, median of {opts.rounds} rounds:"
        )
        print(f"  lead step                     {ms['lead']:6.2f} ms")
        print(
            f"  sub-agent session step        {ms['subagent']:6.2f} ms   {ratio:5.2f}x   "
            f"target <= {CPU_TARGET}x: {'met' if cpu_ok else 'NOT met'}"
        )
    bytes_ok = True
    for store, m in measured.items():
        bytes_ok = print_bytes(store, opts.tasks, m) and bytes_ok
    return 0 if cpu_ok and bytes_ok else 1


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--sessions", type=int, default=16)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--tasks", type=int, default=TASKS)
    p.add_argument(
        "--stores",
        type=lambda v: v.split(","),
        default=list(STORES),
        help="the stores whose bytes are measured (default: sqlite,lmdb)",
    )
    p.add_argument("--quick", action="store_true", help="2 rounds of 4 sessions, 10 tasks")
    opts = p.parse_args()
    if opts.quick:
        opts.rounds, opts.sessions, opts.tasks = 2, 4, 10
    return asyncio.run(main_async(opts))


if __name__ == "__main__":
    sys.exit(main())
