"""The engine under test: an :class:`~.harness.EngineHarness` on a fresh memory store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.engine_harness import EngineHarness


@pytest.fixture
async def h(tmp_path: Path) -> AsyncIterator[EngineHarness]:
    """Overrides the gRPC ``h`` of tests/conftest.py for the tests of this folder."""
    harness = EngineHarness(call_log=tmp_path / "calls.jsonl")
    await harness.store.open()
    try:
        yield harness
    finally:
        await harness.store.close()
