"""The agent fingerprint (docs/reference/rules.md R46) and what differs between two (R48)."""

from __future__ import annotations

import hashlib
import json

from ..domain import AgentSpec, Drift, Fingerprint

__all__ = ["Drift", "drift", "fingerprint"]


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha(text: str, n: int = 16) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:n]


def fingerprint(spec: AgentSpec) -> Fingerprint:
    """Model id, each tool's name → hash of its schema, hash of the instructions, and a
    short SHA-256 over all of them. Tool order and schema key order do not change it."""
    tools = {
        t.name: _sha(_canonical(json.loads(t.input_schema_json) if t.input_schema_json else {}))
        for t in spec.tools
    }
    instructions = _sha(spec.instructions)
    whole = _sha(_canonical({"model": spec.model, "tools": tools, "instructions": instructions}))
    return Fingerprint(whole, spec.model, tools, instructions)


def drift(saved: Fingerprint | None, current: Fingerprint) -> Drift | None:
    """What changed from ``saved`` to ``current``; ``None`` when nothing did (or no saved
    fingerprint exists, R50)."""
    if saved is None or saved.hash == current.hash:
        return None
    a, b = saved.tool_schema_hashes, current.tool_schema_hashes
    return Drift(
        model_from=saved.model,
        model_to=current.model,
        tools_added=tuple(sorted(b.keys() - a.keys())),
        tools_removed=tuple(sorted(a.keys() - b.keys())),
        tools_changed=tuple(sorted(n for n in a.keys() & b.keys() if a[n] != b[n])),
        instructions_changed=saved.instructions_hash != current.instructions_hash,
    )
