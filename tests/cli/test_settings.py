"""Settings: defaults < TOML file < LUOSHOD_* environment < flags; a bad value names its
key and where it came from; ``luoshod config show`` masks secrets."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from luoshod import settings
from luoshod.config import Secret
from luoshod.server.app import Config
from tests.support import ROOT, cli


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No LUOSHOD_* setting of the machine leaks into these tests."""
    for spec in settings.SPECS:
        for name in (spec.env, spec.old_env, *spec.declared.env_also):
            if name:
                monkeypatch.delenv(name, raising=False)
    for legacy in ("LUOSHOD_CONFIG",):
        monkeypatch.delenv(legacy, raising=False)


def toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "luoshod.toml"
    path.write_text(text)
    return path


def test_defaults_build_the_default_config() -> None:
    # The one difference: the default store's relative path, resolved once (issue 17).
    default = Config()
    assert settings.to_config(settings.load()) == Config(
        store=f"lmdb://{Path.cwd()}/.luoshod/store"
    )
    assert default.store == "lmdb:.luoshod/store"


def test_flags_beat_env_beat_file_beat_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = toml(
        tmp_path,
        'history_limit = 7\nevent_log_limit = 70\nstore = "memory://"\nmax_active_runs = 3\n',
    )
    monkeypatch.setenv("LUOSHOD_EVENT_LOG_LIMIT", "80")
    monkeypatch.setenv("LUOSHOD_STORE", "sqlite:env.db")
    s = settings.load({"config": str(path), "store": "sqlite:flag.db"})
    assert (s.history_limit, s.event_log_limit, s.store, s.max_active_runs) == (
        7,
        80,
        f"sqlite://{Path.cwd()}/flag.db",
        3,
    )
    assert s.tool_timeout_s == 300.0  # the default


def test_the_file_can_come_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LUOSHOD_CONFIG", str(toml(tmp_path, "drain_timeout_s = 2.5\n")))
    assert settings.to_config(settings.load()).drain_timeout_s == 2.5


def test_env_lists_are_comma_separated_and_file_lists_are_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = toml(tmp_path, 'listen = ["unix:/tmp/a.sock", "127.0.0.1:1"]\nauth_tokens = ["t1"]\n')
    assert settings.load({"config": str(path)}).listen == ["unix:/tmp/a.sock", "127.0.0.1:1"]
    monkeypatch.setenv("LUOSHOD_LISTEN", "127.0.0.1:2, unix:/tmp/b.sock")
    monkeypatch.setenv("LUOSHOD_AUTH_TOKENS", "tok-a,tok-b")
    s = settings.load({"config": str(path)})
    assert s.listen == ["127.0.0.1:2", "unix:/tmp/b.sock"]
    assert [t.reveal() for t in settings.to_config(s).auth_tokens] == ["tok-a", "tok-b"]


def test_every_field_maps_onto_config() -> None:
    s = settings.load(
        {
            "listen": ["127.0.0.1:9"],
            "tool_timeout_s": "12",
            "drain_timeout_s": "3",
            "unix_socket_mode": "0600",
            "max_active_runs": "5",
            "allow_remote": True,
            "log_contents": True,
        }
    )
    c = settings.to_config(s)
    assert (c.listen, c.tool_timeout_s, c.drain_timeout_s, c.unix_socket_mode) == (
        ["127.0.0.1:9"],
        12.0,
        3.0,
        0o600,
    )
    assert (c.max_active_runs, c.allow_remote, c.log_contents) == (5, True, True)


def test_every_config_field_is_a_declared_setting_with_a_unit_in_its_name() -> None:
    """A setting is one declaration (a Config or Process field made by ``setting``); the
    model, the flags and the variables all come from it."""
    fed = {spec.field for spec in settings.SPECS if spec.field is not None}
    assert fed == {f.name for f in fields(Config)}
    assert set(settings.Settings.model_fields) == {spec.name for spec in settings.SPECS}
    assert set(settings.FLAGS) == {s.name for s in settings.SPECS if s.declared.flag}
    for spec in settings.SPECS:  # the unit rule: a duration says its unit
        if spec.type is float:
            assert spec.name.endswith(("_s", "_ms")), spec.name
    flags = _parse("--tool-timeout-s", "7", "--no-gc-tuning", "--listen", "a:1", "--listen", "b:2")
    assert flags == {"tool_timeout_s": "7", "gc_tuning": False, "listen": ["a:1", "b:2"]}


def _parse(*argv: str) -> dict:
    import argparse

    parser = argparse.ArgumentParser()
    settings.add_flags(parser)
    return settings.given_flags(parser.parse_args(list(argv)))


def test_the_settings_page_table_is_the_declarations() -> None:
    """docs/reference/settings.md is generated from the declarations (its links pointed at
    the docs pages that the help texts name)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import gendocs

    page = (ROOT / "docs" / "reference" / "settings.md").read_text()
    start, end = settings.readme_table(page)
    assert page[start:end] == gendocs.relink(settings.markdown_table(), "reference/settings.md"), (
        "docs/reference/settings.md's table of settings differs from their declarations; "
        f"run `{settings.REGENERATE}`"
    )


@pytest.mark.parametrize(
    ("old", "new", "value", "newer"),
    [
        ("tool_timeout", "tool_timeout_s", 99, 2),
        ("drain_timeout", "drain_timeout_s", 99, 2),
        ("retention", "retention_s", 99, 2),
        ("lease_ttl", "lease_ttl_s", 99, 60),
        ("lease_renew", "lease_renew_s", 1, 0.5),
    ],
)
def test_old_names_still_work_for_one_release_with_a_warning(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    value: float,
    newer: float,
) -> None:
    old_flag, new_flag = f"--{old.replace('_', '-')}", f"--{new.replace('_', '-')}"
    assert getattr(settings.load(_parse(old_flag, str(value))), new) == value
    assert capsys.readouterr().err == (
        f"luoshod: warning: {old_flag} is deprecated, use {new_flag}; the old name goes in the "
        "next release\n"
    )
    monkeypatch.setenv(settings.env_name(old), str(value))
    assert getattr(settings.load(), new) == value
    assert capsys.readouterr().err == (
        f"luoshod: warning: {settings.env_name(old)} is deprecated, use {settings.env_name(new)}; "
        "the old name goes in the next release\n"
    )
    monkeypatch.setenv(settings.env_name(new), str(newer))
    assert getattr(settings.load(), new) == newer  # the new name wins
    assert "(ignored: it is set too)" in capsys.readouterr().err
    monkeypatch.delenv(settings.env_name(old))
    monkeypatch.delenv(settings.env_name(new))
    path = toml(tmp_path, f"{old} = {value}\n")
    assert getattr(settings.load({"config": str(path)}), new) == value
    assert capsys.readouterr().err == (
        f"luoshod: warning: {old} (file {path}) is deprecated, use {new}; the old name goes in "
        "the next release\n"
    )
    both = toml(tmp_path, f"{old} = {value}\n{new} = {value}\n")
    with pytest.raises(settings.SettingsError, match=f"{old}: the old name of {new}, both set"):
        settings.load({"config": str(both)})


def test_a_bad_value_under_an_old_variable_names_that_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LUOSHOD_TOOL_TIMEOUT", "-1")
    with pytest.raises(settings.SettingsError) as err:
        settings.load()
    assert (
        str(err.value)
        == "tool_timeout_s: Input should be greater than 0 (env LUOSHOD_TOOL_TIMEOUT)"
    )


@pytest.mark.parametrize(
    ("flags", "env", "file", "message"),
    [
        (
            {"history_limit": "-1"},
            {},
            "",
            "history_limit: Input should be greater than or equal to 0 (flag --history-limit)",
        ),
        (
            {},
            {"LUOSHOD_HISTORY_LIMIT": "many"},
            "",
            "history_limit: Input should be a valid integer, unable to parse string as an integer "
            "(env LUOSHOD_HISTORY_LIMIT)",
        ),
        (
            {},
            {},
            "history_limit = 1.5",
            "history_limit: Input should be a valid integer, got a number with a fractional part "
            "(file ",
        ),
        ({}, {}, 'stor = "memory://"', "stor: unknown key (did you mean store?) (file "),
        ({}, {}, 'log_format = "yaml"', "log_format: Input should be 'text' or 'json' (file "),
        (
            {"unix_socket_mode": "rw-rw----"},
            {},
            "",
            "unix_socket_mode: must be an octal file mode such as \"0660\", got 'rw-rw----' (flag "
            "--unix-socket-mode)",
        ),
        (
            {"tls_cert_file": "/no/such.pem"},
            {},
            "",
            "tls_cert_file: Path does not point to a file (flag --tls-cert-file)",
        ),
        ({}, {}, "listen = []", "listen: at least one address is needed (file "),
        (
            {},
            {},
            '[providers.x]\nkind = "openia"',
            "providers.x.kind: must be one of openai, openai_responses, anthropic (file ",
        ),
        ({}, {}, 'config = "other.toml"', "config: not a key of the file itself"),
        ({}, {}, "history_limit = ", "config: "),
    ],
)
def test_a_bad_value_names_its_key_and_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: dict, env: dict, file: str, message: str
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    if file:
        flags = {**flags, "config": str(toml(tmp_path, file))}
    with pytest.raises(settings.SettingsError) as err:
        settings.load(flags)
    assert str(err.value).startswith(message), str(err.value)


def test_tls_files_go_together(tmp_path: Path) -> None:
    pem = tmp_path / "x.pem"
    pem.write_text("-----BEGIN CERTIFICATE-----\n")
    with pytest.raises(
        settings.SettingsError, match="tls_key_file: tls_cert_file and tls_key_file go together"
    ):
        settings.load({"tls_cert_file": str(pem)})
    with pytest.raises(settings.SettingsError, match="tls_client_ca_file: mTLS needs"):
        settings.load({"tls_client_ca_file": str(pem)})


def luoshod(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``luoshod ARGS`` with only the test's LUOSHOD_* settings."""
    return cli.luoshod(*args, env=env, clean_env=True, timeout=60)


def test_a_bad_config_stops_serve_with_one_line_and_exit_2(tmp_path: Path) -> None:
    out = luoshod("serve", "--store", "memory://", "--max-payload-bytes", "0")
    assert out.returncode == 2
    assert out.stderr == (
        "luoshod: configuration error: max_payload_bytes: Input should be greater than or equal "
        "to 1 "
        "(flag --max-payload-bytes)\n"
    )
    assert "Traceback" not in out.stderr


def test_config_show_prints_the_effective_config_with_secrets_masked(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("file-token-value\n")
    path = toml(
        tmp_path,
        f'store = "memory://"\nauth_token_file = "{tokens}"\n'
        '[providers.oa]\nkind = "openai"\napi_key_env = "LUOSHOD_TEST_SHOW_KEY"\n',
    )
    env = {
        "LUOSHOD_CONFIG": str(path),
        "LUOSHOD_AUTH_TOKENS": "env-token-value",
        "LUOSHOD_TEST_SHOW_KEY": "sk-show-secret",
    }
    out = luoshod("config", "show", "--json", "--history-limit", "9", env=env)
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)
    assert (shown["store"], shown["history_limit"], shown["auth_tokens"]) == (
        "memory://",
        9,
        ["***"],
    )
    assert (
        shown["providers"]["oa"]["api_key"] == "***"
        and shown["providers"]["oa"]["api_key_env"] == "LUOSHOD_TEST_SHOW_KEY"
    )
    assert shown["auth_token_file"] == str(tokens)  # the path, not what it holds
    text = luoshod("config", "show", env=env)
    assert text.returncode == 0, text.stderr
    for secret in ("env-token-value", "sk-show-secret", "file-token-value"):
        assert secret not in out.stdout + text.stdout
    assert 'auth_tokens = ["***"]' in text.stdout and "history_limit = 50" in text.stdout
    assert re.search(r"^\[providers\.oa\]$", text.stdout, re.M) and 'api_key = "***"' in text.stdout


def test_config_show_is_valid_toml_that_loads_back(tmp_path: Path) -> None:
    import tomllib

    out = luoshod(
        "config",
        "show",
        "--store",
        "memory://",
        "--listen",
        "unix:/tmp/x.sock",
        "--listen",
        "127.0.0.1:0",
    )
    data = tomllib.loads(out.stdout)
    again = toml(tmp_path, out.stdout)
    reloaded = settings.load({"config": str(again)})
    assert data["listen"] == reloaded.listen == ["unix:/tmp/x.sock", "127.0.0.1:0"]
    assert settings.to_config(reloaded).store == "memory://"
    # Shown from a file, it loads back too: the file's path is a comment, not a key.
    again_shown = luoshod("config", "show", "--config", str(again))
    assert again_shown.returncode == 0, again_shown.stderr
    assert f"# read from {again}" in again_shown.stdout and "\nconfig = " not in again_shown.stdout
    (tmp_path / "third").mkdir()
    third = toml(tmp_path / "third", again_shown.stdout)
    assert settings.load({"config": str(third)}).listen == reloaded.listen


def test_legacy_secret_carrier_keeps_secrets_out_of_reprs() -> None:
    c = settings.to_config(settings.load({"listen": ["127.0.0.1:0"]}))
    c.auth_tokens = (Secret("hidden-token"),)
    assert "hidden-token" not in repr(c)


def test_config_show_masks_a_password_in_the_store_url() -> None:
    out = luoshod("config", "show", "--json", "--store", "postgresql://app:hunter2@db:5432/luoshod")
    assert json.loads(out.stdout)["store"] == "postgresql://app:***@db:5432/luoshod"
