"""Quickstart: a scripted travel agent whose two tools run here, in the caller.

    make run                                # terminal 1: the daemon on 127.0.0.1:50051
    .venv/bin/python examples/quickstart.py # terminal 2
"""

import asyncio
import sys

from luosho.client import Agent, AsyncClient, Tool

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


async def main(target: str = "127.0.0.1:50051", session_id: str = "trip-1") -> str:
    async with AsyncClient(target) as client:
        run = client.execute(
            session_id, "Plan a day in Lisbon", agent=agent,
            tools={"get_weather": get_weather, "convert": convert},
        )
        async for event in run:
            print(f"{event.seq:>3} {event.type}")
        result = await run
        print(result.finish_reason, "-", result.final_text)
        return result.final_text


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
