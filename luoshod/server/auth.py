"""Bearer-token authentication: a server interceptor that lets a call through only with
``authorization: Bearer <token>`` naming one of the configured tokens.

Tokens are compared with :func:`hmac.compare_digest` against every configured token (no
early exit), so the time taken does not tell how much of a guess was right. The health
service stays open, for load balancers and Kubernetes probes that send no metadata, and so
does server reflection: it only describes the API, whose schema is public (the proto
files), and without it ``grpcurl HOST grpc.health.v1.Health/Check`` — which looks the
method up by reflection first — would need a token to ask whether the daemon is up.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Awaitable, Callable, Iterable
from enum import IntEnum
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health
from grpc_reflection.v1alpha import reflection

from ..config import ConfigError, Secret
from ..errors import PermissionDenied, Unauthenticated
from . import audit
from .status import to_status

#: Methods under these prefixes need no token: health, and reflection (both versions).
OPEN_PREFIXES = (
    f"/{health.SERVICE_NAME}/",
    f"/{reflection.SERVICE_NAME}/",
    "/grpc.reflection.v1.ServerReflection/",
)


#: ``NAME:TOKEN``: a token with the name the audit log calls its holder by.
_NAMED = re.compile(r"([A-Za-z0-9][A-Za-z0-9._@-]{0,63}):(.+)")


class Role(IntEnum):
    """What a token may do (R92); each role may do what the ones below it may.

    - ``read``: look (list, get, history, compare, watch, approvals and MCP servers listed);
    - ``operate``: also run and change sessions (execute, resume, submit a tool result,
      cancel, fork, dequeue an input, delete);
    - ``approve``: also decide approvals (resolve);
    - ``admin``: everything (the default of a token configured without a role).
    """

    READ = 1
    OPERATE = 2
    APPROVE = 3
    ADMIN = 4

    @property
    def label(self) -> str:
        return self.name.lower()


#: The role each RPC of ``AgentService`` needs; any other method needs ``admin``.
METHOD_ROLES: dict[str, Role] = {
    **dict.fromkeys(
        (
            "GetSession",
            "ListSessions",
            "History",
            "Compare",
            "Watch",
            "ListApprovals",
            "ListMcpServers",
            "ListSchedules",
        ),
        Role.READ,
    ),
    **dict.fromkeys(
        (
            "Execute",
            "Resume",
            "SubmitToolResult",
            "Cancel",
            "Fork",
            "DequeueInput",
            "DeleteSession",
            "Compact",
            "CreateSchedule",
            "PauseSchedule",
            "ResumeSchedule",
            "DeleteSchedule",
            "TriggerSchedule",
        ),
        Role.OPERATE,
    ),
    "Resolve": Role.APPROVE,
}
_ROLES = {r.label: r for r in Role}


def role_needed(method: str) -> Role:
    """The role ``method`` (``/pkg.Service/Name`` or ``Name``) needs."""
    return METHOD_ROLES.get(method.rsplit("/", 1)[-1], Role.ADMIN)


class Tokens(list[bytes]):
    """The configured tokens (what a match is checked against) and each one's role."""

    def __init__(
        self, tokens: Iterable[bytes] = (), roles: dict[bytes, Role] | None = None
    ) -> None:
        super().__init__(tokens)
        self.roles: dict[bytes, Role] = roles or {}

    def role(self, token: bytes) -> Role:
        return self.roles.get(token, Role.ADMIN)


def _split_role(entry: str) -> tuple[str, Role]:
    """``ENTRY ROLE`` -> (ENTRY, ROLE); an entry without a role is ``admin``."""
    words = entry.split()
    if len(words) == 1:
        return words[0], Role.ADMIN
    role = _ROLES.get(words[-1].lower()) if len(words) == 2 else None
    if role is None:
        raise ConfigError(
            "auth_tokens: an entry is TOKEN or NAME:TOKEN, then optionally one role of "
            f"{', '.join(_ROLES)} after a space; got {len(words)} words"
            + (f" ending {words[-1]!r}" if len(words) == 2 else "")
        )
    return words[0], role


def load_tokens(inline: Iterable[Secret], token_file: Path | None) -> Tokens:
    """The configured tokens: ``inline`` ones and the file's non-blank lines (``#``
    starts a comment line). Each is ``TOKEN`` or ``NAME:TOKEN`` (split at the first ``:``;
    a name is a letter or digit then up to 63 of letters, digits and ``._@-``), then
    optionally a space and a role (:class:`Role`: ``read``, ``operate``, ``approve``,
    ``admin``, the default). The names are handed to :func:`.audit.name_tokens`, so audit
    lines and recorded decisions say ``token NAME``. A named entry is accepted whole as
    well as its ``TOKEN`` part, so a secret that happens to contain a colon works as it
    did before names existed. Raises ``ConfigError`` (for a name given twice too)."""
    entries = [t.reveal() for t in inline]
    if token_file is not None:
        try:
            lines = token_file.read_text().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError(
                f"auth_token_file: cannot read {token_file}: {getattr(e, 'strerror', None) or e}"
            ) from None
        from_file = [
            line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")
        ]
        if not from_file:
            raise ConfigError(f"auth_token_file: {token_file} holds no token")
        entries += from_file
    tokens = Tokens()
    names: dict[bytes, str] = {}
    for line in entries:
        entry, role = _split_role(line.strip())
        named = _NAMED.fullmatch(entry)
        name, token = (named.group(1), named.group(2)) if named else ("", entry)
        if not token or any(c.isspace() for c in token):
            raise ConfigError("auth_tokens: a token is non-empty and has no whitespace")
        if name:
            if name in names.values():
                raise ConfigError(
                    f"auth_tokens: the token name {name!r} is given twice; each token's name is "
                    "its own"
                )
            names[token.encode()] = name
            # The whole entry stays a valid token too: a secret that merely looks like
            # NAME:TOKEN, configured before names existed, keeps working (both forms
            # need the secret, so accepting both grants nothing more).
            names[entry.encode()] = name
            tokens.append(entry.encode())
            tokens.roles[entry.encode()] = role
        tokens.append(token.encode())
        tokens.roles[token.encode()] = role
    audit.name_tokens(names)
    return tokens


class TokenAuth(grpc.aio.ServerInterceptor):
    def __init__(self, tokens: list[bytes]) -> None:
        self._tokens = tokens
        self._roles = tokens.roles if isinstance(tokens, Tokens) else {}

    def accepts(
        self, metadata: Iterable[tuple[str, Any]], method: str = ""
    ) -> Unauthenticated | PermissionDenied | None:
        """``None`` when the metadata carries a valid token whose role allows ``method``
        (none given: any valid token), else the error to answer."""
        values = [v for k, v in metadata if k == "authorization"]
        if not values:
            return Unauthenticated(
                "this daemon requires a bearer token: send metadata 'authorization: Bearer "
                "<token>'",
                reason="TOKEN_REQUIRED",
            )
        scheme, _, token = str(values[0]).partition(" ")
        offered = token.strip().encode()
        # Every token compared, whatever the outcome of the others.
        matched = [hmac.compare_digest(offered, t) for t in self._tokens]
        if scheme.lower() != "bearer" or not any(matched):
            return Unauthenticated("the bearer token is not valid", reason="TOKEN_INVALID")
        if not method:
            return None
        role = self._roles.get(self._tokens[matched.index(True)], Role.ADMIN)
        needed = role_needed(method)
        if role >= needed:
            return None
        name = method.rsplit("/", 1)[-1]
        return PermissionDenied(
            f"this token's role is {role.label}; {name} needs {needed.label} "
            f"(roles: {', '.join(_ROLES)}, each allowing what the ones before it do)",
            method=name,
            role=role.label,
            needed=needed.label,
        )

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(details)
        if handler is None or details.method.startswith(OPEN_PREFIXES):
            return handler
        refused = self.accepts(details.invocation_metadata or (), details.method)
        return handler if refused is None else _refusing(handler, to_status(refused))


def _refusing(handler: grpc.RpcMethodHandler, status: grpc.Status) -> grpc.RpcMethodHandler:
    """A handler of the same shape as ``handler`` that answers ``status``."""

    async def unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort_with_status(status)

    async def streaming(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort_with_status(status)
        yield  # pragma: no cover - makes this an async generator; abort raises

    codec = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary:
        return grpc.unary_unary_rpc_method_handler(unary, **codec)
    if handler.unary_stream:
        return grpc.unary_stream_rpc_method_handler(streaming, **codec)
    if handler.stream_unary:
        return grpc.stream_unary_rpc_method_handler(unary, **codec)
    return grpc.stream_stream_rpc_method_handler(streaming, **codec)
