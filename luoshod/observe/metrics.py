"""Prometheus metrics of one daemon, served on their own port (``--metrics-listen``).

Every series lives in the daemon's own ``CollectorRegistry`` (two daemons in one process,
as in the tests, do not share counters). What is counted where:

- RPCs: :class:`luoshod.observe.interceptor.RpcInterceptor` calls :meth:`Metrics.rpc_done`;
- runs and steps: the service's :class:`~luoshod.engine.observer.RunObserver` hook;
- save latency: :class:`InstrumentedStore`, a thin decorator put around the driver at
  the composition root, so no driver knows about metrics;
- active runs, leases held, pending approvals and store size: read when scraped.

The README's "Metrics" section lists them; keep the two in step.
"""

from __future__ import annotations

import asyncio
import logging
import platform
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    generate_latest,
)

from .. import __version__
from ..domain import Usage
from ..engine import (
    CALLER_LEFT,
    COMPACTION_DONE,
    MODEL_TURN,
    PROVIDER_FALLBACK,
    PROVIDER_RETRY,
    STEP_DONE,
    Event,
    RunInterrupted,
    RunObserver,
)
from ..store import MAX_PAGE_SIZE, Capability, Store

log = logging.getLogger("luoshod.metrics")

#: Save latencies are milliseconds (a batched fsync) to seconds (a stalled disk).
SAVE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class Metrics(RunObserver):
    """The daemon's series; also the service's run observer."""

    def __init__(self, driver: str) -> None:
        self.driver = driver
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        # The process (process_cpu_seconds_total, process_resident_memory_bytes, open fds…)
        # and the interpreter (python_info, python_gc_*), as every Prometheus client
        # exports them; the default collectors read this process whichever registry.
        for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
            r.register(collector)
        Info("luoshod_build", "The daemon's version and its Python and gRPC", registry=r).info(
            {"version": __version__, "python": platform.python_version(), "grpc": grpc.__version__}
        )
        self.rpcs = Counter(
            "luoshod_grpc_server_handled",
            "RPCs completed, by method and gRPC status code",
            ["grpc_service", "grpc_method", "grpc_code"],
            registry=r,
        )
        self.rpc_seconds = Histogram(
            "luoshod_grpc_server_handling_seconds",
            "Time from an RPC's start to its status (streams: the whole stream)",
            ["grpc_service", "grpc_method"],
            registry=r,
        )
        self.runs = Counter(
            "luoshod_runs",
            "Runs ended, by outcome: stop, max_steps, aborted, awaiting_approval, "
            "nothing_to_run, detached (its caller left; resumable), interrupted (the daemon "
            "stopped), "
            "error",
            ["outcome"],
            registry=r,
        )
        self.steps = Counter("luoshod_steps", "Steps completed (step.done events)", registry=r)
        self.model_tokens = Counter(
            "luoshod_model_tokens",
            "Tokens of the model calls this daemon made (model.turn events, sub-agents' "
            "included), by model (provider:model) and kind: input, output, cached_input and "
            "cache_write (of input), reasoning (of output), the last three where the provider "
            "reports them",
            ["model", "kind"],
            registry=r,
        )
        self.model_cost = Counter(
            "luoshod_model_cost_usd",
            "Cost in USD of the model calls this daemon made, by model (provider:model); "
            "calls of a model with no known cost add 0",
            ["model"],
            registry=r,
        )
        self.model_retries = Counter(
            "luoshod_model_retries",
            "Attempts of a model call that failed and were tried again (provider.retry events), "
            "by model (provider:model)",
            ["model"],
            registry=r,
        )
        self.model_fallbacks = Counter(
            "luoshod_model_fallbacks",
            "Turns handed to the next fallback model (provider.fallback events), by the model "
            "that failed and the one that takes the turn",
            ["from_model", "to_model"],
            registry=r,
        )
        self.save_seconds = Histogram(
            "luoshod_store_save_seconds",
            "Checkpoint save latency, as a run waits for it (group commit included)",
            ["driver"],
            buckets=SAVE_BUCKETS,
            registry=r,
        )
        self.active_runs = Gauge("luoshod_active_runs", "Runs active in this daemon", registry=r)
        self.leases_held = Gauge(
            "luoshod_leases_held",
            "Session leases this daemon holds in the store (one per run, resolution or delete in "
            "progress)",
            registry=r,
        )
        self.lease_writes = Counter(
            "luoshod_store_lease_writes",
            "Lease writes to the store, by op: acquire, release, renew "
            "(renew: one batched write a daemon makes each lease_renew_s for every lease it holds)",
            ["op"],
            registry=r,
        )
        self.pending_approvals = Gauge(
            "luoshod_pending_approvals",
            "Approvals waiting for a decision in the store (counted when scraped)",
            registry=r,
        )
        self.store_size = Gauge(
            "luoshod_store_size_bytes",
            "Bytes on disk of the store, as it answers disk_bytes() (sqlite, lmdb; not memory or "
            "postgresql)",
            ["driver"],
            registry=r,
        )

    def describe(self, *, store: str, listen: Sequence[str], lease_owner: str) -> None:
        """``luoshod_daemon_info``: what this daemon is (``luoshod status`` reads it): its
        store URL (password masked), its bound listen addresses and its lease owner."""
        Info(
            "luoshod_daemon",
            "This daemon's store (password masked), listeners and lease owner",
            registry=self.registry,
        ).info({"store": store, "listen": ",".join(listen), "lease_owner": lease_owner})

    # -- RunObserver ------------------------------------------------------------------------

    def event(self, event: Event) -> None:
        if event.type == STEP_DONE:
            self.steps.inc()
        elif event.type == MODEL_TURN:
            self.model_turn(event.data["message"].model, event.data["usage"])
        elif event.type == PROVIDER_RETRY:
            self.model_retries.labels(event.data["model"] or "unknown").inc()
        elif event.type == PROVIDER_FALLBACK:
            self.model_fallbacks.labels(event.data["from_model"], event.data["to_model"]).inc()
        elif event.type == COMPACTION_DONE and event.data.get("summary_model"):
            self.model_turn(event.data["summary_model"], event.data["usage"])  # R85

    def model_turn(self, model: str, usage: Usage) -> None:
        """A model call's usage (R78), counted by model and kind."""
        model = model or "unknown"
        for kind, n in (
            ("input", usage.prompt_tokens),
            ("output", usage.completion_tokens),
            ("cached_input", usage.cached_input_tokens),
            ("cache_write", usage.cache_write_tokens),
            ("reasoning", usage.reasoning_tokens),
        ):
            self.model_tokens.labels(model, kind).inc(max(0, n))
        self.model_cost.labels(model).inc(max(0.0, usage.cost_usd))

    def run_ended(self, task: asyncio.Task[object]) -> None:
        self.runs.labels(outcome=run_outcome(task)).inc()

    # -- the RPC interceptor ------------------------------------------------------------------

    def rpc_done(self, method: str, code: grpc.StatusCode, seconds: float) -> None:
        service, _, name = method.lstrip("/").rpartition("/")
        self.rpcs.labels(service, name, code.name).inc()
        self.rpc_seconds.labels(service, name).observe(seconds)

    # -- read when scraped ----------------------------------------------------------------------

    def watch(
        self, store: Store, active_runs: Callable[[], int], leases_held: Callable[[], int]
    ) -> None:
        """Gauges that read the daemon's state at scrape time."""
        self.active_runs.set_function(active_runs)
        self.leases_held.set_function(leases_held)
        if store.disk_bytes() is not None:  # the store answers its own size (None: it has no files)
            self.store_size.labels(self.driver).set_function(lambda: store.disk_bytes() or 0)

    async def refresh(self, store: Store) -> None:
        """Read what only the store knows (it is async, so not a ``set_function``)."""
        if Capability.APPROVALS not in store.capabilities:
            return
        count, token = 0, ""
        while True:
            page, token = await store.list_approvals(
                session_id=None, page_size=MAX_PAGE_SIZE, page_token=token
            )
            count += len(page)
            if not token:
                break
        self.pending_approvals.set(count)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


def run_outcome(task: asyncio.Task[object]) -> str:
    if task.cancelled():
        return "interrupted"
    err = task.exception()
    if isinstance(err, RunInterrupted):
        # A caller that leaves is no failure: `approvals approve` leaves once the run waits
        # on the app's tools, and the app's next Resume goes on.
        return "detached" if err.reason in CALLER_LEFT else "interrupted"
    if err is not None:
        return "error"
    outcome: Any = task.result()
    if outcome is None:
        return "nothing_to_run"
    return str(outcome.finish_reason.value).replace("-", "_") or "unknown"


class InstrumentedStore:
    """The driver, with each ``save`` timed into ``luoshod_store_save_seconds`` and each
    lease write counted in ``luoshod_store_lease_writes``; every other attribute is the
    driver's own."""

    def __init__(self, store: Store, metrics: Metrics) -> None:
        self._store = store
        self._histogram = metrics.save_seconds.labels(metrics.driver)
        self._lease_writes = metrics.lease_writes

    async def acquire_lease(self, *args: Any, **kwargs: Any) -> Any:
        self._lease_writes.labels("acquire").inc()
        return await self._store.acquire_lease(*args, **kwargs)

    async def renew_leases(self, *args: Any, **kwargs: Any) -> Any:
        self._lease_writes.labels("renew").inc()
        return await self._store.renew_leases(*args, **kwargs)

    async def renew_lease(self, *args: Any, **kwargs: Any) -> Any:
        self._lease_writes.labels("renew").inc()
        return await self._store.renew_lease(*args, **kwargs)

    async def release_lease(self, *args: Any, **kwargs: Any) -> Any:
        self._lease_writes.labels("release").inc()
        return await self._store.release_lease(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def __repr__(self) -> str:
        return f"InstrumentedStore({self._store!r})"

    async def save(self, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await self._store.save(*args, **kwargs)
        finally:
            self._histogram.observe(time.perf_counter() - start)


class MetricsServer:
    """``GET /metrics`` over plain HTTP/1.1 on the daemon's own event loop, so a scrape
    can read the store with the daemon's async calls."""

    def __init__(self, metrics: Metrics, store: Store) -> None:
        self.metrics = metrics
        self.store = store
        self._server: asyncio.Server | None = None
        self.address = ""

    async def start(self, listen: str) -> None:
        host, sep, port = listen.rpartition(":")
        if not sep or not port.isdigit() or int(port) > 65535:
            raise ValueError(f"{listen!r} is not host:port (a port from 0 to 65535)")
        self._server = await asyncio.start_server(self._serve, host.strip("[]") or None, int(port))
        bound = self._server.sockets[0].getsockname()
        self.address = f"{host}:{bound[1]}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            method, path, *_ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ") + ["", ""]
            if method != "GET" or path.split("?", 1)[0] != "/metrics":
                await _respond(writer, "404 Not Found", "text/plain", b"only GET /metrics here\n")
                return
            try:
                await self.metrics.refresh(self.store)
            except Exception:  # noqa: BLE001 - a store that cannot be read still has the other series
                log.exception("reading the store for /metrics failed")
            await _respond(writer, "200 OK", CONTENT_TYPE_LATEST, self.metrics.exposition())
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            TimeoutError,
            ConnectionError,
        ):
            pass
        finally:
            writer.close()


async def _respond(
    writer: asyncio.StreamWriter, status: str, content_type: str, body: bytes
) -> None:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: "
        f"{len(body)}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode("latin-1") + body)
    await writer.drain()
