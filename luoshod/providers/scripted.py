"""``scripted:``: deterministic model turns for tests, demos and clients' own tests.

The script is a list of turns, given in the agent's model settings (``{"script": [...]}``)
or in ``<scripts_dir>/<name>.json`` on the daemon's host. A turn is::

    {"text": "...",                                  # optional
     "tool_calls": [{"name": "add", "arguments": {"a": 1}, "id": "optional"}],
     "usage": {"prompt_tokens": 3, ...},             # optional, else estimated
     "delay_ms": 0,                                  # optional: a slow model
     "reasoning": ["..."],                           # optional: thinking (R84)
     "error": "..."}                                 # optional: this call fails

Each ``reasoning`` text is reported as it is played (``reasoning.delta``) and kept with the
turn as a block of provider ``scripted``, as a remote provider keeps its thinking.

A ``"price"`` setting beside the script (``{"prompt_per_mtok": 1,
"completion_per_mtok": 2}``, the keys of a price-table entry) is the model's price: the
calls whose usage reports no cost are priced by it, as the price table prices a remote
model (R78). A ``"context_window"`` setting (tokens) is the model's context window (R85).
A request that compaction shortened chooses its turn by the whole transcript
(``ModelRequest.compacted_turns`` added).

The turn played is chosen by the number of assistant messages already in the transcript,
so the provider keeps no state: a daemon restarted after a crash plays the same turn, and
tool-call ids (``call_<turn>_<n>`` unless given) are stable. Past the end of the script
the model answers "(end of script)" without tools, which ends the run. ``scripted:echo``
with no script answers with the last user message.

A turn's ``usage`` states what the call reports, as a provider would: ``prompt_tokens``,
``completion_tokens``, ``total_tokens`` (default: their sum), ``cost_usd``,
``cached_input_tokens``, ``cache_write_tokens`` and ``reasoning_tokens`` (each 0 when left
out). Without it the usage is estimated from the text's length (a token per 4 characters),
with no cost.

``call_log`` (daemon option) appends one JSON line per model call (the session, the model
after ``scripted:``, the turn), so tests can count calls across daemon restarts, per
sub-agent when each level has a model name of its own.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from ..config import ConfigFileError, Price
from ..config import _price as parse_price
from ..domain import ReasoningBlock, Role, ToolCall, Usage
from ..errors import InvalidArgument, ProviderError
from .base import ModelRequest, ModelResponse, Provider
from .pricing import call_cost

END_OF_SCRIPT = "(end of script)"
_TURN_KEYS = {"text", "tool_calls", "usage", "delay_ms", "error", "reasoning"}


class ScriptedProvider(Provider):
    name = "scripted"

    def __init__(self, *, scripts_dir: Path | None = None, call_log: Path | None = None) -> None:
        self.scripts_dir = scripts_dir
        self.call_log = call_log

    def _script(
        self, model: str, settings: dict[str, Any], *, check: bool = True
    ) -> list[dict[str, Any]] | None:
        if "script" in settings:
            script = settings["script"]
        elif self.scripts_dir and (path := self.scripts_dir / f"{model}.json").is_file():
            try:
                script = json.loads(path.read_text())
            except (OSError, ValueError) as e:
                raise InvalidArgument(
                    f"script file {path} is unreadable: {e}", reason="INVALID_SCRIPT", model=model
                ) from e
        elif model == "echo":
            return None
        else:
            raise InvalidArgument(
                f"scripted model {model!r} has no script: pass model_settings_json "
                '{"script": [...]} or put a file in the daemon\'s scripts dir',
                reason="MODEL_NOT_FOUND",
                model=f"scripted:{model}",
            )
        if check:
            _check_script(script, model)
        return script

    def validate(self, model: str, settings: dict[str, Any]) -> None:
        self._script(model, settings)
        self.price(model, settings)

    def price(self, model: str, settings: dict[str, Any]) -> Price | None:
        if "price" not in settings:
            return None
        try:
            return parse_price(settings["price"], "model_settings_json.price")
        except ConfigFileError as e:
            raise InvalidArgument(
                f"invalid price for scripted:{model}: {e}", reason="INVALID_MODEL_SETTINGS"
            ) from None

    def context_window(self, model: str, settings: dict[str, Any]) -> int | None:
        n = settings.get("context_window")
        return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None

    def reports_cost(self, model: str, settings: dict[str, Any]) -> bool:
        script = self._script(model, settings, check=False)
        if not script:
            return False
        return all("cost_usd" in turn.get("usage", {}) for turn in script if isinstance(turn, dict))

    async def complete(self, request: ModelRequest) -> ModelResponse:
        resp = await self._complete(request)
        if "price" in request.settings:
            resp.usage.cost_usd = call_cost(resp.usage, self.price(request.model, request.settings))
        return resp

    async def _complete(self, request: ModelRequest) -> ModelResponse:
        # validate() checked the script when the request arrived; this is the hot path.
        script = self._script(request.model, request.settings, check=False)
        turn_no = request.compacted_turns + sum(
            1 for m in request.messages if m.role is Role.ASSISTANT
        )
        if self.call_log:
            with self.call_log.open("a") as f:
                f.write(
                    json.dumps(
                        {"session_id": request.session_id, "model": request.model, "turn": turn_no}
                    )
                    + "\n"
                )
        if script is None:
            last_user = next((m for m in reversed(request.messages) if m.role is Role.USER), None)
            return _response(request.messages, last_user.content if last_user else "", ())
        if turn_no >= len(script):
            return _response(request.messages, END_OF_SCRIPT, ())
        turn = script[turn_no]
        if delay := turn.get("delay_ms"):
            await asyncio.sleep(delay / 1000)
        if "error" in turn:
            raise ProviderError(
                f"scripted provider error at turn {turn_no}: {turn['error']}",
                provider="scripted",
                turn=turn_no,
            )
        calls = tuple(
            ToolCall(
                c.get("id") or f"call_{turn_no}_{n}",
                c["name"],
                a if isinstance(a := c.get("arguments", {}), str) else json.dumps(a),
            )
            for n, c in enumerate(turn.get("tool_calls", ()))
        )
        resp = _response(request.messages, turn.get("text", ""), calls)
        if "usage" in turn:
            resp = ModelResponse(resp.text, resp.tool_calls, _usage(turn["usage"]))
        if thoughts := turn.get("reasoning"):
            blocks = []
            for text in thoughts:
                if request.on_reasoning is not None:
                    await request.on_reasoning(text)
                raw = json.dumps({"type": "thinking", "thinking": text}, ensure_ascii=False)
                blocks.append(ReasoningBlock("scripted", raw, text))
            resp = ModelResponse(resp.text, resp.tool_calls, resp.usage, reasoning=tuple(blocks))
        return resp


def _response(messages: Any, text: str, calls: tuple[ToolCall, ...]) -> ModelResponse:
    prompt = sum(len(m.content) for m in messages) // 4 + 1
    completion = len(text) // 4 + 8 * len(calls) + 1
    return ModelResponse(text, calls, Usage(prompt, completion, prompt + completion, 1))


_USAGE_KEYS = {
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "cost_usd",
    "cached_input_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
}


def _usage(d: dict[str, Any]) -> Usage:
    u = Usage(
        int(d.get("prompt_tokens", 0)),
        int(d.get("completion_tokens", 0)),
        int(d.get("total_tokens", 0)),
        1,
        float(d.get("cost_usd", 0.0)),
        int(d.get("cached_input_tokens", 0)),
        int(d.get("cache_write_tokens", 0)),
        int(d.get("reasoning_tokens", 0)),
    )
    u.total_tokens = u.total_tokens or u.prompt_tokens + u.completion_tokens
    return u


def _check_script(script: Any, model: str) -> None:
    def bad(why: str) -> InvalidArgument:
        return InvalidArgument(
            f"invalid script for scripted:{model}: {why}", reason="INVALID_SCRIPT"
        )

    if not isinstance(script, list):
        raise bad("the script must be a JSON array of turns")
    for n, turn in enumerate(script):
        if not isinstance(turn, dict):
            raise bad(f"turn {n} is not an object")
        if unknown := set(turn) - _TURN_KEYS:
            raise bad(f"turn {n} has unknown keys {sorted(unknown)}")
        if not isinstance(turn.get("text", ""), str):
            raise bad(f"turn {n}: text must be a string")
        calls = turn.get("tool_calls", [])
        if not isinstance(calls, list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls
        ):
            raise bad(f"turn {n}: tool_calls must be a list of objects with a name")
        for c in calls:
            args = c.get("arguments", {})
            if isinstance(args, str):
                try:
                    json.loads(args)
                except ValueError:
                    raise bad(f"turn {n}: arguments of {c['name']!r} are not JSON") from None
        thoughts = turn.get("reasoning", [])
        if not isinstance(thoughts, list) or not all(isinstance(t, str) for t in thoughts):
            raise bad(f"turn {n}: reasoning must be a list of strings")
        if not isinstance(turn.get("delay_ms", 0), int | float):
            raise bad(f"turn {n}: delay_ms must be a number")
        usage = turn.get("usage", {})
        if not isinstance(usage, dict):
            raise bad(f"turn {n}: usage must be an object")
        if unknown := set(usage) - _USAGE_KEYS:
            raise bad(f"turn {n}: usage has unknown keys {sorted(unknown)}")
        if not all(isinstance(v, int | float) and v >= 0 for v in usage.values()):
            raise bad(f"turn {n}: usage counts must be numbers >= 0")


__all__ = ["ScriptedProvider", "END_OF_SCRIPT"]
