"""R87 with R88, the daily report worked example (docs/guides/daily-report.md): a schedule
fires at 09:00 Berlin time by the engine's moved clock, the run asks a person a question,
the answer comes over the JSON API as the console sends it, and the run finishes. And
``examples/daily_report.py`` run as written against a daemon."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from datetime import datetime
from zoneinfo import ZoneInfo

from google.protobuf import json_format

from luosho.v1 import agent_pb2 as pb
from tests.support import ROOT
from tests.support.console import QUESTION, ConsoleFactory, report_agent
from tests.support.harness import AheadClock

BERLIN = ZoneInfo("Europe/Berlin")


async def test_r87_the_daily_report_fires_asks_and_finishes_when_answered_over_http(
    make_console: ConsoleFactory,
) -> None:
    console = await make_console()
    clock = AheadClock()
    console.daemon.engine.clock = clock
    # Monday 7 December 2026, 08:59 in Berlin.
    clock.ahead = datetime(2026, 12, 7, 8, 59, tzinfo=BERLIN).timestamp() - clock()
    spec = pb.ScheduleSpec(
        name="daily-report",
        cron=pb.ScheduleCron(expression="0 9 * * 1-5", time_zone="Europe/Berlin"),
        agent=report_agent(),
        input=[pb.Message(role=pb.ROLE_USER, content="Write today's report.")],
    )
    body = {"spec": json_format.MessageToDict(spec, preserving_proto_field_name=True)}
    status, made = await console.post("/api/v1/schedules", body)
    assert status == 200, made
    assert made["schedule"]["next_fire"] == "2026-12-07T08:00:00Z"  # 09:00 CET
    status, listed = await console.get("/api/v1/schedules")
    assert [s["spec"]["name"] for s in listed["schedules"]] == ["daily-report"]
    scheduler = console.daemon.service.schedules
    await scheduler.tick()
    status, waiting = await console.get("/api/v1/approvals")
    assert waiting.get("approvals", []) == []  # not yet nine
    clock.ahead += 90
    await scheduler.tick()
    sid = "schedule:daily-report:20261207T080000Z"
    for _ in range(400):
        status, waiting = await console.get("/api/v1/approvals", params={"session_id": sid})
        if waiting.get("approvals"):
            break
        await asyncio.sleep(0.05)
    [asked] = waiting["approvals"]
    assert (asked["kind"], asked["question"]) == ("APPROVAL_KIND_QUESTION", QUESTION)
    # The console's Answer button: Resolve with the answer, the run streamed back.
    status, events = await console.post(
        f"/api/v1/approvals/{asked['approval_id']}/resolve",
        {"approved": True, "note": "", "answer": "weekly, please"},
    )
    assert status == 200, events
    done = events[-1]["event"]
    assert done["type"] == "run.done"
    assert done["run_done"]["status"] == "CHECKPOINT_STATUS_FINISHED"
    assert done["run_done"]["final_text"] == "Report sent."
    cp = await console.app.get(sid)
    answer = next(m for m in cp.messages if m.role == pb.ROLE_TOOL)
    assert json.loads(answer.content) == {"answer": "weekly, please"}
    status, listed = await console.get("/api/v1/schedules")
    shown = listed["schedules"][0]
    assert shown["fired"] == "1" and shown["last_session_id"] == sid
    assert shown["next_fire"] == "2026-12-08T08:00:00Z"
    # Pause, resume and trigger over HTTP, as the console's buttons do.
    status, paused = await console.post("/api/v1/schedules/daily-report/pause")
    assert status == 200 and paused["schedule"]["paused"] is True
    status, resumed = await console.post("/api/v1/schedules/daily-report/resume")
    assert status == 200 and not resumed["schedule"].get("paused")
    status, fired = await console.post("/api/v1/schedules/daily-report/trigger")
    assert status == 200 and fired["session_id"].startswith("schedule:daily-report:")
    status, err = await console.post("/api/v1/schedules/nope/trigger")
    assert (status, err["reason"]) == (404, "SCHEDULE_NOT_FOUND")
    status, err = await console.post(
        "/api/v1/schedules", {"spec": {**body["spec"], "name": "x", "cron": {"expression": "0 9"}}}
    )
    assert (status, err["reason"]) == (400, "INVALID_SCHEDULE")
    status, _ = await console.delete("/api/v1/schedules/daily-report")
    assert status == 200


async def test_r87_the_daily_report_example_runs_as_written(make_console: ConsoleFactory) -> None:
    console = await make_console()
    path = ROOT / "examples" / "daily_report.py"
    loaded = importlib.util.spec_from_file_location("daily_report", path)
    assert loaded is not None and loaded.loader is not None
    example = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(example)
    final = await example.main(console.daemon.addresses[0], "weekly")
    assert final == "Report sent, with the numbers the editor asked for."
    status, listed = await console.get("/api/v1/schedules")
    [shown] = listed["schedules"]
    assert (shown["spec"]["name"], shown["fired"]) == ("daily-report", "1")
    # Run again, the schedule is kept (SCHEDULE_EXISTS is expected) and fires once more.
    assert await example.main(console.daemon.addresses[0], "daily") == final
