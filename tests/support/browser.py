#!/usr/bin/env python3
"""Debian's Chromium for the console's browser tests.

    python tests/support/browser.py install   # apt-get install chromium when it is missing

:func:`executable` finds it (``LUOSHOD_CHROMIUM``, then ``chromium`` on ``PATH``);
:func:`install` installs Debian's package when it is missing, and does nothing (no
network) when it is there. Playwright drives that binary: it never downloads a browser
of its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

if not __package__:  # run as a script (python tests/support/NAME.py): the repository's root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.debian import apt_install  # noqa: E402


class BrowserUnavailable(RuntimeError):
    """Chromium is missing and cannot be installed here."""


def executable() -> Path | None:
    if configured := os.environ.get("LUOSHOD_CHROMIUM"):
        return Path(configured)
    for name in ("chromium", "chromium-browser"):
        if found := shutil.which(name):
            return Path(found)
    return None


def install() -> Path:
    """Chromium, from Debian's packages when missing (needs root and apt-get). Raises
    :class:`BrowserUnavailable`."""
    if (found := executable()) is not None:
        return found
    apt_install(
        "Chromium",
        ["chromium", "fonts-dejavu-core"],
        BrowserUnavailable,
        "install Debian's 'chromium' package, or set LUOSHOD_CHROMIUM",
    )
    if (found := executable()) is None:
        raise BrowserUnavailable("apt-get installed chromium but no chromium executable was found")
    return found


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        sys.exit("usage: browser.py install")
    try:
        print(install())
    except (BrowserUnavailable, subprocess.CalledProcessError) as e:
        sys.exit(f"browser.py: {e}")
