"""The ``[mcp_servers.NAME]`` tables of the daemon's TOML file (R70, R73): what is accepted,
and a message naming the key for what is not — never a secret's value."""

from __future__ import annotations

from pathlib import Path

import pytest

from luoshod import settings
from luoshod.config import ConfigFileError
from luoshod.domain.mcpspec import RetryPolicy
from luoshod.mcpclient.config import parse

ENV = {"TOKEN_VAR": "Bearer v3ry-s3cret", "KEY_VAR": "k3y-s3cret"}


def test_stdio_and_http_servers_are_parsed_with_their_secrets(tmp_path: Path) -> None:
    (tmp_path / "hdr").write_text("f1le-s3cret\n")
    servers = parse(
        {
            "files": {
                "command": "npx",
                "args": ["-y", "srv"],
                "env": {"A": "lit-s3cret"},
                "env_from": {"K": "KEY_VAR"},
                "timeout_ms": 1500,
                "retry": {"attempts": 3, "backoff_ms": 100, "retry_on": ["tool_error"]},
            },
            "tracker": {
                "url": "https://t.example/mcp",
                "headers_env": {"Authorization": "TOKEN_VAR"},
                "headers_file": {"X-Key": str(tmp_path / "hdr")},
            },
        },
        ENV,
    )
    f, t = servers["files"], servers["tracker"]
    assert (f.transport, f.args, f.timeout_ms) == ("stdio", ("-y", "srv"), 1500)
    assert {k: v.reveal() for k, v in f.env.items()} == {"A": "lit-s3cret", "K": "k3y-s3cret"}
    assert f.retry == RetryPolicy(3, 100, ("tool_error",))
    assert {k: v.reveal() for k, v in t.headers.items()} == {
        "Authorization": "Bearer v3ry-s3cret",
        "X-Key": "f1le-s3cret",
    }
    shown = repr(f.shown()) + repr(t.shown()) + repr(f) + repr(t)
    for secret in ("lit-s3cret", "k3y-s3cret", "v3ry-s3cret", "f1le-s3cret"):
        assert secret not in shown


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"a__b": {"command": "x"}}, "mcp_servers.a__b: a server name"),
        ({"s": {"command": "x", "url": "http://h/mcp"}}, "mcp_servers.s: give either command"),
        ({"s": {}}, "mcp_servers.s: give either command"),
        ({"s": {"url": "ftp://h"}}, "mcp_servers.s.url: must be an http"),
        (
            {"s": {"url": "http://h/mcp", "env": {"A": "b"}}},
            "mcp_servers.s.env: only for a stdio server",
        ),
        (
            {"s": {"command": "x", "headers_env": {"A": "TOKEN_VAR"}}},
            "mcp_servers.s.headers_env: only for an HTTP",
        ),
        ({"s": {"command": "x", "comand": "y"}}, "mcp_servers.s.comand: unknown key"),
        (
            {"s": {"command": "x", "env_from": {"A": "MISSING_VAR"}}},
            "mcp_servers.s.env_from.A: environment variable MISSING_VAR is not set",
        ),
        (
            {"s": {"url": "http://h/mcp", "headers_file": {"A": "/nonexistent/x"}}},
            "mcp_servers.s.headers_file.A: cannot read",
        ),
        (
            {"s": {"command": "x", "timeout_ms": 0}},
            "mcp_servers.s.timeout_ms: must be an integer >= 1",
        ),
        (
            {"s": {"command": "x", "retry": {"attempts": 0}}},
            "mcp_servers.s.retry.attempts: must be an integer >= 1",
        ),
        (
            {"s": {"command": "x", "retry": {"retry_on": ["always"]}}},
            "mcp_servers.s.retry.retry_on: a list of",
        ),
    ],
)
def test_bad_tables_name_the_key(table: dict, message: str) -> None:
    with pytest.raises(ConfigFileError) as err:
        parse(table, ENV)
    assert str(err.value).startswith(message), str(err.value)


def test_a_bad_table_stops_the_settings_with_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "l.toml"
    path.write_text('[mcp_servers.s]\ncommand = "x"\nenv_from = { A = "NOT_SET_ANYWHERE" }\n')
    with pytest.raises(settings.SettingsError) as err:
        settings.load({"config": str(path)})
    assert "mcp_servers.s.env_from.A: environment variable NOT_SET_ANYWHERE is not set" in str(
        err.value
    )


def test_settings_feed_the_daemon_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEN_VAR", "Bearer v3ry-s3cret")
    path = tmp_path / "l.toml"
    path.write_text(
        '[mcp_servers.t]\nurl = "http://127.0.0.1:1/mcp"\nheaders_env = { Authorization = '
        '"TOKEN_VAR" }\n'
    )
    s = settings.load({"config": str(path)})
    config = settings.to_config(s)
    assert config.mcp_servers["t"].headers["Authorization"].reveal() == "Bearer v3ry-s3cret"
    shown = settings.shown(s)["mcp_servers"]
    assert shown == {
        "t": {"url": "http://127.0.0.1:1/mcp", "headers_env": {"Authorization": "TOKEN_VAR"}}
    }
