"""Model providers, chosen by the prefix of a model id (``provider:model``)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidArgument
from .base import ModelRequest, ModelResponse, Provider
from .scripted import ScriptedProvider

__all__ = ["ModelRequest", "ModelResponse", "Provider", "ProviderRegistry", "ScriptedProvider"]


class ProviderRegistry:
    def __init__(self, providers: list[Provider]) -> None:
        self._by_name = {p.name: p for p in providers}

    def resolve(self, model_id: str, settings_json: str) -> tuple[Provider, str, dict[str, Any]]:
        """The provider for ``model_id``, the model name, and the parsed settings.

        Raises ``InvalidArgument`` for an unknown provider or bad settings."""
        name, sep, model = model_id.partition(":")
        if not sep or not name or not model:
            raise InvalidArgument(
                f"model must be 'provider:model', got {model_id!r}", reason="INVALID_MODEL", model=model_id
            )
        provider = self._by_name.get(name)
        if provider is None:
            raise InvalidArgument(
                f"unknown provider {name!r} (configured: {', '.join(sorted(self._by_name))})",
                reason="UNKNOWN_PROVIDER",
                model=model_id,
            )
        try:
            settings = json.loads(settings_json) if settings_json else {}
        except ValueError as e:
            raise InvalidArgument(
                f"model_settings_json is not JSON: {e}", reason="INVALID_JSON", field="agent.model_settings_json"
            ) from None
        if not isinstance(settings, dict):
            raise InvalidArgument(
                "model_settings_json must be a JSON object",
                reason="INVALID_JSON",
                field="agent.model_settings_json",
            )
        provider.validate(model, settings)
        return provider, model, settings
