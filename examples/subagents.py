"""Sub-agents: a lead agent hands a task to a researcher, whose `book` call needs a
person's approval; the run pauses, the approval is decided, and the run finishes.

Run the daemon with `make run` (the scripted models `scripted:lead` and
`scripted:researcher` play examples/scripts/lead.json and researcher.json), then:

    .venv/bin/python examples/subagents.py
"""

from __future__ import annotations

import asyncio
import sys

from luosho.client import Agent, AsyncClient, SubAgent, Tool, ToolContext, subagent_of

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


async def main(address: str = "127.0.0.1:50051") -> str:
    async with AsyncClient(address) as client:
        run = client.execute("trip-sub-1", "When is the Oceanarium open? Book it.", agent=lead, tools=TOOLS)
        async for event in run:
            sub = subagent_of(event)
            print(event.seq, event.type, f"[{'/'.join(sub.path)}]" if sub else "")
        paused = await run
        print(paused.finish_reason)  # awaiting_approval: the researcher's book call waits
        async for approval in client.approvals("trip-sub-1"):
            print("approve", approval.tool_call.name, "for", list(approval.subagent_path))
            result = await client.resolve(approval.approval_id, True, tools=TOOLS)
        print(result.finish_reason, result.final_text)
        return result.final_text


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
