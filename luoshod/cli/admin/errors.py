"""The one failure the admin commands raise: a line for stderr and exit status 1
(``commands.run`` prints it). Its own module, so that each command module raises it
without importing the others."""

from __future__ import annotations


class CommandFailed(Exception):
    """A command could not do what it was asked; the message is the line to print."""
