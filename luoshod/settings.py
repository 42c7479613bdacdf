"""The daemon's settings: defaults < TOML file < ``LUOSHOD_*`` environment < flags.

One name per setting, the same in every layer: the file key ``history_limit`` is the
environment variable ``LUOSHOD_HISTORY_LIMIT`` and the flag ``--history-limit``. A name
that holds a quantity ends in its unit: ``_s`` seconds, ``_ms`` milliseconds, ``_bytes``
bytes. The file is named by ``--config FILE`` or ``LUOSHOD_CONFIG``; its
``[providers.NAME]`` tables are checked by :mod:`luoshod.config`, every other key by the
:data:`Settings` model.

Each setting is declared once, as a field of :class:`~luoshod.server.app.Config` (what the
daemon consumes) or of :class:`Process` (what the ``luoshod`` process itself uses: logs,
garbage collection, the providers' tables), made by :func:`~luoshod.server.app.setting`:
its name, type, default, help, flag argument and bounds. Everything here is derived from
those declarations: the :data:`Settings` model (file and environment), the flags
(:func:`add_flags`), :func:`to_config`, ``config show`` and the settings page's table
(:func:`markdown_table`; ``python scripts/gendocs.py`` writes it into docs/reference/settings.md).
Adding a setting is adding one field.

A setting renamed by the unit rule (``old=`` in its declaration) is still read under its
old name as a file key, a variable and a flag, with one warning line on stderr, for one
release.

:func:`load` merges and validates the layers (pydantic-settings does the merging; a bad
value raises :class:`SettingsError` naming the key and where it came from), and
:func:`to_config` builds the :class:`~luoshod.server.app.Config` the daemon consumes.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import sys
import tomllib
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    FilePath,
    SecretStr,
    ValidationError,
    ValidationInfo,
    create_model,
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
from .server.app import Config, Declared, setting
from .server.preflight import absolute_store_url

ENV_PREFIX = "LUOSHOD_"
MASK = "***"


def env_name(key: str) -> str:
    return f"{ENV_PREFIX}{key.upper()}"


@dataclass(slots=True)
class Process:
    """The settings of the ``luoshod`` process itself, not of the daemon (:class:`Config`)."""

    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = setting(
        "INFO", "log level", doc="DEBUG, INFO, WARNING, ERROR, CRITICAL", metavar="LEVEL"
    )
    log_format: Literal["text", "json"] = setting(
        "text", "text lines, or one JSON object per line", doc="see [Logs](#logs)"
    )
    gc_tuning: bool = setting(
        True,
        "once started, freeze the start-up objects and collect garbage cycles less often, sized "
        "for "
        "thousands of runs (server/gc_tuning.py); off: Python's defaults",
        doc="once started, freeze the start-up objects and collect garbage cycles less often, "
        "sized for thousands of runs ([Thousands of slow "
        "runs](#thousands-of-slow-runs-on-one-daemon)); off: Python's defaults",
    )
    providers: dict[str, Any] = setting(
        factory=dict,
        help="[providers.NAME] tables (file only)",
        doc="`[providers.NAME]` tables: [docs/providers.md](docs/providers.md)",
        kind="tables",
        flag=False,
    )


@dataclass(frozen=True, slots=True)
class Spec:
    """One setting as the layers see it: its name, the :class:`Config` field it feeds
    (``None``: a :class:`Process` setting), its type, default and declaration."""

    name: str
    field: str | None
    type: Any
    field_info: dataclasses.Field[Any]
    declared: Declared

    @property
    def default(self) -> Any:
        f = self.field_info
        if f.default is dataclasses.MISSING and callable(f.default_factory):
            return f.default_factory()
        return f.default

    @property
    def env(self) -> str | None:
        """Its ``LUOSHOD_*`` variable (``None``: file only)."""
        return None if self.declared.kind == "tables" else env_name(self.name)

    @property
    def flag(self) -> str | None:
        return f"--{self.name.replace('_', '-')}" if self.declared.flag else None

    @property
    def old_env(self) -> str | None:
        return env_name(self.declared.old) if self.declared.old and self.env else None

    @property
    def old_flag(self) -> str | None:
        return (
            f"--{self.declared.old.replace('_', '-')}" if self.declared.old and self.flag else None
        )


def _specs() -> tuple[Spec, ...]:
    specs = []
    for owner, daemon in ((Config, True), (Process, False)):
        hints = typing.get_type_hints(owner)
        for f in dataclasses.fields(owner):
            declared: Declared = f.metadata["setting"]
            specs.append(
                Spec(
                    declared.name or f.name, f.name if daemon else None, hints[f.name], f, declared
                )
            )
    return tuple(specs)


#: Every setting, in the order of the settings page's table and ``config show``.
SPECS: tuple[Spec, ...] = _specs()
BY_NAME: dict[str, Spec] = {s.name: s for s in SPECS}
#: Old name → new name, for the settings renamed by the unit rule.
RENAMED: dict[str, str] = {s.declared.old: s.name for s in SPECS if s.declared.old}
#: Settings that never come from the file (the file is where they point, or they are its own).
NOT_IN_FILE = frozenset({"config"})


class SettingsError(ValueError):
    """The configuration is wrong; the message names the key and where its value came from."""


def warn_renamed(old: str, new: str, where: str = "") -> None:
    """The one line a renamed setting's old name costs, for one release."""
    place = f" ({where})" if where else ""
    print(
        f"luoshod: warning: {old}{place} is deprecated, use {new}; the old name goes in the next "
        "release",
        file=sys.stderr,
    )


def _comma_list(value: Any) -> Any:
    """``a,b`` (an environment variable) is the list ``[a, b]``."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _octal(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip().removeprefix("0o")
        if not text or any(c not in "01234567" for c in text):
            raise ValueError(f'must be an octal file mode such as "0660", got {value!r}')
        return int(text, 8)
    return value


#: What the layers accept, by a declaration's ``kind`` (else the field's own type).
_KIND_TYPES: dict[str, Any] = {
    "list": Annotated[list[str], NoDecode, BeforeValidator(_comma_list)],
    "secrets": Annotated[list[SecretStr], NoDecode, BeforeValidator(_comma_list)],
    "secret": SecretStr | None,
    "file": FilePath | None,
    "octal": Annotated[int, BeforeValidator(_octal)],
    "tables": dict[str, Any],
}


class _Checks(BaseSettings):
    """The checks beyond a setting's type and bounds; the fields come from :data:`SPECS`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="forbid", env_ignore_empty=True, validate_default=True
    )

    if TYPE_CHECKING:
        # The fields are made from SPECS at import (create_model): to mypy, each is Any.
        def __getattr__(self, name: str) -> Any: ...

    @field_validator("listen", check_fields=False)
    @classmethod
    def _some_listener(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("at least one address is needed")
        return value

    @field_validator("store", check_fields=False)
    @classmethod
    def _absolute_store(cls, value: str) -> str:
        # A relative path would be another store from another working directory.
        return absolute_store_url(value)

    @field_validator("scripts_dir", check_fields=False)
    @classmethod
    def _scripts_folder(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_dir():
            raise ValueError(
                f"{value} is not a directory; give the folder that holds the scripted:NAME "
                "scripts (NAME.json)"
            )
        return value

    @field_validator("lease_renew_s", check_fields=False)
    @classmethod
    def _renew_below_ttl(cls, value: float, info: ValidationInfo) -> float:
        ttl = info.data.get("lease_ttl_s")
        if ttl is not None and value >= ttl:
            raise ValueError(f"must be below lease_ttl_s ({ttl:g} s), got {value:g}")
        return value

    @field_validator("log_level", mode="before", check_fields=False)
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("providers", check_fields=False)
    @classmethod
    def _providers(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Checked (and their key variables read) here so a bad entry stops the start.
        try:
            providers_file.parse({"providers": value}, os.environ)
        except providers_file.ConfigFileError as e:
            raise ValueError(str(e)) from None
        return value

    @field_validator("mcp_servers", check_fields=False)
    @classmethod
    def _mcp_servers(cls, value: dict[str, Any]) -> dict[str, Any]:
        # Checked (and their secrets read) here so a bad entry stops the start.
        try:
            mcp_file.parse(value, os.environ)
        except providers_file.ConfigFileError as e:
            raise ValueError(str(e)) from None
        return value

    @model_validator(mode="after")
    def _tls_pairs(self) -> Any:
        cert, key, ca = (
            getattr(self, n) for n in ("tls_cert_file", "tls_key_file", "tls_client_ca_file")
        )
        if (cert is None) != (key is None):
            missing = "tls_key_file" if key is None else "tls_cert_file"
            raise ValueError(f"{missing}: tls_cert_file and tls_key_file go together")
        if ca is not None and cert is None:
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
        # Flags (the init arguments) win, then the environment (its old names after the
        # new ones), then the file.
        assert isinstance(init_settings, InitSettingsSource)
        path = config_path(init_settings.init_kwargs)
        return (
            init_settings,
            env_settings,
            _RenamedEnv(settings_cls),
            _FileSource(settings_cls, path),
        )


def _model_field(spec: Spec) -> tuple[Any, Any]:
    d = spec.declared
    kind_type = _KIND_TYPES.get(d.kind, spec.type)
    bounds: dict[str, Any] = {
        k: v for k, v in (("ge", d.ge), ("gt", d.gt), ("le", d.le)) if v is not None
    }
    f = spec.field_info
    default: dict[str, Any] = (
        {"default_factory": f.default_factory}
        if f.default is dataclasses.MISSING
        else {"default": f.default}
    )
    if d.kind == "secrets":
        default = {"default_factory": list}
    alias: dict[str, Any] = (
        {"validation_alias": AliasChoices(spec.name, *d.env_also, env_name(spec.name))}
        if d.env_also
        else {}
    )
    return kind_type, Field(description=d.help, **default, **bounds, **alias)


#: Every setting of ``luoshod serve`` as a pydantic-settings model, made from :data:`SPECS`.
if TYPE_CHECKING:
    Settings = _Checks  # its fields, made at import, are Any to mypy (_Checks.__getattr__)
else:
    Settings = create_model(
        "Settings",
        __base__=_Checks,
        __module__=__name__,
        __doc__="Every setting of ``luoshod serve`` (:data:`SPECS`). Descriptions are the flags' "
        "help.",
        **{spec.name: _model_field(spec) for spec in SPECS},
    )


class _RenamedEnv(PydanticBaseSettingsSource):
    """The old variables of renamed settings, below the new ones."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        raise NotImplementedError  # __call__ reads them all at once

    def __call__(self) -> dict[str, Any]:
        out = {}
        for spec in SPECS:
            if spec.old_env and os.environ.get(spec.old_env) and not os.environ.get(spec.env or ""):
                out[spec.name] = os.environ[spec.old_env]
        return out


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
    """The decoded TOML file, old names renamed. Raises ``SettingsError``."""
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise SettingsError(f"config: cannot read {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SettingsError(f"config: {path} is not valid TOML: {e}") from None
    for key in NOT_IN_FILE & data.keys():
        raise SettingsError(
            f"{key}: not a key of the file itself (in {path}); use --config or {env_name(key)}"
        )
    for old in RENAMED.keys() & data.keys():
        new = RENAMED[old]
        if new in data:
            raise SettingsError(
                f"{old}: the old name of {new}, both set (in file {path}); keep {new}"
            )
        warn_renamed(old, new, f"file {path}")
        data[new] = data.pop(old)
    return data


def _origin(key: str, flags: Mapping[str, Any]) -> str:
    """Where the value of ``key`` came from, highest precedence first."""
    spec = BY_NAME.get(key)
    if key in flags and spec is not None and spec.flag:
        return f"flag {spec.flag}"
    names = [
        env_name(key),
        *(spec.declared.env_also if spec else ()),
        *([spec.old_env] if spec and spec.old_env else []),
    ]
    for name in names:
        if os.environ.get(name):
            return f"env {name}"
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
    known = {name for s in SPECS for name in (s.env, s.old_env) if name} | OTHER_VARIABLES
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
    for spec in SPECS:
        if spec.old_env and os.environ.get(spec.old_env):
            ignored = " (ignored: it is set too)" if os.environ.get(spec.env or "") else ""
            warn_renamed(spec.old_env, f"{spec.env}{ignored}")
    try:
        return Settings(**flags)
    except ValidationError as e:
        raise SettingsError(_message(e, flags)) from None


def to_config(settings: Settings) -> Config:
    """The daemon's :class:`Config` from validated settings."""
    values: dict[str, Any] = {}
    for spec in SPECS:
        if spec.field is None:
            continue
        value = getattr(settings, spec.name)
        if spec.declared.kind == "secrets":
            value = tuple(providers_file.Secret(t.get_secret_value()) for t in value)
        elif spec.declared.kind == "secret" and value is not None:
            value = providers_file.Secret(value.get_secret_value())
        elif spec.name == "mcp_servers":
            value = mcp_file.parse(value, os.environ)
        values[spec.field] = value
    return Config(**values)


def shown(settings: Settings) -> dict[str, Any]:
    """The effective settings for ``luoshod config show``, secrets masked."""
    out: dict[str, Any] = {}
    for spec in SPECS:
        name, kind = spec.name, spec.declared.kind
        value = getattr(settings, name)
        if kind == "secrets":
            value = [MASK for _ in value]
        elif kind == "secret":
            value = MASK if value is not None else None
        elif name == "store":
            value = providers_file.redact_url(value)
        elif kind == "octal":
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
                model: {
                    "prompt_per_mtok": pr.prompt_per_mtok,
                    "completion_per_mtok": pr.completion_per_mtok,
                    **(
                        {"cached_input_per_mtok": pr.cached_input_per_mtok}
                        if pr.cached_input_per_mtok is not None
                        else {}
                    ),
                    **(
                        {"cache_write_per_mtok": pr.cache_write_per_mtok}
                        if pr.cache_write_per_mtok is not None
                        else {}
                    ),
                }
                for model, pr in p.prices.items()
            },
            **({"context_windows": dict(p.context_windows)} if p.context_windows else {}),
        }
        for name, p in parsed.items()
    }


# -- flags --------------------------------------------------------------------------------

#: setting → its flag (secrets and file-only tables have none).
FLAGS: dict[str, str] = {s.name: s.flag for s in SPECS if s.flag}


def _is_switch(spec: Spec) -> bool:
    return spec.type is bool


class _RenamedFlag(argparse.Action):
    """An old flag of a renamed setting: its value, and one warning line."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        self.new = new
        super().__init__(*args, **kwargs)

    def __call__(
        self, parser: Any, namespace: argparse.Namespace, values: Any, option: str | None = None
    ) -> None:
        warn_renamed(str(option), self.new)
        setattr(namespace, self.dest, values)


def add_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per setting (but secrets), each absent from the namespace unless given.
    Values stay strings: the model checks them, so a bad flag gets the same message as a
    bad variable or file key."""
    for spec in SPECS:
        if not spec.flag:
            continue
        d = spec.declared
        extra: dict[str, Any]
        if _is_switch(spec):
            extra = {"action": argparse.BooleanOptionalAction}
        elif d.metavar:
            extra = {"metavar": d.metavar, **({"action": "append"} if d.kind == "list" else {})}
        else:
            extra = {"choices": list(typing.get_args(spec.type))}
        env = f"env {spec.env}" + "".join(f" or {n}" for n in d.env_also)
        parser.add_argument(
            spec.flag, dest=spec.name, default=argparse.SUPPRESS, help=f"{d.help} ({env})", **extra
        )
        if spec.old_flag:
            parser.add_argument(
                spec.old_flag,
                dest=spec.name,
                default=argparse.SUPPRESS,
                help=argparse.SUPPRESS,
                action=_RenamedFlag,
                new=spec.flag,
                metavar=d.metavar,
            )


def given_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {name: value for name, value in vars(args).items() if name in FLAGS}


# -- the table of docs/reference/settings.md ------------------------------------------------

README_HEADER = "| key | env | flag | default | meaning |\n| --- | --- | --- | --- | --- |"
#: How the table is written again from the declarations.
REGENERATE = "python scripts/gendocs.py"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _default_doc(spec: Spec) -> str:
    d, value = spec.declared, spec.default
    if d.default_doc:
        return d.default_doc
    if d.kind == "octal":
        return f'`"{value:04o}"`'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None or value in ("", (), []):
        return "–"
    if isinstance(value, dict):
        return "none" if not value else str(value)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return ", ".join(f"`{v}`" for v in value)
    return f"`{value}`"


def _row(spec: Spec) -> str:
    d = spec.declared
    key = f"`{spec.name}`" + (f" (was `{d.old}`)" if d.old else "")
    listed = " (comma-separated)" if d.kind in ("list", "secrets") else ""
    if spec.env is None:
        env = "– (file only)"
    else:
        env = " or ".join(f"`{n}`" for n in (spec.env, *d.env_also)) + listed
    if spec.flag is None:
        flag = (
            "– (a secret on a command line is visible in `ps`)"
            if d.kind in ("secret", "secrets")
            else "–"
        )
    elif _is_switch(spec):
        flag = f"`{spec.flag}` / `--no-{spec.flag[2:]}`"
    elif d.metavar:
        flag = f"`{spec.flag} {d.metavar}`" + (" (repeatable)" if d.kind == "list" else "")
    else:
        flag = f"`{spec.flag} {'|'.join(typing.get_args(spec.type))}`"
    cells = (key, env, flag, _default_doc(spec), d.doc or d.help)
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def markdown_table() -> str:
    """The table of settings (docs/reference/settings.md), one row per setting."""
    return "\n".join([README_HEADER, *(_row(spec) for spec in SPECS)]) + "\n"


def readme_table(readme: str) -> tuple[int, int]:
    """Where the table of settings is in a page's text: (start, end) offsets."""
    start = readme.index(README_HEADER.splitlines()[0])
    end = start
    for line in readme[start:].splitlines(keepends=True):
        if not line.startswith("|"):
            break
        end += len(line)
    return start, end


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m luoshod.settings",
        description="The settings' reference table, from their declarations.",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--markdown", action="store_true", help="print the markdown table")
    what.add_argument(
        "--readme",
        metavar="FILE",
        type=Path,
        help="rewrite the table in FILE (docs/reference/settings.md)",
    )
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown_table(), end="")
        return 0
    text = args.readme.read_text()
    start, end = readme_table(text)
    args.readme.write_text(text[:start] + markdown_table() + text[end:])
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())


__all__ = [
    "FLAGS",
    "SPECS",
    "Process",
    "Settings",
    "SettingsError",
    "add_flags",
    "env_name",
    "given_flags",
    "load",
    "markdown_table",
    "shown",
    "to_config",
]
