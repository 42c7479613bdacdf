"""The config file loader: typed entries, defaults, and errors that name the key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from luoshod.config import ConfigFileError, Price, Secret, load_file, parse

ENV = {"OPENAI_API_KEY": "sk-openai-secret", "ANTHROPIC_API_KEY": "sk-ant-secret"}

FULL = """
[providers.openai]
kind = "openai"
api_key_env = "OPENAI_API_KEY"
timeout_s = 30
max_retries = 2
backoff_base_s = 0.25
backoff_max_s = 8

[providers.openai.prices."gpt-4o-mini"]
prompt_per_mtok = 0.15
completion_per_mtok = 0.6

[providers.claude]
kind = "anthropic"
api_key_env = "ANTHROPIC_API_KEY"

[providers.local]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
"""


def load(text: str, env: dict[str, str] = ENV):
    return parse(tomllib.loads(text), env)


def test_entries_with_their_defaults() -> None:
    cfg = load(FULL)
    assert sorted(cfg.providers) == ["claude", "local", "openai"]
    openai = cfg.providers["openai"]
    assert (openai.kind, openai.base_url) == ("openai", "https://api.openai.com/v1")
    assert (openai.timeout_s, openai.max_retries, openai.backoff_base_s, openai.backoff_max_s) == (
        30,
        2,
        0.25,
        8,
    )
    assert openai.api_key is not None and openai.api_key.reveal() == "sk-openai-secret"
    assert openai.prices == {"gpt-4o-mini": Price(0.15, 0.6)}
    claude = cfg.providers["claude"]
    assert (claude.base_url, claude.timeout_s, claude.max_retries, claude.prices) == (
        "https://api.anthropic.com",
        60.0,
        4,
        {},
    )
    local = cfg.providers["local"]
    assert local.api_key is None and local.base_url == "http://127.0.0.1:11434/v1"


def test_the_key_is_hidden_from_reprs() -> None:
    cfg = load(FULL)
    assert "sk-openai-secret" not in repr(cfg) and "sk-openai-secret" not in str(
        cfg.providers["openai"]
    )
    assert repr(Secret("x")) == "Secret('***')"


def test_price_is_per_million_tokens() -> None:
    assert Price(0.15, 0.6).cost(1_000_000, 500_000) == pytest.approx(0.45)


def test_r78_cache_reads_and_writes_have_their_own_prices() -> None:
    text = (
        '[providers.x]\nkind = "anthropic"\n[providers.x.prices."m"]\n'
        "prompt_per_mtok = 3\ncompletion_per_mtok = 15\n"
        "cached_input_per_mtok = 0.3\ncache_write_per_mtok = 3.75\n"
    )
    price = parse(tomllib.loads(text), {}).providers["x"].prices["m"]
    assert price == Price(3.0, 15.0, 0.3, 3.75)
    # 1000 prompt tokens of which 600 read from the cache and 200 written to it; 100 out.
    assert price.cost(1000, 100, 600, 200) == pytest.approx(
        (200 * 3 + 600 * 0.3 + 200 * 3.75 + 100 * 15) / 1e6
    )
    # Without their own prices cached tokens cost as other prompt tokens.
    assert Price(3.0, 15.0).cost(1000, 100, 600, 200) == Price(3.0, 15.0).cost(1000, 100)


def test_r85_context_windows_per_model() -> None:
    text = '[providers.x]\nkind = "openai"\n[providers.x.context_windows]\n"gpt-4.1" = 1047576\n'
    entry = parse(tomllib.loads(text), {}).providers["x"]
    assert entry.context_windows == {"gpt-4.1": 1047576}
    assert (
        parse(tomllib.loads('[providers.x]\nkind = "openai"'), {}).providers["x"].context_windows
        == {}
    )


def test_an_empty_file_has_no_providers(tmp_path: Path) -> None:
    path = tmp_path / "empty.toml"
    path.write_text("")
    assert dict(load_file(path).providers) == {}


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '[providers.openai]\nkind = "openia"',
            "providers.openai.kind: must be one of openai, openai_responses, anthropic",
        ),
        (
            "[providers.openai]",
            "providers.openai.kind: must be one of openai, openai_responses, anthropic",
        ),
        (
            '[providers.x]\nkind = "openai"\nbase_url = "ftp://x"',
            "providers.x.base_url: must be an http:// or https:// URL",
        ),
        (
            '[providers.x]\nkind = "openai"\ntimeout_s = 0',
            "providers.x.timeout_s: must be a number > 0",
        ),
        (
            '[providers.x]\nkind = "openai"\ntimeout_s = "60"',
            "providers.x.timeout_s: must be a number > 0",
        ),
        (
            '[providers.x]\nkind = "openai"\nmax_retries = -1',
            "providers.x.max_retries: must be an integer >= 0",
        ),
        (
            '[providers.x]\nkind = "openai"\nmax_retries = 1.5',
            "providers.x.max_retries: must be an integer >= 0",
        ),
        (
            '[providers.x]\nkind = "openai"\nbackoff_base_s = -1',
            "providers.x.backoff_base_s: must be a number >= 0",
        ),
        ('[providers.x]\nkind = "openai"\nmax_retry = 3', "providers.x.max_retry: unknown key"),
        (
            '[providers.x]\nkind = "openai"\napi_key = "sk-inline"',
            "providers.x.api_key: unknown key",
        ),
        (
            '[providers.x]\nkind = "openai"\napi_key_env = "NOT SET"',
            "providers.x.api_key_env: must be the name of an environment variable",
        ),
        (
            '[providers.x]\nkind = "openai"\napi_key_env = "MISSING_KEY"',
            "providers.x.api_key_env: environment variable MISSING_KEY is not set or empty",
        ),
        (
            '[providers.x]\nkind = "openai"\n[providers.x.prices."m"]\nprompt_per_mtok = "cheap"',
            "providers.x.prices.m.prompt_per_mtok: must be a number >= 0",
        ),
        (
            '[providers.x]\nkind = "openai"\n[providers.x.prices."gpt-4.1"]\ninput = 1',
            'providers.x.prices."gpt-4.1".input: unknown key',
        ),
        (
            '[providers.x]\nkind = "openai"\n[providers.x.context_windows]\n"gpt-4.1" = 0',
            'providers.x.context_windows."gpt-4.1": must be a positive whole number',
        ),
        (
            '[providers.x]\nkind = "openai"\ncontext_windows = 128000',
            "providers.x.context_windows: must be a table",
        ),
        ('[providers.scripted]\nkind = "openai"', "providers.scripted: the name is reserved"),
        (
            '[providers."a:b"]\nkind = "openai"',
            'providers."a:b": a provider name is 1-64 characters',
        ),
        ("providers = 3", "providers: must be a table"),
    ],
)
def test_errors_name_the_key(text: str, message: str) -> None:
    with pytest.raises(ConfigFileError) as err:
        load(text)
    assert str(err.value).startswith(message)


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match=r"config file .*missing\.toml"):
        load_file(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[providers\n")
    with pytest.raises(ConfigFileError, match="not valid TOML"):
        load_file(bad)
