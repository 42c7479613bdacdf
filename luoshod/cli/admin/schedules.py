"""``luoshod schedules create|list|pause|resume|delete|trigger`` (R87), through the
Python client's typed schedule methods."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from luosho.v1 import agent_pb2 as pb

from . import render
from .errors import CommandFailed

OVERLAPS = ("skip", "enqueue", "allow")
CATCH_UPS = ("latest", "all", "none")
SESSIONS = ("each-fire", "one")


def when(s: pb.Schedule) -> str:
    if s.spec.WhichOneof("when") == "cron":
        return f"{s.spec.cron.expression} ({s.spec.cron.time_zone or 'UTC'})"
    return f"every {s.spec.interval_ms / 1000:g}s"


def schedule_rows(schedules: list[pb.Schedule]) -> str:
    return render.table(
        ("SCHEDULE", "WHEN", "STATE", "NEXT FIRE (UTC)", "LAST FIRE (UTC)", "FIRED", "SKIPPED"),
        (
            (
                s.spec.name,
                when(s),
                "paused" if s.paused else "active",
                render.timestamp(s.next_fire) if s.HasField("next_fire") else "-",
                render.timestamp(s.last_fire) if s.HasField("last_fire") else "-",
                s.fired,
                s.skipped,
            )
            for s in schedules
        ),
    )


def _agent(text: str) -> Any:
    """``--agent``: the AgentSpec as JSON (proto JSON mapping), inline or ``@file``."""
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text()
        except OSError as e:
            raise CommandFailed(f"--agent: cannot read {text[1:]}: {e}") from None
    try:
        return json.loads(text)
    except ValueError as e:
        raise CommandFailed(f"--agent: not JSON: {e}") from None


def create(d: Any, args: argparse.Namespace) -> int:
    from google.protobuf import json_format

    spec = pb.AgentSpec()
    try:
        json_format.ParseDict(_agent(args.agent), spec)
    except json_format.ParseError as e:
        raise CommandFailed(f"--agent: not an AgentSpec: {e}") from None
    made = d.client.create_schedule(
        args.name,
        spec,
        args.input,
        cron=args.cron or "",
        time_zone=args.time_zone or "",
        interval_s=args.every or 0,
        overlap=args.overlap,
        catch_up=args.catch_up,
        session=args.session.replace("-", "_"),
    )
    return _one(args, made, "created")


def _one(args: argparse.Namespace, s: pb.Schedule, what: str) -> int:
    if args.json:
        render.emit(render.as_dict(s))
    else:
        nxt = render.timestamp(s.next_fire) if s.HasField("next_fire") else "none (paused)"
        print(f"schedule {s.spec.name} {what}: {when(s)}, next fire {nxt}")
    return 0


def listing(d: Any, args: argparse.Namespace) -> int:
    rows = d.client.schedules()
    if args.json:
        render.emit([render.as_dict(r) for r in rows])
    else:
        print(schedule_rows(rows) if rows else "no schedules")
    return 0


def pause(d: Any, args: argparse.Namespace) -> int:
    return _one(args, d.client.pause_schedule(args.name), "paused")


def resume(d: Any, args: argparse.Namespace) -> int:
    return _one(args, d.client.resume_schedule(args.name), "resumed")


def delete(d: Any, args: argparse.Namespace) -> int:
    d.client.delete_schedule(args.name)
    if args.json:
        render.emit({"deleted": args.name})
    else:
        print(f"schedule {args.name} deleted")
    return 0


def trigger(d: Any, args: argparse.Namespace) -> int:
    fired = d.client.trigger_schedule(args.name)
    if args.json:
        render.emit(render.as_dict(fired))
    else:
        print(f"schedule {args.name} fired: session {fired.session_id}")
    return 0


def add_schedules_commands(group: Any, command: Any) -> None:
    p = command(
        group,
        "create",
        create,
        "a new schedule: the daemon runs an agent at each fire",
        "luoshod schedules create daily-report --cron '0 9 * * 1-5' --time-zone Europe/Berlin "
        "--agent @agent.json --input 'Write the daily report'\n"
        "  luoshod schedules create ping --every 300 --agent @agent.json --input ping",
    )
    p.add_argument("name")
    p.add_argument("--cron", help="five fields: minute hour day-of-month month day-of-week")
    p.add_argument("--time-zone", metavar="ZONE", help="the cron's IANA time zone (default UTC)")
    p.add_argument("--every", type=float, metavar="SECONDS", help="an interval instead of a cron")
    p.add_argument(
        "--agent", required=True, metavar="JSON|@FILE", help="the AgentSpec, as proto JSON"
    )
    p.add_argument("--input", required=True, help="the user message each fire sends")
    p.add_argument("--overlap", choices=OVERLAPS, default="skip")
    p.add_argument("--catch-up", choices=CATCH_UPS, default="latest")
    p.add_argument("--session", choices=SESSIONS, default="each-fire")
    command(
        group, "list", listing, "every schedule and where its fires stand", "luoshod schedules list"
    )
    for word, handler, text in (
        ("pause", pause, "stop a schedule's fires until resumed"),
        ("resume", resume, "let a paused schedule fire again"),
        ("delete", delete, "delete a schedule (runs it started go on)"),
        ("trigger", trigger, "fire a schedule once now"),
    ):
        p = command(group, word, handler, text, f"luoshod schedules {word} daily-report")
        p.add_argument("name")
