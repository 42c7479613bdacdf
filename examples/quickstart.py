"""Quickstart: a scripted travel agent whose two tools run here, in the caller.

    make run                                # terminal 1: the daemon on 127.0.0.1:50051
    .venv/bin/python examples/quickstart.py # terminal 2

The daemon is ``LUOSHOD_ADDRESS`` (or the first argument), else 127.0.0.1:50051. Each run
is a new session (``trip-`` and a random suffix, or the second argument), so running it
again plays the whole script again rather than continuing a finished conversation.
"""

import asyncio
import os
import sys
import uuid

from luosho.client import Agent, AsyncClient, LuoshoError, Tool, UnavailableError

agent = Agent(
    "scripted:demo",  # plays examples/scripts/demo.json; use "openai:gpt-4o-mini" for real
    instructions="You are a travel agent.",
    tools=[
        Tool("get_weather", input_schema={"type": "object", "required": ["city"]}),
        Tool("convert", input_schema={"type": "object"}),
    ],
)


def get_weather(args: dict) -> dict:
    return {"city": args["city"], "sky": "sunny", "celsius": 24}


def convert(args: dict) -> float:
    return round(args["amount"] * 1.08, 2)


async def main(target: str = "", session_id: str = "") -> str:
    target = target or os.environ.get("LUOSHOD_ADDRESS") or "127.0.0.1:50051"
    session_id = session_id or f"trip-{uuid.uuid4().hex[:6]}"
    print(f"session {session_id} on {target}")
    async with AsyncClient(target) as client:
        run = client.execute(
            session_id,
            "Plan a day in Lisbon",
            agent=agent,
            tools={"get_weather": get_weather, "convert": convert},
        )
        async for event in run:
            print(f"{event.seq:>3} {event.type}")
        result = await run
        print(result.finish_reason, "-", result.final_text)
        return result.final_text


if __name__ == "__main__":
    try:
        asyncio.run(main(*sys.argv[1:]))
    except UnavailableError as e:  # no daemon there (the client retried for about a minute)
        sys.exit(f"{e}\nIs the daemon running? `make run` starts it on 127.0.0.1:50051.")
    except LuoshoError as e:
        sys.exit(str(e))
