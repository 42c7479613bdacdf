"""A TOML writer for ``luoshod config show``: plain keys, then tables, no nulls (an unset
key is written as a comment). Enough for settings; not a general TOML library."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_BARE = re.compile(r"[A-Za-z0-9_-]+")


def _key(key: str) -> str:
    return key if _BARE.fullmatch(key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def dumps(data: Mapping[str, Any], prefix: str = "") -> str:
    lines, tables = [], []
    for key, value in data.items():
        if isinstance(value, Mapping):
            tables.append((key, value))
        elif value is None:
            lines.append(f"# {_key(key)} is not set")
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for key, table in tables:
        name = f"{prefix}{_key(key)}"
        if table and all(isinstance(v, Mapping) for v in table.values()):
            out += dumps(table, f"{name}.")  # only sub-tables: no header of its own
        else:
            out += f"\n[{name}]\n" + dumps(table, f"{name}.")
    return out
