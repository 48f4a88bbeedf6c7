"""Listening on the simulated network: a `Listener` per bound address, and the `Server`
`create_server` returns (asyncio's `AbstractServer`: `close`, `wait_closed`, `sockets`,
`serve_forever`, `start_serving`, and 3.13's `close_clients` and `abort_clients`).

A listener takes a connection only while its server serves; before `start_serving` and
after `close` a request is reset (refused), as a bound socket that does not listen resets
it. `wait_closed` waits, as 3.12's does, until the server is closed and every connection it
accepted is gone; on 3.11 it returns at once once closed, as 3.11's does.
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from invariants.aio.net.sockets import SimSocket
from invariants.aio.net.streams import StreamTransport

if TYPE_CHECKING:
    from invariants.aio.net.hosts import Host
    from invariants.aio.net.tcp import End

_WAITS_FOR_CLIENTS = sys.version_info >= (3, 12)


class Listener:
    """A bound (ip, port) on a host, and the protocol factory its connections get."""

    __slots__ = ("context", "factory", "host", "incarnation", "ip", "loop", "port", "server",
                 "serving")

    def __init__(self, loop: asyncio.AbstractEventLoop, host: Host, ip: str, port: int,
                 factory: Callable[[], asyncio.BaseProtocol], context: contextvars.Context,
                 ) -> None:
        self.loop = loop
        self.host = host
        self.incarnation = host.incarnation
        self.ip, self.port = ip, port
        self.factory = factory
        self.context = context  # where the server was made: its connections run there
        self.server: Server | None = None
        self.serving = False

    def accept(self, end: End) -> None:
        """A connection arrived: its protocol and transport, as the server's loop makes
        them (`connection_made` at a later step)."""
        end.context.run(self._accept, end)

    def _accept(self, end: End) -> None:
        loop = self.loop
        try:
            protocol = self.factory()
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            loop.call_exception_handler({
                "message": "Error on transport creation for incoming connection",
                "exception": exc,
            })
            end.close()
            return
        transport = StreamTransport(loop, end, protocol, self.server)
        loop.call_soon(transport.start, context=end.context)

    def unbind(self) -> None:
        self.serving = False
        if self.host.incarnation == self.incarnation:
            self.host.listeners.pop((self.ip, self.port), None)


class Server(asyncio.AbstractServer):
    """What `create_server` returns on the simulated network."""

    def __init__(self, loop: asyncio.AbstractEventLoop, listeners: list[Listener]) -> None:
        self._loop = loop
        self._listeners: list[Listener] | None = listeners
        self._clients: dict[int, StreamTransport] = {}  # insertion order: deterministic
        self._waiters: list[asyncio.Future[None]] | None = []
        self._serving = False
        self._serving_forever: asyncio.Future[None] | None = None
        for listener in listeners:
            listener.server = self

    def __repr__(self) -> str:
        return f"<Server sockets={self.sockets!r}>"

    def attach(self, transport: StreamTransport) -> None:
        self._clients[id(transport)] = transport

    def detach(self, transport: StreamTransport) -> None:
        self._clients.pop(id(transport), None)
        if not self._clients and self._listeners is None:
            self._wakeup()

    def _wakeup(self) -> None:
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def start(self) -> None:
        if self._serving or self._listeners is None:
            return
        self._serving = True
        for listener in self._listeners:
            listener.serving = True

    def get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def is_serving(self) -> bool:
        return self._serving

    @property
    def sockets(self) -> tuple[Any, ...]:
        if self._listeners is None:
            return ()
        return tuple(SimSocket(socket.SOCK_STREAM, (listener.ip, listener.port))
                     for listener in self._listeners)

    def close(self) -> None:
        listeners = self._listeners
        if listeners is None:
            return
        self._listeners = None
        for listener in listeners:
            listener.unbind()
        self._serving = False
        forever = self._serving_forever
        if forever is not None and not forever.done():
            forever.cancel()
            self._serving_forever = None
        if not self._clients:
            self._wakeup()

    def close_clients(self) -> None:
        for transport in list(self._clients.values()):
            transport.close()

    def abort_clients(self) -> None:
        for transport in list(self._clients.values()):
            transport.abort()

    async def start_serving(self) -> None:
        self.start()
        await asyncio.sleep(0)

    async def serve_forever(self) -> None:
        if self._serving_forever is not None:
            raise RuntimeError(f"server {self!r} is already being awaited on serve_forever()")
        if self._listeners is None:
            raise RuntimeError(f"server {self!r} is closed")
        self.start()
        self._serving_forever = self._loop.create_future()
        try:
            await self._serving_forever
        except asyncio.CancelledError:
            try:
                self.close()
                await self.wait_closed()
            finally:
                raise
        finally:
            self._serving_forever = None

    async def wait_closed(self) -> None:
        if self._waiters is None or (not _WAITS_FOR_CLIENTS and self._listeners is None):
            return
        waiter: asyncio.Future[None] = self._loop.create_future()
        self._waiters.append(waiter)
        await waiter
