"""A fake model server as a process of its own, for the tests of clients written in other
languages (Go, TypeScript, Java) that need a daemon calling a real HTTP model server.

    python tests/support/fake_model_server.py --wire anthropic --scenario refuse-continuation

prints one JSON line on stdout once it serves::

    {"base_url": "...", "stats_url": "http://127.0.0.1:PORT/stats",
     "config": "/tmp/.../luoshod.toml", "key_env": "LUOSHOD_FAKE_MODEL_KEY", "key": "...",
     "model": "llm:test-model", "tool": "lookup"}

Start the daemon with ``--config <config>`` and ``<key_env>=<key>`` in its environment; its
provider ``llm`` is this server (with the daemon's default retry settings unless
``--fast`` is given). ``GET <stats_url>`` answers ``{"requests": N, "turns": [...],
"statuses": [...]}``: every request's assistant-turn count (0 = the first model call of the
run, 1 = its continuation after the first tool results) and the HTTP status it got.

Scenarios:

- ``refuse-continuation``: the first model call answers a call of tool ``--tool`` (arguments
  ``{}``); every later one is refused with HTTP 400 ``invalid_request_error`` (what the
  Anthropic API answers to a continuation that dropped a thinking block).
- ``unavailable-for=SECONDS``: HTTP 503 ``overloaded_error`` for that many seconds after the
  first request, then the script above with a final answer instead of the refusal.
- ``ok``: a tool call, then a final answer ``"done"``.
- ``fallback``: HTTP 503 ``overloaded_error`` to every request naming a model other than
  ``test-model`` (an agent's model ``llm:down`` with the fallback ``llm:test-model``, R82);
  ``test-model`` answers ``"done"`` at once.

The process stops by itself after ``--max-seconds`` (default 600) or when stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent))

from model_fakes import WIRES, Fault, Seen, turn  # noqa: E402

KEY_ENV = "LUOSHOD_FAKE_MODEL_KEY"
MODEL = "test-model"
REFUSAL = {
    "anthropic": "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but "
    "found `tool_use`.",
    "openai": "Invalid parameter: messages with role 'tool' must be a response to a preceding "
    "message with 'tool_calls'.",
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wire", choices=sorted(WIRES), default="anthropic")
    ap.add_argument("--scenario", default="refuse-continuation")
    ap.add_argument("--tool", default="lookup")
    ap.add_argument(
        "--fast", action="store_true", help="the daemon retries fast (tests of retries)"
    )
    ap.add_argument("--dir", default="", help="where to write the config (default: a new temp dir)")
    ap.add_argument("--max-seconds", type=float, default=600.0)
    return ap.parse_args(argv)


def config_toml(kind: str, base_url: str, fast: bool) -> str:
    lines = [
        "[providers.llm]",
        f'kind = "{kind}"',
        f'base_url = "{base_url}"',
        f'api_key_env = "{KEY_ENV}"',
    ]
    if fast:
        lines += [
            "timeout_s = 2.0",
            "max_retries = 1",
            "backoff_base_s = 0.01",
            "backoff_max_s = 0.05",
        ]
    return "\n".join(lines) + "\n"


async def serve(args: argparse.Namespace) -> None:
    fake = WIRES[args.wire]()
    fake.key = "fake-model-key-0123456789"
    scenario, _, value = args.scenario.partition("=")
    first: list[float] = []
    if scenario == "refuse-continuation":
        fake.script = [turn("", (args.tool, {}))]

        def rule(seen: Seen) -> Fault | None:
            if seen.turn >= 1:
                return Fault(400, "invalid_request_error", message=REFUSAL[args.wire])
            return None

        fake.rule = rule
    elif scenario == "unavailable-for":
        seconds = float(value)
        fake.script = [turn("", (args.tool, {})), turn("done")]

        def rule(seen: Seen) -> Fault | None:
            first.append(seen.at) if not first else None
            if seen.at - first[0] < seconds:
                return Fault(503, "overloaded_error", message="Overloaded")
            return None

        fake.rule = rule
    elif scenario == "ok":
        fake.script = [turn("", (args.tool, {})), turn("done")]
    elif scenario == "fallback":
        fake.script = [turn("done")]

        def rule(seen: Seen) -> Fault | None:
            if seen.body.get("model") != MODEL:
                return Fault(503, "overloaded_error", message="Overloaded")
            return None

        fake.rule = rule
    else:
        raise SystemExit(f"unknown scenario {args.scenario!r}")
    await fake.start()

    async def stats(_: web.Request) -> web.Response:
        return web.json_response(
            {
                "requests": len(fake.requests),
                "turns": [s.turn for s in fake.requests],
                "statuses": [
                    s.status if s.fault is None else s.fault.status for s in fake.requests
                ],
                "violations": fake.violations,
            }
        )

    app = web.Application()
    app.router.add_get("/stats", stats)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    folder = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="fake-model-"))
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "luoshod.toml"
    config.write_text(config_toml(fake.kind, fake.base_url, args.fast))
    print(
        json.dumps(
            {
                "base_url": fake.base_url,
                "stats_url": f"http://127.0.0.1:{port}/stats",
                "config": str(config),
                "key_env": KEY_ENV,
                "key": fake.key,
                "model": f"llm:{MODEL}",
                "tool": args.tool,
            }
        ),
        flush=True,
    )
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    deadline = time.monotonic() + args.max_seconds
    try:
        while time.monotonic() < deadline and not stdin_closed.done():
            await asyncio.sleep(0.2)
    finally:
        await runner.cleanup()
        await fake.close()


def main(argv: list[str] | None = None) -> None:
    asyncio.run(serve(parse_args(argv)))


if __name__ == "__main__":
    main()
