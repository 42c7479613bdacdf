"""Sessions with sub-agents (SEMANTICS.md R59, R60, R65's "tasks are stored with their
session"), for every driver: the nested state of unfinished sub-agents is part of the
checkpoint, history entries keep the nested states of their moment, approvals keep their
sub-agent path, and such a session deletes like any other."""

from __future__ import annotations

import copy
from dataclasses import replace

from luoshod.domain import (
    AgentSpec,
    Checkpoint,
    Decision,
    Fingerprint,
    Message,
    Role,
    Status,
    SubAgent,
    SubTask,
    ToolCall,
    Usage,
)
from luoshod.store import Capability, Store

from .backend import Backend
from .helpers import approval, rich_checkpoint


def nested_checkpoint(session_id: str = "nested", *, version: int = 1) -> Checkpoint:
    """A lead paused inside a depth-2 sub-agent, every nested field away from its default."""
    helper_call = ToolCall("call_0_0", "delete", '{"id": "naïve"}')
    helper = SubTask(
        "helper", "task_2", 2, ("researcher", "helper"),
        [Message(Role.SYSTEM, "you help"), Message(Role.USER, "dig 👋"), Message(Role.ASSISTANT, "", (helper_call,))],
        1, Usage(3, 4, 7, 1, 0.01), Fingerprint("fh", "m-h", {"delete": "hd"}, "ih"),
    )
    task_call = ToolCall("call_0_1", "task", '{"agent": "helper", "prompt": "dig"}')
    researcher = SubTask(
        "researcher", "task_1", 1, ("researcher",),
        [
            Message(Role.USER, "go"),
            Message(Role.ASSISTANT, "looking", (ToolCall("call_0_0", "lookup", "{}"), task_call)),
            Message(Role.TOOL, '{"hits": 2}', tool_call_id="call_0_0", tool_name="lookup"),
        ],
        1, Usage(5, 6, 11, 1), Fingerprint("fr", "m-r", {"lookup": "hl"}, "ir"),
        {"call_0_1": helper},
    )
    base = rich_checkpoint(session_id, version=version)
    agent = replace(
        base.agent,
        subagents=(SubAgent("researcher", "finds things", AgentSpec("m-r", "you research")),),
        max_subagent_depth=2,
    )
    return replace(
        base,
        agent=agent,
        subtasks={"call-1/x": researcher},
        delegated_usage=Usage(8, 10, 18, 2, 0.01),
        task_count=2,
        decisions={"call-1/x/call_0_1/call_0_0": Decision(True, "ok")},
    )


async def test_r59_a_checkpoint_with_nested_subagent_state_round_trips(driver: Store) -> None:
    cp = nested_checkpoint()
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=0)
    assert await driver.load("nested") == expected


async def test_r59_a_subagent_save_changes_the_nested_state_only(driver: Store) -> None:
    cp = nested_checkpoint()
    await driver.save(cp, stored_messages=0)
    stored = len(cp.messages)
    # The helper's result is recorded: a save with no new lead message.
    helper = cp.subtasks["call-1/x"].children["call_0_1"]
    helper.messages.append(Message(Role.TOOL, '{"deleted": 1}', tool_call_id="call_0_0", tool_name="delete"))
    cp.version += 1
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=stored)
    loaded = await driver.load("nested")
    assert loaded == expected
    assert loaded.messages == expected.messages  # the lead's transcript as it was


async def test_r67_history_entries_hold_the_nested_states_of_their_moment(backend: Backend, driver: Store) -> None:
    backend.require(Capability.HISTORY)
    cp = nested_checkpoint()
    first = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=0)
    cp.subtasks["call-1/x"].messages.append(Message(Role.TOOL, "{}", tool_call_id="call_0_1", tool_name="task"))
    cp.subtasks["call-1/x"].children.clear()
    cp.version += 1
    second = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=len(cp.messages))
    entries = await driver.history("nested")
    assert [e.checkpoint for e in entries] == [second, first]


async def test_r60_an_approval_keeps_its_subagent_path(backend: Backend, driver: Store) -> None:
    backend.require(Capability.APPROVALS)
    cp = nested_checkpoint()
    cp.approval_id, cp.status = "appr-sub", Status.AWAITING_APPROVAL
    ap = replace(approval("appr-sub", "nested"), subagent_path=("researcher", "helper"))
    await driver.save(cp, stored_messages=0, approval=ap)
    assert await driver.get_approval("appr-sub") == ap
    page, _ = await driver.list_approvals(session_id="nested", page_size=10, page_token="")
    assert page == [ap]


async def test_a_session_with_subagents_deletes_like_any_other(driver: Store) -> None:
    await driver.save(nested_checkpoint(), stored_messages=0)
    assert await driver.delete("nested")
    assert await driver.load("nested") is None
