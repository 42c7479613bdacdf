"""What the providers that call a model over HTTP share.

A :class:`RemoteProvider` is built from one ``[providers.NAME]`` entry of the config file.
It checks the agent's model settings against an allow-list when a request arrives
(``validate``), retries transient failures with the one policy of ``retry.py``, paces the
calls of a session, and of a model, that keep failing (``guard.py``, one per daemon), prices the
usage from the entry's price table, and makes tool-call ids usable as idempotency keys. A
subclass maps our transcript to its wire format and back in ``_attempt`` (one HTTP call)
and its SDK's exceptions to a :class:`~.retry.Failure` in ``_classify``.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..config import Price, ProviderConfig
from ..domain import Message, Role, ToolCall
from ..errors import InvalidArgument, ProviderError
from .base import ModelRequest, ModelResponse, Provider
from .guard import GuardPolicy, ModelGuard
from .pricing import call_cost
from .retry import Failure, RetryPolicy, call_with_retries

OnText = Callable[[str], Awaitable[None]]
#: (check, what the value must be) for one model setting.
Setting = tuple[Callable[[Any], bool], str]


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


NUMBER: Setting = (_is_number, "a number")
INTEGER: Setting = (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer")
POSITIVE_INT: Setting = (lambda v: INTEGER[0](v) and v > 0, "an integer > 0")
STRING: Setting = (lambda v: isinstance(v, str), "a string")
STRINGS: Setting = (
    lambda v: isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v)),
    "a string or a list of strings",
)
BOOLEAN: Setting = (lambda v: isinstance(v, bool), "true or false")
OBJECT: Setting = (lambda v: isinstance(v, dict), "a JSON object")
STRING_OR_OBJECT: Setting = (lambda v: isinstance(v, str | dict), "a string or a JSON object")

#: Settings every remote provider takes: ``stream`` (text.delta events while the model
#: writes) and ``extra_body`` (fields merged into the request body as they are, for a
#: server's own parameters).
COMMON_SETTINGS: dict[str, Setting] = {"stream": BOOLEAN, "extra_body": OBJECT}
OWN_SETTINGS = frozenset(COMMON_SETTINGS)
#: Request fields the daemon sets from the transcript and the agent.
RESERVED_FIELDS = frozenset({"model", "messages", "system", "tools", "stream", "stream_options"})


class MalformedResponse(Exception):
    """The server answered 2xx with something that is not a model turn."""


class IncompleteResponse(Exception):
    """A streamed answer ended before the model finished (a cut connection): transient."""


#: A key the SDKs insist on when the entry names none (local servers take no key).
NO_KEY = "no-key"


class RemoteProvider(Provider):
    kind: str
    #: The allow-list of model settings: unknown keys are refused when a request arrives.
    SETTINGS: Mapping[str, Setting]
    #: The SDK's async client class (``AsyncOpenAI``, ``AsyncAnthropic``): ``self.client``
    #: is one, built from the entry's key, URL and timeout, closed by :meth:`aclose`.
    CLIENT: Callable[..., Any]

    def __init__(self, config: ProviderConfig, guard: ModelGuard | None = None) -> None:
        self.name = config.name
        self.config = config
        self.policy = RetryPolicy(config.max_retries, config.backoff_base_s, config.backoff_max_s)
        self.guard = guard if guard is not None else ModelGuard()
        self.guard_policy = GuardPolicy(
            config.failure_backoff_base_s,
            config.failure_backoff_max_s,
            config.circuit_failures,
            config.circuit_open_s,
        )
        self._secrets = (config.api_key.reveal(),) if config.api_key else ()
        self.client = self.CLIENT(
            api_key=config.api_key.reveal() if config.api_key else NO_KEY,
            base_url=config.base_url,
            timeout=config.timeout_s,
            max_retries=0,  # retries are ours (retry.py)
        )

    async def aclose(self) -> None:
        await self.client.close()

    def validate(self, model: str, settings: dict[str, Any]) -> None:
        check_settings(f"{self.name}:{model}", settings, self.SETTINGS)
        taken = sorted(set(settings.get("extra_body", {})) & RESERVED_FIELDS)
        if taken:
            raise InvalidArgument(
                f"model_settings_json.extra_body may not set {', '.join(taken)}: the daemon does",
                reason="INVALID_MODEL_SETTINGS",
                field="agent.model_settings_json.extra_body",
            )

    def price(self, model: str, settings: dict[str, Any]) -> Price | None:
        return self.config.prices.get(model)

    def context_window(self, model: str, settings: dict[str, Any]) -> int | None:
        return self.config.context_windows.get(model)

    def ready(self, model: str, session_id: str, scope: str = "") -> None:
        self.guard.before_call(self.guard_policy, self.name, model, session_id, scope, probe=False)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        on_text = request.on_text if request.settings.get("stream") else None
        who = (self.name, request.model, request.session_id, request.scope)
        self.guard.before_call(self.guard_policy, *who)
        try:
            resp = await call_with_retries(
                lambda: self._attempt(request, on_text),
                self._failure,
                self.policy,
                provider=self.name,
                model=request.model,
                secrets=self._secrets,
                on_retry=request.on_retry,
            )
        except ProviderError as e:
            e.metadata["session_id"] = request.session_id
            self.guard.failed(self.guard_policy, e, *who)
            raise
        except BaseException:
            self.guard.released(self.name, request.model)
            raise
        self.guard.succeeded(*who)
        usage = resp.usage
        usage.model_calls = 1
        usage.total_tokens = usage.prompt_tokens + usage.completion_tokens
        usage.cost_usd = call_cost(usage, self.config.prices.get(request.model))
        calls = unique_call_ids(resp.tool_calls, request.messages)
        return ModelResponse(resp.text, calls, usage, resp.model, resp.reasoning)

    def _failure(self, e: Exception) -> Failure | None:
        if isinstance(e, MalformedResponse):
            return Failure(False, "malformed_response", str(e))
        if isinstance(e, IncompleteResponse):
            return Failure(True, "incomplete_response", str(e))
        return self._classify(e)

    @abc.abstractmethod
    async def _attempt(self, request: ModelRequest, on_text: OnText | None) -> ModelResponse:
        """One HTTP call. ``on_text`` (given when the agent asks for streaming) receives
        the text as it arrives."""

    @abc.abstractmethod
    def _classify(self, e: Exception) -> Failure | None:
        """The SDK's exception as a :class:`Failure`; ``None`` for anything else (a bug)."""


def check_settings(label: str, settings: Mapping[str, Any], allowed: Mapping[str, Setting]) -> None:
    """Raise ``InvalidArgument`` for a setting that is not allowed or has the wrong type."""
    unknown = sorted(set(settings) - set(allowed))
    if unknown:
        raise InvalidArgument(
            f"model_settings_json: {label} does not take {', '.join(map(repr, unknown))} "
            f"(allowed: {', '.join(sorted(allowed))})",
            reason="INVALID_MODEL_SETTINGS",
            field="agent.model_settings_json",
            settings=",".join(unknown),
        )
    for key, value in settings.items():
        check, must_be = allowed[key]
        if not check(value):
            raise InvalidArgument(
                f"model_settings_json.{key} must be {must_be}, got {json.dumps(value)[:80]}",
                reason="INVALID_MODEL_SETTINGS",
                field=f"agent.model_settings_json.{key}",
            )


def passed_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The request body fields the settings make: each setting as it is, but ours, and the
    fields of ``extra_body``."""
    body = {k: v for k, v in settings.items() if k not in OWN_SETTINGS}
    body.update(settings.get("extra_body", {}))
    return body


def object_schema(schema_json: str) -> dict[str, Any]:
    """A tool's input schema as both wire formats want it: a JSON object of type object."""
    schema = json.loads(schema_json) if schema_json else {}
    if not isinstance(schema, dict):  # a boolean schema
        return {"type": "object"}
    return schema if "type" in schema else {"type": "object", **schema}


def arguments_object(arguments_json: str) -> tuple[dict[str, Any], bool]:
    """A call's arguments as an object, and whether the text was one. Bad arguments a
    model wrote earlier are sent back as ``{"_unparsed": text}``: strict servers refuse a
    transcript with invalid JSON in it, and the call's error result already says why."""
    try:
        value = json.loads(arguments_json or "{}")
    except ValueError:
        value = None
    if isinstance(value, dict):
        return value, True
    return {"_unparsed": arguments_json}, False


def raw_arguments(text: str | None) -> str:
    """What the model wrote as arguments, kept as it is (R25 turns bad JSON into an error
    result); only no arguments at all means ``{}``."""
    return text if text and text.strip() else "{}"


def unique_call_ids(calls: Sequence[ToolCall], messages: Sequence[Message]) -> tuple[ToolCall, ...]:
    """Tool-call ids are the idempotency keys of R24, so they must be unique in a session;
    some OpenAI-compatible servers send none, or reuse them across turns. Such a call gets
    ``call_<turn>_<n>``, derived from the transcript alone."""
    used = {c.id for m in messages for c in m.tool_calls}
    turn = sum(1 for m in messages if m.role is Role.ASSISTANT)
    out: list[ToolCall] = []
    for n, call in enumerate(calls):
        if not call.id or call.id in used:
            new_id, k = f"call_{turn}_{n}", 0
            while new_id in used:
                k += 1
                new_id = f"call_{turn}_{n}_{k}"
            call = ToolCall(new_id, call.name, call.arguments_json)
        used.add(call.id)
        out.append(call)
    return tuple(out)


__all__ = ["RemoteProvider", "check_settings"]
