#!/usr/bin/env python3
"""A throw-away PostgreSQL server on loopback, for the tests and the store benchmark.

    python tests/support/postgres_server.py install        # Debian's package when it is missing
    python tests/support/postgres_server.py run -- CMD...  # a server for CMD (its URL in
                                                   # LUOSHOD_TEST_POSTGRES_URL), then gone

:class:`PostgresServer` initialises a cluster in a fresh temporary folder, starts it on a
free loopback port (its unix socket in that folder too, so it touches nothing of the
machine's own PostgreSQL), creates the database ``luoshod``, and on :meth:`~PostgresServer.
remove` stops it and deletes the folder. PostgreSQL refuses to run as root, and CI runs as
root: then the folder is given to the ``postgres`` system user that Debian's package
creates, and the server's programs run as that user. Clients connect over TCP as the
database user ``postgres`` with no password (``trust``, on loopback only).

:func:`bin_dir` finds the server's programs (``LUOSHOD_PG_BINDIR``, then Debian's
``/usr/lib/postgresql/<major>/bin``, then ``PATH``); :func:`install` installs them with
``apt-get`` when they are missing, and does nothing (no network) when they are there.
"""

from __future__ import annotations

import argparse
import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

if not __package__:  # run as a script (python tests/support/NAME.py): the repository's root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support.debian import apt_install  # noqa: E402

DATABASE = "luoshod"
USER = "postgres"
#: The system user the server runs as when we are root (created by Debian's package).
SYSTEM_USER = "postgres"


class ServerUnavailable(RuntimeError):
    """PostgreSQL's programs are missing, or the server would not start."""


def bin_dir() -> Path | None:
    """The directory of ``initdb``/``pg_ctl``, the newest major first; ``None`` if absent."""
    if configured := os.environ.get("LUOSHOD_PG_BINDIR"):
        return Path(configured)
    debian = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if debian:
        return Path(debian[-1]).parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def install() -> Path:
    """PostgreSQL's server programs, installed from Debian's packages when missing (needs
    root and ``apt-get``). Raises :class:`ServerUnavailable`."""
    if (found := bin_dir()) is not None:
        return found
    apt_install(
        "PostgreSQL's server", ["postgresql"], ServerUnavailable, "install the 'postgresql' package"
    )
    if (found := bin_dir()) is None:
        raise ServerUnavailable("apt-get installed postgresql but no initdb was found")
    return found


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """One throw-away cluster. :meth:`start` it, then use :attr:`url`; :meth:`stop` and
    :meth:`start` again (same data, same port) to take it away and bring it back;
    :meth:`remove` when done (also run at exit)."""

    def __init__(self, *, fsync: bool = True, parent: Path | None = None) -> None:
        self.fsync = fsync
        self.parent = parent  # where the temporary folder goes (default: the system's)
        self.bin = bin_dir()
        self.folder: Path | None = None
        self.port = 0
        self._as_user: dict[str, object] = {}
        self._initialised = False

    @property
    def url(self) -> str:
        """The URL of the database ``luoshod``."""
        return self.database_url(DATABASE)

    def database_url(self, database: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> PostgresServer:
        """Initialise the cluster (the first time) and start the server; returns once it
        accepts connections. Raises :class:`ServerUnavailable`."""
        if self.bin is None:
            raise ServerUnavailable(
                "PostgreSQL's server is not installed (initdb not found): "
                "run `python tests/support/postgres_server.py install` or set LUOSHOD_PG_BINDIR"
            )
        if not self._initialised:
            self._init()
        attempts = 1 if self.port else 3  # a fresh port may be taken meanwhile: pick another
        for attempt in range(attempts):
            if not self.port or attempt:
                self.port = free_port()
            if (
                self._pg_ctl(
                    "start",
                    "-w",
                    "-t",
                    "60",
                    "-l",
                    str(self._dir / "server.log"),
                    "-o",
                    self._options(),
                ).returncode
                == 0
            ):
                break
        else:
            log = (self._dir / "server.log").read_text(errors="replace")[-3000:]
            raise ServerUnavailable(f"PostgreSQL did not start:\n{log}")
        if not self._created:
            self.create_database(DATABASE)
            self._created = True
        return self

    def stop(self) -> None:
        """Stop the server (``-m fast``: sessions are ended, what was committed is kept)."""
        if self.folder is not None and (self._dir / "data" / "postmaster.pid").exists():
            self._pg_ctl("stop", "-w", "-m", "fast")

    def remove(self) -> None:
        """Stop the server at once and delete its folder. Idempotent."""
        folder, self.folder = self.folder, None
        if folder is None:
            return
        if (folder / "data" / "postmaster.pid").exists():
            self._run(
                [
                    str(self.bin / "pg_ctl"),
                    "-D",
                    str(folder / "data"),
                    "stop",
                    "-w",
                    "-m",
                    "immediate",
                ]
            )
        shutil.rmtree(folder, ignore_errors=True)

    def create_database(self, name: str | None = None) -> str:
        """A new empty database (a fresh name when none is given); its URL."""
        import psycopg  # the project's dependency; `install` does without it

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.database_url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.database_url(name)

    # -- the cluster -------------------------------------------------------------------

    _created = False

    @property
    def _dir(self) -> Path:
        assert self.folder is not None
        return self.folder

    def _init(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="luoshod-pg-", dir=self.parent))
        atexit.register(self.remove)
        if os.geteuid() == 0:
            # PostgreSQL refuses root: the folder and the server go to its system user.
            try:
                user = pwd.getpwnam(SYSTEM_USER)
            except KeyError:
                raise ServerUnavailable(
                    f"running as root and there is no {SYSTEM_USER!r} system user to run "
                    "PostgreSQL as (Debian's postgresql package creates it)"
                ) from None
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self._as_user = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        result = self._run(
            [
                str(self.bin / "initdb"),
                "-D",
                str(self._dir / "data"),
                "-U",
                USER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ]
        )
        if result.returncode != 0:
            raise ServerUnavailable(f"initdb failed:\n{result.stdout}")
        self._initialised = True

    def _options(self) -> str:
        options = [
            f"-p {self.port}",
            "-c listen_addresses=127.0.0.1",
            f"-c unix_socket_directories={self._dir}",
            "-c max_connections=200",
            "-c shared_buffers=64MB",
        ]
        if not self.fsync:
            # For the tests only: they kill clients, never the server, so its fsyncs
            # protect nothing there. The benchmark keeps them.
            options.append("-c fsync=off")
        return " ".join(options)

    def _pg_ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self._run([str(self.bin / "pg_ctl"), "-D", str(self._dir / "data"), *args])

    def _run(self, cmd: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cmd,
            cwd=self.folder,  # the server's user may not enter ours
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            **self._as_user,  # type: ignore[arg-type]
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("install", help="install PostgreSQL from Debian's packages when missing")
    run = sub.add_parser("run", help="start a server, run a command with its URL, remove it")
    run.add_argument("--no-fsync", action="store_true", help="start the server with fsync=off")
    run.add_argument("cmd", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    try:
        if opts.command == "install":
            print(install())
            return 0
        cmd = opts.cmd[1:] if opts.cmd[:1] == ["--"] else opts.cmd
        server = PostgresServer(fsync=not opts.no_fsync).start()
    except (ServerUnavailable, subprocess.CalledProcessError) as e:
        print(f"postgres_server: {e}", file=sys.stderr)
        return 1
    try:
        env = {**os.environ, "LUOSHOD_TEST_POSTGRES_URL": server.url}
        return subprocess.run(cmd or [os.environ.get("SHELL", "sh")], env=env).returncode
    finally:
        server.remove()


if __name__ == "__main__":
    sys.exit(main())
