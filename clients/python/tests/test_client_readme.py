"""The README's quickstart is a test: its first python block runs against the null server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def quickstart() -> str:
    match = re.search(r"^```python\n(.*?)^```", README.read_text(), re.DOTALL | re.MULTILINE)
    assert match, "README.md has no python block"
    return match.group(1)


async def test_readme_quickstart_runs(target: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace: dict[str, Any] = {"__name__": "readme_quickstart"}
    exec(compile(quickstart(), str(README), "exec"), namespace)

    await namespace["main"](target)

    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "1 run.start"
    assert "4 tool.call" in lines
    assert lines[-1] == "stop Sunny in Oslo."
