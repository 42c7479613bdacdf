"""A daily report agent: a schedule fires it each weekday at 09:00 in Berlin; the run asks
the editor a question; the answer (from the console's Approvals page, `luoshod approvals
answer`, or here) lets it finish.

    make run                                       # terminal 1: the daemon
    .venv/bin/python examples/daily_report.py      # terminal 2

The daemon is ``LUOSHOD_ADDRESS`` (or the first argument), else 127.0.0.1:50051. Rather
than wait for 09:00, the script fires the schedule once now (``trigger_schedule``), waits
for the question, and answers it itself with the second argument ("weekly" by default),
as a person would in the console.
"""

import asyncio
import os
import sys

from luosho.client import Agent, AsyncClient, LuoshoError, Tool

agent = Agent(
    # Plays its script; use "openai:gpt-4o-mini" (and drop model_settings) for real.
    "scripted:report",
    instructions="You write the team's daily report. Ask the editor what you need to know.",
    tools=[Tool("ask_editor", question=True)],
    model_settings={
        "script": [
            {
                "text": "",
                "tool_calls": [
                    {
                        "name": "ask_editor",
                        "arguments": {"question": "Daily or weekly numbers in today's report?"},
                    }
                ],
            },
            {"text": "Report sent, with the numbers the editor asked for."},
        ]
    },
)


async def main(target: str = "", answer: str = "weekly") -> str:
    target = target or os.environ.get("LUOSHOD_ADDRESS") or "127.0.0.1:50051"
    async with AsyncClient(target) as client:
        try:
            await client.create_schedule(
                "daily-report",
                agent,
                "Write today's report.",
                cron="0 9 * * 1-5",
                time_zone="Europe/Berlin",
            )
        except LuoshoError as e:
            if e.reason != "SCHEDULE_EXISTS":
                raise
        [shown] = [s for s in await client.schedules() if s.spec.name == "daily-report"]
        print(f"daily-report fires next at {shown.next_fire.ToDatetime():%Y-%m-%d %H:%M} UTC")
        fired = await client.trigger_schedule("daily-report")  # once now, not at 09:00
        print(f"fired now: session {fired.session_id}")
        for _ in range(600):  # the run asks its question in a moment
            asked = [a async for a in client.approvals(fired.session_id)]
            if asked:
                break
            await asyncio.sleep(0.05)
        else:
            raise SystemExit("the run asked no question")
        question = asked[0]
        print(f"asked: {question.question}")
        print(f"answering: {answer}")
        done = await client.resolve(
            question.approval_id, True, answer=answer, session_id=fired.session_id
        )
        print(f"{done.status}: {done.final_text}")
        return done.final_text


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:3]))
