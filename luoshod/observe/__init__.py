"""Observability of the daemon: Prometheus metrics (:mod:`.metrics`), OpenTelemetry
traces (:mod:`.tracing`) and the RPC interceptor that feeds both (:mod:`.interceptor`).

:class:`Observability` is what the composition root (``server/app.py``) talks to: it wraps
the store and the providers, hands the server its interceptors and the service its run
observer, and starts and stops the metrics listener. With neither metrics nor traces
configured it changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import grpc

from ..engine import RunObserver
from ..providers.base import Provider
from ..store import Store
from .interceptor import RpcInterceptor
from .metrics import InstrumentedStore, Metrics, MetricsServer
from .tracing import TracedProvider, Tracing

__all__ = ["Observability"]


class Observability:
    def __init__(
        self, *, metrics_listen: str | None, otel_endpoint: str | None, store_url: str
    ) -> None:
        self.metrics_listen = metrics_listen
        self.metrics = Metrics(driver=store_url.partition(":")[0]) if metrics_listen else None
        self.tracing = Tracing(otel_endpoint) if otel_endpoint else None
        self._server: MetricsServer | None = None

    @property
    def metrics_address(self) -> str:
        """``host:port`` of ``/metrics`` once started ("" when off)."""
        return self._server.address if self._server else ""

    def store(self, store: Store) -> Store:
        return cast(Store, InstrumentedStore(store, self.metrics)) if self.metrics else store

    def providers(self, providers: Sequence[Provider]) -> list[Provider]:
        if self.tracing is None:
            return list(providers)
        return [TracedProvider(p, self.tracing.tracer) for p in providers]

    def interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        if self.metrics is None and self.tracing is None:
            return []
        return [RpcInterceptor(self.metrics, self.tracing.tracer if self.tracing else None)]

    @property
    def observer(self) -> RunObserver | None:
        return self.metrics

    async def start(
        self, store: Store, active_runs: Callable[[], int], leases_held: Callable[[], int]
    ) -> None:
        if self.metrics is None or self.metrics_listen is None:
            return
        self.metrics.watch(store, active_runs, leases_held)
        self._server = MetricsServer(self.metrics, store)
        await self._server.start(self.metrics_listen)

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop()
        if self.tracing is not None:
            await self.tracing.shutdown()
