#!/usr/bin/env python3
"""A throw-away highly available PostgreSQL on loopback: etcd, and Patroni running a
primary and a synchronous standby, for the failover tests (R90).

    python tests/support/patroni_cluster.py install        # Debian's packages when missing
    python tests/support/patroni_cluster.py run -- CMD...  # a cluster for CMD (its multi-host
                                                   # URL in LUOSHOD_TEST_POSTGRES_URL), then gone
    python tests/support/patroni_cluster.py start DIR      # a cluster in DIR (idempotent): its URL
    python tests/support/patroni_cluster.py stop DIR       # stop it (its data stays in DIR)
    python tests/support/patroni_cluster.py failover DIR   # kill its leader; the dead node
                                                   # comes back as the new standby

:class:`PatroniCluster` makes a folder (a fresh temporary one, or the one given), starts
one etcd member and one Patroni per node on free loopback ports, each PostgreSQL with its
unix socket in its own folder (nothing of the machine's own PostgreSQL or etcd is
touched), waits until there is a leader and a synchronous standby, and creates the
database ``luoshod``. ``synchronous_mode`` is on: a commit is acknowledged once the
standby has it, and Patroni promotes only a standby that was synchronous, so a failover
never loses an acknowledged commit. ``synchronous_mode_strict`` is off: with the standby
gone the primary goes on alone (and Patroni then promotes no one until it is back).

As root (CI), every process runs as the ``postgres`` system user (PostgreSQL refuses root)
and the folder is given to it, as :mod:`tests.support.postgres_server` does.

:meth:`PatroniCluster.kill_leader` is the failure the tests make: the leader's machine
dies (``kill -9`` of its Patroni, then of its postmaster and every backend), its leader
key in etcd runs out after ``ttl`` seconds, and the standby is promoted.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if not __package__:  # run as a script (python tests/support/NAME.py): the repository's root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.debian import apt_install  # noqa: E402
from tests.support.postgres_server import (  # noqa: E402
    DATABASE,
    SYSTEM_USER,
    USER,
    bin_dir,
    free_port,
)
from tests.support.postgres_server import install as install_postgres  # noqa: E402

#: Seconds the leader key lives in etcd without a renewal: how long after the leader's
#: death the standby is promoted (Patroni's default is 30).
TTL = 10
LOOP_WAIT = 1
RETRY_TIMEOUT = 4


class ClusterUnavailable(RuntimeError):
    """Patroni or etcd is missing, or the cluster would not start."""


def programs() -> tuple[str, str] | None:
    """``patroni`` and ``etcd``, or ``None`` if either is missing."""
    patroni, etcd = shutil.which("patroni"), shutil.which("etcd")
    return (patroni, etcd) if patroni and etcd else None


def install() -> tuple[str, str]:
    """Patroni, etcd and PostgreSQL's server, from Debian's packages when missing (needs root
    and ``apt-get``). Raises :class:`ClusterUnavailable`."""
    install_postgres()
    if (found := programs()) is not None:
        return found
    apt_install(
        "Patroni and etcd",
        ["patroni", "etcd-server"],
        ClusterUnavailable,
        "install the 'patroni' and 'etcd-server' packages",
    )
    if (found := programs()) is None:
        raise ClusterUnavailable(
            "apt-get installed patroni and etcd-server but they were not found"
        )
    return found


@dataclass
class Node:
    name: str
    pg_port: int
    rest_port: int

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.rest_port}"


class PatroniCluster:
    """etcd and ``nodes`` Patroni nodes. :meth:`start`, then :attr:`url`; :meth:`remove`
    when done (also run at exit) stops every process and deletes a temporary folder."""

    def __init__(self, *, nodes: int = 2, folder: Path | None = None, fsync: bool = False) -> None:
        self.found = programs()
        self.bin = bin_dir()
        self.temporary = folder is None
        self.folder = folder
        self.fsync = fsync
        self.count = nodes
        self.nodes: list[Node] = []
        self.etcd_port = 0
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._as_user: dict[str, Any] = {}
        self._restarts: dict[str, int] = {}

    # -- what the tests use ----------------------------------------------------------------

    @property
    def url(self) -> str:
        """The multi-host URL of the database ``luoshod``: libpq tries each host and keeps
        the one that takes writes."""
        return self.database_url(DATABASE)

    def database_url(self, database: str) -> str:
        hosts = ",".join(f"127.0.0.1:{n.pg_port}" for n in self.nodes)
        return f"postgresql://{USER}@{hosts}/{database}?target_session_attrs=read-write"

    def members(self) -> list[dict[str, Any]]:
        """Patroni's view of the cluster (``GET /cluster`` of any node that answers)."""
        for node in self.nodes:
            with (
                contextlib.suppress(OSError, ValueError),
                urllib.request.urlopen(f"{node.api}/cluster", timeout=2) as r,
            ):
                return list(json.load(r)["members"])
        return []

    def role(self, role: str) -> Node | None:
        """The running node with ``role`` (``leader``, ``sync_standby``, ``replica``)."""
        for m in self.members():
            if m.get("role") == role and m.get("state") in ("running", "streaming"):
                return next(n for n in self.nodes if n.name == m["name"])
        return None

    def wait_for(self, *roles: str, timeout: float = 60.0) -> dict[str, Node]:
        """Wait until a running node holds each of ``roles``; the nodes by role."""
        deadline = time.monotonic() + timeout
        while True:
            self._restart_the_dead()
            found = {r: self.role(r) for r in roles}
            if all(found.values()):
                return {r: n for r, n in found.items() if n is not None}
            if time.monotonic() > deadline:
                raise ClusterUnavailable(
                    f"no {' and '.join(roles)} within {timeout:g} s: {self.members()}\n"
                    + self.logs()
                )
            time.sleep(0.2)

    def kill_leader(self) -> Node:
        """The leader's machine dies: ``kill -9`` of its Patroni, then of its postmaster and
        every process under it. Returns the node killed."""
        leader = self.wait_for("leader")["leader"]
        self._kill_node(leader)
        return leader

    def signal_receiver(self, node: Node, sig: signal.Signals) -> None:
        """Send ``sig`` to the standby ``node``'s WAL receiver. ``SIGSTOP``: the primary's
        commits wait for it, unacknowledged; ``SIGKILL`` then: what it had not written yet
        (the WAL in its socket) is gone with it, on the primary alone."""
        assert self.folder is not None
        pidfile = self.folder / node.name / "data" / "postmaster.pid"
        postmaster = int(pidfile.read_text().split()[0])
        receivers = [pid for pid in _descendants(postmaster) if b"walreceiver" in _cmdline(pid)]
        if not receivers:
            raise ClusterUnavailable(f"{node.name} has no WAL receiver")
        for pid in receivers:
            os.kill(pid, sig)

    def revive(self, node: Node) -> None:
        """Start a killed node's Patroni again: it rewinds its PostgreSQL (or clones it anew)
        and joins as a standby (:meth:`wait_for` ``sync_standby`` to see it synchronous)."""
        assert self.folder is not None and self.found is not None
        self._spawn(node.name, [self.found[0], str(self.folder / f"{node.name}.yml")])

    def logs(self) -> str:
        """The end of every process's log, for a failure's message."""
        if self.folder is None:
            return ""
        out = []
        for log in sorted(self.folder.glob("*.log")):
            out.append(f"--- {log.name}\n{log.read_text(errors='replace')[-1500:]}")
        return "\n".join(out)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, timeout: float = 60.0) -> PatroniCluster:
        """Start etcd and every node; return once there is a leader and a synchronous
        standby and the database exists. Raises :class:`ClusterUnavailable`."""
        if self.found is None or self.bin is None:
            raise ClusterUnavailable(
                "Patroni, etcd or PostgreSQL is not installed: run "
                "`python tests/support/patroni_cluster.py install`"
            )
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="luoshod-ha-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        atexit.register(self.remove)
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam(SYSTEM_USER)
            except KeyError:
                raise ClusterUnavailable(
                    f"running as root and there is no {SYSTEM_USER!r} system user"
                ) from None
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self._as_user = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        self.etcd_port = free_port()
        peer = free_port()
        self._spawn(
            "etcd",
            [
                self.found[1],
                "--name=etcd0",
                f"--data-dir={self.folder / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=etcd0=http://127.0.0.1:{peer}",
                "--initial-cluster-state=new",
                "--log-level=warn",
            ],
        )
        self.nodes = [Node(f"node{i}", free_port(), free_port()) for i in range(self.count)]
        for i, node in enumerate(self.nodes):
            config = self.folder / f"{node.name}.yml"
            config.write_text(json.dumps(self._config(node)))  # JSON is YAML
            self._own(config)
            self._spawn(node.name, [self.found[0], str(config)])
            if i == 0:  # the first bootstraps; the others clone it
                self.wait_for("leader", timeout=timeout)
        self.wait_for("leader", "sync_standby", timeout=timeout)
        self._create_database()
        return self

    def remove(self) -> None:
        """Stop every process at once and delete a temporary folder. Idempotent."""
        if self.folder is None:
            return
        for node in self.nodes:
            self._kill_node(node)
        self.stop_etcd()
        if self.temporary and self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def stop_etcd(self) -> None:
        proc = self.procs.pop("etcd", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)

    @classmethod
    def attach(cls, folder: Path) -> PatroniCluster:
        """The cluster ``start DIR`` runs in ``folder`` (its nodes from their configs)."""
        cluster = cls(folder=folder)
        for config in sorted(folder.glob("node*.yml")):
            c = json.loads(config.read_text())
            cluster.nodes.append(
                Node(
                    c["name"],
                    int(c["postgresql"]["listen"].rpartition(":")[2]),
                    int(c["restapi"]["listen"].rpartition(":")[2]),
                )
            )
        if not cluster.nodes:
            raise ClusterUnavailable(f"no cluster in {folder}")
        if os.geteuid() == 0:
            user = pwd.getpwnam(SYSTEM_USER)
            cluster._as_user = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        return cluster

    def failover(self, timeout: float = 120.0) -> tuple[Node, Node, float]:
        """Kill the leader (:meth:`kill_leader`), wait for the standby's promotion, then
        start the dead node again and wait until it is the synchronous standby. The node
        killed, the one promoted, and the seconds from the kill to the promotion."""
        old = self.kill_leader()
        killed = time.monotonic()
        deadline = killed + timeout
        while (new := self.role("leader")) is None or new.name == old.name:
            if time.monotonic() > deadline:
                raise ClusterUnavailable(f"no standby promoted in {timeout:g} s\n{self.logs()}")
            time.sleep(0.1)
        promoted = time.monotonic() - killed
        self.revive(old)
        self.wait_for("leader", "sync_standby", timeout=timeout)
        return old, new, promoted

    # -- the pieces ------------------------------------------------------------------------

    def _config(self, node: Node) -> dict[str, Any]:
        assert self.folder is not None and self.bin is not None
        home = self.folder / node.name
        parameters = {
            "max_connections": 200,
            "shared_buffers": "64MB",
            "wal_keep_size": "128MB",
            "fsync": "on" if self.fsync else "off",
            "wal_log_hints": "on",  # pg_rewind: a dead primary comes back as a standby
        }
        return {
            "scope": "luoshod-test",
            "namespace": f"/luoshod-{self.etcd_port}/",
            "name": node.name,
            "restapi": {
                "listen": f"127.0.0.1:{node.rest_port}",
                "connect_address": f"127.0.0.1:{node.rest_port}",
            },
            "etcd3": {"hosts": f"127.0.0.1:{self.etcd_port}"},
            "bootstrap": {
                "dcs": {
                    "ttl": TTL,
                    "loop_wait": LOOP_WAIT,
                    "retry_timeout": RETRY_TIMEOUT,
                    "maximum_lag_on_failover": 1048576,
                    "synchronous_mode": True,
                    "synchronous_mode_strict": False,
                    "postgresql": {
                        "use_pg_rewind": True,
                        "remove_data_directory_on_rewind_failure": True,
                        "remove_data_directory_on_diverged_timelines": True,
                        "parameters": parameters,
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"locale": "C"}],
                "pg_hba": [
                    "local all all trust",
                    "host all all 127.0.0.1/32 trust",
                    "host replication replicator 127.0.0.1/32 trust",
                ],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{node.pg_port}",
                "connect_address": f"127.0.0.1:{node.pg_port}",
                "data_dir": str(home / "data"),
                "bin_dir": str(self.bin),
                "pgpass": str(self.folder / f"{node.name}.pgpass"),
                "authentication": {
                    "superuser": {"username": USER, "password": "luoshod"},
                    "replication": {"username": "replicator", "password": "luoshod"},
                    "rewind": {"username": USER, "password": "luoshod"},
                },
                "parameters": {"unix_socket_directories": str(self.folder)},
            },
            "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False},
        }

    def _spawn(self, name: str, cmd: list[str]) -> None:
        assert self.folder is not None
        log = self.folder / f"{name}.log"
        with open(log, "ab") as out:
            self.procs[name] = subprocess.Popen(
                cmd,
                cwd=self.folder,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "HOME": str(self.folder), "PYTHONWARNINGS": "ignore"},
                start_new_session=True,
                **self._as_user,
            )
        (self.folder / f"{name}.pid").write_text(str(self.procs[name].pid))

    def _restart_the_dead(self) -> None:
        """Start again a process of the cluster that died by itself (not killed by
        :meth:`kill_leader`): forked from a process whose gRPC threads run, a child has
        been seen to die before it ran anything. Three times at most each."""
        for name, proc in list(self.procs.items()):
            if proc.poll() is None:
                continue
            self._restarts[name] = self._restarts.get(name, 0) + 1
            if self._restarts[name] > 3:
                raise ClusterUnavailable(f"{name} keeps dying:\n{self.logs()}")
            self._spawn(name, list(proc.args))  # type: ignore[arg-type]

    def _own(self, path: Path) -> None:
        if self._as_user:
            os.chown(path, self._as_user["user"], self._as_user["group"])

    def _kill_node(self, node: Node) -> None:
        """``kill -9`` of the node's Patroni, then of its postmaster and its children."""
        proc = self.procs.pop(node.name, None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)
        assert self.folder is not None
        if proc is None:  # attached (a cluster of `start DIR`): the Patroni of its pid file
            with contextlib.suppress(OSError, ValueError, ProcessLookupError):
                os.kill(int((self.folder / f"{node.name}.pid").read_text()), signal.SIGKILL)
        pidfile = self.folder / node.name / "data" / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            postmaster = int(pidfile.read_text().split()[0])
            for pid in [postmaster, *_descendants(postmaster)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def _create_database(self) -> None:
        import psycopg  # the project's dependency; `install` does without it

        url = self.database_url("postgres")
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
                    exists = conn.execute(
                        "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)
                    ).fetchone()
                    if not exists:
                        conn.execute(f'CREATE DATABASE "{DATABASE}"')
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rpartition(")")[2].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help="install Patroni, etcd and PostgreSQL when missing")
    run = sub.add_parser("run", help="start a cluster, run a command with its URL, remove it")
    run.add_argument("cmd", nargs=argparse.REMAINDER)
    start = sub.add_parser("start", help="start a cluster in DIR (idempotent); print its URL")
    start.add_argument("dir", type=Path)
    stop = sub.add_parser("stop", help="stop the cluster in DIR (its data stays)")
    stop.add_argument("dir", type=Path)
    failover = sub.add_parser(
        "failover",
        help="kill the leader of the cluster in DIR (kill -9 of its Patroni and PostgreSQL), "
        "wait for the standby's promotion, start the dead node again as the new standby",
    )
    failover.add_argument("dir", type=Path)
    opts = parser.parse_args()
    try:
        if opts.command == "install":
            print(" ".join(install()))
            return 0
        if opts.command == "start":
            return _start_in(opts.dir.resolve())
        if opts.command == "stop":
            return _stop_in(opts.dir.resolve())
        if opts.command == "failover":
            old, new, promoted = PatroniCluster.attach(opts.dir.resolve()).failover()
            print(f"{old.name} killed, {new.name} promoted after {promoted:.1f} s, {old.name} back")
            return 0
        cmd = opts.cmd[1:] if opts.cmd[:1] == ["--"] else opts.cmd
        cluster = PatroniCluster().start()
    except (ClusterUnavailable, subprocess.CalledProcessError) as e:
        print(f"patroni_cluster: {e}", file=sys.stderr)
        return 1
    try:
        env = {**os.environ, "LUOSHOD_TEST_POSTGRES_URL": cluster.url}
        print(f"patroni_cluster: {cluster.url}", file=sys.stderr)
        return subprocess.run(cmd or [os.environ.get("SHELL", "sh")], env=env).returncode
    finally:
        cluster.remove()


def _running(folder: Path) -> bool:
    for pidfile in folder.glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(pidfile.read_text()), 0)
            return True
    return False


def _start_in(folder: Path) -> int:
    """``start DIR``: a cluster kept running in DIR after this program exits (its processes
    are in sessions of their own); a second ``start`` prints the URL of the running one."""
    url_file = folder / "url"
    if _running(folder) and url_file.exists():
        print(url_file.read_text().strip())
        return 0
    if folder.exists() and any(folder.iterdir()):
        shutil.rmtree(folder)  # a stopped cluster's data: a fresh cluster is quicker to trust
    cluster = PatroniCluster(folder=folder)
    try:
        cluster.start()
    except BaseException:
        cluster.remove()
        raise
    atexit.unregister(cluster.remove)
    url_file.write_text(cluster.url + "\n")
    print(cluster.url)
    return 0


def _stop_in(folder: Path) -> int:
    """``stop DIR``: every process of the cluster in DIR, Patroni first, then PostgreSQL, then
    etcd, each with SIGTERM and then SIGKILL after 20 s."""
    pids = sorted(folder.glob("*.pid"), key=lambda p: p.name.startswith("etcd"))
    for pidfile in pids:
        with contextlib.suppress(OSError, ValueError):
            pid = int(pidfile.read_text())
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    os.kill(pid, 0)
                    time.sleep(0.1)
                os.kill(pid, signal.SIGKILL)
        pidfile.unlink(missing_ok=True)
    for pidfile in folder.glob("node*/data/postmaster.pid"):
        with contextlib.suppress(OSError, ValueError, ProcessLookupError):
            os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
