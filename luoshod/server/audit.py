"""Who did what: one INFO line on the ``luoshod.audit`` logger for each decision an
operator or an app takes about a session's life (approve, reject, delete, fork), naming
the caller as the daemon knows it: the subject of its mTLS client certificate, else the
bearer token it sent — by the name the configuration gives it (``NAME:TOKEN``, e.g.
``token ana``), else by the first 8 hex digits of the token's SHA-256 (``printf %s
"$TOKEN" | sha256sum | cut -c1-8`` tells which one), never by the token itself — else
``anonymous``.
"""

from __future__ import annotations

import hashlib
import logging

import grpc

log = logging.getLogger("luoshod.audit")

#: SHA-256 of a configured token → its name. Keyed by the digest, so the tokens
#: themselves are not kept here; filled by ``auth.load_tokens`` when a daemon is built.
_NAMES: dict[str, str] = {}


def _digest(token: bytes) -> str:
    return hashlib.sha256(token).hexdigest()


def name_tokens(names: dict[bytes, str]) -> None:
    """Remember the names of configured tokens (token → name) for :func:`caller`."""
    _NAMES.update({_digest(token): name for token, name in names.items()})


def caller(context: grpc.aio.ServicerContext) -> str:
    """The caller of ``context``'s RPC, for an audit line."""
    auth = context.auth_context() or {}
    subject = auth.get("x509_subject") or auth.get("x509_common_name")
    if subject:
        return f"mtls {next(iter(subject)).decode(errors='replace')}"
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            digest = _digest(value.removeprefix("Bearer ").strip().encode())
            name = _NAMES.get(digest)
            return f"token {name}" if name else f"token sha256:{digest[:8]}"
    return "anonymous"


def record(action: str, context: grpc.aio.ServicerContext, **fields: object) -> None:
    """``audit: ACTION k=v … by=CALLER peer=ADDRESS``."""
    what = " ".join(f"{k}={v}" for k, v in fields.items())
    log.info("audit: %s %s by=%r peer=%s", action, what, caller(context), context.peer())


__all__ = ["caller", "name_tokens", "record"]
