"""Helpers for drivers that keep their data in files (SQLite, LMDB, a third party's)."""

from __future__ import annotations

import os
from pathlib import Path


def local_path(path: str | os.PathLike[str]) -> Path:
    """``path`` absolute (against the working directory), with a leading ``//`` (which
    POSIX keeps apart, and a URL such as ``sqlite:////tmp/x.db`` leaves) made ``/``."""
    text = str(path)
    if text.startswith("//"):
        text = "/" + text.lstrip("/")
    return Path(text).absolute()


def file_in_the_way(path: Path) -> None:
    """Raise ``ValueError`` when a part of ``path`` above it is a file, not a directory,
    so that ``path`` can never be created (for :meth:`Store.check_location`)."""
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            raise ValueError(
                f"{parent} is a file, not a directory, so {path} cannot be created; "
                "choose a --store path under a directory"
            )


__all__ = ["file_in_the_way", "local_path"]
