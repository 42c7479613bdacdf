"""R91: a hash chain over each session's saves, and ``luoshod store verify``.

A normal run (tools, a sub-agent, a continued run, a fork, a rollback-free restart)
verifies clean on every driver; a stored save changed behind the daemon's back (one
message's content, or one header field) is named by ``luoshod store verify`` run as a
process, exit 1, on SQLite, LMDB and PostgreSQL. The memory store cannot be changed from
outside its process, so only its clean case is tested (in process)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from luosho.v1 import agent_pb2 as pb
from luoshod.domain import Checkpoint, Message, Role, StoredEvent
from luoshod.engine.forking import fork
from luoshod.engine.rollbacks import rollback
from luoshod.store import store_from_url
from luoshod.store.kit import chain, codec
from luoshod.store.verify import check, verify_session
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, agent, calls
from tests.support.subagents import lead, lookup, researcher, task

pytestmark = pytest.mark.asyncio


def add(args: dict) -> dict:
    return {"sum": sum(v for v in args.values() if isinstance(v, int))}


SCRIPT = [
    calls(("add", {"a": 10, "b": 20})),
    calls(("add", {"a": 3}), ("add", {"a": 4})),
    {"text": "the sums are thirty, three and four"},
    calls(("add", {"a": 5})),
    {"text": "and 5"},
]


async def a_session(h: Harness, sid: str) -> None:
    """Two runs of a few steps with tools, the second continuing the first."""
    spec = agent(SCRIPT)
    first = await h.run(sid, "add some numbers", spec, {"add": add})
    assert first.error is None and first.done.finish_reason == pb.FINISH_REASON_STOP
    second = await h.run(sid, "and one more", spec, {"add": add})
    assert second.error is None and second.done.finish_reason == pb.FINISH_REASON_STOP


def verify(url: str, *sessions: str, as_json: bool = False) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "luoshod", "store", "verify", "--store", url, *sessions]
    return subprocess.run(
        args + (["--json"] if as_json else []), capture_output=True, text=True, timeout=60
    )


# -- (1) a normal run verifies clean -----------------------------------------------------


async def test_r91_a_run_with_tools_and_a_subagent_verifies_clean(h: Harness, store_url: str):
    await a_session(h, "r91-tools")
    sub = researcher([calls(("lookup", {"q": "tides"})), {"text": "the moon"}])
    spec = lead([calls(task("researcher", "why tides?")), {"text": "done"}], [sub])
    log = await h.run("r91-sub", "why?", spec, {"lookup": lookup})
    assert log.error is None and log.done.finish_reason == pb.FINISH_REASON_STOP
    store = h.daemon.store
    forked = await fork(store, "r91-tools", 2, clock=lambda: 1.0e9)
    # A rollback of a second run's saves is a save linked to the one it follows.
    await a_session(h, "r91-rolled")
    second_run = (await store.load("r91-rolled")).run_id  # type: ignore[union-attr]
    assert await rollback(store, None, "r91-rolled", second_run, 2.0e9)
    assert (await store.load("r91-rolled")).run_id != second_run  # type: ignore[union-attr]
    for sid in ("r91-tools", "r91-sub", forked.session_id, "r91-rolled"):
        report = await verify_session(store, sid)
        assert report.state == "ok", report.line()
        assert report.checked >= 1 and report.checked == len(await store.history(sid))
        assert report.first_version == 1, report.line()  # checked from the very first save
    latest = await store.load("r91-tools")
    assert latest is not None and len(latest.chain) == 64
    fork_first = (await store.history(forked.session_id))[-1].checkpoint
    source = [e.checkpoint for e in await store.history("r91-tools") if e.step == 2][0]
    assert fork_first.chain_from == source.chain  # the fork's chain starts from its entry
    if not store_url.startswith("memory"):
        done = verify(store_url)
        assert done.returncode == 0, done.stderr
        assert f"r91-tools: ok, {report.checked}" not in done.stderr
        lines = done.stdout.splitlines()
        assert len(lines) == 4 and all(": ok, " in x for x in lines), done.stdout


async def test_r91_history_shows_each_saves_link_as_the_store_keeps_it(h: Harness) -> None:
    """A client reads the chain without the store: each History entry carries its save's
    link, the store's own, one per save and each different."""
    await a_session(h, "r91-shown")
    answer = await h.stub.History(pb.HistoryRequest(session_id="r91-shown", page_size=100))
    stored = {
        e.checkpoint.version: e.checkpoint.chain for e in await h.daemon.store.history("r91-shown")
    }
    shown = {e.version: e.chain for e in answer.entries}
    assert shown == stored and len(shown) >= 2
    assert all(len(link) == 64 for link in shown.values())
    assert len(set(shown.values())) == len(shown)


async def test_r91_with_a_history_limit_the_check_starts_at_the_oldest_kept_save(
    h: Harness,
) -> None:
    log = await h.run("r91-pruned", "add", agent(SCRIPT), {"add": add}, history_limit=3)
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    report = await verify_session(h.daemon.store, "r91-pruned")
    assert report.state == "ok", report.line()
    assert report.first_version > 1 and report.checked == 2  # 3 kept: the oldest anchors
    assert f"version {report.first_version} is the oldest kept save" in report.line()


@pytest.mark.parametrize("kind", ["sqlite", "lmdb"])
async def test_r91_a_session_verifies_clean_through_a_daemon_restart(tmp_path: Path, kind: str):
    url = f"sqlite:///{tmp_path}/luoshod.db" if kind == "sqlite" else f"lmdb://{tmp_path}/lmdb"
    spec = agent(SCRIPT)
    daemon = DaemonProcess("--store", url).start()
    try:
        h = Harness(daemon.address)
        first = await h.run("r91-restart", "add some numbers", spec, {"add": add})
        assert first.done.finish_reason == pb.FINISH_REASON_STOP
        await h.close()
        daemon.kill9()
        daemon.stop()
        daemon = DaemonProcess("--store", url).start()
        h = Harness(daemon.address)
        second = await h.run("r91-restart", "and one more", spec, {"add": add})
        assert second.done.finish_reason == pb.FINISH_REASON_STOP
        await h.close()
        done = verify(url, "r91-restart", as_json=True)  # while the daemon serves the store
    finally:
        daemon.stop()
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)["sessions"]
    assert report["state"] == "ok" and report["first_version"] == 1
    assert report["checked"] == report["last_version"] >= 8


async def test_r91_a_chain_survives_a_copy_to_another_driver(tmp_path: Path) -> None:
    """``luoshod store copy`` writes each header as it is: the copy verifies too."""
    source, target = f"sqlite:///{tmp_path}/a.db", f"lmdb://{tmp_path}/b"
    daemon = DaemonProcess("--store", source).start()
    try:
        h = Harness(daemon.address)
        await a_session(h, "r91-copied")
        await h.close()
    finally:
        daemon.stop()
    copied = subprocess.run(
        [
            sys.executable,
            "-m",
            "luoshod",
            "store",
            "copy",
            "--from",
            source,
            "--to",
            target,
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert copied.returncode == 0, copied.stderr
    done = verify(target, as_json=True)
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)["sessions"]
    assert report["state"] == "ok" and report["first_version"] == 1 and report["checked"] >= 8
    assert report["head"] == json.loads(verify(source, as_json=True).stdout)["sessions"][0]["head"]


# -- (2) an edit behind the daemon's back is named ---------------------------------------

RESULT = b'{"sum": 30}'  # the first tool result, in one stored record only
EDITED = b'{"sum": 31}'  # same length: the LMDB log's byte counts stay right
STATUS = "awaiting-approval"  # a status no save of the session has


async def saves_of(url: str, sid: str) -> list[Checkpoint]:
    store = store_from_url(url)
    await store.open()
    try:
        return [e.checkpoint for e in reversed(await store.history(sid))]
    finally:
        await store.close()


def first_with_result(saves: list[Checkpoint]) -> Checkpoint:
    """The save that added the first tool result."""
    return next(cp for cp in saves if any(m.content == RESULT.decode() for m in cp.messages))


def bumped(header: str | bytes) -> dict:
    h = json.loads(codec.header_json(header))
    h["usage"]["total_tokens"] = h["usage"].get("total_tokens", 0) + 1000
    return h


def sqlite_edit(path: str, sid: str, what: str, version: int) -> int:
    db = sqlite3.connect(path)
    try:
        if what == "message":
            rows = db.execute(
                "SELECT m.log_id, m.idx, m.body FROM messages m JOIN logs l USING (log_id) "
                "WHERE l.session_id = ?",
                (sid,),
            ).fetchall()
            hits = [(log_id, idx, bytes(body)) for log_id, idx, body in rows if RESULT in body]
            for log_id, idx, body in hits:
                db.execute(
                    "UPDATE messages SET body = ? WHERE log_id = ? AND idx = ?",
                    (body.replace(RESULT, EDITED), log_id, idx),
                )
        elif what == "status":  # the row's own column, which History shows
            hits = [
                row_id
                for row_id, header in db.execute(
                    "SELECT id, header FROM history WHERE session_id = ?", (sid,)
                )
                if json.loads(codec.header_json(header))["version"] == version
            ]
            for row_id in hits:
                db.execute("UPDATE history SET status = ? WHERE id = ?", (STATUS, row_id))
        else:
            hits = [
                (row_id, header)
                for row_id, header in db.execute(
                    "SELECT id, header FROM history WHERE session_id = ?", (sid,)
                )
                if json.loads(codec.header_json(header))["version"] == version
            ]
            for row_id, header in hits:
                db.execute(
                    "UPDATE history SET header = ? WHERE id = ?",
                    (codec.compact_header(json.dumps(bumped(header))), row_id),
                )
        db.commit()
        return len(hits)
    finally:
        db.close()


def lmdb_edit(path: str, sid: str, what: str, version: int) -> int:
    import lmdb

    env = lmdb.open(path, subdir=True, max_dbs=32)
    hits = 0
    try:
        chunks = env.open_db(b"chunks", create=False)  # every log's stream
        history = env.open_db(b"history", create=False)
        with env.begin(write=True) as txn:
            if what == "message":
                logs = env.open_db(b"logs", create=False, txn=txn)
                prefix = sid.encode() + b"\0"
                mine = {key[len(prefix) :] for key, _ in txn.cursor(logs) if key.startswith(prefix)}
                for key, value in list(txn.cursor(chunks)):
                    if key[:8] in mine and RESULT in value:  # a chunk key: u64 log id, u32 n
                        txn.put(key, value.replace(RESULT, EDITED), db=chunks)
                        hits += 1
            else:
                from luoshod_lmdb.layout import Row

                for key, value in list(txn.cursor(history)):
                    row = Row.decode(value)
                    if key.startswith(sid.encode() + b"\0") and row.version == version:
                        h = bumped(row.header)
                        if what == "status":  # in the header (LMDB keeps no column of it)
                            h = json.loads(codec.header_json(row.header))
                            h["status"] = STATUS
                        header = codec.compact_header(json.dumps(h))
                        row = Row(
                            row.log_id, row.count, row.nbytes, row.version, row.status, header
                        )
                        txn.put(key, row.encode(), db=history)
                        hits += 1
    finally:
        env.close()
    return hits


def postgres_edit(url: str, sid: str, what: str, version: int) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        if what == "message":
            rows = conn.execute(
                "SELECT m.log_id, m.idx, m.body FROM messages m JOIN logs l USING (log_id) "
                "WHERE l.session_id = %s",
                (sid,),
            ).fetchall()
            hits = [(log_id, idx, bytes(body)) for log_id, idx, body in rows if RESULT in body]
            for log_id, idx, body in hits:
                conn.execute(
                    "UPDATE messages SET body = %s WHERE log_id = %s AND idx = %s",
                    (body.replace(RESULT, EDITED), log_id, idx),
                )
        elif what == "status":  # the row's own column, which History shows
            hits = conn.execute(
                "UPDATE history SET status = %s WHERE session_id = %s "
                "AND (header->>'version')::bigint = %s RETURNING id",
                (STATUS, sid, version),
            ).fetchall()
        else:
            hits = conn.execute(
                "UPDATE history SET header = (jsonb_set(header::jsonb, '{usage,total_tokens}', "
                "to_jsonb(coalesce((header->'usage'->>'total_tokens')::bigint, 0) + 1000)))"
                "::json WHERE session_id = %s AND (header->>'version')::bigint = %s "
                "RETURNING id",
                (sid, version),
            ).fetchall()
    return len(hits)


EDITS = {"sqlite": sqlite_edit, "lmdb": lmdb_edit, "postgres": postgres_edit}


@pytest.mark.parametrize("what", ["message", "header", "status"])
@pytest.mark.parametrize("kind", ["sqlite", "lmdb", "postgres"])
async def test_r91_verify_names_a_save_edited_behind_the_daemons_back(
    tmp_path: Path, kind: str, what: str, request: pytest.FixtureRequest
) -> None:
    if kind == "postgres":
        url = request.getfixturevalue("postgres_url")
        where = url
    elif kind == "sqlite":
        where = f"{tmp_path}/luoshod.db"
        url = f"sqlite:///{where}"
    else:
        where = f"{tmp_path}/lmdb"
        url = f"lmdb://{where}"
    sid = f"r91-{kind}-{what}"
    daemon = DaemonProcess("--store", url).start()
    try:
        h = Harness(daemon.address)
        await a_session(h, sid)
        await a_session(h, "r91-bystander")  # another session: left alone, still ok
        await h.close()
        saves = await saves_of(url, sid)
        # The save that added the first tool result, or a save in the middle (not the latest).
        target = first_with_result(saves) if what == "message" else saves[len(saves) // 2]
        clean = verify(url)
        assert clean.returncode == 0, clean.stderr
        # The edit, with the driver's own library, while the daemon serves the store.
        assert EDITS[kind](where, sid, what, target.version) >= 1
        done = verify(url)
        alone = verify(url, sid, as_json=True)
    finally:
        daemon.stop()
    assert done.returncode == 1, (done.stdout, done.stderr)
    bad = f"{sid}: BAD at version {target.version} (step {target.step_index}): "
    assert done.stderr.startswith(bad), done.stderr
    assert len(done.stderr.splitlines()) == 1  # the first bad save only
    if what == "message":  # it names the record the edit changed
        index = next(i for i, m in enumerate(target.messages) if m.content == RESULT.decode())
        assert f"messages {index + 1}-" in done.stderr or f"message {index + 1})" in done.stderr
    assert "r91-bystander: ok, " in done.stdout
    assert alone.returncode == 1
    (report,) = json.loads(alone.stdout)["sessions"]
    assert report["state"] == "bad"
    assert report["bad"]["version"] == target.version


async def test_r91_verify_names_the_save_that_added_an_edited_subagent_record(
    tmp_path: Path,
) -> None:
    """A sub-agent's messages are records of the session's log too (R59): an edit of one
    is named at the save that added it."""
    where = tmp_path / "luoshod.db"
    url = f"sqlite:///{where}"
    sub = researcher([calls(("lookup", {"q": "tides"})), {"text": "the moon"}])
    spec = lead([calls(task("researcher", "why tides?")), {"text": "done"}], [sub])
    daemon = DaemonProcess("--store", url).start()
    try:
        h = Harness(daemon.address)
        log = await h.run("r91-sub", "why?", spec, {"lookup": lookup})
        assert log.done.finish_reason == pb.FINISH_REASON_STOP
        await h.close()
        fact = json.dumps(lookup({"q": "tides"})).encode()
        saves = await saves_of(url, "r91-sub")
        target = next(
            cp
            for cp in saves
            if any(m.content == fact.decode() for t in cp.all_tasks() for m in t.messages)
        )
        db = sqlite3.connect(where)
        try:
            rows = db.execute("SELECT log_id, idx, body FROM messages").fetchall()
            hits = [(a, b, bytes(c)) for a, b, c in rows if fact in bytes(c)]
            assert len(hits) == 1
            for log_id, idx, body in hits:
                db.execute(
                    "UPDATE messages SET body = ? WHERE log_id = ? AND idx = ?",
                    (body.replace(b"tides", b"TIDES"), log_id, idx),
                )
            db.commit()
        finally:
            db.close()
        done = verify(url)
    finally:
        daemon.stop()
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"r91-sub: BAD at version {target.version} (step {target.step_index}): "
    ), done.stderr
    assert "task_1 messages" in done.stderr


async def test_r91_the_memory_store_cannot_be_edited_from_outside_so_only_runs_are_checked(
    tmp_path: Path,
) -> None:
    """``memory://`` lives in its daemon's process: nothing outside it can change a save,
    and ``luoshod store verify`` has nothing to open (a new memory store holds nothing)."""
    done = verify("memory://")
    assert done.returncode == 2 and "does not exist" in done.stderr


# -- the checks themselves, without a store ----------------------------------------------


async def test_r91_a_session_without_saves_is_not_an_error_but_a_named_unknown_one_is(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/q.db"
    store = store_from_url(url)
    await store.open()
    try:
        await store.append_events("events-only", [StoredEvent(1, b"an event")])
    finally:
        await store.close()
    whole = verify(url)
    assert whole.returncode == 0, whole.stderr
    assert "events-only: no saves kept" in whole.stdout
    named = verify(url, "nobody")
    assert named.returncode == 2 and "nobody: no such session" in named.stderr


async def test_r91_a_save_without_a_chain_reads_as_none_recorded() -> None:
    cps = [Checkpoint("old", [Message(Role.USER, "hi")], version=v) for v in (1, 2)]
    assert check("old", cps, cps[-1]).state == "no-chain"


async def test_r91_the_oldest_kept_save_is_where_the_check_starts_and_a_gap_is_bad() -> None:
    cps = []
    for v in range(1, 6):
        cp = Checkpoint("s", [Message(Role.USER, f"m{i}") for i in range(v)], version=v)
        cp.chain = cps[-1].chain if cps else ""
        cp.chain = chain.link_save(cp, v - 1)
        cps.append(cp)
    assert check("s", cps, cps[-1]).checked == 5
    pruned = check("s", cps[2:], cps[-1])  # the history limit pruned versions 1 and 2
    assert pruned.state == "ok" and pruned.checked == 2 and "oldest kept" in pruned.line()
    gap = check("s", cps[:2] + cps[3:], cps[-1])
    assert gap.state == "bad" and gap.bad is not None and gap.bad.version == 4
    cps[3].usage.total_tokens = 7  # a header field changed
    changed = check("s", cps, cps[-1])
    assert changed.state == "bad" and changed.bad is not None and changed.bad.version == 4
