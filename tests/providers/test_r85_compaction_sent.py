"""R85 on the wire: what the OpenAI and Anthropic providers send once a transcript is
compacted, read from the fake model servers' requests over real HTTP. The fakes refuse
(HTTP 400, and fail the test) any transcript their API would refuse, so a tool call sent
without its result, or a result without its call, cannot pass. The context window comes
from the provider's entry of the daemon's configuration (``context_windows``); the
summary is written by the agent's own model, through the same provider."""

from __future__ import annotations

import json

from luosho.v1 import agent_pb2 as pb
from luoshod.engine.compaction import SUMMARIZE_INSTRUCTIONS, SUMMARY_HEADING
from tests.support.compaction import RESULT, SUMMARY
from tests.support.model_fakes import FakeServer, Seen, turn
from tests.support.providers import MODEL, StartDaemon, llm_agent

PINNED = "Read pages 1 to 4, and answer in French."
TURNS = [
    turn("a" * 300, ("fetch", {"page": 1})),
    turn("b" * 300, ("fetch", {"page": 2})),
    turn("c" * 1600, ("fetch", {"page": 3})),
    turn("d" * 1200, ("fetch", {"page": 4})),
    turn("Les quatre pages sont lues."),
]


def sent_text(seen: Seen) -> str:
    return json.dumps(seen.body)


async def test_r85_the_model_is_sent_the_compacted_transcript(
    fake: FakeServer, llm_daemon: StartDaemon
) -> None:
    fake.script = [*TURNS, turn(SUMMARY)]
    answered: list[int] = []

    def choose(seen: Seen) -> int:
        if SUMMARIZE_INSTRUCTIONS[:40] in sent_text(seen):
            return len(TURNS)  # the summary
        answered.append(1)
        return len(answered) - 1

    fake.choose = choose
    h = await llm_daemon(context_windows={MODEL: 1200})
    agent = llm_agent(
        {"fetch": {"type": "object", "properties": {"page": {"type": "integer"}}}},
        compaction=pb.Compaction(threshold=0.5, protect_tokens=100),
    )
    log = await h.run(
        "wire",
        [pb.Message(role=pb.ROLE_USER, content=PINNED, pinned=True)],
        agent,
        {"fetch": lambda a: {"page": a["page"], "body": RESULT}},
    )
    assert log.error is None, log.error
    assert log.done.finish_reason == pb.FINISH_REASON_STOP
    assert not fake.violations

    texts = [sent_text(s) for s in fake.requests]
    summaries = [i for i, t in enumerate(texts) if SUMMARIZE_INSTRUCTIONS[:40] in t]
    assert len(summaries) == 1 and len(texts) == 6
    # Calls 1 and 2: whole. Call 3: the two results pruned to a marker, the turns whole.
    assert texts[1].count(RESULT) == 1 and "removed to save context" not in texts[1]
    assert RESULT not in texts[2] and texts[2].count("removed to save context") == 2
    assert "a" * 300 in texts[2]
    # The summary call (before call 4) reads the turns it stands for, the results pruned.
    summary_call = texts[summaries[0]]
    assert "c" * 1600 in summary_call and RESULT not in summary_call
    # Calls 4 and 5: the pinned message, the summary, then only what came after it.
    for t in texts[summaries[0] + 1 :]:
        assert PINNED in t and SUMMARY_HEADING in t and SUMMARY in t
        assert "a" * 300 not in t and "c" * 1600 not in t
    cp = await h.get("wire")
    assert cp.compaction.summary == SUMMARY
    assert cp.total_usage.model_calls == 6  # five turns and the summary
