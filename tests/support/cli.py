"""The people CLI as a user runs it: ``python -m luoshod ...`` as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys


def luoshod(
    *argv: str,
    address: str = "",
    env: dict[str, str] | None = None,
    clean_env: bool = False,
    stdin: int | None = subprocess.DEVNULL,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``luoshod ARGV`` (``--address`` appended when given) and return what it did.
    ``env`` is added to this process's environment, from which ``clean_env`` first drops
    every ``LUOSHOD_*`` variable (so only the test's settings count)."""
    base = {k: v for k, v in os.environ.items() if not (clean_env and k.startswith("LUOSHOD_"))}
    full = [sys.executable, "-m", "luoshod", *argv, *(["--address", address] if address else [])]
    return subprocess.run(
        full,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**base, **(env or {})},
        stdin=stdin,
    )
