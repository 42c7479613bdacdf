"""Issue 17, the operator's start: ``luoshod serve`` that cannot work stops at once with
ONE line on stderr naming the cause and the fix, and exit status 2 (a wrong command line
or configuration), never a traceback and never a daemon serving an empty store somewhere
else. Each case starts the real command as a subprocess, with real ports and files."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.certs import CA
from tests.support.daemon_process import DaemonProcess


def serve(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[int, str]:
    """``luoshod serve ARGS`` that must not start: its exit status and its stderr."""
    proc = subprocess.run(
        [sys.executable, "-m", "luoshod", "serve", *args],
        env={**os.environ, **(env or {})},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert not proc.stdout.startswith("luoshod listening"), proc.stdout
    return proc.returncode, proc.stderr


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_a_taken_port_is_one_line_naming_the_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = serve("--listen", f"127.0.0.1:{port}", "--store", f"sqlite:///{tmp_path}/x.db")
    line = one_line(err)
    assert code == 2
    assert f"port {port} is already in use" in line and "--listen" in line, line


def test_a_taken_http_port_is_one_line_naming_the_port_and_its_flag(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = serve(
            "--listen",
            "127.0.0.1:0",
            "--http-listen",
            f"127.0.0.1:{port}",
            "--store",
            f"sqlite:///{tmp_path}/x.db",
        )
    line = one_line(err)
    assert code == 2
    assert f"port {port} is already in use" in line and "--http-listen" in line, line


def test_a_postgresql_that_does_not_answer_is_said_while_the_daemon_waits() -> None:
    """A server that takes the connection and never answers (a hung or firewalled
    PostgreSQL) holds the open for the driver's timeout: a line says what the daemon waits
    for, then the error is one line. The pool's timeout (default 10 s) is cut to 3 s, one
    connect timeout: still past the 2 s after which the waiting line is said."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        code, err = serve(
            "--store",
            f"postgresql://nobody@127.0.0.1:{port}/db?connect_timeout=3&pool_timeout=3",
            "--listen",
            "127.0.0.1:0",
        )
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 2 and "Traceback" not in err, err
    assert f"waiting for the store postgresql://nobody@127.0.0.1:{port}/db" in lines[0], lines
    assert lines[1].startswith(
        f"luoshod: configuration error: store: cannot open postgresql://nobody@127.0.0.1:{port}/db"
    ), lines


def test_a_tls_key_that_does_not_match_its_certificate(tmp_path: Path) -> None:
    ca = CA(tmp_path)
    a, b = ca.issue("a", server=True), ca.issue("b", server=True)
    code, err = serve(
        "--store",
        "memory://",
        "--listen",
        "127.0.0.1:0",
        "--tls-cert-file",
        str(a.cert),
        "--tls-key-file",
        str(b.key),
    )
    line = one_line(err)
    assert code == 2
    assert "tls_key_file" in line and "does not match" in line and "bind" not in line, line


def test_an_unreachable_postgresql_is_one_line_with_its_cause() -> None:
    code, err = serve(
        "--store", "postgresql://nobody@127.0.0.1:1/db?pool_timeout=3", "--listen", "127.0.0.1:0"
    )
    # The pool tries until its timeout (default 10 s, here 3 s: past the 2 s after which the
    # waiting line is said): while it does, a line says what it waits for.
    waiting, line = err.strip().splitlines()
    assert (
        "waiting for the store postgresql://nobody@127.0.0.1:1/db" in waiting
        and "refused" in waiting.lower()
    ), waiting
    assert code == 2
    assert "store: cannot open postgresql://nobody@127.0.0.1:1/db" in line, line
    assert "refused" in line.lower(), line


def test_an_lmdb_path_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("not a folder")
    code, err = serve("--store", f"lmdb://{tmp_path}/afile/store", "--listen", "127.0.0.1:0")
    line = one_line(err)
    assert code == 2
    assert f"{tmp_path}/afile is a file, not a directory" in line, line


def test_a_sqlite_file_whose_directory_does_not_exist_is_not_created(tmp_path: Path) -> None:
    code, err = serve(
        "--store", f"sqlite:///{tmp_path}/nonexistent/dir/x.db", "--listen", "127.0.0.1:0"
    )
    line = one_line(err)
    assert code == 2
    assert (
        f"the directory {tmp_path}/nonexistent/dir does not exist" in line and "mkdir -p" in line
    ), line
    assert not (tmp_path / "nonexistent").exists()


def test_a_missing_scripts_dir(tmp_path: Path) -> None:
    code, err = serve(
        "--scripts-dir", str(tmp_path / "nope"), "--store", "memory://", "--listen", "127.0.0.1:0"
    )
    line = one_line(err)
    assert code == 2
    assert (
        line.startswith("luoshod: configuration error: scripts_dir:") and "not a directory" in line
    ), line
    assert "--scripts-dir" in line


def test_a_misspelt_variable_gets_did_you_mean_like_a_file_key() -> None:
    code, err = serve(
        "--store", "memory://", "--listen", "127.0.0.1:0", env={"LUOSHOD_HISTORY_LIMT": "3"}
    )
    line = one_line(err)
    assert code == 2
    assert "LUOSHOD_HISTORY_LIMT: unknown variable (did you mean LUOSHOD_HISTORY_LIMIT?)" in line, (
        line
    )


def test_variables_near_no_setting_are_left_alone(tmp_path: Path) -> None:
    """Kubernetes sets LUOSHOD_PORT and LUOSHOD_SERVICE_HOST for a Service named luoshod."""
    env = {"LUOSHOD_PORT": "tcp://10.0.0.7:50051", "LUOSHOD_SERVICE_HOST": "10.0.0.7"}
    d = DaemonProcess("--store", "memory://", env=env).start()
    try:
        assert d.address.startswith("127.0.0.1:")
    finally:
        d.stop()


def test_the_default_store_is_named_by_its_absolute_path(tmp_path: Path) -> None:
    """A daemon started from another folder must not silently open another store: the
    default ``lmdb:.luoshod/store`` is resolved once, and shown, absolute."""
    env = {k: v for k, v in os.environ.items() if k != "LUOSHOD_STORE"}
    shown = subprocess.run(
        [sys.executable, "-m", "luoshod", "config", "show", "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(shown.stdout)["store"] == f"lmdb://{tmp_path}/.luoshod/store"
    d = DaemonProcess(env={"LUOSHOD_LOG_LEVEL": "INFO"})
    d.env.pop("LUOSHOD_STORE", None)
    d.proc = subprocess.Popen(
        d.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=d.env, cwd=tmp_path
    )
    try:
        assert d.proc.stdout.readline().startswith("luoshod listening on ")
        started = ""
        while "listening on" not in started:  # logged before the stdout line
            started = d.proc.stderr.readline()
        assert f"store lmdb://{tmp_path}/.luoshod/store" in started, started
    finally:
        d.stop()


def test_a_plaintext_call_to_a_tls_daemon_hints_at_the_tls_options(tmp_path: Path) -> None:
    ca = CA(tmp_path)
    server = ca.issue("server", server=True)
    d = DaemonProcess(
        "--store",
        "memory://",
        "--tls-cert-file",
        str(server.cert),
        "--tls-key-file",
        str(server.key),
    ).start()
    try:
        for argv in (["sessions", "list"], ["healthcheck"]):
            proc = subprocess.run(
                [sys.executable, "-m", "luoshod", *argv, "--address", d.address],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert proc.returncode == 1
            line = one_line(proc.stderr)
            assert "speaks TLS" in line and "--tls-ca-file" in line, line
        ok = subprocess.run(
            [
                sys.executable,
                "-m",
                "luoshod",
                "sessions",
                "list",
                "--address",
                d.address,
                "--tls-ca-file",
                str(ca.pair.cert),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ok.returncode == 0, ok.stderr
    finally:
        d.stop()


def test_a_port_whose_last_daemon_left_connections_in_time_wait_is_free(tmp_path: Path) -> None:
    """A daemon restarted on its fixed port right after a crash: the port's connections
    that the old one closed linger in TIME_WAIT, which holds no one's port (gRPC binds
    with SO_REUSEADDR), so the start-up check must not call the port taken."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)) as client:
            served, _ = listener.accept()
            served.close()  # the server side closes first: its end stays in TIME_WAIT
            client.recv(1)
    # The state the test needs: binding without the option fails.
    with socket.socket() as probe, pytest.raises(OSError):
        probe.bind(("127.0.0.1", port))
    d = DaemonProcess("--store", f"sqlite:///{tmp_path}/x.db")
    d.args[d.args.index("127.0.0.1:0")] = f"127.0.0.1:{port}"
    try:
        d.start()
        assert d.address == f"127.0.0.1:{port}"
    finally:
        d.stop()


def immutable(*paths: Path) -> bool:
    """Mark ``paths`` read-only in a way that binds root too (``chattr +i``): False where
    this filesystem or user cannot."""
    done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True)
    return done.returncode == 0


@pytest.mark.parametrize("kind", ["sqlite", "lmdb"])
def test_a_read_only_store_is_one_line_saying_so(tmp_path: Path, kind: str) -> None:
    """A store the daemon may read but not write starts nothing: its first run would fail
    at its first save ("attempt to write a readonly database"), long after the start."""
    folder = tmp_path / "store"
    folder.mkdir()
    url = f"sqlite:///{folder}/l.db" if kind == "sqlite" else f"lmdb://{folder}/lmdb"
    made = DaemonProcess("--store", url).start()  # makes the store, as a first start does
    made.terminate()
    made.stop()
    target = folder / "l.db" if kind == "sqlite" else folder / "lmdb" / "data.mdb"
    if not immutable(target):
        pytest.skip("chattr +i is not available here (it needs root and a filesystem that has it)")
    try:
        code, err = serve("--store", url, "--listen", "127.0.0.1:0")
        line = one_line(err)
        assert code == 2
        assert f"{target} is read-only for this user" in line and "give it write access" in line, (
            line
        )
        subprocess.run(["chattr", "-i", str(target)], check=True)
        if not immutable(target.parent):
            pytest.skip("chattr +i is not available on directories here")
        code, err = serve("--store", url, "--listen", "127.0.0.1:0")
        line = one_line(err)
        assert code == 2 and f"the directory {target.parent} is read-only for this user" in line, (
            line
        )
    finally:
        subprocess.run(["chattr", "-i", str(target), str(target.parent)], capture_output=True)


@pytest.mark.parametrize(
    ("flag", "setting"),
    [
        ("--listen", "listen"),
        ("--metrics-listen", "metrics_listen"),
        ("--http-listen", "http_listen"),
    ],
)
def test_a_port_out_of_range_is_one_line_not_another_port_or_a_traceback(
    flag: str, setting: str
) -> None:
    """grpc took 127.0.0.1:99999 as port 34463 (99999 - 65536); the metrics listener died
    with a traceback."""
    args = ["--store", "memory://", flag, "127.0.0.1:99999"]
    if flag != "--listen":
        args += ["--listen", "127.0.0.1:0"]
    code, err = serve(*args)
    line = one_line(err)
    assert code == 2 and f"{setting}: " in line and "'127.0.0.1:99999' is not host:port" in line, (
        line
    )
