"""docs/reference/rules.md R12–R17, "the merge, precisely": how new input joins a stored
transcript."""

from __future__ import annotations

import pytest

from luoshod.domain import Message, Role
from luoshod.engine.merge import merge_input

U, A, S = Role.USER, Role.ASSISTANT, Role.SYSTEM


def m(role: Role, text: str) -> Message:
    return Message(role, text)


@pytest.mark.parametrize(
    ("stored", "incoming", "finished", "expected"),
    [
        ([m(S, "s"), m(U, "q"), m(A, "a")], [m(U, "q2")], True, [m(U, "q2")]),  # R14
        (
            [m(S, "s"), m(U, "q"), m(A, "a")],
            [m(U, "q"), m(A, "a"), m(U, "q2")],
            True,
            [m(U, "q2")],
        ),  # R15
        ([m(U, "q"), m(A, "a")], [m(U, "q")], True, [m(U, "q")]),  # R16
        ([m(U, "q"), m(A, "a")], [m(S, "new"), m(U, "q2")], True, [m(U, "q2")]),  # R17
        ([m(U, "q"), m(A, "a")], [m(U, "q")], False, []),  # R13 retry
        ([m(U, "q1"), m(A, "a"), m(U, "q2"), m(A, "b")], [m(U, "q2")], False, []),  # R13
        ([m(U, "q"), m(A, "a")], [], False, []),  # empty input only resumes
        ([m(U, "q"), m(A, "a")], [m(U, "other")], False, [m(U, "other")]),  # R12
    ],
)
def test_merge(stored, incoming, finished, expected) -> None:
    assert merge_input(stored, incoming, finished=finished) == expected
