"""The hook a project implements (in its conftest.py) to give the kit default drivers."""

from __future__ import annotations

import pytest

from .backend import DriverCase


# A hook specification has no body: pytest calls the plugins' implementations of it.
def pytest_luoshod_drivers(config: pytest.Config) -> list[DriverCase]:  # type: ignore[empty-body]
    """The drivers to run the kit against when none is named with ``--luoshod-driver``.

    Every implementation's list is used. A case with ``skip`` set is reported as skipped
    with that reason (a server that is not there), never dropped.
    """
