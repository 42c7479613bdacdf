"""``dumps``: the one JSON encoding this client writes (a module of its own, so the
modules that need only it do not import the agent definitions)."""

from __future__ import annotations

from typing import Any

__all__ = ["dumps"]


def dumps(value: Any) -> str:
    """Compact JSON, the encoding of every ``…_json`` field this client writes."""
    import json  # not at the top: the CLI's start-up does without it

    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
