"""A session's tasks as a tree (docs/reference/rules.md R55–R65), for the console and for scripts:
``GET /api/v1/sessions/{id}/tasks`` (api.py) answers :func:`task_tree` of what
``GetSession`` and ``ListApprovals`` return, so it shows nothing the RPCs do not.

The checkpoint lists the unfinished sub-agents (``subagents``, by the qualified id of the
``task`` call running each) and the finished tasks (``tasks``, by ``task_id``). Where a
finished task sits in the tree is read from its owner's transcript: the ``task`` call's
result names it in its footer (``task_id 'task_K'``) or, for a task that did not finish,
in the error result's ``task_id``. Walking the lead's transcript, then each task's own,
places every task under the call that ran it; a task continued by a later ``task`` call
(R65) is shown once, with every call that ran it.

A node::

    {"task_id", "name", "path", "depth", "call_ids", "status", "steps", "messages",
     "finish_reason", "usage", "approval_id", "children"}

``status``: ``in-progress`` (unfinished, the session in progress: running, or to be
resumed), ``awaiting-approval`` (the
unfinished sub-agent whose call the session's pending approval holds), ``waiting``
(unfinished, the session paused on another's approval), ``finished`` (its answer is the
``task`` result) or ``failed`` (the result is an error: provider error, ``max_steps``
spent, cancelled). ``usage`` is set for unfinished sub-agents (a finished task keeps no
usage of its own); ``finish_reason`` for ended ones.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from google.protobuf.json_format import MessageToDict

from luosho.v1 import agent_pb2 as pb

from ..domain import TASK_TOOL
from ..engine import FOOTER


def _ended(result: pb.Message) -> tuple[str, str]:
    """(task_id, finish reason) a ``task`` call's result names, or ("", "")."""
    try:
        body = json.loads(result.content)
    except ValueError:
        return "", ""
    if isinstance(body, str) and (m := FOOTER.search(body)):
        return m.group(2), m.group(1)
    if isinstance(body, dict) and isinstance(body.get("task_id"), str):
        return body["task_id"], str(body.get("finish_reason", ""))
    return "", ""


def _usage(u: pb.Usage) -> dict[str, Any]:
    return MessageToDict(
        u, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def task_tree(cp: pb.Checkpoint, approvals: Sequence[pb.Approval] = ()) -> list[dict[str, Any]]:
    """The session's tasks, outermost first, each with its ``children``."""
    unfinished = {s.call_id: s for s in cp.subagents}
    finished = {t.task_id: t for t in cp.tasks}
    paused = cp.status == pb.CHECKPOINT_STATUS_AWAITING_APPROVAL
    # The sub-agent whose own call waits: the approval's call id less its last part.
    waiting_on = {
        a.tool_call.id.rpartition("/")[0]: a.approval_id for a in approvals if a.subagent_path
    }
    nodes: dict[str, dict[str, Any]] = {}

    def node(state: pb.SubAgentState, qid: str, status: str) -> dict[str, Any]:
        return {
            "task_id": state.task_id,
            "name": state.name,
            "path": list(state.path),
            "depth": state.depth,
            "call_ids": [qid],
            "status": status,
            "steps": state.step_index,
            "messages": len(state.messages),
            "finish_reason": "",
            "usage": None,
            "approval_id": "",
            "children": [],
        }

    def walk(messages: Any, prefix: str) -> list[dict[str, Any]]:
        results = {m.tool_call_id: m for m in messages if m.role == pb.ROLE_TOOL}
        out: list[dict[str, Any]] = []
        for m in messages:
            for call in m.tool_calls:
                if call.name != TASK_TOOL.name:
                    continue
                qid = f"{prefix}/{call.id}" if prefix else call.id
                result = results.get(call.id)
                if result is None and qid in unfinished:
                    state = unfinished[qid]
                    approval_id = waiting_on.get(qid, "") if paused else ""
                    n = node(
                        state,
                        qid,
                        "awaiting-approval"
                        if approval_id
                        else "waiting"
                        if paused
                        else "in-progress",
                    )
                    n["usage"], n["approval_id"] = _usage(state.usage), approval_id
                    nodes[state.task_id] = n
                    n["children"] = walk(state.messages, qid)
                    out.append(n)
                    continue
                if result is None:
                    continue  # not started yet (a call after a pending approval, R28)
                task_id, reason = _ended(result)
                if task_id in nodes:  # continued (R65): one node, each call that ran it
                    nodes[task_id]["call_ids"].append(qid)
                    continue
                done = finished.get(task_id)
                if done is None:
                    continue  # nothing ran (unknown sub-agent, over the depth) or a fork of it
                n = node(done, qid, "failed" if result.is_error else "finished")
                n["finish_reason"] = reason
                nodes[task_id] = n
                n["children"] = walk(done.messages, qid)
                out.append(n)
        return out

    tree = walk(cp.messages, "")
    # A finished task no transcript names (its session was forked from inside it, R67):
    # shown at the top, by path, so none is hidden.
    for t in cp.tasks:
        if t.task_id not in nodes:
            n = node(t, "", "finished")
            nodes[t.task_id] = n
            tree.append(n)
    return tree
