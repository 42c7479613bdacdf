"""Agents for the null server (and the daemon's scripted provider): a script of turns."""

from __future__ import annotations

from typing import Any

from luosho.client import Agent, Tool


def calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One turn asking for tool calls: calls(("add", {"a": 1}), …)."""
    return {"tool_calls": [{"name": name, "arguments": args} for name, args in calls]}


def text(content: str) -> dict[str, Any]:
    """One turn answering with text (the run stops)."""
    return {"text": content}


def scripted(*turns: dict[str, Any], tools: tuple[str, ...] = (), **limits: Any) -> Agent:
    return Agent(
        "scripted:test",
        tools=[Tool(name, input_schema={"type": "object"}) for name in tools],
        model_settings={"script": list(turns)},
        **limits,
    )
