"""The command line for people: ``luoshod sessions``, ``luoshod approvals`` and
``luoshod prune`` talk to a running daemon over gRPC (``--address``, env
``LUOSHOD_ADDRESS``), print tables for people and JSON with ``--json``."""

from .commands import DEFAULT_ADDRESS, add_commands, run

__all__ = ["DEFAULT_ADDRESS", "add_commands", "run"]
