"""A tree of scripted sub-agents for the tests of a session's tasks (the HTTP API and the
console): a lead delegating to a ``researcher`` (which delegates to a ``helper`` whose
``delete`` needs approval) and a ``writer``, and the scripted turns that call them."""

from __future__ import annotations

from typing import Any

from luosho.v1 import agent_pb2 as pb
from tests.support.console import Console
from tests.support.harness import agent


def task_call(name: str, prompt: str, id_: str, **extra: str) -> dict[str, Any]:
    return {"name": "task", "arguments": {"agent": name, "prompt": prompt, **extra}, "id": id_}


def turn(*tool_calls: dict[str, Any]) -> dict[str, Any]:
    return {"text": "", "tool_calls": list(tool_calls)}


def sub(
    name: str,
    script: list[dict[str, Any]],
    tools: tuple[str, ...] = (),
    subagents: tuple[pb.SubAgent, ...] = (),
) -> pb.SubAgent:
    spec = agent(script, list(tools), instructions=f"You are the {name}.", model=f"scripted:{name}")
    spec.subagents.extend(subagents)
    return pb.SubAgent(name=name, description=f"the {name}", agent=spec)


def helper(script: list[dict[str, Any]]) -> pb.SubAgent:
    h = sub("helper", script, ("lookup",))
    h.agent.tools.append(pb.ToolSpec(name="delete", input_schema_json="{}", needs_approval=True))
    return h


def lead(script: list[dict[str, Any]], *subs: pb.SubAgent) -> pb.AgentSpec:
    spec = agent(
        script, ["note"], instructions="You lead.", model="scripted:lead", max_subagent_depth=2
    )
    spec.subagents.extend(subs)
    return spec


async def finished_tree(console: Console, session_id: str) -> None:
    researcher = sub(
        "researcher",
        [
            turn(task_call("helper", "dig", "h-1")),
            {"text": "researched"},
            {"text": "more research"},
        ],
        subagents=(helper([{"text": "helped"}]),),
    )
    writer = sub("writer", [{"text": "written"}])
    spec = lead(
        [
            turn(task_call("researcher", "a", "c-1")),
            turn(task_call("writer", "w", "c-2")),
            turn(task_call("researcher", "more", "c-3", task_id="task_1")),  # continued (R65)
            {"text": "done"},
        ],
        researcher,
        writer,
    )
    log = await console.app.run(session_id, "go", spec)
    assert log.done is not None and log.done.finish_reason == pb.FINISH_REASON_STOP, (
        log.types,
        log.error,
    )
