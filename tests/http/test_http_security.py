"""The HTTP listener's security: the gRPC listener's tokens and TLS, CSRF on every
state-changing request from a browser, a guard against DNS rebinding, and the headers
(a Content-Security-Policy that allows no inline script) on every answer."""

from __future__ import annotations

import re
import ssl
from html.parser import HTMLParser
from pathlib import Path

import aiohttp
import pytest

from luoshod.config import ConfigError, Secret
from luoshod.http.security import CSP
from luoshod.server.app import Daemon
from tests.support import ROOT
from tests.support.certs import CA
from tests.support.console import ConsoleFactory, assert_error, http_config

TOKEN = "s3cret-token-for-tests"


async def test_tokens_are_required_by_the_api_not_by_the_console_files(
    make_console: ConsoleFactory,
) -> None:
    console = await make_console(token=TOKEN, auth_tokens=(Secret(TOKEN),))
    await console.finished_trip("trip-1")
    status, body = await console.get("/api/v1/sessions")
    assert status == 200 and [s["session_id"] for s in body["sessions"]] == ["trip-1"]
    async with aiohttp.ClientSession() as anonymous:
        for path in (
            "/api/v1/sessions",
            "/api/v1/sessions/trip-1",
            "/api/v1/approvals",
            "/api/v1/sessions/trip-1/events",
            "/api/v1/nothing",
        ):
            async with anonymous.get(console.base + path) as r:
                assert_error(r.status, await r.json(), 401, "UNAUTHENTICATED", "TOKEN_REQUIRED")
                assert r.headers["WWW-Authenticate"].startswith("Bearer")
        async with anonymous.post(
            console.base + "/api/v1/sessions/trip-1/fork",
            json={"from_step": 1},
            headers={"Authorization": "Bearer wrong"},
        ) as r:
            assert_error(r.status, await r.json(), 401, "UNAUTHENTICATED", "TOKEN_INVALID")
        async with anonymous.get(console.base + "/") as r:
            assert r.status == 200 and "luoshod" in await r.text()
    # Nothing was forked by the refused request.
    status, body = await console.get("/api/v1/sessions")
    assert [s["session_id"] for s in body["sessions"]] == ["trip-1"]


async def test_csrf(console_csrf: tuple) -> None:
    console, cookie = console_csrf
    url = console.base + "/api/v1/sessions/trip-1/fork"
    origin = console.base
    jar = {
        "luoshod_csrf": cookie
    }  # what the browser sends back (aiohttp keeps no cookie of an IP host)
    # A browser's request from another site: refused, whatever it carries.
    async with console.http.post(
        url,
        json={"from_step": 1},
        cookies=jar,
        headers={"Origin": "http://evil.example", "X-CSRF-Token": cookie},
    ) as r:
        assert_error(r.status, await r.json(), 403, "PERMISSION_DENIED", "CSRF_ORIGIN_MISMATCH")
    async with console.http.post(
        url, json={"from_step": 1}, headers={"Sec-Fetch-Site": "cross-site"}
    ) as r:
        assert_error(r.status, await r.json(), 403, "PERMISSION_DENIED", "CSRF_ORIGIN_MISMATCH")
    # Same origin, without the token or with a wrong one.
    async with console.http.post(url, json={"from_step": 1}, headers={"Origin": origin}) as r:
        assert_error(r.status, await r.json(), 403, "PERMISSION_DENIED", "CSRF_TOKEN_INVALID")
    async with console.http.post(
        url, json={"from_step": 1}, cookies=jar, headers={"Origin": origin, "X-CSRF-Token": "guess"}
    ) as r:
        assert_error(r.status, await r.json(), 403, "PERMISSION_DENIED", "CSRF_TOKEN_INVALID")
    async with console.http.delete(
        console.base + "/api/v1/sessions/trip-1", headers={"Sec-Fetch-Site": "same-origin"}
    ) as r:
        assert_error(r.status, await r.json(), 403, "PERMISSION_DENIED", "CSRF_TOKEN_INVALID")
    status, body = await console.get("/api/v1/sessions")
    assert [s["session_id"] for s in body["sessions"]] == ["trip-1"]  # nothing happened
    # Same origin with the cookie's token: accepted.
    async with console.http.post(
        url,
        json={"from_step": 1},
        cookies=jar,
        headers={"Origin": origin, "Sec-Fetch-Site": "same-origin", "X-CSRF-Token": cookie},
    ) as r:
        assert r.status == 200, await r.text()


@pytest.fixture
async def console_csrf(make_console: ConsoleFactory) -> tuple:
    console = await make_console()
    await console.finished_trip("trip-1")
    async with console.http.get(console.base + "/") as r:
        assert r.status == 200
        morsel = r.cookies["luoshod_csrf"]
        assert morsel["samesite"] == "Strict" and not morsel["httponly"]
        assert len(morsel.value) >= 32
    return console, morsel.value


async def test_dns_rebinding_is_refused_without_tokens(make_console: ConsoleFactory) -> None:
    console = await make_console()
    for host in ("evil.example", "evil.example:8080"):
        status, body = await console.get("/api/v1/sessions", headers={"Host": host})
        assert_error(status, body, 403, "PERMISSION_DENIED", "HOST_NOT_ALLOWED")
    for host in ("localhost", "127.0.0.1:9", "[::1]:8080"):
        status, _ = await console.get("/api/v1/sessions", headers={"Host": host})
        assert status == 200, host


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.inline: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
        self.handlers += [name for name, _ in attrs if name.startswith("on") or name == "style"]

    def handle_data(self, data: str) -> None:
        if self.lasttag == "script" and data.strip():
            self.inline.append(data)


async def test_headers_and_no_inline_script(make_console: ConsoleFactory) -> None:
    console = await make_console()
    async with console.http.get(console.base + "/") as r:
        html = await r.text()
        assert r.headers["Content-Security-Policy"] == CSP
        assert (
            "'unsafe-inline'" not in CSP
            and "script-src 'self'" in CSP
            and "connect-src 'self'" in CSP
        )
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["X-Frame-Options"] == "DENY"
        assert r.headers["Referrer-Policy"] == "no-referrer"
    parser = _Scripts()
    parser.feed(html)
    assert parser.scripts and all(s.get("src", "").startswith("/static/") for s in parser.scripts)
    assert parser.inline == [] and parser.handlers == []
    # Every asset is the daemon's own: nothing names another origin.
    static = ROOT / "luoshod" / "http" / "static"
    for path in static.rglob("*"):
        if path.is_file():
            assert not re.search(r"https?://", path.read_text()), path
    async with console.http.get(console.base + "/api/v1/sessions") as r:
        assert (
            r.headers["Content-Security-Policy"] == CSP and r.headers["Cache-Control"] == "no-store"
        )
    async with console.http.get(console.base + "/static/../../settings.py") as r:
        assert r.status in (403, 404)


async def test_tls_and_mtls_as_the_grpc_listener(
    make_console: ConsoleFactory, tmp_path: Path
) -> None:
    ca = CA(tmp_path)
    server = ca.issue("server", server=True)
    client = ca.issue("client", server=False)
    trust = ssl.create_default_context(cafile=str(ca.pair.cert))
    console = await make_console(ssl=trust, tls_cert_file=server.cert, tls_key_file=server.key)
    assert console.base.startswith("https://127.0.0.1:")
    status, body = await console.get("/api/v1/sessions")
    assert (status, body) == (200, {"sessions": [], "next_page_token": ""})

    mutual = ssl.create_default_context(cafile=str(ca.pair.cert))
    mutual.load_cert_chain(client.cert, client.key)
    console = await make_console(
        ssl=mutual,
        tls_cert_file=server.cert,
        tls_key_file=server.key,
        tls_client_ca_file=ca.pair.cert,
    )
    status, _ = await console.get("/api/v1/sessions")
    assert status == 200
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=trust)) as no_cert:
        with pytest.raises(aiohttp.ClientError):
            async with no_cert.get(console.base + "/api/v1/sessions") as r:
                await r.read()


async def test_a_remote_listener_needs_tls_or_tokens(tmp_path: Path) -> None:
    """Checked when the daemon is built, before anything is opened."""
    for address, message in (
        ("0.0.0.0:0", "not a loopback address"),
        ("nonsense", "not host:port"),
        ("127.0.0.1:99999", "not host:port"),
    ):
        with pytest.raises(ConfigError, match=f"http_listen: .*{message}"):
            Daemon(http_config(tmp_path, http_listen=address))
    Daemon(
        http_config(tmp_path, http_listen="0.0.0.0:0", auth_tokens=(Secret(TOKEN),))
    )  # tokens: allowed
