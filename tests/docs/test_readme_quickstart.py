"""The README's quickstart runs as written, against a daemon configured like `make run`."""

from __future__ import annotations

import importlib.util
import re

import pytest

from luoshod.server.app import Config
from tests.support import ROOT


@pytest.fixture
def config(config: Config) -> Config:
    config.scripts_dir = ROOT / "examples" / "scripts"  # as `make run` sets it
    return config


@pytest.fixture(params=["memory"])
def store_url(request: pytest.FixtureRequest) -> str:
    return "memory://"


def example(name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        f"example_{name}", ROOT / "examples" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_quickstart_example_runs(daemon, capsys) -> None:
    module = example("quickstart")
    for _ in range(2):  # any number of times: each run is a session of its own
        text = await module.main(daemon.addresses[0])
        assert "Lisbon is sunny" in text
        out = capsys.readouterr().out
        assert "tool.call" in out and out.strip().endswith(text)


def test_readme_quickstart_matches_the_example() -> None:
    readme = (ROOT / "README.md").read_text()
    assert ".venv/bin/python examples/quickstart.py" in readme
    assert re.search(r"^make run\b", readme, re.M) and re.search(r"^make test\b", readme, re.M)


async def test_subagents_example_runs(daemon, capsys) -> None:
    module = example("subagents")
    for _ in range(2):  # any number of times, after the quickstart or not
        text = await module.main(daemon.addresses[0])
        assert text == "The researcher found the hours and booked the visit."
        out = capsys.readouterr().out
        assert (
            "search for researcher: Lisbon Oceanarium opening hours (call call_0_0/call_0_0)" in out
        )
        assert "approve book for ['researcher']" in out and "awaiting_approval" in out
    page = (ROOT / "docs" / "concepts" / "subagents.md").read_text()
    assert ".venv/bin/python examples/subagents.py" in page
