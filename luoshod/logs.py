"""The daemon's log lines: text or one JSON object per line, each with the session, run
and step it is about when one is known.

The context comes from :mod:`contextvars` set where a run starts (the service sets the
session, the engine the run and each step), so every line logged on a run's behalf — by
the engine, a provider, the store — carries them without passing them around. A task
inherits the context of the code that created it, so the tasks of a run carry them too.

What a line never holds: secrets (keys and tokens are kept in :class:`~luoshod.config.Secret`
and never formatted) and, unless ``log_contents`` is set, what a run says — the HTTP
libraries under the model providers log request bodies at DEBUG, so they are held at INFO.
"""

from __future__ import annotations

import logging
import sys
import time
from contextvars import ContextVar
from typing import Any, TextIO

session_id: ContextVar[str | None] = ContextVar("session_id", default=None)
run_id: ContextVar[str | None] = ContextVar("run_id", default=None)
step: ContextVar[int | None] = ContextVar("step", default=None)

_CONTEXT = (("session_id", session_id), ("run_id", run_id), ("step", step))
#: Loggers that would print model requests and responses at DEBUG.
CHATTY = ("openai", "anthropic", "httpx", "httpcore")


def context() -> dict[str, Any]:
    """The run context of the current task: only what is known."""
    return {name: value for name, var in _CONTEXT if (value := var.get()) is not None}


class _ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.run_context = context()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, RFC 3339), level, logger, message, then the
    run context, then ``exc`` (the traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        import json  # not at the top: the CLI's start-up does without it

        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "run_context", {}),
        }
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``time level logger: message [session=… run=… step=…]``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        ctx = getattr(record, "run_context", {})
        if ctx:
            text += " [" + " ".join(f"{k.removesuffix('_id')}={v}" for k, v in ctx.items()) + "]"
        return text


def setup(
    level: str, fmt: str = "text", *, contents: bool = False, stream: TextIO | None = None
) -> None:
    """Configure the root logger of the ``luoshod`` process (replacing its handlers)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(_ContextFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    floor = logging.NOTSET if contents else logging.INFO
    for name in CHATTY:
        logging.getLogger(name).setLevel(floor)


__all__ = ["JsonFormatter", "TextFormatter", "context", "run_id", "session_id", "setup", "step"]
