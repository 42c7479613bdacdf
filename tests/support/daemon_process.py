"""Start ``luoshod serve`` as a real subprocess (for crash and signal tests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path


class DaemonProcess:
    def __init__(self, *args: str, env: dict[str, str] | None = None, kill_at: str = "") -> None:
        """``kill_at``: an event type; the daemon SIGKILLs itself once an event of that type
        is durable, before anything else sees it (tests/support/fault_daemon.py)."""
        start = [str(Path(__file__).with_name("fault_daemon.py"))] if kill_at else ["-m", "luoshod"]
        self.args = [sys.executable, *start, "serve", "--listen", "127.0.0.1:0", *args]
        self.env = {**os.environ, **(env or {})}
        if kill_at:
            self.env["LUOSHOD_TEST_KILL_AT_EVENT"] = kill_at
        self.proc: subprocess.Popen[str] | None = None
        self.address = ""
        # The daemon's stderr, read as it comes by a thread of its own (a pipe nobody reads
        # blocks a chatty daemon once its buffer is full): what it wrote so far.
        self._err: list[str] = []
        self._err_lock = threading.Lock()
        self._drain: threading.Thread | None = None

    def start(self) -> DaemonProcess:
        self.proc = subprocess.Popen(
            self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env
        )
        self._drain = threading.Thread(
            target=self._read_stderr, args=(self.proc.stderr,), daemon=True
        )
        self._drain.start()
        line = self.proc.stdout.readline()  # blocks until it listens (or dies)
        if not line.startswith("luoshod listening on "):
            self.proc.kill()
            self.proc.wait(10)
            raise RuntimeError(f"daemon did not start: {line!r} {self.stderr()}")
        self.address = line.removeprefix("luoshod listening on ").strip()
        return self

    def _read_stderr(self, pipe: object) -> None:
        for line in pipe:  # type: ignore[attr-defined]
            with self._err_lock:
                self._err.append(line)

    def kill9(self) -> None:
        assert self.proc
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def terminate(self, timeout: float = 20) -> int:
        assert self.proc
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self._drain is not None:
            self._drain.join(10)  # the pipe is at its end once the daemon is gone
        if self.proc:
            for f in (self.proc.stdout, self.proc.stderr):
                if f:
                    f.close()

    def stderr(self) -> str:
        """What the daemon wrote to stderr: all of it once it has exited, else so far."""
        if self._drain is None:  # a process a test started itself: its pipe, read to the end
            return self.proc.stderr.read() if self.proc and self.proc.stderr else ""
        if self.proc is not None and self.proc.poll() is not None:
            self._drain.join(10)
        with self._err_lock:
            return "".join(self._err)


def db_url(tmp: Path) -> str:
    return f"sqlite:///{tmp}/luoshod.db"
