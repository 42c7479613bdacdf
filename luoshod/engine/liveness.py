"""Whether a lease holder is still alive, when the daemon can know it.

A daemon's default lease owner names the process that holds the lease
(:func:`process_owner`): ``host/pid/nonce/boot.pidns.start`` — the host name, the pid, a
random nonce (two daemons in one process are two owners), the first 8 hex digits of the
machine's boot id (``/proc/sys/kernel/random/boot_id``), the inode of the PID namespace
(``/proc/self/ns/pid``) and the process's start time in clock ticks since boot (field 22
of ``/proc/PID/stat``).

:func:`holder_state` tells from such a name, for a holder on *this* machine (same host
name, boot id and PID namespace), whether its process is gone: no ``/proc/PID/stat``, a
zombie, or another process under the same pid (another start time). A holder of another
machine, another boot, another PID namespace (a container), or named by
``--lease-owner`` is never presumed dead: its state is ``unknown`` and its lease runs
out with its TTL.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import uuid
from enum import StrEnum
from functools import cache
from pathlib import Path

PROC = Path("/proc")
_OWNER = re.compile(
    r"^(?P<host>[^/]+)/(?P<pid>\d+)/[0-9a-f]{8}/(?P<boot>[0-9a-f]{8})\.(?P<ns>\d+)\.(?P<start>\d+)$"
)


class HolderState(StrEnum):
    ALIVE = "alive"
    DEAD = "dead"
    UNKNOWN = "unknown"


@cache
def _this_machine() -> tuple[str, str, str] | None:
    """(host, boot id prefix, PID namespace inode) of this process; ``None`` without /proc."""
    try:
        boot = (PROC / "sys/kernel/random/boot_id").read_text().strip().replace("-", "")[:8]
        ns = os.readlink(PROC / "self/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return None
    m = re.fullmatch(r"pid:\[(\d+)\]", ns)
    if len(boot) != 8 or m is None:
        return None
    return socket.gethostname(), boot, m.group(1)


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of process ``pid``; ``None`` when there is no such process.
    Raises ``OSError`` when /proc cannot be read for another reason."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # "pid (comm) state ppid …": comm may hold spaces and parentheses; the last ")" ends it.
    fields = text.rpartition(")")[2].split()
    return fields[0], fields[19]  # fields 3 and 22 of proc(5)


def process_owner() -> str | None:
    """A lease owner name for this process from which another daemon on this machine can
    tell whether it is alive; ``None`` where that cannot be told (no /proc)."""
    machine = _this_machine()
    if machine is None:
        return None
    host, boot, ns = machine
    pid = os.getpid()
    try:
        found = _stat(pid)
    except OSError:
        return None
    if found is None:
        return None
    return f"{host}/{pid}/{uuid.uuid4().hex[:8]}/{boot}.{ns}.{found[1]}"


def holder_state(owner: str) -> HolderState:
    """Whether the process that ``owner`` names is alive, when this daemon can know it."""
    m = _OWNER.match(owner)
    machine = _this_machine()
    if m is None or machine is None or (m["host"], m["boot"], m["ns"]) != machine:
        return HolderState.UNKNOWN  # another machine, boot or container, or a chosen name
    found = None
    with contextlib.suppress(OSError, IndexError):
        found = _stat(int(m["pid"]))
        if found is None:
            return HolderState.DEAD  # no such process
    if found is None:
        return HolderState.UNKNOWN  # /proc unreadable
    state, start = found
    if state in ("Z", "X") or start != m["start"]:
        return HolderState.DEAD  # killed but not reaped yet, or the pid is another process's
    return HolderState.ALIVE
