"""The composition root: one place that builds the daemon from a :class:`Config`.
``luoshod serve`` and the tests both use it."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import stat
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc

from ..config import ConfigFileError, load_file
from ..engine.run import DEFAULT_TOOL_TIMEOUT_S, Engine
from ..observe import Observability
from ..providers import ProviderRegistry, ScriptedProvider, configured_providers
from ..store import DEFAULT_EVENT_LOG_LIMIT, DEFAULT_HISTORY_LIMIT, Store, store_from_url
from . import convert
from .hub import EventHub
from .runs import RunRegistry
from .service import DEFAULT_MAX_PAYLOAD_BYTES, AgentService, Limits

log = logging.getLogger("luoshod.server")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["AgentService"].full_name
DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_STORE = "lmdb:.luoshod/store"


@dataclass(slots=True)
class Config:
    listen: list[str] = field(default_factory=lambda: [DEFAULT_LISTEN])
    store: str = DEFAULT_STORE
    history_limit: int = DEFAULT_HISTORY_LIMIT
    max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    drain_timeout_s: float = 10.0
    event_log_limit: int = DEFAULT_EVENT_LOG_LIMIT
    #: How often expired approvals are resolved as rejected (seconds).
    approval_sweep_s: float = 30.0
    scripts_dir: Path | None = None
    scripted_call_log: Path | None = None
    #: The TOML file with the named model providers (``[providers.NAME]``, see config.py).
    config_file: Path | None = None
    #: Listening on a non-loopback TCP address without TLS/auth must be asked for.
    allow_remote: bool = False
    #: ``host:port`` of the Prometheus ``/metrics`` listener; ``None``: no metrics.
    metrics_listen: str | None = None
    #: OTLP/HTTP endpoint (``/v1/traces`` is appended) for traces; ``None``: no traces.
    otel_endpoint: str | None = None


class ConfigError(ValueError):
    """A configuration value is wrong; the message names the key."""


def _check_listen(address: str, allow_remote: bool) -> None:
    if address.startswith("unix:"):
        return
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        raise ConfigError(f"listen: {address!r} is not host:port or unix:/path") from None
    if not loopback and not allow_remote:
        raise ConfigError(
            f"listen: {address!r} is not a loopback address; luoshod has no TLS or auth yet, "
            "so it refuses unless --allow-remote is given"
        )


def _clear_stale_socket(address: str) -> None:
    """Remove a socket file left by a killed daemon; refuse if a daemon still listens."""
    path = Path(address.removeprefix("unix:").removeprefix("//"))
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


class Daemon:
    """A started daemon: its gRPC server, store and runs."""

    def __init__(self, config: Config) -> None:
        self.config = config
        for address in config.listen:
            _check_listen(address, config.allow_remote)
        self.observe = Observability(
            metrics_listen=config.metrics_listen, otel_endpoint=config.otel_endpoint, store_url=config.store
        )
        try:
            self.store: Store = self.observe.store(
                store_from_url(
                    config.store,
                    history_limit=config.history_limit,
                    event_log_limit=config.event_log_limit,
                )
            )
        except ValueError as e:
            raise ConfigError(f"store: {e}") from None
        try:
            entries = load_file(config.config_file).providers.values() if config.config_file else ()
        except ConfigFileError as e:
            raise ConfigError(str(e)) from None
        providers = ProviderRegistry(
            self.observe.providers(
                [
                    ScriptedProvider(scripts_dir=config.scripts_dir, call_log=config.scripted_call_log),
                    *configured_providers(entries),
                ]
            )
        )
        self.engine = Engine(
            self.store,
            providers,
            default_tool_timeout_s=config.tool_timeout_s,
            encode_event=lambda e: convert.event_pb(e).SerializeToString(),
        )
        self.runs = RunRegistry()
        self.hub = EventHub()
        self._sweeper: asyncio.Task[None] | None = None
        self.health = health.aio.HealthServicer()
        self.server: grpc.aio.Server | None = None
        self.addresses: list[str] = []

    async def start(self) -> None:
        await self.store.open()
        try:
            await self.observe.start(self.store, lambda: len(self.runs))
        except (OSError, ValueError) as e:
            await self.store.close()
            raise ConfigError(f"metrics_listen: cannot listen on {self.config.metrics_listen!r}: {e}") from None
        server = grpc.aio.server(
            options=[
                # gRPC's own limit sits above ours, so an oversized request gets our
                # PAYLOAD_TOO_LARGE (with the limit) rather than a bare transport error.
                ("grpc.max_receive_message_length", self.config.max_payload_bytes + 65536),
                ("grpc.so_reuseport", 0),
            ],
            interceptors=self.observe.interceptors(),
        )
        service = AgentService(
            self.engine,
            self.store,
            self.runs,
            Limits(self.config.max_payload_bytes),
            self.hub,
            self.observe.observer,
        )
        pb_grpc.add_AgentServiceServicer_to_server(service, server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            [SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME], server
        )
        for address in self.config.listen:
            if address.startswith("unix:"):
                _clear_stale_socket(address)
                server.add_insecure_port(address)
                self.addresses.append(address)
            else:
                port = server.add_insecure_port(address)
                if port == 0:
                    raise ConfigError(f"listen: cannot bind {address!r}")
                self.addresses.append(f"{address.rsplit(':', 1)[0]}:{port}")
        await server.start()
        self.server = server
        for name in ("", SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self._sweeper = asyncio.create_task(self._sweep_approvals())
        log.info("luoshod listening on %s (store %s)", ", ".join(self.addresses), self.config.store)

    async def stop(self) -> None:
        """Drain: health NOT_SERVING, new runs refused, active runs stopped at their next
        boundary (checkpoints intact, streams end with UNAVAILABLE), then close."""
        if self.server is None:
            return
        if self._sweeper is not None:
            self._sweeper.cancel()
        await self.health.enter_graceful_shutdown()
        left = await self.runs.drain(self.config.drain_timeout_s)
        self.hub.shutdown()
        if left:
            log.warning("%d run(s) still busy after %.1fs; stopping anyway", left, self.config.drain_timeout_s)
        await self.server.stop(grace=2.0)
        self.server = None
        await self.engine.providers.aclose()
        await self.observe.stop()
        await self.store.close()
        for address in self.addresses:
            if address.startswith("unix:"):
                Path(address.removeprefix("unix:").removeprefix("//")).unlink(missing_ok=True)
        log.info("luoshod stopped")

    async def _sweep_approvals(self) -> None:
        """Expired approvals resolve as rejected, so no run waits forever unnoticed."""
        while True:
            try:
                await self.engine.expire_approvals()
            except Exception:  # noqa: BLE001 - a sweep that failed is retried next time
                log.exception("approval sweep failed")
            await asyncio.sleep(self.config.approval_sweep_s)

    async def wait(self) -> None:
        if self.server is not None:
            await self.server.wait_for_termination()


__all__ = ["Config", "ConfigError", "Daemon", "DEFAULT_STORE"]
