"""The people CLI: the ``luoshod`` command and everything only it uses.

- :mod:`.main`: the parser and the commands (``serve``, ``config show``, ``healthcheck``,
  ``torture``, ``leases``, ``store copy``, ``completion``); the console script's
  ``luoshod.cli:main`` is its :func:`~.main.main`;
- :mod:`.admin`: ``sessions``, ``approvals``, ``mcp`` and ``prune``, clients of a running
  daemon over gRPC that import no daemon;
- :mod:`.connect`: the gRPC channel of those clients (address, TLS);
- :mod:`.healthcheck`, :mod:`.leases`, :mod:`.completion`, :mod:`.tomlout`: one command's
  helpers each.

Importing this package imports :mod:`.main` only (argparse and the standard library):
every command imports what it needs when it runs, so ``luoshod sessions list`` starts
about as fast as ``import grpc`` (``bench/cli_start.py``).
"""

from .main import main

__all__ = ["main"]
