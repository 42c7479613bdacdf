"""The HTTP listener: an aiohttp application in the daemon's own event loop, serving the
JSON API (api.py), the session events as Server-Sent Events, and the console's files
(``static/``, shipped in the package: no CDN, no build step)."""

from __future__ import annotations

import asyncio
import logging
import ssl
from pathlib import Path

from aiohttp import web

from ..config import ConfigError
from ..server.listeners import check_listen, why_not_bound
from ..server.service import AgentService
from .api import MAX_PAYLOAD, Api
from .security import Guard

log = logging.getLogger("luoshod.http")

STATIC = Path(__file__).parent / "static"


def ssl_context(
    cert: Path | None, key: Path | None, client_ca: Path | None
) -> ssl.SSLContext | None:
    """The gRPC listener's TLS for HTTP: the same certificate and key, and with a client
    CA the same mTLS (a client without a certificate it signed fails the handshake)."""
    if cert is None or key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
        if client_ca is not None:
            context.load_verify_locations(cafile=str(client_ca))
            context.verify_mode = ssl.CERT_REQUIRED
    except (OSError, ssl.SSLError) as e:
        raise ConfigError(f"http_listen: cannot use the TLS files: {e}") from None
    return context


def build_app(
    service: AgentService, tokens: list[bytes], *, tls: bool, max_payload_bytes: int
) -> web.Application:
    guard = Guard(tokens, tls=tls)
    # Read a little past the service's limit (as the gRPC listener does), so that a body
    # just over it gets the service's PAYLOAD_TOO_LARGE with the sizes.
    app = web.Application(middlewares=[guard.middleware], client_max_size=max_payload_bytes + 65536)
    app[MAX_PAYLOAD] = max_payload_bytes
    app.on_response_prepare.append(guard.on_prepare)
    app.add_routes(Api(service).routes())

    async def index(request: web.Request) -> web.FileResponse:
        response = web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})
        guard.give_csrf_cookie(request, response)
        return response

    app.router.add_get("/", index)
    app.router.add_static("/static/", STATIC, show_index=False, follow_symlinks=False)
    return app


def check_http_listen(
    address: str, *, tls: bool, auth: bool, allow_remote: bool
) -> tuple[str, int]:
    """``(host, port)`` of ``host:port``, under the gRPC listeners' rule: a non-loopback
    address needs TLS or tokens, or ``allow_remote``. Raises ``ConfigError``."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host or int(port) > 65535:
        raise ConfigError(f"http_listen: {address!r} is not host:port")
    try:
        check_listen(address, tls=tls, auth=auth, allow_remote=allow_remote)
    except ConfigError as e:
        raise ConfigError("http_" + str(e)) from None
    return host.strip("[]"), int(port)


class HttpListener:
    """Started and stopped by :class:`~luoshod.server.app.Daemon`."""

    def __init__(
        self,
        address: str,
        service: AgentService,
        tokens: list[bytes],
        *,
        tls: ssl.SSLContext | None,
        allow_remote: bool,
        max_payload_bytes: int,
    ) -> None:
        self.host, self.port = check_http_listen(
            address, tls=tls is not None, auth=bool(tokens), allow_remote=allow_remote
        )
        self.tls = tls
        self.app = build_app(
            service, tokens, tls=tls is not None, max_payload_bytes=max_payload_bytes
        )
        # A caller who goes away cancels its handler, so a run it was reading is
        # interrupted at once, as a gRPC disconnect does.
        self.runner = web.AppRunner(
            self.app, handler_cancellation=True, access_log=None, shutdown_timeout=2.0
        )
        self.address: str | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = self.address.rsplit(":", 1)[1] if self.address else self.port
        return f"{'https' if self.tls else 'http'}://{host}:{port}"

    async def start(self) -> None:
        await self.runner.setup()
        site = web.TCPSite(
            self.runner, self.host, self.port, ssl_context=self.tls, reuse_port=False
        )
        try:
            await site.start()
        except OSError as e:
            await self.runner.cleanup()
            why = why_not_bound(f"{self.host}:{self.port}", "--http-listen") or e.strerror or str(e)
            raise ConfigError(
                f"http_listen: cannot listen on {self.host}:{self.port}: {why}"
            ) from None
        server = site._server  # noqa: SLF001 - aiohttp exposes the bound port only here
        if isinstance(server, asyncio.Server) and server.sockets:
            port = server.sockets[0].getsockname()[1]
        else:
            port = self.port
        self.address = f"{self.host}:{port}"

    async def stop(self) -> None:
        await self.runner.cleanup()
