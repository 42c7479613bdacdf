"""The fork server of ``luoshod torture`` (``python -m luoshod.torture.forkserver STORE_URL``).

Not for people: ``luoshod torture`` starts it, unless ``--cold-start``, to start its
daemons in ~50 ms instead of the ~0.9 s of ``python -m luoshod serve`` (the imports: see
``bench/cli_start.py`` and ``bench/torture.py``). The one module of torture that imports
the CLI (an exception in ``[tool.importlinter]``): what it forks runs ``luoshod serve``
itself (:func:`luoshod.cli.main`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys

from .. import cli, settings  # noqa: F401  (imported once, for every daemon forked)
from ..server import app, preflight  # noqa: F401
from ..store import driver_for
from .daemons import die_with_parent


def main(store: str) -> None:
    """The fork server (``--cold-start`` turns it off): a process that imports what ``luoshod
    serve`` imports (the daemon, its settings, the store's driver) once, starts nothing
    (no thread, no event loop, no gRPC object), and then, for each line on stdin (JSON: the
    serve arguments and the two output files), forks a child that runs ``luoshod serve``
    and writes back its pid. The import is nearly all of a daemon's start-up
    (``bench/cli_start.py``); a forked child listens in ~50 ms instead of ~0.9 s. Each
    child is a daemon process of its own, killed with a real ``kill -9`` (or ``SIGSTOP``)
    by its pid, as one started by hand would be."""
    driver_for(store)
    # What a daemon imports on its first daemon-tool call (luoshod/mcpclient/manager.py
    # imports the MCP SDK lazily, ~1.5 s): once here, not in each forked daemon.
    with contextlib.suppress(ImportError):
        import httpx2  # noqa: F401
        from mcp import Client  # noqa: F401
        from mcp.client.streamable_http import streamable_http_client  # noqa: F401
        from mcp.shared._httpx_utils import MCP_DEFAULT_TIMEOUT  # noqa: F401
    die_with_parent()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
    print("ready", flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.setsid()
                die_with_parent()  # with the fork server, which dies with torture
                null = os.open(os.devnull, os.O_RDONLY)
                out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                err = os.open(req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                for fd, to in ((null, 0), (out, 1), (err, 2)):
                    os.dup2(fd, to)
                    os.close(fd)
                sys.stdin = open(0)  # noqa: SIM115
                sys.stdout = open(1, "w", buffering=1)  # noqa: SIM115
                sys.stderr = open(2, "w", buffering=1)  # noqa: SIM115
                code = cli.main(req["args"])
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 1
            finally:
                os._exit(code)
        print(pid, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
