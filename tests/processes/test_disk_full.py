"""Issue 14, a full disk: the store of a real daemon on a small tmpfs that the test mounts
and removes. The save that does not fit fails its run (STORE_FULL or STORE_UNAVAILABLE),
nothing of it is written, the other sessions are unharmed, and once space is freed the
same daemon process saves again, with no restart."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from luosho.v1 import agent_pb2 as pb
from tests.support.daemon_process import DaemonProcess
from tests.support.harness import Harness, error_info


def spec() -> pb.AgentSpec:
    return pb.AgentSpec(model="scripted:echo", instructions="Echo.")


@contextlib.contextmanager
def small_disk(where: Path, size: str = "4m") -> Iterator[Path]:
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Take every byte left on ``disk``."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for chunk in (65536, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * chunk)
    finally:
        os.close(fd)
    return filler


@pytest.mark.parametrize("scheme", ["sqlite", "lmdb"])
async def test_a_full_disk_fails_the_save_that_does_not_fit_and_the_daemon_recovers(
    tmp_path: Path, scheme: str
) -> None:
    with small_disk(tmp_path / "disk") as disk:
        url = f"sqlite:///{disk}/t.db" if scheme == "sqlite" else f"lmdb:///{disk}/env"
        daemon = DaemonProcess("--store", url).start()
        try:
            h = Harness(daemon.address)
            done = await h.run("small", "hello", spec())
            assert done.error is None and done.done.status == pb.CHECKPOINT_STATUS_FINISHED
            before = await h.get("small")
            filler = fill(disk)
            # Room for the lease and a small save, not for the big one.
            os.truncate(filler, filler.stat().st_size - 128 * 1024)
            big = "x" * 400_000
            failed = await h.run("big", big, spec())
            assert failed.error is not None, "the save fitted on a full disk"
            code, reason, _ = error_info(failed.error)
            assert (code, reason) in {
                (grpc.StatusCode.RESOURCE_EXHAUSTED, "STORE_FULL"),
                (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE"),
            }, (code, reason, failed.error.details())
            # Nothing half-written; the other session as it was.
            with pytest.raises(grpc.aio.AioRpcError) as missing:
                await h.get("big")
            assert missing.value.code() == grpc.StatusCode.NOT_FOUND
            assert (await h.get("small")) == before
            filler.unlink()
            again = await h.run("big", big, spec())  # the same daemon, no restart
            assert again.error is None, again.error
            assert again.done.status == pb.CHECKPOINT_STATUS_FINISHED
            assert (await h.get("big")).messages[-1].content == big
            assert daemon.proc.poll() is None
            await h.close()
        finally:
            daemon.stop()
