"""Debian packages the tests need (Chromium, PostgreSQL's server), installed when missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys


def apt_install(what: str, packages: list[str], unavailable: type[Exception], hint: str) -> None:
    """``apt-get install`` ``packages`` (``what`` names them in messages). Raises
    ``unavailable`` with ``hint`` where that cannot work (not root, or no apt-get)."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise unavailable(
            f"{what} is not installed and cannot be installed here (needs root and apt-get): {hint}"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    print(f"installing {what} from Debian's packages", file=sys.stderr, flush=True)
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
        check=True,
        env=env,
    )
