"""``luoshod serve`` with a kill point, for crash tests: the process SIGKILLs itself the
moment a run event of the type named by ``LUOSHOD_TEST_KILL_AT_EVENT`` is handed to the
run's sink (its save or append just returned: it is durable, nothing after it has run — not
the stream to the caller, not the webhooks' wake-up, not what a daemon used to write to
the outbox only after the event was logged). Run as a script by
``tests/support/daemon_process.py``'s ``DaemonProcess(..., kill_at=TYPE)``; the daemon's code is not
changed."""

from __future__ import annotations

import os
import signal
import sys

from luoshod.server import runner

KILL_AT = os.environ["LUOSHOD_TEST_KILL_AT_EVENT"]
_emit = runner.QueueSink.emit


async def emit(self: runner.QueueSink, event: object, encoded: bytes | None = None) -> None:
    if getattr(event, "type", None) == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)
    await _emit(self, event, encoded)  # type: ignore[arg-type]


runner.QueueSink.emit = emit  # type: ignore[method-assign]

if __name__ == "__main__":
    from luoshod.cli import main

    sys.exit(main())
