"""The model providers of the daemon's TOML file (``luoshod serve --config FILE``, env
LUOSHOD_CONFIG); the file's other keys are the settings of :mod:`luoshod.settings`.

It holds the named model providers; a model id ``NAME:model`` selects the entry
NAME (``scripted`` is built in and always there)::

    [providers.openai]
    kind = "openai"                       # openai | openai_responses | anthropic
    base_url = "https://api.openai.com/v1"
    api_key_env = "OPENAI_API_KEY"        # the NAME of the variable that holds the key
    timeout_s = 60                        # one HTTP attempt
    max_retries = 4                       # transient failures retried after the first try
    backoff_base_s = 0.5                  # first backoff; doubles each retry, with jitter
    backoff_max_s = 30                    # cap of one wait (and of an honoured Retry-After)
    failure_backoff_base_s = 1            # after a failed call, a session's next one waits this,
    failure_backoff_max_s = 60            #   doubling per failure in a row, at most this
    circuit_failures = 5                  # transient failures in a row (any sessions) that open
    circuit_open_s = 30                   #   the model's circuit for this long (then doubling)

    [providers.openai.prices."gpt-4o-mini"]   # optional: USD per million tokens
    prompt_per_mtok = 0.15
    completion_per_mtok = 0.6
    cached_input_per_mtok = 0.075         # optional: prompt tokens read from the cache
    cache_write_per_mtok = 0.15           # optional: prompt tokens written to the cache

    [providers.openai.context_windows]    # optional: tokens a request may hold, per model
    "gpt-4o-mini" = 128000                #   (compaction's threshold is a share of it, R85)

The key is read from the environment when the file is loaded and kept in a
:class:`Secret`, whose repr hides it; no error of this module contains it. Every error is a
:class:`ConfigFileError` whose message starts with the dotted key at fault.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("openai", "openai_responses", "anthropic")
DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "openai_responses": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
RESERVED_NAMES = frozenset({"scripted"})
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class ConfigFileError(ValueError):
    """A configuration value is wrong; the message names the key."""


class ConfigError(ValueError):
    """The daemon cannot be built from its configuration (an address, the store, a TLS
    or token file); the message starts with the key at fault."""


class Secret:
    """A credential. ``str``/``repr`` never show it; :meth:`reveal` hands it to the SDK."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__


def redact_url(url: str) -> str:
    """``url`` with the password of its user info replaced by ``***`` (for logs and
    ``config show``)."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    return f"{scheme}://{userinfo.split(':', 1)[0]}:***@{host}"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens. Cached-input and cache-write tokens are priced as other
    prompt tokens unless their own price is given."""

    prompt_per_mtok: float = 0.0
    completion_per_mtok: float = 0.0
    cached_input_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None

    def cost(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        cached_input_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float:
        """USD for a call's tokens (``prompt_tokens`` includes the cached ones)."""
        cached_price = self.prompt_per_mtok
        if self.cached_input_per_mtok is not None:
            cached_price = self.cached_input_per_mtok
        write_price = self.prompt_per_mtok
        if self.cache_write_per_mtok is not None:
            write_price = self.cache_write_per_mtok
        plain = max(0, prompt_tokens - cached_input_tokens - cache_write_tokens)
        return (
            plain * self.prompt_per_mtok
            + cached_input_tokens * cached_price
            + cache_write_tokens * write_price
            + completion_tokens * self.completion_per_mtok
        ) / 1e6


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    name: str
    kind: str
    base_url: str
    api_key_env: str = ""
    api_key: Secret | None = None
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    failure_backoff_base_s: float = 1.0
    failure_backoff_max_s: float = 60.0
    circuit_failures: int = 5
    circuit_open_s: float = 30.0
    prices: Mapping[str, Price] = field(default_factory=dict)
    #: R85: the context window of each model, in tokens.
    context_windows: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FileConfig:
    providers: Mapping[str, ProviderConfig] = field(default_factory=dict)


def load_file(path: Path, environ: Mapping[str, str] | None = None) -> FileConfig:
    """Read and check ``path``. Raises ``ConfigFileError``."""
    try:
        data = tomllib.loads(Path(path).read_text())
    except OSError as e:
        raise ConfigFileError(f"config file {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigFileError(f"config file {path}: not valid TOML: {e}") from None
    return parse(data, os.environ if environ is None else environ)


def parse(data: Mapping[str, Any], environ: Mapping[str, str]) -> FileConfig:
    """Check the ``providers`` tables of a decoded TOML document; its other keys are the
    daemon's settings, checked by :mod:`luoshod.settings`. Raises ``ConfigFileError``."""
    providers = data.get("providers", {})
    _table(providers, "providers")
    return FileConfig({name: _provider(name, entry, environ) for name, entry in providers.items()})


_PROVIDER_KEYS = {
    "kind",
    "base_url",
    "api_key_env",
    "timeout_s",
    "max_retries",
    "backoff_base_s",
    "backoff_max_s",
    "prices",
    "context_windows",
    "failure_backoff_base_s",
    "failure_backoff_max_s",
    "circuit_failures",
    "circuit_open_s",
}


def _provider(name: str, entry: Any, environ: Mapping[str, str]) -> ProviderConfig:
    where = f"providers.{_quote(name)}"
    if not _NAME.fullmatch(name):
        raise ConfigFileError(f"{where}: a provider name is 1-64 characters of A-Z a-z 0-9 _ -")
    if name in RESERVED_NAMES:
        raise ConfigFileError(f"{where}: the name is reserved for the built-in provider")
    _table(entry, where)
    _known(entry, where, _PROVIDER_KEYS)
    kind = entry.get("kind")
    if kind not in KINDS:
        raise ConfigFileError(f"{where}.kind: must be one of {', '.join(KINDS)}")
    base_url = entry.get("base_url", DEFAULT_BASE_URLS[kind])
    if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
        raise ConfigFileError(f"{where}.base_url: must be an http:// or https:// URL")
    key_env = entry.get("api_key_env", "")
    if not isinstance(key_env, str) or (key_env and not _ENV_NAME.fullmatch(key_env)):
        raise ConfigFileError(f"{where}.api_key_env: must be the name of an environment variable")
    key = None
    if key_env:
        value = environ.get(key_env, "")
        if not value:
            raise ConfigFileError(
                f"{where}.api_key_env: environment variable {key_env} is not set or empty"
            )
        key = Secret(value)
    prices = entry.get("prices", {})
    _table(prices, f"{where}.prices")
    return ProviderConfig(
        name=name,
        kind=kind,
        base_url=base_url,
        api_key_env=key_env,
        api_key=key,
        timeout_s=_number(entry, "timeout_s", where, 60.0, positive=True),
        max_retries=_count(entry, "max_retries", where, 4),
        backoff_base_s=_number(entry, "backoff_base_s", where, 0.5),
        backoff_max_s=_number(entry, "backoff_max_s", where, 30.0),
        failure_backoff_base_s=_number(entry, "failure_backoff_base_s", where, 1.0),
        failure_backoff_max_s=_number(entry, "failure_backoff_max_s", where, 60.0),
        circuit_failures=max(1, _count(entry, "circuit_failures", where, 5)),
        circuit_open_s=_number(entry, "circuit_open_s", where, 30.0),
        prices={model: _price(p, f"{where}.prices.{_quote(model)}") for model, p in prices.items()},
        context_windows=_windows(entry.get("context_windows", {}), f"{where}.context_windows"),
    )


def _windows(entry: Any, where: str) -> dict[str, int]:
    _table(entry, where)
    out: dict[str, int] = {}
    for model, n in entry.items():
        if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
            raise ConfigFileError(f"{where}.{_quote(model)}: must be a positive whole number")
        out[model] = n
    return out


def _price(entry: Any, where: str) -> Price:
    _table(entry, where)
    _known(
        entry,
        where,
        {"prompt_per_mtok", "completion_per_mtok", "cached_input_per_mtok", "cache_write_per_mtok"},
    )
    return Price(
        _number(entry, "prompt_per_mtok", where, 0.0),
        _number(entry, "completion_per_mtok", where, 0.0),
        _number(entry, "cached_input_per_mtok", where, 0.0)
        if "cached_input_per_mtok" in entry
        else None,
        _number(entry, "cache_write_per_mtok", where, 0.0)
        if "cache_write_per_mtok" in entry
        else None,
    )


def _quote(key: str) -> str:
    return key if _NAME.fullmatch(key) else f'"{key}"'


def _table(value: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise ConfigFileError(f"{where}: must be a table")


def _known(table: Mapping[str, Any], where: str, keys: set[str]) -> None:
    for key in table:
        if key not in keys:
            prefix = f"{where}." if where else ""
            raise ConfigFileError(
                f"{prefix}{_quote(key)}: unknown key (known: {', '.join(sorted(keys))})"
            )


def _number(
    table: Mapping[str, Any], key: str, where: str, default: float, *, positive: bool = False
) -> float:
    value = table.get(key, default)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        raise ConfigFileError(f"{where}.{key}: must be a number {'> 0' if positive else '>= 0'}")
    return float(value)


def _count(table: Mapping[str, Any], key: str, where: str, default: int) -> int:
    value = table.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigFileError(f"{where}.{key}: must be an integer >= 0")
    return value


__all__ = [
    "ConfigError",
    "ConfigFileError",
    "redact_url",
    "FileConfig",
    "Price",
    "ProviderConfig",
    "Secret",
    "load_file",
    "parse",
]
