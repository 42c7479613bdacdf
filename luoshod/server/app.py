"""The composition root: one place that builds the daemon from a :class:`Config`.
``luoshod serve`` and the tests both use it."""

from __future__ import annotations

import logging
from dataclasses import MISSING, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from luosho.v1 import agent_pb2 as pb
from luosho.v1 import agent_pb2_grpc as pb_grpc

from ..config import ConfigError, ConfigFileError, Secret, load_file, redact_url
from ..engine import (
    DEFAULT_LEASE_RENEW_S,
    DEFAULT_LEASE_TTL_S,
    DEFAULT_REQUEST_ID_LIMIT,
    DEFAULT_TOOL_TIMEOUT_S,
    Engine,
    LeasePolicy,
    default_owner,
)
from ..mcpclient import McpServerConfig, McpServers
from ..observe import Observability
from ..providers import ModelGuard, ProviderRegistry, ScriptedProvider, configured_providers
from ..store import (
    DEFAULT_EVENT_LOG_LIMIT,
    DEFAULT_HISTORY_LIMIT,
    Capability,
    Store,
    store_from_url,
)
from . import stored_events
from .admission import DEFAULT_MAX_LOOP_LAG_MS, Admission, LoopLag
from .auth import TokenAuth, load_tokens
from .hub import EventHub
from .listeners import bind, check_listen, is_unix, server_credentials, socket_path
from .peers import Peers, advertised
from .periodic import Periodic
from .preflight import open_store
from .retention import Retention
from .runs import RunRegistry
from .service import DEFAULT_MAX_PAYLOAD_BYTES, AgentService, Limits
from .waker import Waker
from .webhooks import Notifier, WebhookConfig, parse_events

if TYPE_CHECKING:
    from ..http import HttpListener

log = logging.getLogger("luoshod.server")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["AgentService"].full_name
DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_STORE = "lmdb:.luoshod/store"
#: Sized by memory (bench/slowruns.py: a waiting run costs the daemon ~50 KB, so 10,000
#: hold ~0.5 GB); CPU overload is the loop-lag gate's (admission.py).
DEFAULT_MAX_ACTIVE_RUNS = 10_000
#: How many calls gRPC core keeps waiting for the event loop to take them up before it
#: cancels new ones (its defaults: 1,000, and 3,000 for all of them), and for how long
#: (its default: 30 s, after which a waiting call is cancelled: 10,000 tool results
#: submitted together to a busy daemon lost thousands of runs).
MAX_PENDING_CALLS = 1_000_000
MAX_PENDING_CALL_S = 86_400
PENDING_CALLS_OPTIONS = [
    ("grpc.server.max_pending_requests", MAX_PENDING_CALLS),
    ("grpc.server.max_pending_requests_hard_limit", MAX_PENDING_CALLS),
    ("grpc.server_max_unrequested_time_in_server", MAX_PENDING_CALL_S),
]
#: How long a stop waits for halted runs to save and release their leases (seconds).
HALT_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class Declared:
    """How a :class:`Config` field is set from outside the code: the settings layers
    (settings.py: TOML file, ``LUOSHOD_*`` variable, flag) and the README's table are
    derived from it. A setting's name is its field's (but where ``name`` says otherwise);
    a name that holds a quantity ends in its unit: ``_s`` seconds, ``_ms`` milliseconds,
    ``_bytes`` bytes."""

    #: The flag's help, one line.
    help: str
    #: The README's "meaning" column when it says more than ``help`` (markdown).
    doc: str = ""
    #: The setting's name in every layer, where it is not the field's.
    name: str = ""
    #: The flag's argument in its help (``S``, ``FILE``); "" for an on/off switch.
    metavar: str = ""
    #: How a text value (a variable, a flag) is read where the type does not say:
    #: "list" (comma-separated; a repeatable flag), "secrets" (comma-separated, masked),
    #: "secret", "file" (an existing file), "octal", "tables" (file only).
    kind: str = ""
    #: No flag: a secret on a command line is visible to every user of the host.
    flag: bool = True
    #: Bounds checked by the settings layers.
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    #: The name before the unit rule: still accepted, with a warning, for one release.
    old: str = ""
    #: The default as the README shows it, where the value does not say it.
    default_doc: str = ""
    #: Variables read besides ``LUOSHOD_<NAME>`` (standard ones such as OpenTelemetry's).
    env_also: tuple[str, ...] = ()


def setting(
    default: Any = MISSING, help: str = "", *, factory: Any = MISSING, **declared: Any
) -> Any:
    """A :class:`Config` field that is a setting: its default and its :class:`Declared`."""
    meta = {"setting": Declared(help, **declared)}
    if factory is not MISSING:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(slots=True)
class Config:
    """What the daemon is built from, each field a setting declared once (:func:`setting`):
    ``luoshod serve`` builds it from the settings layers (settings.py: file, environment,
    flags); tests build it directly."""

    listen: list[str] = setting(
        factory=lambda: [DEFAULT_LISTEN],
        help="host:port or unix:/path to listen on (repeatable; comma-separated in the variable)",
        doc="`host:port` or `unix:/path/sock`; port `0` picks one. A non-loopback address needs "
        "TLS or tokens, or `allow_remote` ([Security](#security))",
        metavar="ADDR",
        kind="list",
    )
    store: str = setting(DEFAULT_STORE, "store URL", doc="see [Stores](#stores)", metavar="URL")
    history_limit: int = setting(
        DEFAULT_HISTORY_LIMIT,
        "history entries kept per session (0 keeps none)",
        doc="saves kept per session (0 keeps none)",
        metavar="N",
        ge=0,
    )
    event_log_limit: int = setting(
        DEFAULT_EVENT_LOG_LIMIT,
        "events kept per session for Watch",
        doc="events kept per session for `Watch`",
        metavar="N",
        ge=0,
    )
    request_id_limit: int = setting(
        DEFAULT_REQUEST_ID_LIMIT,
        "applied request ids kept per session (R74)",
        doc="applied request ids kept per session, the newest (R74)",
        metavar="N",
        ge=1,
    )
    max_payload_bytes: int = setting(
        DEFAULT_MAX_PAYLOAD_BYTES,
        "largest request accepted (PAYLOAD_TOO_LARGE above)",
        doc="larger requests get `PAYLOAD_TOO_LARGE`",
        metavar="N",
        ge=1,
    )
    max_active_runs: int = setting(
        DEFAULT_MAX_ACTIVE_RUNS,
        "runs active at once in this daemon (TOO_MANY_RUNS above; 0: no limit)",
        doc="runs active at once; one more gets `TOO_MANY_RUNS` with `retry_after_s` (0: no limit)",
        metavar="N",
        ge=0,
    )
    max_loop_lag_ms: int = setting(
        DEFAULT_MAX_LOOP_LAG_MS,
        "new runs refused (DAEMON_OVERLOADED) while the event loop runs this late, sustained, "
        "or when a burst of starts would make it that late (0: never)",
        doc="new runs get `DAEMON_OVERLOADED` (with `retry_after_s`) while the daemon's event "
        "loop runs this late for 2 s on end, and those of a burst past what would make it "
        "this late (0: never)",
        metavar="MS",
        ge=0,
    )
    tool_timeout_s: float = setting(
        DEFAULT_TOOL_TIMEOUT_S,
        "seconds a run waits for a tool result, unless the agent says otherwise",
        metavar="S",
        gt=0,
        old="tool_timeout",
    )
    drain_timeout_s: float = setting(
        10.0,
        "seconds SIGTERM waits for active runs to checkpoint",
        metavar="S",
        ge=0,
        old="drain_timeout",
    )
    approval_sweep_s: float = setting(
        30.0,
        "seconds between sweeps that reject expired approvals",
        metavar="S",
        gt=0,
    )
    queue_sweep_s: float = setting(
        1.0,
        "seconds between sweeps that run inputs queued on busy sessions (if_busy)",
        doc="how often inputs queued on busy sessions (`if_busy`) are looked for: what a killed "
        "daemon left queued, an interrupt sent through another daemon",
        metavar="S",
        gt=0,
    )
    sleep_sweep_s: float = setting(
        30.0,
        "seconds between sweeps that list sleeping sessions (R86) even when none is due",
        doc="how often the daemon lists the sleeping sessions even when it knows of none due: "
        "sessions put to sleep by another daemon sharing the store that then stopped (a "
        "daemon wakes its own sleepers, and every due one at its start, on time)",
        metavar="S",
        gt=0,
    )
    schedule_late_s: float = setting(
        60.0,
        "seconds after its time a schedule's fire counts as missed (its catch-up policy)",
        doc="a schedule's fire found this many seconds after its time (every daemon was down) "
        "was missed: the schedule's catch-up policy says whether it runs",
        metavar="S",
        gt=0,
    )
    schedule_sweep_s: float = setting(
        30.0,
        "seconds between reads of every schedule (R87) even when none is due",
        doc="how often the daemon reads every schedule even when none is due: the schedules "
        "another daemon sharing the store created, changed or deleted are seen by then (a "
        "daemon sees its own at once, and fires each at its time)",
        metavar="S",
        gt=0,
    )
    retention_s: float = setting(
        0.0,
        "seconds a finished session is kept before the daemon deletes it (0: forever)",
        doc="seconds a finished session is kept before the daemon deletes it with its history (0: "
        "forever; a request's `retention_ms` sets a session's own)",
        metavar="S",
        ge=0,
        old="retention",
    )
    retention_sweep_s: float = setting(
        60.0,
        "seconds between the daemon's retention sweeps",
        doc="how often the daemon looks for finished sessions past their retention",
        metavar="S",
        gt=0,
    )
    webhook_url: str | None = setting(
        None,
        "URL that notifications are POSTed to (default off)",
        doc="where notifications are POSTed ([Busy sessions, notifications and "
        "retention](#busy-sessions-notifications-and-retention))",
        metavar="URL",
    )
    webhook_events: str = setting(
        "approval.requested,approval.expired,run.done,run.failed",
        "the notifications sent, comma-separated",
        doc="comma-separated: `approval.requested`, `approval.expired`, `run.done`, `run.failed`",
        metavar="NAMES",
        default_doc="all four",
    )
    webhook_secret: Secret | None = setting(
        None,
        "the webhooks' signing secret (no flag; or webhook_secret_file)",
        doc="the signing secret (`whsec_<base64>` or any text)",
        kind="secret",
        flag=False,
    )
    webhook_secret_file: Path | None = setting(
        None,
        "file holding the webhooks' signing secret",
        metavar="FILE",
        kind="file",
    )
    webhook_include_payloads: bool = setting(
        False,
        "notifications carry tool arguments and final texts",
        doc="bodies carry an approval's tool arguments and a run's final text",
    )
    scripts_dir: Path | None = setting(
        None,
        "where scripted:NAME finds NAME.json",
        doc="where `scripted:NAME` finds `NAME.json`",
        metavar="DIR",
    )
    scripted_call_log: Path | None = setting(
        None,
        "append a line per scripted model call (tests)",
        doc="one JSON line per scripted model call (tests)",
        metavar="FILE",
    )
    #: The TOML file of the settings and the named model providers (``[providers.NAME]``,
    #: see config.py); not a key inside it.
    config_file: Path | None = setting(
        None,
        "the TOML file of these settings and the model providers",
        doc="the TOML file itself (not a key inside it)",
        name="config",
        metavar="FILE",
        kind="file",
    )
    allow_remote: bool = setting(
        False,
        "listen on a non-loopback address without TLS or tokens",
        doc="listen on non-loopback addresses without TLS or tokens",
    )
    unix_socket_mode: int = setting(
        0o660,
        "file mode of unix: sockets, octal",
        doc="file mode of `unix:` sockets (octal)",
        metavar="MODE",
        kind="octal",
        ge=0,
        le=0o777,
    )
    tls_cert_file: Path | None = setting(
        None,
        "PEM certificate chain: TCP listeners speak TLS",
        metavar="FILE",
        kind="file",
    )
    tls_key_file: Path | None = setting(
        None,
        "PEM private key of tls_cert_file",
        doc="PEM private key of the certificate",
        metavar="FILE",
        kind="file",
    )
    tls_client_ca_file: Path | None = setting(
        None,
        "PEM CA bundle: clients must present a certificate it signed (mTLS)",
        metavar="FILE",
        kind="file",
    )
    auth_token_file: Path | None = setting(
        None,
        "file of bearer tokens, one per line: calls must carry one",
        doc="bearer tokens, one per line (`#` comment lines and blank lines skipped): every call "
        "but health must carry one",
        metavar="FILE",
        kind="file",
    )
    auth_tokens: tuple[Secret, ...] = setting(
        (),
        "bearer tokens (comma-separated in the variable; no flag)",
        kind="secrets",
        flag=False,
    )
    log_contents: bool = setting(
        False,
        "log message contents, tool arguments and results (DEBUG)",
        doc="log what runs say (event payloads) at DEBUG",
    )
    #: A session's lease (one writer across daemons sharing a store): how long it lasts
    #: without renewal, how often the running daemon renews it, and this daemon's name
    #: as its holder: "" for host/pid/random, unique per start; a stable name (unique
    #: among live daemons) also frees at start the leases a killed incarnation left.
    lease_ttl_s: float = setting(
        DEFAULT_LEASE_TTL_S,
        "seconds a session's lease lasts unrenewed: how soon another daemon may take over a run "
        "whose daemon died",
        doc="seconds a session's lease lasts unrenewed: how soon another daemon may take over a "
        "run whose daemon died ([Several replicas](#several-replicas))",
        metavar="S",
        gt=0,
        old="lease_ttl",
    )
    lease_renew_s: float = setting(
        DEFAULT_LEASE_RENEW_S,
        "seconds between renewals of this daemon's leases (below lease_ttl_s)",
        metavar="S",
        gt=0,
        old="lease_renew",
    )
    lease_owner: str = setting(
        "",
        "this daemon's name as a lease holder (default host/pid/random/boot.pidns.start); a "
        "stable name "
        "frees at start the leases of its killed previous incarnation",
        doc="this daemon's name as a lease holder; a stable name (e.g. the pod name, unique among "
        "live daemons) frees at start the leases its killed previous incarnation left; the "
        "default lets a daemon on the same machine see that this one is gone and take its "
        "leases at once ([Several replicas](#several-replicas))",
        metavar="NAME",
        default_doc="host/pid/random/boot.pidns.start",
    )
    peer_ca_file: Path | None = setting(
        None,
        "PEM CA bundle another daemon's certificate is checked against when a call is "
        "forwarded to it (default: tls_client_ca_file, else the system's roots)",
        doc="PEM CA bundle the certificates of the other daemons sharing the store are "
        "checked against when a call is forwarded to one of them (R89); by default "
        "`tls_client_ca_file`, else the system's roots ([Several "
        "replicas](#several-replicas))",
        metavar="FILE",
        kind="file",
        default_doc="tls_client_ca_file, else the system's roots",
    )
    advertise_address: str = setting(
        "",
        "the gRPC address other daemons reach this one at, published with its leases "
        "(default: the first listen address)",
        doc="the gRPC address (`host:port` or `unix:/path`) other daemons sharing the store "
        "reach this one at, published with each lease it takes: a request for a session it "
        "holds that reaches another daemon is forwarded there ([Several "
        "replicas](#several-replicas)); by default the first listen address, with this "
        "host's name for a wildcard host (`0.0.0.0`, `[::]`)",
        metavar="HOST:PORT",
        default_doc="the first listen address",
    )
    metrics_listen: str | None = setting(
        None,
        "host:port of a Prometheus /metrics listener (default off)",
        doc="Prometheus `/metrics` there ([Metrics](#metrics))",
        metavar="HOST:PORT",
    )
    otel_endpoint: str | None = setting(
        None,
        "export OpenTelemetry traces over OTLP/HTTP to URL/v1/traces (default off)",
        doc="OTLP/HTTP traces to `URL/v1/traces` ([Traces](#traces))",
        metavar="URL",
        env_also=("OTEL_EXPORTER_OTLP_ENDPOINT",),
    )
    http_listen: str | None = setting(
        None,
        "host:port of the HTTP listener: JSON API, events and web console (default off)",
        doc="the JSON API, Server-Sent Events and web console there, with the gRPC listeners' TLS "
        "and tokens ([Web console](#web-console))",
        metavar="HOST:PORT",
    )
    #: The MCP servers whose tools agents may use (daemon tools, R70–R73), by name.
    mcp_servers: dict[str, McpServerConfig] = setting(
        factory=dict,
        help="[mcp_servers.NAME] tables: daemon tools (file only)",
        doc="`[mcp_servers.NAME]` tables: daemon tools over MCP, see [Daemon tools over "
        "MCP](#daemon-tools-over-mcp)",
        kind="tables",
        flag=False,
    )


class Daemon:
    """A started daemon: its gRPC server, store and runs."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.tokens = load_tokens(config.auth_tokens, config.auth_token_file)
        self.credentials = server_credentials(
            config.tls_cert_file, config.tls_key_file, config.tls_client_ca_file
        )
        if config.peer_ca_file is not None:
            try:
                config.peer_ca_file.read_bytes()
            except OSError as e:
                raise ConfigError(
                    f"peer_ca_file: cannot read {config.peer_ca_file}: {e.strerror or e}"
                ) from None
        for address in config.listen:
            check_listen(
                address,
                tls=self.credentials is not None,
                auth=bool(self.tokens),
                allow_remote=config.allow_remote,
            )
        if config.http_listen:
            # Imported only when asked for: aiohttp and the console cost a daemon
            # without an HTTP listener ~10 MB and its start-up time.
            from ..http import check_http_listen

            check_http_listen(
                config.http_listen,
                tls=self.credentials is not None,
                auth=bool(self.tokens),
                allow_remote=config.allow_remote,
            )
        self.observe = Observability(
            metrics_listen=config.metrics_listen,
            otel_endpoint=config.otel_endpoint,
            store_url=config.store,
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
        guard = ModelGuard()
        providers = ProviderRegistry(
            self.observe.providers(
                [
                    ScriptedProvider(
                        scripts_dir=config.scripts_dir, call_log=config.scripted_call_log
                    ),
                    *configured_providers(entries, guard),
                ]
            ),
            guard,
        )
        try:
            leases = LeasePolicy(
                config.lease_owner or default_owner(), config.lease_ttl_s, config.lease_renew_s
            )
        except ValueError as e:
            raise ConfigError(str(e)) from None
        self.mcp = McpServers(config.mcp_servers, default_timeout_s=config.tool_timeout_s)
        self.engine = Engine(
            self.store,
            providers,
            default_tool_timeout_s=config.tool_timeout_s,
            encode_event=stored_events.encode_wire,
            leases=leases,
            request_id_limit=config.request_id_limit,
            daemon_tools=self.mcp,
        )
        self.lag = LoopLag()
        self.runs = RunRegistry(
            admission=Admission(config.max_active_runs, config.max_loop_lag_ms, self.lag)
        )
        self.hub = EventHub()
        self._sweeper: Periodic | None = None
        self.service: AgentService | None = None
        self.notifier: Notifier | None = None
        self.retention: Retention | None = None
        #: Wakes the sleeping sessions when they are due (R86); set at start.
        self.waker: Waker | None = None
        self.health = health.aio.HealthServicer()
        self.server: grpc.aio.Server | None = None
        self.addresses: list[str] = []
        self.http: HttpListener | None = None
        self.peers: Peers | None = None

    async def start(self) -> None:
        await open_store(self.store, self.config.store)  # ConfigError: cause and fix in one line
        if self.config.lease_owner and Capability.LEASES in self.store.capabilities:
            # A stable name: what this daemon's previous incarnation held is ours again.
            taken = await self.store.release_leases_of(self.config.lease_owner)
            if taken:
                log.info(
                    "released %d lease(s) left by %s before a restart",
                    taken,
                    self.config.lease_owner,
                )
        try:
            await self.observe.start(self.store, lambda: len(self.runs), self.engine.leases_held)
        except (OSError, ValueError) as e:
            await self.store.close()
            raise ConfigError(
                f"metrics_listen: cannot listen on {self.config.metrics_listen!r}: {e}"
            ) from None
        server = grpc.aio.server(
            options=[
                # gRPC's own limit sits above ours, so an oversized request gets our
                # PAYLOAD_TOO_LARGE (with the limit) rather than a bare transport error.
                ("grpc.max_receive_message_length", self.config.max_payload_bytes + 65536),
                ("grpc.so_reuseport", 0),
                # gRPC core cancels calls (a bare CANCELLED, nothing logged) once more than
                # 1,000 arrived that the event loop has not taken up yet, or one waited
                # 30 s: a burst of runs started (or tool results sent) together on a busy
                # daemon. They wait instead; overload is refused by our admission, with a
                # reason and a retry-after (admission.py).
                *PENDING_CALLS_OPTIONS,
            ],
            interceptors=[
                *self.observe.interceptors(),  # outermost: refused calls are counted too
                *([TokenAuth(self.tokens)] if self.tokens else []),
            ],
        )
        service = AgentService(
            self.engine,
            self.store,
            self.runs,
            Limits(self.config.max_payload_bytes),
            self.hub,
            self.observe.observer,
            log_contents=self.config.log_contents,
        )
        self.service = service
        if self.config.webhook_url:
            try:
                self.notifier = service.runner.notifier = self._notifier()
                # Each notification is written in the store transaction of its event.
                self.engine.notify_with(self.notifier.of_event, self.notifier.of_expiry)
            except ConfigError:
                await self.observe.stop()
                await self.store.close()
                raise
        pb_grpc.add_AgentServiceServicer_to_server(service, server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        reflection.enable_server_reflection(
            [SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME], server
        )
        try:
            for address in self.config.listen:
                self.addresses.append(
                    bind(server, address, self.credentials, self.config.unix_socket_mode)
                )
        except ConfigError:  # a taken port: nothing started stays open behind the message
            await self.observe.stop()
            await self.store.close()
            raise
        # R89: where this daemon answers, published with every lease it takes; requests
        # for sessions another daemon holds are forwarded there.
        address = advertised(self.config.advertise_address, self.addresses)
        self.engine.leases = replace(self.engine.leases, address=address)
        self.engine.keeper.policy = self.engine.leases
        c = self.config
        self.peers = service.peers = Peers(
            self.store,
            self.engine.leases.owner,
            tls=(c.tls_cert_file, c.tls_key_file, c.peer_ca_file or c.tls_client_ca_file)
            if c.tls_cert_file is not None and c.tls_key_file is not None
            else None,
        )
        await server.start()
        self.server = server
        if self.config.http_listen:
            from ..http import HttpListener, ssl_context

            self.http = HttpListener(
                self.config.http_listen,
                service,
                self.tokens,
                tls=ssl_context(
                    self.config.tls_cert_file,
                    self.config.tls_key_file,
                    self.config.tls_client_ca_file,
                ),
                allow_remote=self.config.allow_remote,
                max_payload_bytes=self.config.max_payload_bytes,
            )
            try:
                await self.http.start()
            except ConfigError:
                await server.stop(None)
                self.server = None
                await self.observe.stop()
                await self.store.close()
                raise
        for name in ("", SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self._sweeper = Periodic(
            "approval sweep", self._expire_approvals, self.config.approval_sweep_s, log=log
        )
        self._sweeper.start()
        self.lag.start()
        service.inputs.start(self.config.queue_sweep_s)  # R68, R69: queued inputs run here too
        self.waker = Waker(service.runner, self.config.sleep_sweep_s)  # R86
        service.runner.after_sleep = self.waker.nudge
        self.waker.start()
        service.schedules.start(  # R87: the one loop that fires schedules
            late_s=self.config.schedule_late_s, reread_s=self.config.schedule_sweep_s
        )
        if self.notifier is not None:
            self.notifier.start()
        metrics = self.observe.metrics
        self.retention = Retention(
            self.engine,
            self.store,
            self.runs,
            default_s=self.config.retention_s,
            every_s=self.config.retention_sweep_s,
            clock=self.engine.clock,
            registry=metrics.registry if metrics is not None else None,
        )
        service.retention = self.retention
        self.retention.start()
        if self.observe.metrics is not None:  # for `luoshod status`
            self.observe.metrics.describe(
                store=redact_url(self.config.store),
                listen=self.addresses,
                lease_owner=self.engine.leases.owner,
            )
        log.info(
            "luoshod listening on %s (store %s, tls %s, tokens %s)",
            ", ".join(self.addresses),
            redact_url(self.config.store),
            "mtls" if self.config.tls_client_ca_file else "on" if self.credentials else "off",
            "on" if self.tokens else "off",
        )

    async def stop(self) -> None:
        """Drain: health NOT_SERVING, new runs refused, active runs stopped at their next
        boundary (checkpoints intact, streams end with UNAVAILABLE), then close."""
        if self.server is None:
            return
        if self._sweeper is not None:
            await self._sweeper.stop()
        if self.waker is not None:  # no sleeping session is woken while the runs drain
            await self.waker.stop()
        await self.health.enter_graceful_shutdown()
        left = await self.runs.drain(self.config.drain_timeout_s)
        if left:
            # Halted before anything closes: each saves what it had not (a new session's
            # input), releases its lease while the store is open, and ends its stream
            # with SHUTTING_DOWN, which clients retry, rather than a bare CANCELLED.
            log.warning(
                "%d run(s) still busy after the drain; halting them (a model call in flight is "
                "given up)",
                left,
            )
            if still := await self.runs.halt(HALT_WAIT_S):
                log.error("%d run(s) did not stop; their leases expire by themselves", still)
        if self.service is not None:
            await self.service.schedules.stop()
            await self.service.inputs.stop()
        if self.notifier is not None:
            await self.notifier.stop()
        if self.retention is not None:
            await self.retention.stop()
        self.hub.shutdown()
        await self.mcp.aclose()  # after the runs: none of them still calls a server
        if self.http is not None:
            await self.http.stop()
        await self.server.stop(grace=2.0)
        self.server = None
        if self.peers is not None:
            await self.peers.aclose()
        await self.engine.providers.aclose()
        await self.engine.keeper.aclose()
        await self.lag.stop()
        await self.observe.stop()
        await self.store.close()
        for address in self.addresses:
            if is_unix(address):
                socket_path(address).unlink(missing_ok=True)
        log.info("luoshod stopped")

    def hurry(self) -> None:
        """Cut a :meth:`stop` short: stop waiting for runs to reach a boundary, halt them
        now (an operator's second Ctrl-C)."""
        self.runs.hurry()

    def _notifier(self) -> Notifier:
        """The webhooks of the configuration; ``ConfigError`` naming the key at fault."""
        c = self.config
        if c.webhook_secret is not None:
            secret = c.webhook_secret.reveal()
        elif c.webhook_secret_file is not None:
            try:
                secret = c.webhook_secret_file.read_text().strip()
            except OSError as e:
                raise ConfigError(
                    f"webhook_secret_file: cannot read {c.webhook_secret_file}: {e}"
                ) from None
        else:
            raise ConfigError(
                "webhook_url: needs a signing secret (webhook_secret or webhook_secret_file)"
            )
        if not secret:
            raise ConfigError("webhook_secret: the signing secret is empty")
        try:
            events = parse_events(c.webhook_events)
            config = WebhookConfig(c.webhook_url or "", secret, events, c.webhook_include_payloads)
            metrics = self.observe.metrics
            return Notifier(
                self.store,
                config,
                clock=self.engine.clock,
                registry=metrics.registry if metrics is not None else None,
            )
        except ValueError as e:
            raise ConfigError(
                f"webhook_events: {e}" if "event" in str(e) else f"webhook_url: {e}"
            ) from None

    async def _expire_approvals(self) -> None:
        """Expired approvals resolve as rejected, so no run waits forever unnoticed."""
        # An expiry's notification is written by the save that resolves it.
        if await self.engine.expire_approvals() and self.notifier is not None:
            self.notifier.wake()

    async def wait(self) -> None:
        if self.server is not None:
            await self.server.wait_for_termination()


__all__ = ["Config", "ConfigError", "Daemon", "DEFAULT_STORE"]
