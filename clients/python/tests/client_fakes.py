"""In-memory stand-ins for grpc channels, for what a real server cannot be made to do.

The generated stub only asks its channel for ``unary_stream`` and ``unary_unary``
callables, so a channel that answers from a script is a complete transport: streams
replay given responses (``HOLD`` waits until the call is cancelled, like a run waiting for
a tool result) and unary calls are answered by handlers (which may raise).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import grpc

HOLD = object()

Handler = Callable[[Any], Any]


def _name(method: str) -> str:
    return method.rsplit("/", 1)[-1]


class FakeAioStream:
    """A grpc.aio.UnaryStreamCall replaying ``items``; cancel() raises CancelledError in it."""

    def __init__(self, items: list[Any]) -> None:
        self._items = items
        self._cancelled = False
        self._waiter: asyncio.Future[None] | None = None

    def cancel(self) -> bool:
        self._cancelled = True
        if self._waiter is not None:
            self._waiter.cancel()
        return True

    def done(self) -> bool:
        return self._cancelled

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._replay()

    async def _replay(self) -> AsyncIterator[Any]:
        for item in self._items:
            if self._cancelled:
                raise asyncio.CancelledError
            if item is HOLD:
                self._waiter = asyncio.get_running_loop().create_future()
                await self._waiter
            else:
                yield item


class FakeAioChannel:
    def __init__(self, stream: list[Any], unary: dict[str, Handler] | None = None) -> None:
        self.stream = stream
        self.unary = unary or {}
        self.requests: list[tuple[str, Any]] = []

    def unary_stream(self, method: str, **_: Any) -> Callable[..., FakeAioStream]:
        def start(request: Any, metadata: Any = None) -> FakeAioStream:
            self.requests.append((_name(method), request))
            return FakeAioStream(self.stream)

        return start

    def unary_unary(self, method: str, **_: Any) -> Callable[..., Any]:
        async def call(request: Any, metadata: Any = None) -> Any:
            self.requests.append((_name(method), request))
            return self.unary[_name(method)](request)

        return call

    async def close(self) -> None:
        pass


class FakeStream:
    """The blocking twin: an iterator; cancel() makes it raise a CANCELLED RpcError."""

    def __init__(self, items: list[Any], cancelled_error: Callable[[], grpc.RpcError]) -> None:
        self._items = items
        self._cancelled = threading.Event()
        self._error = cancelled_error

    def cancel(self) -> bool:
        self._cancelled.set()
        return True

    def __iter__(self) -> Iterator[Any]:
        for item in self._items:
            if item is HOLD:
                self._cancelled.wait(30)
            if self._cancelled.is_set():
                raise self._error()
            if item is not HOLD:
                yield item


class FakeChannel:
    def __init__(
        self,
        stream: list[Any],
        unary: dict[str, Handler],
        cancelled_error: Callable[[], grpc.RpcError],
    ) -> None:
        self.stream = stream
        self.unary = unary
        self.cancelled_error = cancelled_error

    def unary_stream(self, method: str, **_: Any) -> Callable[..., FakeStream]:
        return lambda request, metadata=None: FakeStream(self.stream, self.cancelled_error)

    def unary_unary(self, method: str, **_: Any) -> Callable[..., Any]:
        return lambda request, metadata=None: self.unary[_name(method)](request)

    def close(self) -> None:
        pass
