"""A session's message log with its sub-agents' transcripts in it (R59, R65), O(new
messages) at every level.

The durable drivers keep one append-only log of records per session, and each save or
history entry refers to a prefix of it (``.planning``). A session with sub-agents writes
its tasks' messages to that same log, each record tagged with the task it belongs to
(:class:`.codec.TaskRecord`, ``task_K`` → owner ``K``), after a description record of
the task (its id, name, depth and path) written once before its first message. The header
then holds only what is small: each unfinished task's steps, usage, fingerprint and
children, no transcript, and (``message_count``) how many of the records are the lead's.
Finished tasks need nothing in the header: their description and messages are in the
log.

So a sub-agent's save appends its new messages and a header, like the lead's: it never
writes the lead's transcript or its own earlier messages again. What the store holds of
each transcript is told by the caller, as for the lead's ``stored_messages``:
``SubTask.stored`` (the run sets it after each save, a load sets it to what it read).

Splitting a prefix by owner gives every transcript as it was at that moment, so a
history entry holds the nested states of its moment (R67) without copying anything.
A header written before this format holds its unfinished tasks' transcripts inline:
they are read from there, and written to the log by the next save. What a prefix of the
log decodes to (every transcript put back in place) is :func:`.codec.checkpoint_of`'s.

The agent spec and fingerprint (store format 3) are a record of the same log too
(:class:`.codec.AgentRecord`), written by the first save of a log and then only by a save
whose agent or fingerprint changed (what the log holds of them: ``Checkpoint.stored_agent``,
set by a load and after each save): a history entry's header is then a few hundred bytes,
whatever the spec's size. A header means the last agent record of its prefix; one written
before format 3 carries its agent itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...domain import Checkpoint, SubTask
from . import codec
from .codec import owner_of


def _records(task: SubTask, count: int) -> int:
    """The log records of a task with ``count`` messages: its description, then them."""
    return count + 1 if count else 0


def stored_count(cp: Checkpoint, stored_messages: int) -> int:
    """How many records of the session's log the store holds, by the caller's word: the
    lead's ``stored_messages``, each task's ``stored`` and the agent records
    (``cp.stored_agent``). 0 when ``stored_messages`` is (a rewritten or new transcript:
    a new log)."""
    if not stored_messages:
        return 0
    return stored_messages + sum(_records(t, t.stored) for t in cp.all_tasks()) + cp.stored_agent[0]


def new_bodies(cp: Checkpoint, stored_messages: int, text: str) -> list[bytes]:
    """The encoded records a save of ``cp`` appends (all of them when ``stored_messages``
    is 0): its agent record when ``text`` (:func:`.codec.agent_text`) is not the log's
    last, then the lead's new messages, then each task's."""
    if not stored_messages:
        return all_bodies(cp, text)
    bodies = [] if text == (cp.stored_agent[1] or codec.NO_AGENT) else [codec.encode_agent(text)]
    bodies += [codec.encode_message(m) for m in cp.messages[stored_messages:]]
    for task in cp.all_tasks():
        bodies += _task_bodies(task, task.stored)
    return bodies


def all_bodies(cp: Checkpoint, text: str) -> list[bytes]:
    """Every record of ``cp``'s log, for a new log: its agent record (none when it has
    neither agent nor fingerprint), its messages, its tasks'."""
    bodies = [] if text == codec.NO_AGENT else [codec.encode_agent(text)]
    bodies += [codec.encode_message(m) for m in cp.messages]
    for task in cp.all_tasks():
        bodies += _task_bodies(task, 0)
    return bodies


def agents_in(bodies: Sequence[bytes]) -> int:
    """How many of the encoded ``bodies`` of this module are agent records (0 or 1)."""
    return sum(1 for b in bodies[:1] if codec.is_agent(b))


def bodies_after(previous: Checkpoint | None, cp: Checkpoint) -> list[bytes] | None:
    """The records that extend the log of ``previous`` to ``cp``'s (an import writing one
    checkpoint after the other, as saves did), or ``None`` when ``cp`` does not extend
    it (a rewritten transcript, at any level: a new log)."""
    if previous is None or not _extends(previous.messages, cp.messages):
        return None
    before = {t.task_id: t for t in previous.all_tasks()}
    text = codec.agent_text(cp)
    bodies = [] if text == codec.agent_text(previous) else [codec.encode_agent(text)]
    bodies += [codec.encode_message(m) for m in cp.messages[len(previous.messages) :]]
    for task in cp.all_tasks():
        old = before.pop(task.task_id, None)
        if old is not None and not _extends(old.messages, task.messages):
            return None
        bodies += _task_bodies(task, len(old.messages) if old is not None else 0)
    if any(t.messages for t in before.values()):
        return None  # a task of the log is gone from the transcript
    return bodies


def _task_bodies(task: SubTask, stored: int) -> list[bytes]:
    new = task.messages[stored:]
    if not new:
        return []
    owner = owner_of(task.task_id)
    bodies = [codec.encode_task_meta(owner, _meta(task))] if not stored else []
    bodies += [codec.encode_message(m, owner) for m in new]
    return bodies


def _meta(task: SubTask) -> str:
    return codec.encode_json(
        {"task_id": task.task_id, "name": task.name, "depth": task.depth, "path": list(task.path)}
    )


def _extends(prefix: Sequence[Any], items: Sequence[Any]) -> bool:
    n = len(prefix)
    return len(items) >= n and list(items[:n]) == list(prefix)
