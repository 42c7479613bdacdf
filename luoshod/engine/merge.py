"""How new input joins a stored transcript (docs/reference/rules.md R12–R17, "The merge,
precisely"),
and which tool results in it are accepted (R53)."""

from __future__ import annotations

from collections.abc import Sequence

from ..domain import Message, Role, ToolCall
from ..errors import InvalidArgument


def _common_prefix(a: Sequence[Message], b: Sequence[Message]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x.key() != y.key():
            break
        n += 1
    return n


def merge_input(
    stored: Sequence[Message], incoming: Sequence[Message], *, finished: bool
) -> list[Message]:
    """The messages of ``incoming`` to append to ``stored``.

    System messages are dropped from both sides (the session has its system prompt, R17).
    A re-sent history is recognised and not duplicated (R15); on an unfinished run,
    re-sending the message the run started from is a retry that appends nothing (R13).
    """
    s = [m for m in stored if m.role is not Role.SYSTEM]
    i = [m for m in incoming if m.role is not Role.SYSTEM]
    if not i:
        return []
    shared = _common_prefix(s, i)
    if shared == len(s):
        return i[shared:]
    if not finished and shared > 0:
        return i[shared:]
    if finished:
        return i
    last_user = max((k for k, m in enumerate(s) if m.role is Role.USER), default=-1)
    if last_user >= 0:
        through_user = [m.key() for m in s[: last_user + 1]]
        keys = [m.key() for m in i]
        # A retry re-sends either the history up to the latest user turn, or that turn alone.
        if keys == through_user or keys == through_user[-1:]:
            return []
    return i


def take_answers(
    session_id: str,
    incoming: Sequence[Message],
    appended: Sequence[Message],
    answerable: Sequence[ToolCall],
) -> tuple[dict[str, Message], list[Message]]:
    """R53: split the merged input ``appended`` (a suffix of ``incoming`` without its
    system messages, as :func:`merge_input` returns it) into the results it gives for
    ``answerable`` calls (the pending turn's calls without a result that the run would
    ask the client for) and the messages to append.

    A tool message is accepted only at the front of ``appended``, answering an answerable
    call once; the results returned are keyed by call id and carry the call's tool name.
    Anything else — an unknown call, a second result, a result after another message, a
    result where no turn is pending (a new or finished session) — raises
    ``InvalidArgument`` (``INVALID_MESSAGE``) naming its index in ``incoming`` and its
    call id. Nothing has been changed when it raises.
    """
    calls = {c.id: c for c in answerable}
    where = [k for k, m in enumerate(incoming) if m.role is not Role.SYSTEM]
    where = where[len(where) - len(appended) :]
    answers: dict[str, Message] = {}
    rest: list[Message] = []
    for k, m in zip(where, appended):
        if m.role is not Role.TOOL:
            rest.append(m)
            continue
        call = calls.get(m.tool_call_id)
        if call is None or rest or m.tool_call_id in answers:
            raise InvalidArgument(
                f"input[{k}] is a result for tool call {m.tool_call_id!r}, "
                f"{_why_not(m.tool_call_id, calls, answers, rest)}",
                reason="INVALID_MESSAGE",
                session_id=session_id,
                index=k,
                tool_call_id=m.tool_call_id,
                field=f"input[{k}]",
            )
        answers[call.id] = Message(Role.TOOL, m.content, (), call.id, call.name, m.is_error)
    return answers, rest


def _why_not(
    call_id: str, calls: dict[str, ToolCall], answers: dict[str, Message], rest: list[Message]
) -> str:
    if call_id in answers:
        return "which this input already answers (one result per call, R20)"
    if call_id in calls:
        return "after a new message: results go directly after their tool-call turn (R23)"
    if not calls:
        return "but the session has no pending tool call waiting for a result"
    return f"which is not a pending call waiting for a result (pending: {', '.join(calls)})"
