"""Who did what: one INFO line on the ``luoshod.audit`` logger for each decision an
operator or an app takes about a session's life (approve, reject, delete, fork), naming
the caller as the daemon knows it: the subject of its mTLS client certificate, else the
bearer token it sent — by the first 8 hex digits of the token's SHA-256, never the token
(``printf %s "$TOKEN" | sha256sum | cut -c1-8`` tells which one) — else ``anonymous``.
"""

from __future__ import annotations

import hashlib
import logging

import grpc

log = logging.getLogger("luoshod.audit")


def caller(context: grpc.aio.ServicerContext) -> str:
    """The caller of ``context``'s RPC, for an audit line."""
    auth = context.auth_context() or {}
    subject = auth.get("x509_subject") or auth.get("x509_common_name")
    if subject:
        return f"mtls {subject[0].decode(errors='replace')}"
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            digest = hashlib.sha256(value.removeprefix("Bearer ").strip().encode()).hexdigest()[:8]
            return f"token sha256:{digest}"
    return "anonymous"


def record(action: str, context: grpc.aio.ServicerContext, **fields: object) -> None:
    """``audit: ACTION k=v … by=CALLER peer=ADDRESS``."""
    what = " ".join(f"{k}={v}" for k, v in fields.items())
    log.info("audit: %s %s by=%r peer=%s", action, what, caller(context), context.peer())


__all__ = ["caller", "record"]
