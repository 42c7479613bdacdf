"""The daemons torture starts, kills (``kill -9``) and freezes (``SIGSTOP``): each a real
``luoshod serve`` process, forked by the fork server (:mod:`.forkserver`) or, with
``--cold-start``, started cold."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from .workload import START_TIMEOUT_S


def die_with_parent() -> None:
    """In a daemon's child process: SIGKILL it when this command dies (Linux), so a killed
    torture run leaves no daemon behind."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Zygote:
    """Torture's end of its fork server (:mod:`luoshod.torture.forkserver`: a process that
    imported ``luoshod serve`` once and forks a daemon on demand, ~50 ms where ``python -m luoshod
    serve`` takes ~0.9 s). Each daemon is a process of its own, killed by its pid."""

    def __init__(self, store: str, work: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "luoshod.torture.forkserver", store],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(work / "fork-server.err").open("wb"),
            text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            self.proc.kill()
            raise RuntimeError(
                f"the fork server did not start: {(work / 'fork-server.err').read_text()[-2000:]}"
            )

    def spawn(self, args: list[str], out: Path, err: Path) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"args": args, "out": str(out), "err": str(err)}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], START_TIMEOUT_S)
        if not ready:
            raise RuntimeError(f"the fork server gave no pid in {START_TIMEOUT_S:g} s")
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


class Process:
    """A daemon process by its pid: a child of this command, or of the fork server."""

    def __init__(self, pid: int, popen: subprocess.Popen[bytes] | None = None) -> None:
        self.pid, self.popen = pid, popen

    def poll(self) -> bool:
        """Whether it still runs (a stopped process runs)."""
        if self.popen is not None:
            return self.popen.poll() is None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        return True

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)

    def kill(self) -> None:
        """``kill -9``, and wait until it is gone."""
        self.signal(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait(10)
            return
        deadline = time.monotonic() + 10
        while self.poll() and time.monotonic() < deadline:
            time.sleep(0.002)


class Daemon:
    """One ``luoshod serve`` process, its output in files of the work directory."""

    def __init__(
        self,
        name: str,
        store: str,
        work: Path,
        lease_ttl: float,
        zygote: Zygote | None,
        config: Path | None = None,
    ) -> None:
        self.name, self.store, self.work, self.lease_ttl = name, store, work, lease_ttl
        self.config = config  # the daemon's configuration: torture's MCP server
        self.zygote = zygote
        self.proc: Process | None = None
        self.address = ""
        self.stopped = False
        self.starts = 0
        self.startup_s = 0.0  # waiting for a daemon to listen, all starts

    def serve_args(self) -> list[str]:
        return [
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--store",
            self.store,
            "--scripted-call-log",
            str(self.work / "model-calls.jsonl"),
            # A stable owner: a restarted daemon takes back at once its killed self's leases.
            "--lease-owner",
            f"torture-{self.name}",
            "--lease-ttl-s",
            f"{self.lease_ttl:g}",
            "--lease-renew-s",
            f"{self.lease_ttl / 4:g}",
            # Abandoned queued inputs are run by the daemon alone (R69): soon, not in a second.
            "--queue-sweep-s",
            "0.2",
            *(["--config", str(self.config)] if self.config else []),
        ]

    def start(self) -> None:
        began = time.monotonic()
        self.starts += 1
        out = self.work / f"{self.name}-{self.starts}.out"
        err = self.work / f"{self.name}-{self.starts}.err"
        if self.zygote is not None:
            self.proc = Process(self.zygote.spawn(self.serve_args(), out, err))
        else:
            with out.open("wb") as o, err.open("wb") as e:
                popen = subprocess.Popen(
                    [sys.executable, "-m", "luoshod", *self.serve_args()],
                    stdout=o,
                    stderr=e,
                    start_new_session=True,
                    preexec_fn=die_with_parent,
                )
            self.proc = Process(popen.pid, popen)
        deadline = time.monotonic() + START_TIMEOUT_S
        try:
            while time.monotonic() < deadline:
                line = out.read_text().partition("\n")[0] if out.exists() else ""
                if line.startswith("luoshod listening on "):
                    self.address = line.removeprefix("luoshod listening on ").split(",")[0].strip()
                    self.stopped = False
                    return
                if not self.proc.poll():
                    break
                time.sleep(0.005)
        finally:
            self.startup_s += time.monotonic() - began
        self.kill()
        raise RuntimeError(f"daemon {self.name} did not start: {err.read_text()[-2000:]}")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()

    def freeze(self) -> None:
        assert self.proc is not None
        self.proc.signal(signal.SIGSTOP)
        self.stopped = True

    def thaw(self) -> None:
        if self.proc is not None and self.stopped:
            self.proc.signal(signal.SIGCONT)
            self.stopped = False
