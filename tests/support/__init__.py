"""What the tests share, one module a concern (tests/README.md lists them). ``ROOT`` is the
repository and ``SUPPORT`` this folder, for the tests that name a file by its place: they
say ``ROOT / "README.md"`` rather than counting ``Path(__file__).parents``."""

from __future__ import annotations

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
ROOT = SUPPORT.parents[1]


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
