"""Each assistant turn records the model that produced it and that call's usage (R78),
the lead's and its sub-agents' alike, and the checkpoint's totals are their sum."""

from __future__ import annotations

from luoshod.domain import AgentSpec, Role, SubAgent, Usage
from tests.support.engine_harness import EngineHarness, agent, calls


def metered(text: str, prompt: int, completion: int, cost: float, **kw: int) -> dict:
    return {
        "text": text,
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "cost_usd": cost,
            **kw,
        },
    }


async def test_r78_each_turn_records_its_model_and_usage(h: EngineHarness) -> None:
    first = {**calls(("add", {"a": 1})), "usage": {"prompt_tokens": 100, "cost_usd": 0.25}}
    script = [first, metered("done", 120, 7, 0.5, cached_input_tokens=90, reasoning_tokens=3)]
    await h.run("u1", "go", agent(script, model="scripted:lead"), {"add": lambda a: a})
    cp = await h.get("u1")
    turns = [m for m in cp.messages if m.role is Role.ASSISTANT]
    assert [m.model for m in turns] == ["scripted:lead", "scripted:lead"]
    assert turns[0].usage == Usage(100, 0, 100, 1, 0.25)
    assert turns[1].usage == Usage(120, 7, 127, 1, 0.5, 90, 0, 3)
    assert cp.usage == Usage(220, 7, 227, 2, 0.75, 90, 0, 3) == cp.total_usage
    # Other messages record neither.
    assert all(m.model == "" and m.usage is None for m in cp.messages if m not in turns)


async def test_r78_a_subagent_turn_records_its_own_model(h: EngineHarness) -> None:
    helper = AgentSpec(
        "scripted:helper",
        model_settings_json='{"script": [{"text": "found", "usage": {"prompt_tokens": 40,'
        ' "completion_tokens": 2, "cost_usd": 0.125}}]}',
    )
    lead = agent(
        [calls(("task", {"agent": "helper", "prompt": "look"})), metered("ok", 10, 1, 0.0625)],
        (),
        model="scripted:lead",
        subagents=(SubAgent("helper", "finds", helper),),
    )
    await h.run("u2", "go", lead)
    cp = await h.get("u2")
    (task,) = cp.tasks.values()
    (sub_turn,) = [m for m in task.messages if m.role is Role.ASSISTANT]
    assert sub_turn.model == "scripted:helper"
    assert sub_turn.usage == Usage(40, 2, 42, 1, 0.125)
    lead_turns = [m for m in cp.messages if m.role is Role.ASSISTANT]
    assert [m.model for m in lead_turns] == ["scripted:lead", "scripted:lead"]
    assert cp.delegated_usage == Usage(40, 2, 42, 1, 0.125)
    lead_usage = [m.usage for m in lead_turns if m.usage is not None]
    assert cp.usage.cost_usd == sum(u.cost_usd for u in lead_usage) + 0.125
