"""``GET /api/v1/sessions/{id}/tasks``: a session's sub-agent tasks as a tree (R55–R65),
against a real daemon over real HTTP — finished tasks under the call that ran them, a
continued task once with each of its calls, unfinished sub-agents with their usage, the
one whose call waits for a human marked with the approval; bad input a clean 4xx."""

from __future__ import annotations

from typing import Any

import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.console import Console
from tests.support.task_trees import finished_tree, helper, lead, sub, task_call, turn

API = "/api/v1"


def shape(nodes: list[dict[str, Any]]) -> list[tuple]:
    return [
        (n["task_id"], n["name"], n["call_ids"], n["status"], n["steps"], shape(n["children"]))
        for n in nodes
    ]


async def test_finished_tasks_sit_under_the_calls_that_ran_them(console: Console) -> None:
    await finished_tree(console, "tree-1")
    status, body = await console.get(f"{API}/sessions/tree-1/tasks")
    assert status == 200, body
    assert (body["session_id"], body["status"]) == ("tree-1", "CHECKPOINT_STATUS_FINISHED")
    assert shape(body["tasks"]) == [
        (
            "task_1",
            "researcher",
            ["c-1", "c-3"],
            "finished",
            3,
            [
                ("task_2", "helper", ["c-1/h-1"], "finished", 1, []),
            ],
        ),
        ("task_3", "writer", ["c-2"], "finished", 1, []),
    ]
    (researcher, writer) = body["tasks"]
    assert researcher["path"] == ["researcher"] and researcher["children"][0]["path"] == [
        "researcher",
        "helper",
    ]
    assert researcher["children"][0]["depth"] == 2 and researcher["finish_reason"] == "stop"
    assert researcher["usage"] is None  # a finished task keeps no usage of its own


async def test_an_approval_inside_a_depth_2_subagent_marks_it_and_its_owner_waits(
    console: Console,
) -> None:
    researcher = sub(
        "researcher",
        [turn(task_call("helper", "dig", "h-1")), {"text": "researched"}],
        subagents=(
            helper(
                [turn({"name": "delete", "arguments": {"id": 1}, "id": "d-1"}), {"text": "deleted"}]
            ),
        ),
    )
    spec = lead([turn(task_call("researcher", "a", "c-1")), {"text": "done"}], researcher)
    log = await console.app.run("tree-2", "go", spec)
    assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL
    status, body = await console.get(f"{API}/sessions/tree-2/tasks")
    assert status == 200 and body["status"] == "CHECKPOINT_STATUS_AWAITING_APPROVAL"
    assert shape(body["tasks"]) == [
        (
            "task_1",
            "researcher",
            ["c-1"],
            "waiting",
            1,
            [("task_2", "helper", ["c-1/h-1"], "awaiting-approval", 1, [])],
        ),
    ]
    (researcher,) = body["tasks"]
    (waiting,) = researcher["children"]
    assert waiting["approval_id"] == log.done.approval_id and researcher["approval_id"] == ""
    assert (
        int(waiting["usage"]["model_calls"]) == 1 and int(researcher["usage"]["model_calls"]) == 1
    )

    # Decided and finished: the same two tasks, finished.
    stream = console.app.stub.Resolve(
        pb.ResolveRequest(approval_id=log.done.approval_id, approved=False)
    )
    events = [r.event async for r in stream]
    assert events[-1].run_done.finish_reason == pb.FINISH_REASON_STOP
    status, body = await console.get(f"{API}/sessions/tree-2/tasks")
    assert shape(body["tasks"]) == [
        (
            "task_1",
            "researcher",
            ["c-1"],
            "finished",
            2,
            [("task_2", "helper", ["c-1/h-1"], "finished", 2, [])],
        ),
    ]


async def test_a_session_without_subagents_has_no_tasks(console: Console) -> None:
    await console.finished_trip("plain-1")
    status, body = await console.get(f"{API}/sessions/plain-1/tasks")
    assert (status, body["tasks"]) == (200, [])


@pytest.mark.parametrize(
    ("path", "params", "http", "reason"),
    [
        ("/sessions/nobody/tasks", {}, 404, "CHECKPOINT_NOT_FOUND"),
        ("/sessions/tree-3/tasks", {"depth": "2"}, 400, "INVALID_REQUEST"),
        ("/sessions/" + "x" * 300 + "/tasks", {}, 400, "INVALID_SESSION_ID"),
    ],
)
async def test_bad_requests_are_clean_errors(
    console: Console, path: str, params: dict, http: int, reason: str
) -> None:
    await console.finished_trip("tree-3")
    status, body = await console.get(API + path, params=params)
    assert status == http, body
    assert set(body) == {"code", "reason", "message", "metadata"} and body["reason"] == reason, body
    assert "Traceback" not in body["message"]


async def test_an_unfinished_subagent_of_a_session_in_progress(console: Console) -> None:
    researcher = sub(
        "researcher",
        [turn({"name": "lookup", "arguments": {}, "id": "l-1"}), {"text": "r"}],
        ("lookup",),
    )
    spec = lead([turn(task_call("researcher", "a", "c-1")), {"text": "done"}], researcher)
    # The app dies at the researcher's tool call: the session stays in progress.
    await console.app.run("tree-4", "go", spec, stop_at=lambda e: e.type == "tool.call")
    await console.app.idle("tree-4")
    status, body = await console.get(f"{API}/sessions/tree-4/tasks")
    assert status == 200 and body["status"] == "CHECKPOINT_STATUS_IN_PROGRESS"
    assert shape(body["tasks"]) == [("task_1", "researcher", ["c-1"], "in-progress", 1, [])]
