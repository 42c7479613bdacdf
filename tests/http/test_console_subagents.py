"""Sub-agents in the web console, in a real headless Chromium against a real daemon (the
fixtures and checks of test_console_browser.py: no script error, no CSP violation, no
request off the daemon's origin): a session's tasks as a tree, the events of sub-agents
tagged with their path, the approvals inbox showing an approval's ``subagent_path``, and
deciding it from the console — for an app's tool and for a daemon (MCP) tool."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from luosho.v1 import agent_pb2 as pb
from tests.support.console import ConsoleFactory
from tests.support.console_browser import answer_tools
from tests.support.mcp_servers import attempts, stdio_config
from tests.support.task_trees import finished_tree, helper, lead, sub, task_call, turn


def paused_spec() -> pb.AgentSpec:
    inner = helper(
        [
            turn({"name": "lookup", "arguments": {"q": "x"}, "id": "l-1"}),
            turn({"name": "delete", "arguments": {"id": 1}, "id": "d-1"}),
            {"text": "deleted"},
        ]
    )
    researcher = sub(
        "researcher",
        [turn(task_call("helper", "dig", "h-1")), {"text": "researched"}],
        subagents=(inner,),
    )
    return lead([turn(task_call("researcher", "a", "c-1")), {"text": "done"}], researcher)


async def test_a_session_shows_its_tasks_and_its_events_tagged(
    make_console: ConsoleFactory, open_browser: Any
) -> None:  # noqa: F811
    console = await make_console()
    await finished_tree(console, "tree-1")
    b = await open_browser(console)
    await b.goto("/#/session/tree-1")
    nested = b.page.locator('#task-tree li[data-task="task_1"] li[data-task="task_2"]')
    await nested.wait_for()
    head = await b.text('#task-tree li[data-task="task_1"] > .task-head')
    assert "researcher" in head and "task_1" in head and "finished" in head and "3 steps" in head
    assert "continued 1×" in head
    assert "helper" in await nested.locator(".task-head").inner_text()
    writer = await b.text('#task-tree > li[data-task="task_3"] > .task-head')
    assert "writer" in writer and "1 step" in writer
    # The live events: the helper's are tagged with its path, the lead's are not.
    tagged = b.page.locator('#events li[data-subagent="researcher/helper"]')
    await tagged.first.wait_for()
    assert await tagged.first.locator(".subagent-tag").inner_text() == "researcher › helper"
    run_done = b.page.locator('#events li[data-type="run.done"]')
    await run_done.wait_for()
    assert await run_done.get_attribute("data-subagent") is None
    # The timeline: under each `task` call, the transcript of the task it ran, tagged.
    outer = b.page.locator('#timeline .call[data-call="c-1"] > details.subtask[data-task="task_1"]')
    assert await outer.locator("> summary .subagent-tag").inner_text() == "researcher"
    inner = outer.locator('.call[data-call="c-1/h-1"] > details.subtask[data-task="task_2"]')
    assert await inner.locator("> summary .subagent-tag").inner_text() == "researcher › helper"
    assert "helped" in await inner.locator(".step").first.inner_text()
    assert "continues task_1 (above)" in await b.text('#timeline .call[data-call="c-3"]')
    assert await b.page.locator("#timeline details.subtask").count() == 3  # task_1, task_2, task_3
    await b.shot("session-subagents")


async def test_an_approval_inside_a_subagent_is_shown_and_decided_in_the_console(
    make_console: ConsoleFactory,
    open_browser: Any,  # noqa: F811
) -> None:
    console = await make_console()
    log = await console.app.run(
        "tree-2", "go", paused_spec(), {"lookup": lambda a: {"found": a["q"]}}
    )
    assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL, (
        log.types
    )
    b = await open_browser(console)
    await b.goto("/#/session/tree-2")
    await b.page.locator(
        '#task-tree li[data-task="task_2"][data-status="awaiting-approval"]'
    ).wait_for()
    assert (
        await b.page.locator('#task-tree li[data-task="task_1"]').get_attribute("data-status")
        == "waiting"
    )
    link = b.page.locator('#task-tree li[data-task="task_2"] .approval-link')
    assert await link.inner_text() == log.done.approval_id
    # The timeline shows the unfinished sub-agents' transcripts: the helper's gated call waits.
    waiting = b.page.locator(
        '#timeline details[data-task="task_1"] details[data-task="task_2"] '
        '.call[data-call="c-1/h-1/d-1"]'
    )
    assert "no result yet" in await waiting.inner_text()
    assert await waiting.get_attribute("class") == "call pending"

    app = asyncio.create_task(
        answer_tools(console, "tree-2", {"lookup": {"found": "x"}, "delete": {"deleted": 1}})
    )  # l-1 replayed: a duplicate
    try:
        await b.goto("/#/approvals")
        card = b.page.locator('#inbox .approval[data-session="tree-2"]')
        await card.wait_for()
        assert (
            await card.locator(".subagent-path .subagent-tag").inner_text() == "researcher › helper"
        )
        assert await card.locator("code").first.inner_text() == "c-1/h-1/d-1"
        await b.shot("approvals-subagent")
        await card.locator("button.approve").click()
        await card.locator(".outcome .result", has_text="is finished (stop)").wait_for()
        assert (
            await card.locator(
                '.events li[data-subagent="researcher/helper"][data-type="tool.result"]'
            ).count()
            == 1
        )
    finally:
        app.cancel()
    cp = await console.app.get("tree-2")
    assert cp.status == pb.CHECKPOINT_STATUS_FINISHED
    helper_task = next(t for t in cp.tasks if t.name == "helper")
    results = {
        m.tool_call_id: json.loads(m.content)
        for m in helper_task.messages
        if m.role == pb.ROLE_TOOL
    }
    assert results == {"l-1": {"found": "x"}, "d-1": {"deleted": 1}}
    await b.goto("/#/session/tree-2")
    await b.page.locator('#task-tree li[data-task="task_2"][data-status="finished"]').wait_for()


async def test_a_subagents_mcp_call_approved_in_the_console_runs_in_the_daemon(
    make_console: ConsoleFactory,
    open_browser: Any,
    tmp_path: Path,  # noqa: F811
) -> None:
    attempts_file = tmp_path / "attempts.jsonl"
    console = await make_console(mcp_servers={"files": stdio_config("files", attempts_file)})
    clerk = sub(
        "clerk",
        [
            turn({"name": "files__delete_record", "arguments": {"record": "r1"}, "id": "c-del"}),
            {"text": "deleted r1"},
        ],
    )
    clerk.agent.mcp_servers.add(name="files")
    log = await console.app.run(
        "files-1",
        "go",
        lead([turn(task_call("clerk", "clean", "c-task")), {"text": "done"}], clerk),
    )
    assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_AWAITING_APPROVAL, (
        log.types,
        log.error,
    )
    b = await open_browser(console)
    await b.goto("/#/approvals")
    card = b.page.locator('#inbox .approval[data-session="files-1"]')
    await card.wait_for()
    assert await card.locator(".tool").inner_text() == "files__delete_record"
    assert await card.locator(".subagent-path .subagent-tag").inner_text() == "clerk"
    await card.locator("button.approve").click()  # no app: the daemon runs the call
    await card.locator(".outcome .result", has_text="is finished (stop)").wait_for()
    call = card.locator('.events li[data-type="tool.call"][data-subagent="clerk"]')
    assert await call.count() == 1
    assert [a["key"] for a in attempts(attempts_file)] == ["c-task/c-del"]
