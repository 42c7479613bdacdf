"""Sub-agents: a lead agent hands a task to a researcher, whose `book` call needs a
person's approval; the run pauses, the approval is decided, and the run finishes.

Run the daemon with `make run` (the scripted models `scripted:lead` and
`scripted:researcher` play examples/scripts/lead.json and researcher.json), then:

    .venv/bin/python examples/subagents.py

The daemon is ``LUOSHOD_ADDRESS`` (or the first argument), else 127.0.0.1:50051. Each run
is a new session (``trip-sub-`` and a random suffix, or the second argument), so it can be
run any number of times.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid

from luosho.client import (
    Agent,
    AsyncClient,
    LuoshoError,
    SubAgent,
    Tool,
    ToolContext,
    UnavailableError,
    subagent_of,
)

researcher = Agent(
    "scripted:researcher",
    instructions="You research and book visits.",
    tools=[Tool("search"), Tool("book", needs_approval=True)],
)
lead = Agent(
    "scripted:lead",
    instructions="You plan trips.",
    subagents=[SubAgent("researcher", "looks things up and books visits", researcher)],
)


def search(args: dict, ctx: ToolContext) -> dict:
    who = ctx.subagent.name if ctx.subagent else "lead"  # which sub-agent asks
    print(f"  search for {who}: {args['query']} (call {ctx.tool_call_id})")
    return {"hours": "10:00-19:00"}


def book(args: dict) -> dict:
    return {"booked": args["order"]}


TOOLS = {"search": search, "book": book}


async def main(address: str = "", session_id: str = "") -> str:
    address = address or os.environ.get("LUOSHOD_ADDRESS") or "127.0.0.1:50051"
    session_id = session_id or f"trip-sub-{uuid.uuid4().hex[:6]}"
    print(f"session {session_id} on {address}")
    async with AsyncClient(address) as client:
        run = client.execute(
            session_id, "When is the Oceanarium open? Book it.", agent=lead, tools=TOOLS
        )
        async for event in run:
            sub = subagent_of(event)
            print(event.seq, event.type, f"[{'/'.join(sub.path)}]" if sub else "")
        result = await run
        print(result.finish_reason)  # awaiting_approval: the researcher's book call waits
        async for approval in client.approvals(session_id):
            print("approve", approval.tool_call.name, "for", list(approval.subagent_path))
            result = await client.resolve(approval.approval_id, True, tools=TOOLS)
        print(result.finish_reason, result.final_text)
        return result.final_text


if __name__ == "__main__":
    try:
        asyncio.run(main(*sys.argv[1:]))
    except UnavailableError as e:  # no daemon there (the client retried for about a minute)
        sys.exit(f"{e}\nIs the daemon running? `make run` starts it on 127.0.0.1:50051.")
    except LuoshoError as e:
        sys.exit(str(e))
