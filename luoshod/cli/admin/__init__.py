"""The command line for people: ``luoshod sessions``, ``luoshod approvals`` and
``luoshod prune`` talk to a running daemon over gRPC (``--address``, env
``LUOSHOD_ADDRESS``), print tables for people and JSON with ``--json``.

They are clients: nothing here imports the daemon (its settings, server, engine, store or
providers), so ``luoshod sessions list`` starts about as fast as ``import grpc``
(bench/cli_start.py; the ``[tool.importlinter]`` contracts of pyproject.toml)."""

from .commands import DEFAULT_ADDRESS, add_command, run

__all__ = ["DEFAULT_ADDRESS", "add_command", "run"]
