"""The CLI's argument parser: argparse's, with the terminal's width read without ``shutil``.

argparse builds a help formatter for every argument it adds (to check its metavar), and
the formatter reads the terminal's width through ``shutil``, whose import (with ``bz2``
and ``lzma``) is a start-up cost of every command, help printed or not. The width here is
what ``shutil.get_terminal_size`` gives: ``COLUMNS``, else the terminal's, else 80.
Subparsers are built of the parser's own class, so every parser of the CLI has it.
"""

from __future__ import annotations

import argparse
import os
import sys


def columns() -> int:
    """The terminal's width, as ``shutil.get_terminal_size().columns`` reads it."""
    try:
        width = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        width = 0
    if width <= 0:
        try:
            width = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            width = 0
    return width or 80


class Parser(argparse.ArgumentParser):
    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse takes two columns off the width it reads itself.
        return self.formatter_class(prog=self.prog, width=columns() - 2)  # type: ignore[call-arg]
