"""Checks of an agent's sub-agents (docs/reference/rules.md R55, R57): each bad declaration is
``INVALID_ARGUMENT`` with its own reason before anything runs or is stored.

The daemon's limits are fixed here: how deep a tree of sub-agents may be declared or
delegated (``MAX_SUBAGENT_DEPTH``), how many sub-agents one agent declares, and how large
one sub-agent's encoded spec may be (it is saved with every checkpoint of the session).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from luosho.v1 import agent_pb2 as pb

from ..domain import TASK_TOOL
from ..errors import InvalidArgument

SUBAGENT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The deepest tree of sub-agents the daemon runs (``max_subagent_depth`` above it is refused).
MAX_SUBAGENT_DEPTH = 4
#: Sub-agents one agent may declare.
MAX_SUBAGENTS = 32
#: The largest encoded ``AgentSpec`` of one sub-agent (its own sub-agents included).
MAX_SUBAGENT_SPEC_BYTES = 64 * 1024
MAX_DESCRIPTION_CHARS = 1024


def check(
    agent: pb.AgentSpec,
    field: str,
    check_agent: Callable[[pb.AgentSpec, str], object],
    *,
    level: int = 0,
) -> None:
    """Check ``agent``'s sub-agent declarations, each nested agent with ``check_agent``
    (``level``: how deep ``agent`` itself is in the tree, 0 for the top-level agent)."""
    if agent.HasField("max_subagent_depth"):
        depth = agent.max_subagent_depth
        if depth < 0 or depth > MAX_SUBAGENT_DEPTH:
            raise InvalidArgument(
                f"{field}.max_subagent_depth must be 0..{MAX_SUBAGENT_DEPTH} (the daemon's "
                f"limit), got {depth}",
                reason="SUBAGENT_DEPTH_OVER_LIMIT",
                field=f"{field}.max_subagent_depth",
                max_subagent_depth=depth,
                limit=MAX_SUBAGENT_DEPTH,
            )
    if not agent.subagents:
        return
    if level >= MAX_SUBAGENT_DEPTH:
        raise InvalidArgument(
            f"{field} declares sub-agents {level + 1} levels deep, over the daemon's limit "
            f"of {MAX_SUBAGENT_DEPTH}",
            reason="SUBAGENT_DEPTH_OVER_LIMIT",
            field=f"{field}.subagents",
            limit=MAX_SUBAGENT_DEPTH,
        )
    if len(agent.subagents) > MAX_SUBAGENTS:
        raise InvalidArgument(
            f"{field} declares {len(agent.subagents)} sub-agents, over the limit of "
            f"{MAX_SUBAGENTS}",
            reason="TOO_MANY_SUBAGENTS",
            field=f"{field}.subagents",
            limit=MAX_SUBAGENTS,
        )
    if clash := next((t for t in agent.tools if t.name == TASK_TOOL.name), None):
        raise InvalidArgument(
            f"{field} declares a tool named {clash.name!r}, the tool through which an agent "
            "with sub-agents delegates: rename the tool",
            reason="TASK_TOOL_CLASH",
            field=f"{field}.tools",
            tool=clash.name,
        )
    seen: set[str] = set()
    for n, sub in enumerate(agent.subagents):
        where = f"{field}.subagents[{n}]"
        if not SUBAGENT_NAME.fullmatch(sub.name):
            raise InvalidArgument(
                f"{where}.name {sub.name[:80]!r} is invalid: 1-64 characters of A-Z a-z 0-9 _ -",
                reason="INVALID_SUBAGENT_NAME",
                field=f"{where}.name",
            )
        if sub.name in seen:
            raise InvalidArgument(
                f"sub-agent name {sub.name!r} is declared twice in {field}",
                reason="DUPLICATE_SUBAGENT_NAME",
                field=f"{where}.name",
                subagent=sub.name,
            )
        seen.add(sub.name)
        if not sub.description.strip():
            raise InvalidArgument(
                f"{where} ({sub.name!r}) has no description: the lead's model chooses a "
                "sub-agent by it",
                reason="SUBAGENT_DESCRIPTION_REQUIRED",
                field=f"{where}.description",
                subagent=sub.name,
            )
        if len(sub.description) > MAX_DESCRIPTION_CHARS:
            raise InvalidArgument(
                f"{where}.description is {len(sub.description)} characters, over the limit "
                f"of {MAX_DESCRIPTION_CHARS}",
                reason="SUBAGENT_DESCRIPTION_TOO_LONG",
                field=f"{where}.description",
                limit=MAX_DESCRIPTION_CHARS,
            )
        if not sub.HasField("agent"):
            raise InvalidArgument(
                f"{where} ({sub.name!r}) has no agent",
                reason="INVALID_SUBAGENT",
                field=f"{where}.agent",
                subagent=sub.name,
            )
        size = sub.agent.ByteSize()
        if size > MAX_SUBAGENT_SPEC_BYTES:
            raise InvalidArgument(
                f"{where}.agent ({sub.name!r}) is {size} bytes encoded, over the limit of "
                f"{MAX_SUBAGENT_SPEC_BYTES}",
                reason="SUBAGENT_SPEC_TOO_LARGE",
                field=f"{where}.agent",
                subagent=sub.name,
                size=size,
                limit=MAX_SUBAGENT_SPEC_BYTES,
            )
        if sub.agent.HasField("max_subagent_depth"):
            raise InvalidArgument(
                f"{where}.agent.max_subagent_depth is set: the depth is the top-level "
                "agent's alone (R57)",
                reason="INVALID_SUBAGENT",
                field=f"{where}.agent.max_subagent_depth",
                subagent=sub.name,
            )
        check_agent(sub.agent, f"{where}.agent")
        check(sub.agent, f"{where}.agent", check_agent, level=level + 1)
