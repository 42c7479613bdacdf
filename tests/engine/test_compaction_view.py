"""R85: whatever the protected tail, the transcript compaction sends the model never
separates a tool call from its result, keeps the system and pinned messages, and stands
for every model turn it drops (the summary's). Checked over transcripts of turns with
zero to three calls each, every protected tail from none to all of it."""

from __future__ import annotations

import random

import pytest

from luoshod.domain import Compacted, Compaction, CompactionStrategy, Message, Role, ToolCall
from luoshod.engine.compaction import _plan, view


def transcript(rng: random.Random, turns: int) -> list[Message]:
    out = [
        Message(Role.SYSTEM, "You help."),
        Message(Role.USER, "the task", pinned=True),
    ]
    for t in range(turns):
        if rng.random() < 0.2:
            out.append(Message(Role.USER, "u" * rng.randint(1, 400), pinned=rng.random() < 0.3))
        calls = tuple(
            ToolCall(f"c{t}_{k}", "fetch", "{}") for k in range(rng.choice((0, 1, 1, 2, 3)))
        )
        out.append(Message(Role.ASSISTANT, "a" * rng.randint(0, 600), calls))
        out += [Message(Role.TOOL, "r" * rng.randint(1, 2000), (), c.id, c.name) for c in calls]
    return out


def assert_pairs_whole(sent: list[Message]) -> None:
    for i, m in enumerate(sent):
        if m.role is Role.ASSISTANT and m.tool_calls:
            results = [r.tool_call_id for r in sent[i + 1 : i + 1 + len(m.tool_calls)]]
            assert results == [c.id for c in m.tool_calls], (i, results)
        if m.role is Role.TOOL:
            j = i - 1
            while sent[j].role is Role.TOOL:
                j -= 1
            assert sent[j].role is Role.ASSISTANT
            assert m.tool_call_id in {c.id for c in sent[j].tool_calls}


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("strategy", list(CompactionStrategy))
def test_r85_the_compacted_view_never_splits_a_call_from_its_result(
    seed: int, strategy: CompactionStrategy
) -> None:
    rng = random.Random(seed)
    messages = transcript(rng, rng.randint(1, 12))
    for protect in (0, 50, 200, 800, 100_000):
        conf = Compaction(protect_tokens=protect, strategy=strategy)
        plan = _plan(messages, Compacted(), conf, strategy)
        rec = Compacted(
            pruned_before=plan.prune_to,
            summarized_before=plan.cut,
            summary="S" if plan.cut else "",
        )
        sent, hidden = view(messages, rec)
        assert_pairs_whole(sent)
        head = messages[: rec.summarized_before]
        kept = [m for m in head if m.role is Role.SYSTEM or (m.pinned and m.role is Role.USER)]
        assert sent[: len(kept)] == kept  # system and pinned first, as they were
        assert hidden == sum(m.role is Role.ASSISTANT for m in head)
        # Every message after the summary's boundary is there, a pruned result as a marker.
        rest = sent[len(kept) + (1 if rec.summary else 0) :]
        assert [(m.role, m.tool_call_id) for m in rest] == [
            (m.role, m.tool_call_id) for m in messages[rec.summarized_before :]
        ]
        for m, orig in zip(rest, messages[rec.summarized_before :]):
            if m.content != orig.content:
                assert m.role is Role.TOOL and "removed to save context" in m.content
        if strategy is CompactionStrategy.PRUNE:
            assert rec.summarized_before == 0
        if strategy is CompactionStrategy.SUMMARIZE:
            assert rec.pruned_before == 0
        if protect == 100_000:  # all of it protected: nothing compacted
            assert sent == messages
