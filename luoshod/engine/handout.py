"""Handing an app's tool call out (R77): its attempt, and a reconcile first when the call
was handed out before and has no recorded result.

A call's attempts are counted in the checkpoint (``Checkpoint.attempts``, by its
qualified id) and saved by the save that hands it out: a run that hands out the same
call again — after the daemon died, another daemon took the session over, or a Resume —
counts one more. Within one run a call is handed out once; a ``Watch`` that reconnects
is shown the saved ``tool.call``, not a new hand-out.

For a tool with ``reconcile`` set, a call handed out before is first put to the app as
``tool.reconcile``; the answer (``SubmitToolResult`` with its ``reconcile`` outcome) is
DONE with the result (returned as the call's outcome: recorded, the tool not run again),
NOT_STARTED (handed out again) or UNKNOWN (handed out again marked so; also when no
answer comes within the tool's timeout, as with a client that does not know the event).
"""

from __future__ import annotations

import asyncio

from ..domain import ToolCall, ToolSpec
from . import events as ev
from .control import (
    RECONCILE_DONE,
    RECONCILE_UNKNOWN,
    ToolOutcome,
    settle_acks,
)
from .events import SubagentTag
from .runport import RunPort


async def _flush(root: RunPort) -> None:
    # Shielded: a sibling task that pauses the run cancels this one, and a save cut off
    # in the store would leave the checkpoint's version behind the store's.
    await asyncio.shield(root.flush())


async def hand_out(
    root: RunPort,
    call: ToolCall,
    tool: ToolSpec,
    step: int,
    timeout_s: float,
    tag: SubagentTag | None = None,
) -> ToolOutcome | None:
    """Hand ``call`` (its id qualified, R58) to the app and wait for its outcome;
    ``None``: no result within ``timeout_s`` of its first hand-out (the caller records the
    timeout). R81: that time is the stored one, so a call handed out again after a restart
    waits only what is left of its timeout, and not at all once it has passed."""
    cp = root.cp
    prior = cp.attempts.get(call.id, 0)
    first = cp.handed_out_at.get(call.id) if prior else None
    if first is not None:
        timeout_s -= max(0.0, root.now() - first)
        if timeout_s <= 0:
            return None  # its timeout passed while no process waited for it
    timeout_ms = int(timeout_s * 1000)
    reconciled = ""
    answer: ToolOutcome | None = None
    try:
        if prior and tool.reconcile:
            asked = root.tools.expect(call.id, reconcile=True)
            root.queue_event(
                ev.TOOL_RECONCILE,
                {"step": step, "call": call, "attempt": prior, "timeout_ms": timeout_ms},
                tag,
            )
            await _flush(root)
            try:
                answer = await asyncio.wait_for(asked, timeout_s)
            except TimeoutError:
                answer = None  # no answer: the client may not know the event (UNKNOWN)
            if answer is not None and answer.reconcile in ("", RECONCILE_DONE):
                return answer  # DONE: its result is the call's, the tool is not run again
            reconciled = answer.reconcile if answer is not None else RECONCILE_UNKNOWN
        fut = root.tools.expect(call.id)
        attempt = prior + 1
        cp.attempts[call.id] = attempt
        cp.handed_out_at.setdefault(call.id, root.now())
        root.defer_save()  # the save that hands the call out holds its attempt
        data: dict[str, object] = {
            "step": step,
            "call": call,
            "timeout_ms": timeout_ms,
            "attempt": attempt,
        }
        if reconciled:
            data["reconciled"] = reconciled
        root.queue_event(ev.TOOL_CALL, data, tag)
        # One turn of the event loop before the flush: a save already due then (the
        # previous call's result, whose task just gave this one its turn) writes this
        # hand-out with it, and the flush below has nothing left to write.
        await asyncio.sleep(0)
        acks = [answer.saved] if answer is not None and answer.saved is not None else []
        if answer is not None and answer.attempt is not None:
            answer.attempt.append(attempt)
        try:
            await _flush(root)
        except BaseException as e:
            settle_acks(acks, e)
            raise
        settle_acks(acks, None)  # the NOT_STARTED / UNKNOWN answer is durable with it
        try:
            return await asyncio.wait_for(fut, timeout_s)
        except TimeoutError:
            return None
    finally:
        root.tools.forget(call.id)


def note_daemon_hand_out(root: RunPort, call_id: str) -> int:
    """A daemon tool's call (R71) handed out once more: its attempt, counted like an app's
    call (saved by the flush that sends its ``tool.call``). Distinct from the daemon's own
    retries of one hand-out (R73, ``tool.retry``)."""
    attempt = root.cp.attempts.get(call_id, 0) + 1
    root.cp.attempts[call_id] = attempt
    root.defer_save()
    return attempt
