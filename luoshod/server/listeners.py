"""Where the daemon listens: loopback or remote TCP (plain or TLS, optionally mTLS) and
``unix:`` sockets (their file mode set before anyone can connect; a stale one removed)."""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import socket
import ssl
import stat
from pathlib import Path

import grpc

from ..config import ConfigError

log = logging.getLogger("luoshod.server")


def is_unix(address: str) -> bool:
    return address.startswith("unix:")


def socket_path(address: str) -> Path:
    return Path(address.removeprefix("unix:").removeprefix("//"))


def is_loopback(address: str) -> bool:
    """Raises ``ConfigError`` for what is neither ``host:port`` nor ``unix:/path``."""
    if is_unix(address):
        return True
    rest, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        # grpc would take 99999 as 99999 % 65536: a daemon listening where nobody looks.
        raise ConfigError(
            f"listen: {address!r} is not host:port (a port from 0 to 65535) or unix:/path"
        )
    host = rest.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise ConfigError(f"listen: {address!r} is not host:port or unix:/path") from None


def check_listen(address: str, *, tls: bool, auth: bool, allow_remote: bool) -> None:
    """A non-loopback address needs TLS or tokens, or an explicit ``allow_remote``."""
    if is_loopback(address) or tls or auth or allow_remote:
        return
    raise ConfigError(
        f"listen: {address!r} is not a loopback address; configure TLS (tls_cert_file, "
        "tls_key_file) or bearer tokens (auth_token_file, auth_tokens), or give "
        "--allow-remote to listen there without either"
    )


def server_credentials(
    cert: Path | None, key: Path | None, client_ca: Path | None
) -> grpc.ServerCredentials | None:
    """TLS credentials of the TCP listeners (``None``: plaintext). A client CA turns on
    mTLS: a client without a certificate it signed is refused in the handshake."""
    if cert is None or key is None:
        return None
    pem = {
        name: _read(name, path)
        for name, path in (
            ("tls_cert_file", cert),
            ("tls_key_file", key),
            ("tls_client_ca_file", client_ca),
        )
        if path
    }
    _check_pair(cert, key)
    return grpc.ssl_server_credentials(
        [(pem["tls_key_file"], pem["tls_cert_file"])],
        root_certificates=pem.get("tls_client_ca_file"),
        require_client_auth=client_ca is not None,
    )


def _read(key: str, path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{key}: cannot read {path}: {e.strerror or e}") from None
    if b"-----BEGIN " not in data:
        raise ConfigError(f"{key}: {path} is not a PEM file")
    return data


def _check_pair(cert: Path, key: Path) -> None:
    """gRPC takes a key that does not match its certificate and then fails to bind with
    no word on why; OpenSSL says it at once."""
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
    except ssl.SSLError as e:
        why = (
            "does not match"
            if "MISMATCH" in (e.reason or "")
            else f"cannot be used ({e.reason or e})"
        )
        raise ConfigError(
            f"tls_key_file: {key} {why} the certificate {cert}; give the key the certificate was "
            "issued for"
        ) from None


def why_not_bound(address: str, flag: str = "--listen") -> str:
    """Why ``address`` cannot be bound ("" if it can), in a line that says what to do
    (``flag`` names the setting to change): tried before gRPC tries, since gRPC prints its
    own lines on stderr and then only says "Failed to bind"; and by the HTTP listener."""
    host, _, port = address.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except (OSError, ValueError) as e:
        return f"cannot resolve {host!r}: {e}; give an address of this host"
    for family, kind, proto, _, sockaddr in infos:
        with socket.socket(family, kind, proto) as s:
            # As gRPC binds: SO_REUSEADDR lets connections of a daemon that just died,
            # left in TIME_WAIT, not hold the port; a live listener still does.
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(sockaddr)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return (
                        f"port {port} is already in use (another luoshod?); stop that process "
                        f"or choose another {flag} address"
                    )
                if e.errno == errno.EADDRNOTAVAIL:
                    return f"{host} is not an address of this host; choose another {flag} address"
                if e.errno == errno.EACCES:
                    return f"no permission to bind port {port}; use a port above 1023"
                return f"{e.strerror or e}; choose another {flag} address"
    return ""


def clear_stale_socket(path: Path) -> None:
    """Remove a socket file left by a killed daemon; refuse if a daemon still listens."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        return
    if not stat.S_ISSOCK(path.stat().st_mode):
        raise ConfigError(f"listen: {path} exists and is not a socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        try:
            s.connect(str(path))
        except OSError:
            path.unlink()
            log.info("removed stale socket %s", path)
            return
    raise ConfigError(f"listen: {path} is in use by another process")


def bind(
    server: grpc.aio.Server, address: str, creds: grpc.ServerCredentials | None, socket_mode: int
) -> str:
    """Add ``address`` to ``server``; returns it with the port bound. Unix sockets are
    plaintext whatever ``creds`` (their file mode is the protection)."""
    if is_unix(address):
        path = socket_path(address)
        clear_stale_socket(path)
        # gRPC binds here: the umask makes the socket born with at most its mode, so no
        # one else can connect in between; chmod then gives it exactly that mode.
        old = os.umask(0o777 & ~socket_mode)
        try:
            server.add_insecure_port(address)
        except RuntimeError:  # grpc's "Failed to bind to address"
            raise ConfigError(
                f"listen: cannot listen on {address}: gRPC refused the socket (a path longer "
                "than about 100 bytes?); choose a shorter path"
            ) from None
        finally:
            os.umask(old)
        path.chmod(socket_mode)
        return address
    if why := why_not_bound(address):
        raise ConfigError(f"listen: cannot listen on {address}: {why}")
    try:
        port = (
            server.add_secure_port(address, creds) if creds else server.add_insecure_port(address)
        )
    except RuntimeError:  # grpc's "Failed to bind to address"
        port = 0
    if port == 0:
        raise ConfigError(
            f"listen: cannot listen on {address}: gRPC refused it; choose another --listen address"
        )
    return f"{address.rsplit(':', 1)[0]}:{port}"
