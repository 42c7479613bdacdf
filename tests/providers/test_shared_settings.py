"""Issue 16: the model settings of an agent that thousands of runs share are parsed once
and shared (read-only) rather than kept per run; large ones are not kept."""

from __future__ import annotations

import json

from luoshod.providers import SHARED_SETTINGS_MAX, ProviderRegistry, ScriptedProvider


def test_runs_of_one_agent_share_its_parsed_settings_and_large_ones_are_not_kept() -> None:
    registry = ProviderRegistry([ScriptedProvider()])
    text = json.dumps({"script": [{"text": "hi", "delay_ms": 10}]})
    _, _, first = registry.resolve("scripted:a", text)
    _, _, second = registry.resolve("scripted:a", text)
    assert first is second and first == {"script": [{"text": "hi", "delay_ms": 10}]}
    _, _, other = registry.resolve("scripted:a", json.dumps({"script": [{"text": "ho"}]}))
    assert other is not first and other["script"][0]["text"] == "ho"
    big = json.dumps({"script": [{"text": "x" * SHARED_SETTINGS_MAX}]})
    _, _, a = registry.resolve("scripted:a", big)
    _, _, b = registry.resolve("scripted:a", big)
    assert a == b and a is not b
