"""The ``[mcp_servers.NAME]`` tables of the daemon's TOML file (docs/reference/rules.md R70, R73)::

    [mcp_servers.files]                   # a stdio server: the daemon starts the command
    command = "npx"
    args = ["-y", "@modelcontextprotocol/server-filesystem", "/srv/data"]
    env = { LOG_LEVEL = "warn" }          # set for the command
    env_from = { GITHUB_TOKEN = "GH_TOKEN" }   # variable → the daemon's variable holding it
    cwd = "/srv"
    timeout_ms = 30000                    # one attempt of a call (default: tool_timeout)

    [mcp_servers.tracker]                 # a streamable-HTTP server
    url = "https://tracker.internal/mcp"
    headers_env = { Authorization = "TRACKER_AUTH" }         # header → variable
    headers_file = { "X-Api-Key" = "/run/secrets/tracker" }  # header → file (stripped)

    [mcp_servers.tracker.retry]           # R73 (default: one attempt)
    attempts = 3
    backoff_ms = 200
    retry_on = ["timeout", "unavailable", "tool_error"]

Values of ``env``, ``env_from``, ``headers_env`` and ``headers_file`` are secrets: read
when the file is loaded, kept in :class:`~luoshod.config.Secret` and shown as ``***`` by
``luoshod config show``. Every error is a ``ConfigFileError`` naming the dotted key, never a
secret's value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import ConfigFileError, Secret, redact_url
from ..domain.mcpspec import RETRY_ON, SEPARATOR, RetryPolicy

_NAME = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")  # no "__": it separates server and tool
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
MASK = "***"
_KEYS = {
    "command",
    "args",
    "env",
    "env_from",
    "cwd",
    "url",
    "headers_env",
    "headers_file",
    "timeout_ms",
    "retry",
}


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    name: str
    command: str = ""  # stdio
    args: tuple[str, ...] = ()
    env: Mapping[str, Secret] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""  # streamable HTTP
    headers: Mapping[str, Secret] = field(default_factory=dict)
    timeout_ms: int | None = None
    retry: RetryPolicy | None = None
    #: Where each secret came from, as the file said it: ``env.NAME`` / ``headers.NAME``
    #: → ``("env_from" | "headers_env", VARIABLE)``, ``("headers_file", PATH)`` or
    #: ``("env", "")`` for a value written in the file. ``config show`` prints these.
    sources: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "http"

    def shown(self) -> dict[str, Any]:
        """For ``luoshod config show``: the table as the file wrote it, a value written in
        it (``env``) as ``***``; where the others come from (a variable's name, a file's
        path) is no secret and is shown."""
        out: dict[str, Any] = {}
        if self.command:
            out |= {"command": self.command, "args": list(self.args)}
            if self.cwd:
                out["cwd"] = self.cwd
        else:
            out["url"] = redact_url(self.url)
        for key, (kind, where) in self.sources.items():
            name = key.split(".", 1)[1]
            out.setdefault(kind, {})[name] = where or MASK
        if self.timeout_ms is not None:
            out["timeout_ms"] = self.timeout_ms
        if self.retry is not None:
            out["retry"] = self.retry.to_dict()
        return out


def parse(tables: Any, environ: Mapping[str, str]) -> dict[str, McpServerConfig]:
    """Check the ``mcp_servers`` tables and read their secrets. Raises ``ConfigFileError``."""
    if not isinstance(tables, dict):
        raise ConfigFileError("mcp_servers: must be a table")
    return {name: _server(name, entry, environ) for name, entry in tables.items()}


def _server(name: str, entry: Any, environ: Mapping[str, str]) -> McpServerConfig:
    where = f"mcp_servers.{name}"
    if not _NAME.fullmatch(name) or len(name) > 32:
        raise ConfigFileError(
            f"{where}: a server name is 1-32 characters of A-Z a-z 0-9 _ - without {SEPARATOR!r}"
        )
    if not isinstance(entry, dict):
        raise ConfigFileError(f"{where}: must be a table")
    for key in entry:
        if key not in _KEYS:
            raise ConfigFileError(f"{where}.{key}: unknown key (known: {', '.join(sorted(_KEYS))})")
    command, url = entry.get("command", ""), entry.get("url", "")
    if bool(command) == bool(url):
        raise ConfigFileError(f"{where}: give either command (stdio) or url (streamable HTTP)")
    if not isinstance(command, str) or not isinstance(url, str):
        raise ConfigFileError(f"{where}: command and url are strings")
    if url and not url.startswith(("http://", "https://")):
        raise ConfigFileError(f"{where}.url: must be an http:// or https:// URL")
    stdio_only = {"args", "env", "env_from", "cwd"} & entry.keys()
    http_only = {"headers_env", "headers_file"} & entry.keys()
    if url and stdio_only:
        raise ConfigFileError(f"{where}.{sorted(stdio_only)[0]}: only for a stdio server (command)")
    if command and http_only:
        raise ConfigFileError(f"{where}.{sorted(http_only)[0]}: only for an HTTP server (url)")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigFileError(f"{where}.args: must be a list of strings")
    sources: dict[str, tuple[str, str]] = {}
    env: dict[str, Secret] = {}
    for key, value in _strings(entry, "env", where).items():
        _env_name(key, f"{where}.env")
        env[key], sources[f"env.{key}"] = Secret(value), ("env", "")
    for key, var in _strings(entry, "env_from", where).items():
        _env_name(key, f"{where}.env_from")
        env[key], sources[f"env.{key}"] = (
            _from_env(var, environ, f"{where}.env_from.{key}"),
            ("env_from", var),
        )
    headers: dict[str, Secret] = {}
    for key, var in _strings(entry, "headers_env", where).items():
        _header(key, f"{where}.headers_env")
        headers[key], sources[f"headers.{key}"] = (
            _from_env(var, environ, f"{where}.headers_env.{key}"),
            ("headers_env", var),
        )
    for key, path in _strings(entry, "headers_file", where).items():
        _header(key, f"{where}.headers_file")
        headers[key], sources[f"headers.{key}"] = (
            _from_file(path, f"{where}.headers_file.{key}"),
            ("headers_file", path),
        )
    cwd = entry.get("cwd", "")
    if not isinstance(cwd, str):
        raise ConfigFileError(f"{where}.cwd: must be a string")
    timeout = entry.get("timeout_ms")
    if timeout is not None and (
        not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 1
    ):
        raise ConfigFileError(f"{where}.timeout_ms: must be an integer >= 1")
    retry = retry_policy(entry["retry"], f"{where}.retry") if "retry" in entry else None
    return McpServerConfig(
        name, command, tuple(args), env, cwd, url, headers, timeout, retry, sources
    )


def retry_policy(entry: Any, where: str) -> RetryPolicy:
    if not isinstance(entry, dict):
        raise ConfigFileError(f"{where}: must be a table")
    for key in entry:
        if key not in ("attempts", "backoff_ms", "retry_on"):
            raise ConfigFileError(
                f"{where}.{key}: unknown key (known: attempts, backoff_ms, retry_on)"
            )
    attempts, backoff = entry.get("attempts", 1), entry.get("backoff_ms", 0)
    for key, value, low in (("attempts", attempts, 1), ("backoff_ms", backoff, 0)):
        if (
            not isinstance(value, int)
            or isinstance(value, bool)
            or value < low
            or not math.isfinite(value)
        ):
            raise ConfigFileError(f"{where}.{key}: must be an integer >= {low}")
    retry_on = entry.get("retry_on")
    if retry_on is None:
        return RetryPolicy(attempts, backoff)
    if not isinstance(retry_on, list) or any(r not in RETRY_ON for r in retry_on):
        raise ConfigFileError(f"{where}.retry_on: a list of {', '.join(RETRY_ON)}")
    return RetryPolicy(attempts, backoff, tuple(retry_on))


def _strings(entry: Mapping[str, Any], key: str, where: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigFileError(f"{where}.{key}: must be a table of strings")
    return value


def _env_name(name: str, where: str) -> None:
    if not _ENV.fullmatch(name):
        raise ConfigFileError(f"{where}: {name!r} is not an environment variable name")


def _header(name: str, where: str) -> None:
    if not _HEADER.fullmatch(name):
        raise ConfigFileError(f"{where}: {name!r} is not an HTTP header name")


def _from_env(var: str, environ: Mapping[str, str], where: str) -> Secret:
    if not _ENV.fullmatch(var):
        raise ConfigFileError(f"{where}: must be the name of an environment variable")
    value = environ.get(var, "")
    if not value:
        raise ConfigFileError(f"{where}: environment variable {var} is not set or empty")
    return Secret(value)


def _from_file(path: str, where: str) -> Secret:
    try:
        value = Path(path).read_text().strip()
    except OSError as e:
        raise ConfigFileError(f"{where}: cannot read {path}: {e.strerror or e}") from None
    if not value:
        raise ConfigFileError(f"{where}: {path} is empty")
    return Secret(value)
