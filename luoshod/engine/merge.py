"""How new input joins a stored transcript (SEMANTICS.md R12–R17, "The merge, precisely")."""

from __future__ import annotations

from collections.abc import Sequence

from ..domain import Message, Role


def _common_prefix(a: Sequence[Message], b: Sequence[Message]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x.key() != y.key():
            break
        n += 1
    return n


def merge_input(stored: Sequence[Message], incoming: Sequence[Message], *, finished: bool) -> list[Message]:
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
