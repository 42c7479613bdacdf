"""The daemon's settings: defaults < TOML file < ``LUOSHOD_*`` environment < flags.

One name per setting, the same in every layer: the file key ``history_limit`` is the
environment variable ``LUOSHOD_HISTORY_LIMIT`` and the flag ``--history-limit``. The file
is named by ``--config FILE`` or ``LUOSHOD_CONFIG``; its ``[providers.NAME]`` tables are
checked by :mod:`luoshod.config`, every other key by the :class:`Settings` model.

:func:`load` merges and validates the layers (pydantic-settings does the merging; a bad
value raises :class:`SettingsError` naming the key and where it came from), and
:func:`to_config` builds the :class:`~luoshod.server.app.Config` the daemon consumes.

Adding a setting: a field in ``Config`` (server/app.py), a field of the same name here,
and one entry in :data:`FLAGS`. A field whose name differs from the Config field it feeds
is listed in :data:`CONFIG_NAMES`; one the daemon does not consume (logging) in
:data:`PROCESS_ONLY`.
"""

from __future__ import annotations

import argparse
import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    Field,
    FilePath,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from . import config as providers_file
from .mcpclient import config as mcp_file
from .domain import DEFAULT_REQUEST_ID_LIMIT
from .engine.lease import DEFAULT_LEASE_RENEW_S, DEFAULT_LEASE_TTL_S
from .server.admission import DEFAULT_MAX_LOOP_LAG_MS
from .server.app import DEFAULT_LISTEN, DEFAULT_MAX_ACTIVE_RUNS, DEFAULT_STORE, Config
from .server.preflight import absolute_store_url
from .server.service import DEFAULT_MAX_PAYLOAD_BYTES
from .store import DEFAULT_EVENT_LOG_LIMIT, DEFAULT_HISTORY_LIMIT

ENV_PREFIX = "LUOSHOD_"
MASK = "***"
#: Settings whose Config field has another name (kept for the flags' and variables' sake).
CONFIG_NAMES = {
    "tool_timeout": "tool_timeout_s",
    "drain_timeout": "drain_timeout_s",
    "config": "config_file",
    "lease_ttl": "lease_ttl_s",
    "lease_renew": "lease_renew_s",
    "retention": "retention_s",
}
#: Settings of the ``luoshod`` process itself, not of the daemon.
PROCESS_ONLY = frozenset({"log_level", "log_format", "providers", "gc_tuning"})
#: Settings that never come from the file (the file is where they point, or they are its own).
NOT_IN_FILE = frozenset({"config"})
#: Settings with no flag: a secret on a command line is visible to every user of the host.
NO_FLAG = frozenset({"auth_tokens", "providers", "mcp_servers", "webhook_secret"})


class SettingsError(ValueError):
    """The configuration is wrong; the message names the key and where its value came from."""


def _comma_list(value: Any) -> Any:
    """``a,b`` (an environment variable) is the list ``[a, b]``."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class Settings(BaseSettings):
    """Every setting of ``luoshod serve``. Descriptions are the flags' help."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="forbid", env_ignore_empty=True, validate_default=True
    )

    listen: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: [DEFAULT_LISTEN],
        description="host:port or unix:/path to listen on (repeatable; comma-separated in the variable)",
    )
    store: str = Field(DEFAULT_STORE, description="store URL")
    history_limit: int = Field(DEFAULT_HISTORY_LIMIT, ge=0, description="history entries kept per session (0 keeps none)")
    event_log_limit: int = Field(DEFAULT_EVENT_LOG_LIMIT, ge=0, description="events kept per session for Watch")
    request_id_limit: int = Field(DEFAULT_REQUEST_ID_LIMIT, ge=1, description="applied request ids kept per session (R74)")
    max_payload_bytes: int = Field(DEFAULT_MAX_PAYLOAD_BYTES, ge=1, description="largest request accepted (PAYLOAD_TOO_LARGE above)")
    max_active_runs: int = Field(DEFAULT_MAX_ACTIVE_RUNS, ge=0, description="runs active at once in this daemon (TOO_MANY_RUNS above; 0: no limit)")
    max_loop_lag_ms: int = Field(DEFAULT_MAX_LOOP_LAG_MS, ge=0, description="new runs refused (DAEMON_OVERLOADED) while the event loop runs this late, sustained, or when a burst of starts would make it that late (0: never)")
    tool_timeout: float = Field(300.0, gt=0, description="seconds a run waits for a tool result, unless the agent says otherwise")
    drain_timeout: float = Field(10.0, ge=0, description="seconds SIGTERM waits for active runs to checkpoint")
    approval_sweep_s: float = Field(30.0, gt=0, description="seconds between sweeps that reject expired approvals")
    queue_sweep_s: float = Field(1.0, gt=0, description="seconds between sweeps that run inputs queued on busy sessions (if_busy)")
    retention: float = Field(0.0, ge=0, description="seconds a finished session is kept before the daemon deletes it (0: forever)")
    retention_sweep_s: float = Field(60.0, gt=0, description="seconds between the daemon's retention sweeps")
    webhook_url: str | None = Field(None, description="URL that notifications are POSTed to (default off)")
    webhook_events: str = Field(
        "approval.requested,approval.expired,run.done,run.failed",
        description="the notifications sent, comma-separated",
    )
    webhook_secret: SecretStr | None = Field(None, description="the webhooks' signing secret (no flag; or webhook_secret_file)")
    webhook_secret_file: FilePath | None = Field(None, description="file holding the webhooks' signing secret")
    webhook_include_payloads: bool = Field(False, description="notifications carry tool arguments and final texts")
    scripts_dir: Path | None = Field(None, description="where scripted:NAME finds NAME.json")
    scripted_call_log: Path | None = Field(None, description="append a line per scripted model call (tests)")
    config: FilePath | None = Field(None, description="the TOML file of these settings and the model providers")
    allow_remote: bool = Field(False, description="listen on a non-loopback address without TLS or tokens")
    unix_socket_mode: int = Field(0o660, ge=0, le=0o777, description="file mode of unix: sockets, octal")
    tls_cert_file: FilePath | None = Field(None, description="PEM certificate chain: TCP listeners speak TLS")
    tls_key_file: FilePath | None = Field(None, description="PEM private key of tls_cert_file")
    tls_client_ca_file: FilePath | None = Field(None, description="PEM CA bundle: clients must present a certificate it signed (mTLS)")
    auth_token_file: FilePath | None = Field(None, description="file of bearer tokens, one per line: calls must carry one")
    auth_tokens: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list, description="bearer tokens (comma-separated in the variable; no flag)"
    )
    lease_ttl: float = Field(DEFAULT_LEASE_TTL_S, gt=0, description="seconds a session's lease lasts unrenewed: how soon another daemon may take over a run whose daemon died")
    lease_renew: float = Field(DEFAULT_LEASE_RENEW_S, gt=0, description="seconds between renewals of this daemon's leases (below lease_ttl)")
    lease_owner: str = Field("", description="this daemon's name as a lease holder (default host/pid/random); a stable name frees at start the leases of its killed previous incarnation")
    metrics_listen: str | None = Field(None, description="host:port of a Prometheus /metrics listener (default off)")
    http_listen: str | None = Field(None, description="host:port of the HTTP listener: JSON API, events and web console (default off)")
    otel_endpoint: str | None = Field(
        None,
        validation_alias=AliasChoices("otel_endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", "LUOSHOD_OTEL_ENDPOINT"),
        description="export OpenTelemetry traces over OTLP/HTTP to URL/v1/traces (default off; also OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field("INFO", description="log level")
    log_format: Literal["text", "json"] = Field("text", description="text lines, or one JSON object per line")
    log_contents: bool = Field(False, description="log message contents, tool arguments and results (DEBUG)")
    gc_tuning: bool = Field(True, description="once started, freeze the start-up objects and collect garbage cycles less often, sized for thousands of runs (server/gc_tuning.py); off: Python's defaults")
    providers: dict[str, Any] = Field(default_factory=dict, description="[providers.NAME] tables (file only)")
    mcp_servers: dict[str, Any] = Field(default_factory=dict, description="[mcp_servers.NAME] tables: daemon tools (file only)")

    @field_validator("listen", "auth_tokens", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return _comma_list(value)

    @field_validator("listen")
    @classmethod
    def _some_listener(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one address is needed")
        return value

    @field_validator("store")
    @classmethod
    def _absolute_store(cls, value: str) -> str:
        # A relative path would be another store from another working directory.
        return absolute_store_url(value)

    @field_validator("scripts_dir")
    @classmethod
    def _scripts_folder(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_dir():
            raise ValueError(
                f"{value} is not a directory; give the folder that holds the scripted:NAME scripts (NAME.json)"
            )
        return value

    @field_validator("lease_renew")
    @classmethod
    def _renew_below_ttl(cls, value: float, info: ValidationInfo) -> float:
        ttl = info.data.get("lease_ttl")
        if ttl is not None and value >= ttl:
            raise ValueError(f"must be below lease_ttl ({ttl:g} s), got {value:g}")
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("unix_socket_mode", mode="before")
    @classmethod
    def _octal(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip().removeprefix("0o")
            if not text or any(c not in "01234567" for c in text):
                raise ValueError(f"must be an octal file mode such as \"0660\", got {value!r}")
            return int(text, 8)
        return value

    @field_validator("providers")
    @classmethod
    def _providers(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Checked (and their key variables read) here so a bad entry stops the start.
        try:
            providers_file.parse({"providers": value}, os.environ)
        except providers_file.ConfigFileError as e:
            raise ValueError(str(e)) from None
        return value

    @field_validator("mcp_servers")
    @classmethod
    def _mcp_servers(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Checked (and their secrets read) here so a bad entry stops the start.
        try:
            mcp_file.parse(value, os.environ)
        except providers_file.ConfigFileError as e:
            raise ValueError(str(e)) from None
        return value

    @model_validator(mode="after")
    def _tls_pairs(self) -> Settings:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            missing = "tls_key_file" if self.tls_key_file is None else "tls_cert_file"
            raise ValueError(f"{missing}: tls_cert_file and tls_key_file go together")
        if self.tls_client_ca_file is not None and self.tls_cert_file is None:
            raise ValueError("tls_client_ca_file: mTLS needs tls_cert_file and tls_key_file too")
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Flags (the init arguments) win, then the environment, then the file.
        assert isinstance(init_settings, InitSettingsSource)
        return init_settings, env_settings, _FileSource(settings_cls, config_path(init_settings.init_kwargs))


def config_path(flags: Mapping[str, Any]) -> Path | None:
    """The settings file: ``--config``, else ``LUOSHOD_CONFIG``."""
    value = flags.get("config") or os.environ.get(f"{ENV_PREFIX}CONFIG")
    return Path(value) if value else None


class _FileSource(PydanticBaseSettingsSource):
    """The TOML file as a settings source."""

    def __init__(self, settings_cls: type[BaseSettings], path: Path | None) -> None:
        super().__init__(settings_cls)
        self.path = path

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        raise NotImplementedError  # __call__ reads the whole file at once

    def __call__(self) -> dict[str, Any]:
        return read_file(self.path) if self.path is not None else {}


def read_file(path: Path) -> dict[str, Any]:
    """The decoded TOML file. Raises ``SettingsError``."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise SettingsError(f"config: cannot read {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SettingsError(f"config: {path} is not valid TOML: {e}") from None
    for key in NOT_IN_FILE & data.keys():
        raise SettingsError(f"{key}: not a key of the file itself (in {path}); use --config or {env_name(key)}")
    return data


def env_name(key: str) -> str:
    return f"{ENV_PREFIX}{key.upper()}"


def _origin(key: str, flags: Mapping[str, Any]) -> str:
    """Where the value of ``key`` came from, highest precedence first."""
    if key in flags:
        return f"flag {FLAGS[key][0]}"
    if os.environ.get(env_name(key)):
        return f"env {env_name(key)}"
    path = config_path(flags)
    return f"file {path}" if path is not None else "default"


def _message(err: ValidationError, flags: Mapping[str, Any]) -> str:
    lines = []
    for e in err.errors():
        key = str(e["loc"][0]) if e["loc"] else ""
        text = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            near = difflib.get_close_matches(key, Settings.model_fields, n=1)
            text = "unknown key" + (f" (did you mean {near[0]}?)" if near else "")
        if not key:  # a check across keys: its message starts with the key at fault
            key, _, text = text.partition(": ")
        if key in ("providers", "mcp_servers"):  # the message already names the dotted key
            lines.append(f"{text} ({_origin(key, flags)})")
        else:
            lines.append(f"{key}: {text} ({_origin(key, flags)})")
    return "\n".join(lines)


#: ``LUOSHOD_*`` variables that are not settings of the daemon: the settings file, and
#: the client commands' daemon address and token.
OTHER_VARIABLES = frozenset({"LUOSHOD_CONFIG", "LUOSHOD_ADDRESS", "LUOSHOD_TOKEN"})


def misspelt_variables(environ: Mapping[str, str]) -> list[str]:
    """One line per ``LUOSHOD_*`` variable that is no setting but close to one (a typo
    would otherwise be ignored, where a file's typo is an error). A variable near no
    setting is left alone: Kubernetes, for one, sets ``LUOSHOD_PORT`` and
    ``LUOSHOD_SERVICE_HOST`` for a Service named luoshod."""
    known = {env_name(name) for name in Settings.model_fields} | OTHER_VARIABLES
    lines = []
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or name in known:
            continue
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.85)
        if near:
            lines.append(f"{name}: unknown variable (did you mean {near[0]}?); rename or unset it")
    return lines


def load(flags: Mapping[str, Any] | None = None) -> Settings:
    """Merge defaults, the file, the environment and ``flags`` (only the flags given).
    Raises ``SettingsError``."""
    flags = dict(flags or {})
    if typos := misspelt_variables(os.environ):
        raise SettingsError("\n".join(typos))
    try:
        return Settings(**flags)
    except ValidationError as e:
        raise SettingsError(_message(e, flags)) from None


def to_config(settings: Settings) -> Config:
    """The daemon's :class:`Config` from validated settings."""
    values: dict[str, Any] = {}
    for name in Settings.model_fields:
        if name in PROCESS_ONLY:
            continue
        value = getattr(settings, name)
        if name == "auth_tokens":
            value = tuple(providers_file.Secret(t.get_secret_value()) for t in value)
        elif name == "mcp_servers":
            value = mcp_file.parse(value, os.environ)
        elif name == "webhook_secret" and value is not None:
            value = providers_file.Secret(value.get_secret_value())
        values[CONFIG_NAMES.get(name, name)] = value
    return Config(**values)


def shown(settings: Settings) -> dict[str, Any]:
    """The effective settings for ``luoshod config show``, secrets masked."""
    out: dict[str, Any] = {}
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if name == "auth_tokens":
            value = [MASK for _ in value]
        elif name == "webhook_secret":
            value = MASK if value is not None else None
        elif name == "store":
            value = providers_file.redact_url(value)
        elif name == "unix_socket_mode":
            value = f"{value:04o}"
        elif name == "providers":
            value = _shown_providers(value)
        elif name == "mcp_servers":
            value = {n: c.shown() for n, c in mcp_file.parse(value, os.environ).items()}
        elif isinstance(value, Path):
            value = str(value)
        out[name] = value
    return out


def _shown_providers(tables: dict[str, Any]) -> dict[str, Any]:
    parsed = providers_file.parse({"providers": tables}, os.environ).providers
    return {
        name: {
            "kind": p.kind,
            "base_url": p.base_url,
            "api_key_env": p.api_key_env,
            "api_key": MASK if p.api_key is not None else "",
            "timeout_s": p.timeout_s,
            "max_retries": p.max_retries,
            "backoff_base_s": p.backoff_base_s,
            "backoff_max_s": p.backoff_max_s,
            "prices": {
                model: {"prompt_per_mtok": pr.prompt_per_mtok, "completion_per_mtok": pr.completion_per_mtok}
                for model, pr in p.prices.items()
            },
        }
        for name, p in parsed.items()
    }


# -- flags --------------------------------------------------------------------------------

#: setting → (flag, extra argparse keywords). Values stay strings: the model checks them,
#: so a bad flag gets the same message as a bad variable or file key.
FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "listen": ("--listen", {"action": "append", "metavar": "ADDR"}),
    "store": ("--store", {"metavar": "URL"}),
    "history_limit": ("--history-limit", {"metavar": "N"}),
    "event_log_limit": ("--event-log-limit", {"metavar": "N"}),
    "request_id_limit": ("--request-id-limit", {"metavar": "N"}),
    "max_payload_bytes": ("--max-payload-bytes", {"metavar": "N"}),
    "max_active_runs": ("--max-active-runs", {"metavar": "N"}),
    "max_loop_lag_ms": ("--max-loop-lag-ms", {"metavar": "MS"}),
    "tool_timeout": ("--tool-timeout", {"metavar": "S"}),
    "drain_timeout": ("--drain-timeout", {"metavar": "S"}),
    "approval_sweep_s": ("--approval-sweep-s", {"metavar": "S"}),
    "queue_sweep_s": ("--queue-sweep-s", {"metavar": "S"}),
    "retention": ("--retention", {"metavar": "S"}),
    "retention_sweep_s": ("--retention-sweep-s", {"metavar": "S"}),
    "webhook_url": ("--webhook-url", {"metavar": "URL"}),
    "webhook_events": ("--webhook-events", {"metavar": "NAMES"}),
    "webhook_secret_file": ("--webhook-secret-file", {"metavar": "FILE"}),
    "webhook_include_payloads": ("--webhook-include-payloads", {"action": argparse.BooleanOptionalAction}),
    "scripts_dir": ("--scripts-dir", {"metavar": "DIR"}),
    "scripted_call_log": ("--scripted-call-log", {"metavar": "FILE"}),
    "config": ("--config", {"metavar": "FILE"}),
    "allow_remote": ("--allow-remote", {"action": argparse.BooleanOptionalAction}),
    "unix_socket_mode": ("--unix-socket-mode", {"metavar": "MODE"}),
    "tls_cert_file": ("--tls-cert-file", {"metavar": "FILE"}),
    "tls_key_file": ("--tls-key-file", {"metavar": "FILE"}),
    "tls_client_ca_file": ("--tls-client-ca-file", {"metavar": "FILE"}),
    "auth_token_file": ("--auth-token-file", {"metavar": "FILE"}),
    "lease_ttl": ("--lease-ttl", {"metavar": "S"}),
    "lease_renew": ("--lease-renew", {"metavar": "S"}),
    "lease_owner": ("--lease-owner", {"metavar": "NAME"}),
    "metrics_listen": ("--metrics-listen", {"metavar": "HOST:PORT"}),
    "http_listen": ("--http-listen", {"metavar": "HOST:PORT"}),
    "otel_endpoint": ("--otel-endpoint", {"metavar": "URL"}),
    "log_level": ("--log-level", {"metavar": "LEVEL"}),
    "log_format": ("--log-format", {"choices": ["text", "json"]}),
    "log_contents": ("--log-contents", {"action": argparse.BooleanOptionalAction}),
    "gc_tuning": ("--gc-tuning", {"action": argparse.BooleanOptionalAction}),
}


def add_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per setting (but secrets), each absent from the namespace unless given."""
    for name, (flag, extra) in FLAGS.items():
        field = Settings.model_fields[name]
        parser.add_argument(
            flag,
            dest=name,
            default=argparse.SUPPRESS,
            help=f"{field.description} (env {env_name(name)})",
            **extra,
        )


def given_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {name: value for name, value in vars(args).items() if name in FLAGS}


__all__ = [
    "FLAGS",
    "Settings",
    "SettingsError",
    "add_flags",
    "env_name",
    "given_flags",
    "load",
    "shown",
    "to_config",
]
