"""How luoshod's own client commands (``sessions``, ``approvals``, ``prune``,
``healthcheck``) reach a daemon: TLS (and mTLS) options, and a bearer token.

The token comes from ``--token-file FILE`` (its first line that is not blank or a ``#``
comment) or from ``LUOSHOD_TOKEN``; it has no flag of its own, since a secret on a
command line is visible in ``ps``.
"""

from __future__ import annotations

import argparse
import os
import socket
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc

TOKEN_ENV = "LUOSHOD_TOKEN"
#: Where ``luoshod serve`` listens by default (``server.app.DEFAULT_LISTEN``, which a client
#: must not import; tests/cli/test_admin_commands.py checks that the two agree).
DEFAULT_ADDRESS = "127.0.0.1:50051"


def add_tls_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tls", action="store_true", help="connect with TLS (implied by --tls-ca-file)")
    p.add_argument(
        "--tls-ca-file",
        type=Path,
        metavar="FILE",
        help="PEM CA that signed the daemon's certificate",
    )
    p.add_argument("--tls-cert-file", type=Path, metavar="FILE", help="client certificate (mTLS)")
    p.add_argument("--tls-key-file", type=Path, metavar="FILE", help="client private key (mTLS)")
    p.add_argument(
        "--tls-server-name", metavar="NAME", help="the name the daemon's certificate must carry"
    )


def add_token_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help=f"bearer token for a daemon with auth tokens: the file's first line (env {TOKEN_ENV})",
    )


def token(args: argparse.Namespace) -> str | None:
    """The bearer token to send, if any. Raises ``ValueError`` for an unreadable or empty
    token file."""
    path: Path | None = getattr(args, "token_file", None)
    if path is None:
        return os.environ.get(TOKEN_ENV) or None
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(
            f"--token-file: cannot read {path}: {getattr(e, 'strerror', None) or e}"
        ) from None
    for line in lines:
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip()
    raise ValueError(f"--token-file: {path} holds no token")


def channel(args: argparse.Namespace, address: str) -> grpc.Channel:
    """A channel to ``address`` with the TLS options of ``args`` and its token (if any)
    sent with every call."""
    if uses_tls(args):
        read = lambda p: p.read_bytes() if p else None  # noqa: E731
        creds = grpc.ssl_channel_credentials(
            read(args.tls_ca_file), read(args.tls_key_file), read(args.tls_cert_file)
        )
        options = (
            [("grpc.ssl_target_name_override", args.tls_server_name)]
            if args.tls_server_name
            else []
        )
        ch = grpc.secure_channel(address, creds, options=options)
    else:
        ch = grpc.insecure_channel(address)
    bearer = token(args)
    return grpc.intercept_channel(ch, _Bearer(bearer)) if bearer else ch


def uses_tls(args: argparse.Namespace) -> bool:
    return bool(args.tls or args.tls_ca_file or args.tls_cert_file)


def tls_hint(args: argparse.Namespace, address: str) -> str:
    """What to add to an UNAVAILABLE of a plaintext call: a hint to use TLS when the
    daemon at ``address`` answers a TLS handshake (gRPC only says "Socket closed")."""
    if uses_tls(args) or address.startswith("unix:"):
        return ""
    host, _, port = address.rpartition(":")
    name = host.strip("[]")
    # An ASCII name as bytes: a str is encoded with the IDNA codec, an import of its own.
    try:
        family, kind, proto, _, where = socket.getaddrinfo(
            name.encode() if name.isascii() else name, int(port), type=socket.SOCK_STREAM
        )[0]
        with socket.socket(family, kind, proto) as raw:
            raw.settimeout(2)
            raw.connect(where)
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            with context.wrap_socket(raw):
                pass
    except (OSError, ValueError):
        return ""
    return (
        "; the daemon speaks TLS: give --tls-ca-file FILE (its CA), or --tls if a system CA "
        "signed it"
    )


class _Bearer(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds ``authorization: Bearer <token>`` to every call."""

    def __init__(self, token: str) -> None:
        self._header = ("authorization", f"Bearer {token}")

    def _details(self, details: Any) -> Any:
        metadata = [*(details.metadata or ()), self._header]
        return (
            details._replace(metadata=metadata)
            if hasattr(details, "_replace")
            else _Details(details, metadata)
        )

    def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(
        self, continuation: Callable[..., Any], details: Any, request: Any
    ) -> Any:
        return continuation(self._details(details), request)


class _Details(grpc.ClientCallDetails):
    def __init__(self, d: Any, metadata: list[tuple[str, str]]) -> None:
        self.method, self.timeout, self.credentials = d.method, d.timeout, d.credentials
        self.wait_for_ready, self.compression = d.wait_for_ready, d.compression
        self.metadata = tuple(metadata)
