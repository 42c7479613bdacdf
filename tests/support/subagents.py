"""Agents with sub-agents for the tests: a lead, a ``researcher`` and a ``helper``
sub-agent on scripted models, the ``task`` call that delegates to one, a ``lookup`` tool,
and the tool message answering a call in a checkpoint."""

from __future__ import annotations

from luosho.v1 import agent_pb2 as pb
from tests.support.harness import agent

RESEARCHER_INSTRUCTIONS = "You research."


def task(agent_name: str, prompt: str, **extra: str) -> tuple[str, dict]:
    return ("task", {"agent": agent_name, "prompt": prompt, "description": "d", **extra})


def researcher(script: list[dict], tools=("lookup",), subagents=(), **kw) -> pb.SubAgent:
    spec = agent(script, tools, instructions=RESEARCHER_INSTRUCTIONS, **kw)
    spec.subagents.extend(subagents)
    return pb.SubAgent(name="researcher", description="finds facts", agent=spec)


def lead(script: list[dict], subs: list[pb.SubAgent], tools=("add",), **kw) -> pb.AgentSpec:
    spec = agent(script, tools, instructions="You lead.", **kw)
    spec.subagents.extend(subs)
    return spec


def lookup(args):
    return {"fact": f"fact about {args.get('q', '?')}"}


def result_of(cp: pb.Checkpoint, call_id: str) -> pb.Message:
    return next(m for m in cp.messages if m.role == pb.ROLE_TOOL and m.tool_call_id == call_id)


def helper(script: list[dict]) -> pb.SubAgent:
    return pb.SubAgent(
        name="helper",
        description="helps",
        agent=agent(script, ("lookup",), instructions="You help."),
    )
