"""What every HTTP request passes before a route sees it, and what every answer carries.

- **Tokens**: with bearer tokens configured, every ``/api/`` request carries
  ``Authorization: Bearer <token>``, checked by the gRPC listener's own
  :class:`~luoshod.server.auth.TokenAuth` (same tokens, same constant-time comparison,
  same ``TOKEN_REQUIRED``/``TOKEN_INVALID``), and the token's role against the role of the
  RPC the route calls (each route is named after it; ``ROLE_NOT_ALLOWED``, 403). The console's
  files hold no data and need
  none; the console keeps the token in the tab's ``sessionStorage`` and sends it as that
  header, never in a URL.
- **CSRF**: a state-changing request (``POST``, ``DELETE``…) from a browser — one that
  says where it comes from with ``Origin`` or ``Sec-Fetch-Site``, as every current browser
  does for these methods — must come from this origin and carry the ``X-CSRF-Token``
  header equal to the ``luoshod_csrf`` cookie (double submit: another site can neither
  read the cookie nor set the header without a CORS preflight, which is never granted).
  Programs (curl, scripts) send neither header and need no CSRF token: no site can make
  them send a request.
- **DNS rebinding**: without tokens, only requests addressed to ``localhost`` or an IP
  address are served, so a page whose name was rebound to 127.0.0.1 is refused.
- **Headers**: a Content-Security-Policy without inline scripts or styles and with no
  other origin, ``nosniff``, no referrer, no framing, and ``no-store`` on the API.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import secrets
from collections.abc import Awaitable, Callable

import grpc
from aiohttp import web

from ..server.auth import TokenAuth
from ..server.status import code_for
from .api import error_response
from .rpc import RpcFailure

log = logging.getLogger("luoshod.http")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors "
    "'none'"
)
CSRF_COOKIE = "luoshod_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _refused(reason: str, message: str) -> RpcFailure:
    return RpcFailure(grpc.StatusCode.PERMISSION_DENIED, reason, message)


def _is_api(request: web.Request) -> bool:
    return request.path.startswith("/api/")


class Guard:
    """The middleware and the response hook of the HTTP listener."""

    def __init__(self, tokens: list[bytes], *, tls: bool) -> None:
        self.auth = TokenAuth(tokens) if tokens else None
        self.tls = tls

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            self._check_host(request)
            if _is_api(request):
                if self.auth is not None:
                    header = request.headers.get("Authorization")
                    route = request.match_info.route.name or ""
                    # An unknown /api/ path (no route name) is checked as a token only; it
                    # answers NO_SUCH_ROUTE after.
                    refused = self.auth.accepts(
                        [("authorization", header)] if header else [], route.split(":", 1)[0]
                    )
                    if refused is not None:
                        raise RpcFailure(
                            code_for(refused), refused.reason, refused.message, refused.metadata
                        )
                if request.method not in SAFE_METHODS:
                    self._check_csrf(request)
            return await handler(request)
        except RpcFailure as e:
            return error_response(e)
        except web.HTTPException as e:
            if not _is_api(request):
                raise
            code = {404: grpc.StatusCode.NOT_FOUND, 405: grpc.StatusCode.UNIMPLEMENTED}.get(
                e.status, grpc.StatusCode.INVALID_ARGUMENT
            )
            reason = {404: "NO_SUCH_ROUTE", 405: "METHOD_NOT_ALLOWED"}.get(
                e.status, "INVALID_REQUEST"
            )
            failure = RpcFailure(code, reason, f"{request.method} {request.path}: {e.reason}")
            response = error_response(failure)
            response.set_status(e.status)
            return response
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception:  # noqa: BLE001 - the one boundary: logged, answered without a trace
            log.exception("HTTP %s %s failed", request.method, request.path)
            return error_response(
                RpcFailure(
                    grpc.StatusCode.INTERNAL, "INTERNAL", "internal error (see the daemon's log)"
                )
            )

    def _check_host(self, request: web.Request) -> None:
        if self.auth is not None:
            return
        host = (
            (request.host or "").rsplit(":", 1)[0]
            if not (request.host or "").endswith("]")
            else request.host
        )
        host = host.strip("[]").lower()
        if host == "localhost":
            return
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise _refused(
                "HOST_NOT_ALLOWED",
                f"requests for {host!r} are refused: without tokens this daemon answers only to "
                "localhost or an IP address (a guard against DNS rebinding); configure tokens",
            ) from None

    def _check_csrf(self, request: web.Request) -> None:
        origin = request.headers.get("Origin")
        site = request.headers.get("Sec-Fetch-Site")
        if origin is None and site is None:
            return  # not a browser
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            raise _refused(
                "CSRF_ORIGIN_MISMATCH", f"a request from {origin!r} may not change anything here"
            )
        if site is not None and site not in ("same-origin", "none"):
            raise _refused("CSRF_ORIGIN_MISMATCH", f"a {site} request may not change anything here")
        cookie = request.cookies.get(CSRF_COOKIE, "")
        header = request.headers.get(CSRF_HEADER, "")
        if not cookie or not header or not hmac.compare_digest(cookie.encode(), header.encode()):
            raise _refused(
                "CSRF_TOKEN_INVALID",
                f"a browser's request that changes something must carry the {CSRF_HEADER} header "
                f"equal to the {CSRF_COOKIE} cookie (reload the console)",
            )

    async def on_prepare(self, request: web.Request, response: web.StreamResponse) -> None:
        headers = response.headers
        headers["Content-Security-Policy"] = CSP
        headers["X-Content-Type-Options"] = "nosniff"
        headers["Referrer-Policy"] = "no-referrer"
        headers["X-Frame-Options"] = "DENY"
        headers["Cross-Origin-Opener-Policy"] = "same-origin"
        headers["Cross-Origin-Resource-Policy"] = "same-origin"
        if self.tls:
            headers["Strict-Transport-Security"] = "max-age=31536000"
        if _is_api(request):
            headers["Cache-Control"] = "no-store"

    def give_csrf_cookie(self, request: web.Request, response: web.StreamResponse) -> None:
        """The console's page hands the browser its CSRF token (kept while it has one)."""
        if not request.cookies.get(CSRF_COOKIE):
            response.set_cookie(
                CSRF_COOKIE,
                secrets.token_urlsafe(32),
                path="/",
                samesite="Strict",
                secure=self.tls,
                httponly=False,
            )
