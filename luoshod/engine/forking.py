"""Fork (docs/reference/rules.md R40–R44): a new session from a step of another's history."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..domain import Checkpoint, FinishReason, Message, Role, Status
from ..errors import CheckpointNotFound, InvalidArgument, LeaseLost, SessionExists
from ..store import Store
from .loop import pending_calls

MAX_SESSION_ID = 128


@dataclass(slots=True)
class ForkPatch:
    """Applied in this order (R43)."""

    messages: list[Message] | None = None
    business_state_json: str | None = None
    tool_result: Message | None = None  # a tool message: call id, result JSON, is_error
    append_input: str = ""


@dataclass(frozen=True, slots=True)
class Forked:
    session_id: str
    step: int
    checkpoint: Checkpoint


def _patch_tool_result(messages: list[Message], result: Message) -> list[Message]:
    """Replace the call's result in place (same position, call id and tool name), or record
    it when the call has none yet and every earlier call of its turn has one."""
    call_id = result.tool_call_id
    for i, m in enumerate(messages):
        ids = [c.id for c in m.tool_calls]
        if m.role is not Role.ASSISTANT or call_id not in ids:
            continue
        name = m.tool_calls[ids.index(call_id)].name
        fixed = replace(result, tool_name=name, role=Role.TOOL)
        j = i + 1
        while j < len(messages) and messages[j].role is Role.TOOL:
            if messages[j].tool_call_id == call_id:
                return [*messages[:j], fixed, *messages[j + 1 :]]
            j += 1
        answered = {messages[k].tool_call_id for k in range(i + 1, j)}
        if not set(ids[: ids.index(call_id)]) <= answered:
            raise InvalidArgument(
                f"tool call {call_id!r} has no result and an earlier call of its turn has none "
                "either: results are recorded in call order",
                reason="TOOL_RESULT_OUT_OF_ORDER",
                tool_call_id=call_id,
            )
        return [*messages[:j], fixed, *messages[j:]]
    raise InvalidArgument(
        f"the forked checkpoint has no tool call {call_id!r}",
        reason="UNKNOWN_TOOL_CALL",
        tool_call_id=call_id,
    )


async def fork(
    store: Store,
    session_id: str,
    from_step: int,
    *,
    new_session_id: str = "",
    patch: ForkPatch | None = None,
    clock: Callable[[], float],
) -> Forked:
    """Take the newest history entry of ``from_step``, apply ``patch``, save the result as
    the in-progress checkpoint of a new session (R40). The source is unchanged."""
    patch = patch or ForkPatch()
    entries = await store.history(session_id)
    entry = next((e for e in entries if e.step == from_step), None)
    if entry is None:
        kept = sorted({e.step for e in entries})
        raise CheckpointNotFound(
            f"session {session_id!r} has no kept checkpoint of step {from_step}; "
            f"kept steps: {kept or 'none'}",
            session_id=session_id,
            step=from_step,
            kept_steps=",".join(map(str, kept)),
        )
    chosen = bool(new_session_id)
    n = 0
    if chosen:
        if await store.load(new_session_id) is not None:
            raise SessionExists(
                f"session {new_session_id!r} already has a checkpoint", session_id=new_session_id
            )
    else:
        n = 1
        while await store.load(new_session_id := f"{session_id}.fork-{n}") is not None:
            n += 1
        if len(new_session_id) > MAX_SESSION_ID:
            raise InvalidArgument(
                f"the default fork id {new_session_id[:40]}… is longer than {MAX_SESSION_ID}; "
                "choose new_session_id",
                reason="INVALID_SESSION_ID",
            )
    cp = entry.checkpoint
    if patch.messages is not None or patch.tool_result is not None:
        cp.spell_out_attempts()  # R77: the counts no longer read from the results
    if patch.messages is not None:
        cp.messages = list(patch.messages)
        cp.run_start = min(cp.run_start, len(cp.messages))
        cp.compaction = None  # R85: its marks were of the transcript replaced
    if patch.business_state_json is not None:
        cp.business_state_json = patch.business_state_json
    if patch.tool_result is not None:
        cp.messages = _patch_tool_result(cp.messages, patch.tool_result)
    if patch.append_input:
        user = Message(Role.USER, patch.append_input)
        if pending_calls(cp):
            cp.queued_input.append(user)  # sent after the pending calls' results
        else:
            cp.messages.append(user)
    # R44: step count and usage are kept; the old approval is dropped (gated again).
    cp.session_id = new_session_id
    cp.status, cp.finish_reason, cp.approval_id = Status.IN_PROGRESS, FinishReason.NONE, ""
    cp.decisions = {}
    cp.run_requests = []  # the source's requests are the source's (R74): a new session has none
    cp.last_drift = None  # the source's resumes are the source's too
    cp.version, cp.last_seq, cp.updated_at = 1, 0, clock()
    if cp.compaction is not None:  # R85: kept, but no save of the fork's made it
        cp.compaction = replace(cp.compaction, version=0)
    # R81: a fork is a new session: its wall-clock limits count from now (its usage is
    # kept, R44, and counts toward its limits).
    cp.run_started_at = cp.session_started_at = cp.updated_at
    cp.run_paused_s = cp.session_paused_s = 0.0
    # R91: the fork's chain starts from the entry it was forked from (its first save
    # records that entry's link, so verify checks that save too).
    cp.chain_from = cp.chain
    while True:
        try:
            await store.save(cp, stored_messages=0)
            return Forked(cp.session_id, from_step, cp)
        except LeaseLost:
            if chosen:
                raise SessionExists(
                    f"session {cp.session_id!r} already has a checkpoint", session_id=cp.session_id
                ) from None
            # Another fork took this default id meanwhile: take the next one.
            n += 1
            cp.session_id = f"{session_id}.fork-{n}"
