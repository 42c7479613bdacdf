"""The kit's encoding of sub-agent transcripts (luoshod/store/kit/tasklog.py): what a save
of a sub-agent writes (its new messages only, the header without transcripts), and
checkpoints written before it (nested transcripts inline in the header) still load and
move into the log on their next save. Driver-independent: the bytes a durable driver is
handed (``prepare``), and what it reads back (``decode_checkpoint``)."""

from __future__ import annotations

import copy
import json

import pytest

from luoshod.domain import Checkpoint, Message, Role, SubTask, ToolCall
from luoshod.store.kit import codec, tasklog
from luoshod.store.kit.prepared import prepare


def paused_lead() -> Checkpoint:
    """A lead paused on a ``task`` call whose sub-agent has made one step."""
    lead = [
        Message(Role.USER, "lead input " * 50),
        Message(Role.ASSISTANT, "", (ToolCall("call_0_0", "task", '{"agent":"w","prompt":"go"}'),)),
    ]
    worker = SubTask(
        "w",
        "task_1",
        1,
        ("w",),
        [Message(Role.USER, "go"), Message(Role.ASSISTANT, "", (ToolCall("call_0_0", "t", "{}"),))],
        step_index=1,
    )
    return Checkpoint(
        "s", lead, step_index=1, version=1, subtasks={"call_0_0": worker}, task_count=1
    )


def log_of(*bodies: list[bytes]) -> list[codec.LogRecord]:
    return codec.decode_messages(b"".join(b for part in bodies for b in part))


def test_a_subagent_save_hands_the_driver_its_new_message_and_a_header_without_transcripts() -> (
    None
):
    cp = paused_lead()
    first = prepare(cp, 0, 50)
    assert first.stored_log == 0 and len(first.new_bodies) == 2 + 1 + 2  # lead, description, task
    worker = cp.subtasks["call_0_0"]
    worker.stored = len(worker.messages)
    result = Message(Role.TOOL, "a long result " * 100, tool_call_id="call_0_0", tool_name="t")
    worker.messages.append(result)
    cp.version = 2
    second = prepare(cp, len(cp.messages), 50)
    # Only the sub-agent's new message, tagged with its task; nothing of the lead's.
    assert second.stored_log == 5 and len(second.new_bodies) == 1
    assert codec.decode_messages(b"".join(second.new_bodies)) == [codec.TaskRecord(1, result)]
    header = json.loads(second.header)
    assert "messages" not in header["subtasks"]["call_0_0"]
    assert "a long result" not in second.header and "lead input" not in second.header
    assert header["message_count"] == 2
    # Both saves' records read back as the checkpoint.
    loaded = codec.decode_checkpoint(second.header, log_of(first.new_bodies, second.new_bodies))
    assert loaded == cp
    assert loaded.subtasks["call_0_0"].stored == 3
    # And the first save's prefix reads the first moment (a history entry, R67).
    at_first = codec.decode_checkpoint(first.header, log_of(first.new_bodies))
    assert at_first.subtasks["call_0_0"].messages == worker.messages[:2]


def test_a_finished_task_is_read_from_the_log_alone() -> None:
    cp = paused_lead()
    worker = cp.subtasks.pop("call_0_0")
    worker.messages.append(Message(Role.TOOL, "{}", tool_call_id="call_0_0", tool_name="t"))
    worker.messages.append(Message(Role.ASSISTANT, "done"))
    cp.tasks["task_1"] = worker.end()
    cp.messages.append(Message(Role.TOOL, '"done"', tool_call_id="call_0_0", tool_name="task"))
    p = prepare(cp, 0, 50)
    assert "tasks" not in json.loads(p.header)  # nothing of it in the header
    loaded = codec.decode_checkpoint(p.header, log_of(p.new_bodies))
    assert loaded == cp
    assert loaded.tasks["task_1"].step_index == 2 and loaded.tasks["task_1"].name == "w"
    summary = codec.decode_summary(p.header, len(p.new_bodies))
    assert summary.message_count == 3  # the lead's, not the log's


def test_a_checkpoint_written_before_the_task_log_loads_and_its_next_save_moves_it_there() -> None:
    cp = paused_lead()
    # Format 1: the nested transcript inline in the header, the log the lead's alone.
    old_header = json.dumps({"format": 1, **cp.header_dict()})
    old_log = [codec.encode_message(m) for m in cp.messages]
    loaded = codec.decode_checkpoint(old_header, log_of(old_log))
    assert loaded == cp
    assert loaded.subtasks["call_0_0"].stored == 0  # none of it is in the log
    loaded.version = 2
    p = prepare(loaded, len(loaded.messages), 50)
    assert p.stored_log == len(old_log)  # an append to the old log, not a new one
    assert [type(r) for r in codec.decode_messages(b"".join(p.new_bodies))] == [
        codec.TaskRecord
    ] * 3
    again = codec.decode_checkpoint(p.header, log_of(old_log, p.new_bodies))
    assert again == loaded


def test_an_import_shares_one_log_across_entries_that_extend_each_other() -> None:
    first = paused_lead()
    second = copy.deepcopy(first)
    second.subtasks["call_0_0"].messages.append(
        Message(Role.TOOL, "{}", tool_call_id="call_0_0", tool_name="t")
    )
    rewritten = copy.deepcopy(second)
    rewritten.subtasks["call_0_0"].messages[0] = Message(Role.USER, "another prompt")
    from luoshod.store.kit.importing import log_steps

    steps = log_steps([first, second, rewritten])
    assert [(s.new_log, s.start, len(s.bodies), s.count) for s in steps] == [
        (True, 0, 5, 5),
        (False, 5, 1, 6),
        (True, 0, 6, 6),
    ]


@pytest.mark.parametrize("task_id", ["task_0", "task_", "job_1", "task_x"])
def test_a_task_id_of_another_form_is_refused(task_id: str) -> None:
    with pytest.raises(ValueError, match="task_<K>"):
        tasklog.owner_of(task_id)
