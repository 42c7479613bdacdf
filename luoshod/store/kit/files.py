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


def read_only(store: Path, paths: list[Path], folder: Path) -> None:
    """Raise ``ValueError`` when the store at ``store`` could not be written here: one of
    ``paths`` that exists is not writable, or ``folder`` (where the store makes its files)
    cannot take new ones. Checked with :func:`os.access`, which also says no for a file
    marked immutable and for a read-only mount, even to root (for
    :meth:`Store.check_location`: the daemon writes every step, so a read-only store
    would start and then fail its first run)."""
    for path in paths:
        if path.exists() and not os.access(path, os.W_OK):
            raise ValueError(
                f"{path} is read-only for this user (uid {os.getuid()}), and the daemon writes "
                f"{'it' if path == store else f'the store {store}'} at every step; give it write "
                "access (chmod u+w, chown, or a writable mount) or choose another --store path"
            )
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(
            f"the directory {folder} is read-only for this user (uid {os.getuid()}), and the "
            f"store {store} keeps files there that it writes; give it write access or choose "
            "another --store path"
        )


__all__ = ["file_in_the_way", "local_path", "read_only"]
