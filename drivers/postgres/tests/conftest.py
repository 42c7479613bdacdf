"""What the PostgreSQL driver's own tests share: each test works in a schema of its own
on the session's throw-away server (the root conftest's ``postgres_server``)."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def schema() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"
