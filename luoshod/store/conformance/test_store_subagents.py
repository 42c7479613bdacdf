"""Sessions with sub-agents (docs/reference/rules.md R59, R60, R65's "tasks are stored with their
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
    HistoryEntry,
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
        "helper",
        "task_2",
        2,
        ("researcher", "helper"),
        [
            Message(Role.SYSTEM, "you help"),
            Message(Role.USER, "dig 👋"),
            Message(Role.ASSISTANT, "", (helper_call,)),
        ],
        1,
        Usage(3, 4, 7, 1, 0.01),
        Fingerprint("fh", "m-h", {"delete": "hd"}, "ih"),
    )
    task_call = ToolCall("call_0_1", "task", '{"agent": "helper", "prompt": "dig"}')
    researcher = SubTask(
        "researcher",
        "task_1",
        1,
        ("researcher",),
        [
            Message(Role.USER, "go"),
            Message(Role.ASSISTANT, "looking", (ToolCall("call_0_0", "lookup", "{}"), task_call)),
            Message(Role.TOOL, '{"hits": 2}', tool_call_id="call_0_0", tool_name="lookup"),
        ],
        1,
        Usage(5, 6, 11, 1),
        Fingerprint("fr", "m-r", {"lookup": "hl"}, "ir"),
        {"call_0_1": helper},
    )
    base = rich_checkpoint(session_id, version=version)
    assert base.agent is not None
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
    helper.messages.append(
        Message(Role.TOOL, '{"deleted": 1}', tool_call_id="call_0_0", tool_name="delete")
    )
    cp.version += 1
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=stored)
    loaded = await driver.load("nested")
    assert loaded == expected
    assert loaded.messages == expected.messages  # the lead's transcript as it was


async def test_r67_history_entries_hold_the_nested_states_of_their_moment(
    backend: Backend, driver: Store
) -> None:
    backend.require(Capability.HISTORY)
    cp = nested_checkpoint()
    first = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=0)
    cp.subtasks["call-1/x"].messages.append(
        Message(Role.TOOL, "{}", tool_call_id="call_0_1", tool_name="task")
    )
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


# -- bytes stay O(new messages) at every level (docs/storage.md, Layout; issue 15) -------------

SIZE = 1000  # bytes of text per message
LEAD = 100  # the lead's messages before it delegates: a 100 kB transcript
SUB_SAVES = 200  # the sub-agent's saves, one message each: a 200 kB transcript


def _text(i: int, tag: str) -> str:
    return f"{tag}-{i}-".ljust(SIZE, "x")


async def test_r59_a_subagent_save_rewrites_neither_the_lead_nor_its_own_messages(
    backend: Backend,
) -> None:
    """A sub-agent's saves append its new messages: the store's bytes grow with what they
    add, not with the transcripts they extend (the lead's, paused on the ``task`` call, and
    the sub-agent's own), and every entry still reads its moment."""
    backend.require(Capability.DURABLE)
    if not backend.on_disk_here:
        import pytest

        pytest.skip(f"{backend.name} keeps its data outside the test's directory")
    store = await backend.open()
    lead = [Message(Role.USER, _text(i, "lead")) for i in range(LEAD - 1)]
    lead.append(
        Message(Role.ASSISTANT, "", (ToolCall("call_0_0", "task", '{"agent":"w","prompt":"go"}'),))
    )
    state = SubTask("w", "task_1", 1, ("w",), [Message(Role.USER, "go")])
    cp = Checkpoint(
        "deep", lead, step_index=1, version=0, subtasks={"call_0_0": state}, task_count=1
    )
    snapshots: list[Checkpoint] = []
    stored = 0

    async def sub_saves(n: int) -> None:
        nonlocal stored
        for _ in range(n):
            i = len(state.messages)
            state.messages.append(
                Message(Role.TOOL, _text(i, "sub"), tool_call_id=f"c{i}", tool_name="t")
            )
            cp.version += 1
            cp.updated_at = 1000.0 + cp.version
            await store.save(cp, stored_messages=stored)
            stored = len(cp.messages)
            state.stored = len(state.messages)  # as the run does after each save
            snapshots.append(copy.deepcopy(cp))

    await sub_saves(SUB_SAVES // 2)
    await store.close()
    half = backend.disk_bytes()
    store = await backend.open()
    await sub_saves(SUB_SAVES // 2)
    await store.close()
    stored_bytes = backend.disk_bytes()

    transcript = sum(len(m.content) for m in [*cp.messages, *state.messages])
    assert stored_bytes < 2 * transcript, (stored_bytes, transcript)
    # The second hundred saves, over a sub-agent transcript twice as long, cost what the
    # first did (rewriting the nested transcript on each save makes them cost 3x).
    assert stored_bytes - half < 1.5 * half, (half, stored_bytes)
    store = await backend.open()
    try:
        loaded = await store.load("deep")
        assert loaded == snapshots[-1]
        if Capability.HISTORY in backend.capabilities:
            entries = await store.history("deep")
            assert [e.checkpoint for e in entries] == snapshots[:-51:-1]
    finally:
        await store.close()


async def test_r65_finished_tasks_are_kept_with_their_session(
    backend: Backend, driver: Store
) -> None:
    """A task that ended stays with its session, transcript and all (R65), also in the
    history entries after it, and goes with the session's delete."""
    cp = nested_checkpoint()
    await driver.save(cp, stored_messages=0)
    stored = len(cp.messages)
    for st in cp.all_tasks():
        st.stored = len(st.messages)
    # The helper's result reaches the researcher: the helper's task ends.
    researcher = cp.subtasks["call-1/x"]
    helper = researcher.children.pop("call_0_1")
    helper.messages.append(
        Message(Role.TOOL, '{"deleted": 1}', tool_call_id="call_0_0", tool_name="delete")
    )
    helper.messages.append(Message(Role.ASSISTANT, "dug"))
    cp.tasks[helper.task_id] = helper.end()
    researcher.messages.append(
        Message(Role.TOOL, '"dug"', tool_call_id="call_0_1", tool_name="task")
    )
    cp.version += 1
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=stored)
    loaded = await driver.load("nested")
    assert loaded == expected
    assert loaded.tasks["task_2"].messages[-1] == Message(Role.ASSISTANT, "dug")
    assert loaded.tasks["task_2"].step_index == 2
    if Capability.HISTORY in driver.capabilities:
        assert (await driver.history("nested", limit=1))[0].checkpoint == expected
    assert await driver.delete("nested")
    assert await driver.load("nested") is None


async def test_r59_r65_nested_states_are_isolated_from_the_callers_objects(
    driver: Store,
) -> None:
    """A saved or loaded checkpoint shares nothing mutable with its caller at any level:
    a live sub-agent's transcript, usage and children, and a finished task's transcript
    (a task_id call continues it), changed after the save or on a loaded copy, leave the
    stored session as it was."""
    cp = nested_checkpoint()
    researcher = cp.subtasks["call-1/x"]
    cp.tasks["task_3"] = SubTask(
        "helper",
        "task_3",
        2,
        ("researcher", "helper"),
        [
            Message(Role.USER, "earlier"),
            Message(Role.ASSISTANT, "done before"),
        ],
    ).end()
    expected = copy.deepcopy(cp)
    await driver.save(cp, stored_messages=0)
    researcher.messages.append(Message(Role.ASSISTANT, "after save"))
    researcher.usage.add(Usage(prompt_tokens=1))
    researcher.children["call_0_1"].messages.clear()
    researcher.children.clear()
    cp.tasks["task_3"].messages.append(Message(Role.USER, "continued"))
    assert await driver.load("nested") == expected
    loaded = await driver.load("nested")
    assert loaded is not None
    loaded.subtasks["call-1/x"].children["call_0_1"].delegated.add(Usage(model_calls=1))
    loaded.subtasks["call-1/x"].messages.pop()
    loaded.tasks["task_3"].messages.clear()
    assert await driver.load("nested") == expected


async def test_r65_a_session_with_tasks_imports_as_it_was(backend: Backend, driver: Store) -> None:
    """What ``luoshod store copy`` writes (``import_session``): the checkpoint and its
    history with their unfinished and finished tasks, each entry reading its moment."""
    first = nested_checkpoint()
    second = copy.deepcopy(first)
    researcher = second.subtasks["call-1/x"]
    helper = researcher.children.pop("call_0_1")
    helper.messages.append(Message(Role.TOOL, "{}", tool_call_id="call_0_0", tool_name="delete"))
    second.tasks[helper.task_id] = helper.end()
    second.version, second.step_index, second.updated_at = 2, 2, second.updated_at + 1
    history = [
        HistoryEntry(cp.step_index, cp.updated_at, cp.status, copy.deepcopy(cp))
        for cp in (first, second)
    ]
    await driver.import_session("nested", latest=copy.deepcopy(second), history=history)
    assert await driver.load("nested") == second
    if Capability.HISTORY in driver.capabilities:
        assert [e.checkpoint for e in await driver.history("nested")] == [second, first]
    # And it saves on from there, O(new messages): the next save appends.
    nxt = copy.deepcopy(second)
    for st in nxt.all_tasks():
        st.stored = len(st.messages)
    nxt.subtasks["call-1/x"].messages.append(
        Message(Role.TOOL, '"dug"', tool_call_id="call_0_1", tool_name="task")
    )
    nxt.version = 3
    await driver.save(nxt, stored_messages=len(nxt.messages))
    assert await driver.load("nested") == nxt
