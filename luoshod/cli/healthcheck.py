"""``luoshod healthcheck``: ask a daemon's ``grpc.health.v1.Health/Check`` whether it
serves; exit 0 when it answers SERVING, 1 otherwise, with one line on stderr saying why.

It is the Dockerfile's HEALTHCHECK. With no ``--address`` it checks the daemon the same
settings (``LUOSHOD_LISTEN``, ``--config``) would start: its ``unix:`` socket if it has
one (no TLS there), else its first TCP address, a wildcard host read as loopback.
"""

from __future__ import annotations

import argparse
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ..server.listeners import is_unix
from .connect import add_tls_arguments, channel, tls_hint

_WILDCARDS = {"0.0.0.0": "127.0.0.1", "[::]": "[::1]", "": "127.0.0.1"}


def default_address(listen: list[str]) -> str:
    """The address to check among a daemon's listen addresses."""
    for address in listen:
        if is_unix(address):
            return address
    host, _, port = listen[0].rpartition(":")
    return f"{_WILDCARDS.get(host, host)}:{port}"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--address", help="host:port or unix:/path (default: from the daemon's settings)"
    )
    p.add_argument(
        "--service", default="", help='the health service name to check (default "": the daemon)'
    )
    p.add_argument(
        "--timeout", type=float, default=3.0, metavar="S", help="seconds to wait for the answer"
    )
    add_tls_arguments(p)


def check(args: argparse.Namespace, listen: list[str]) -> int:
    address = args.address or default_address(listen)
    try:
        with channel(args, address) as ch:
            stub = health_pb2_grpc.HealthStub(ch)
            # types-grpcio-health-checking's HealthStub declares no methods.
            resp = stub.Check(  # type: ignore[attr-defined]  # see above
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout
            )
    except grpc.RpcError as e:
        hint = tls_hint(args, address) if e.code() == grpc.StatusCode.UNAVAILABLE else ""
        print(
            f"luoshod healthcheck: {address}: {e.code().name}: {e.details()}{hint}", file=sys.stderr
        )
        return 1
    except (OSError, ValueError) as e:  # an unreadable certificate or token file
        print(f"luoshod healthcheck: {address}: {e}", file=sys.stderr)
        return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)
    if resp.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"luoshod healthcheck: {address}: {status}", file=sys.stderr)
        return 1
    return 0
