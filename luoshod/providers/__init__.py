"""Model providers, chosen by the prefix of a model id (``provider:model``).

``scripted`` is built in; the others are the named entries of the config file
(``[providers.NAME]``), each of a kind: ``openai`` (chat completions, ``openai_chat.py``),
``openai_responses`` (the Responses API, ``openai_responses.py``) or ``anthropic`` (the
Messages API, ``anthropic_messages.py``). Their SDKs are imported
only when an entry of that kind is configured.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ..config import ProviderConfig
from ..errors import InvalidArgument
from .base import ModelRequest, ModelResponse, Provider
from .guard import ModelGuard
from .scripted import ScriptedProvider

__all__ = [
    "ModelGuard",
    "ModelRequest",
    "ModelResponse",
    "Provider",
    "ProviderRegistry",
    "SHARED_SETTINGS_MAX",
    "ScriptedProvider",
    "configured_providers",
]


def configured_providers(
    entries: Iterable[ProviderConfig], guard: ModelGuard | None = None
) -> list[Provider]:
    """One provider per config-file entry, all paced by ``guard`` (the daemon's one)."""
    providers: list[Provider] = []
    for entry in entries:
        if entry.kind == "openai":
            from .openai_chat import OpenAIChatProvider

            providers.append(OpenAIChatProvider(entry, guard))
        elif entry.kind == "openai_responses":
            from .openai_responses import OpenAIResponsesProvider

            providers.append(OpenAIResponsesProvider(entry, guard))
        elif entry.kind == "anthropic":
            from .anthropic_messages import AnthropicProvider

            providers.append(AnthropicProvider(entry, guard))
        else:  # config.py admits only the kinds above
            raise ValueError(f"providers.{entry.name}.kind: unknown kind {entry.kind!r}")
    return providers


class ProviderRegistry:
    def __init__(self, providers: list[Provider], guard: ModelGuard | None = None) -> None:
        self._by_name = {p.name: p for p in providers}
        #: The daemon's floors under failing model calls, and each session's last failure.
        self.guard = guard if guard is not None else ModelGuard()

    async def aclose(self) -> None:
        """Close every provider's connections."""
        for provider in self._by_name.values():
            await provider.aclose()

    def resolve(self, model_id: str, settings_json: str) -> tuple[Provider, str, dict[str, Any]]:
        """The provider for ``model_id``, the model name, and the parsed settings.

        Raises ``InvalidArgument`` for an unknown provider or bad settings."""
        name, sep, model = model_id.partition(":")
        if not sep or not name or not model:
            raise InvalidArgument(
                f"model must be 'provider:model', got {model_id!r}",
                reason="INVALID_MODEL",
                model=model_id,
            )
        provider = self._by_name.get(name)
        if provider is None:
            raise InvalidArgument(
                f"unknown provider {name!r} (configured: {', '.join(sorted(self._by_name))})",
                reason="UNKNOWN_PROVIDER",
                model=model_id,
            )
        try:
            if not settings_json:
                settings = {}
            elif len(settings_json) <= SHARED_SETTINGS_MAX:
                settings = _parsed(settings_json)
            else:
                settings = json.loads(settings_json)
        except ValueError as e:
            raise InvalidArgument(
                f"model_settings_json is not JSON: {e}",
                reason="INVALID_JSON",
                field="agent.model_settings_json",
            ) from None
        if not isinstance(settings, dict):
            raise InvalidArgument(
                "model_settings_json must be a JSON object",
                reason="INVALID_JSON",
                field="agent.model_settings_json",
            )
        provider.validate(model, settings)
        return provider, model, settings


#: Model settings up to this size (characters) are parsed once and shared (:func:`_parsed`);
#: the cache keeps the last 256, so it holds a few MB at most.
SHARED_SETTINGS_MAX = 16 * 1024


@lru_cache(maxsize=256)
def _parsed(settings_json: str) -> Any:
    """``settings_json`` parsed once for every run of an agent that gives the same text:
    an app's thousands of runs of one agent share one dict (a scripted model's script,
    ~1 KB a waiting run, was parsed and kept per run). Shared, so read-only: providers
    copy what they send (``remote.passed_settings``) and never write it."""
    return json.loads(settings_json)
