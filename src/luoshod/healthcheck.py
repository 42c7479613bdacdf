"""``luoshod healthcheck``: ask a daemon's ``grpc.health.v1.Health/Check`` whether it
serves; exit 0 when it answers SERVING, 1 otherwise, with one line on stderr saying why.

It is the Dockerfile's HEALTHCHECK. With no ``--address`` it checks the daemon the same
settings (``LUOSHOD_LISTEN``, ``--config``) would start: its ``unix:`` socket if it has
one (no TLS there), else its first TCP address, a wildcard host read as loopback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from .server.listeners import is_unix

_WILDCARDS = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]", "": "127.0.0.1"}


def default_address(listen: list[str]) -> str:
    """The address to check among a daemon's listen addresses."""
    for address in listen:
        if is_unix(address):
            return address
    host, _, port = listen[0].rpartition(":")
    return f"{_WILDCARDS.get(host, host)}:{port}"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--address", help="host:port or unix:/path (default: from the daemon's settings)")
    p.add_argument("--service", default="", help='the health service name to check (default "": the daemon)')
    p.add_argument("--timeout", type=float, default=3.0, metavar="S", help="seconds to wait for the answer")
    p.add_argument("--tls", action="store_true", help="connect with TLS (implied by --tls-ca-file)")
    p.add_argument("--tls-ca-file", type=Path, metavar="FILE", help="PEM CA that signed the daemon's certificate")
    p.add_argument("--tls-cert-file", type=Path, metavar="FILE", help="client certificate (mTLS)")
    p.add_argument("--tls-key-file", type=Path, metavar="FILE", help="client private key (mTLS)")
    p.add_argument("--tls-server-name", metavar="NAME", help="the name the daemon's certificate must carry")


def _channel(args: argparse.Namespace, address: str) -> grpc.Channel:
    if not (args.tls or args.tls_ca_file or args.tls_cert_file):
        return grpc.insecure_channel(address)
    read = lambda p: p.read_bytes() if p else None  # noqa: E731
    creds = grpc.ssl_channel_credentials(read(args.tls_ca_file), read(args.tls_key_file), read(args.tls_cert_file))
    options = [("grpc.ssl_target_name_override", args.tls_server_name)] if args.tls_server_name else []
    return grpc.secure_channel(address, creds, options=options)


def check(args: argparse.Namespace, listen: list[str]) -> int:
    address = args.address or default_address(listen)
    try:
        with _channel(args, address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            resp = stub.Check(health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout)
    except grpc.RpcError as e:
        print(f"luoshod healthcheck: {address}: {e.code().name}: {e.details()}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"luoshod healthcheck: {address}: {e}", file=sys.stderr)
        return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)
    if resp.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"luoshod healthcheck: {address}: {status}", file=sys.stderr)
        return 1
    return 0
