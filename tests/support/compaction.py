"""An agent that compacts (docs/reference/rules.md R85), for the compaction tests: the
scripted model ``scripted:pages`` with a context window of :data:`WINDOW` tokens reading
four long pages, and summaries written by ``scripted:sum``."""

from __future__ import annotations

import json
from typing import Any

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import calls

WINDOW = 1000  # tokens; the threshold 0.5 is 500 tokens, about 2,000 characters
RESULT = "r" * 1500  # a tool result of about 375 tokens
SUMMARY = "The user asked for four pages; three were fetched and read."
#: Short turns (compaction 1 prunes enough), then long ones (compaction 2 must summarize).
SCRIPT = [
    calls(("fetch", {"page": 1}), text="a" * 300),
    calls(("fetch", {"page": 2}), text="b" * 300),
    calls(("fetch", {"page": 3}), text="c" * 1200),
    calls(("fetch", {"page": 4}), text="d" * 1200),
    {"text": "All four pages read."},
]
FETCH = {"fetch": lambda a: {"page": a["page"], "body": RESULT}}


def spec(
    script: list[dict[str, Any]] = SCRIPT,
    *,
    summarizer: list[dict[str, Any]] | None = None,
    compaction: pb.Compaction | None = None,
    window: int | None = WINDOW,
) -> pb.AgentSpec:
    settings: dict[str, Any] = {"script": script}
    if window is not None:
        settings["context_window"] = window
    if compaction is None:
        compaction = pb.Compaction(
            threshold=0.5,
            protect_tokens=100,
            model="scripted:sum",
            model_settings_json=json.dumps({"script": summarizer or [{"text": SUMMARY}]}),
        )
    return pb.AgentSpec(
        model="scripted:pages",
        instructions="You read pages.",
        tools=[pb.ToolSpec(name="fetch", input_schema_json='{"type":"object"}')],
        model_settings_json=json.dumps(settings),
        compaction=compaction,
    )


def go() -> list[pb.Message]:
    return [pb.Message(role=pb.ROLE_USER, content="Read pages 1 to 4.", pinned=True)]


#: USD per million tokens of both scripted models when a test prices them (R78).
PRICE = {"prompt_per_mtok": 1000.0, "completion_per_mtok": 2000.0}
#: The most tokens a priced agent's turn may write (its worst case's output, R79); the
#: summarizing model has no ``max_tokens``, so its worst case writes 4,096.
MAX_TOKENS = 400


def priced(agent: pb.AgentSpec) -> pb.AgentSpec:
    """``agent`` (made by :func:`spec`) with both its models priced at :data:`PRICE` and
    its turns' ``max_tokens`` at :data:`MAX_TOKENS`, so a cost limit can apply (R78)."""
    settings = json.loads(agent.model_settings_json)
    settings.update(price=PRICE, max_tokens=MAX_TOKENS)
    agent.model_settings_json = json.dumps(settings)
    summarizing = json.loads(agent.compaction.model_settings_json)
    summarizing["price"] = PRICE
    agent.compaction.model_settings_json = json.dumps(summarizing)
    return agent
