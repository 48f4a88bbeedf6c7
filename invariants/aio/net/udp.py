"""UDP on the simulated network: datagram endpoints and their transports.

A datagram may be lost, duplicated or reordered, and only by the chooser's verdict (or a
partition, or its destination being down): a healthy network delivers each once, after its
link's latency. One sent to a port nobody has bound is dropped; a connected endpoint then
gets `error_received(ConnectionRefusedError)`, as Linux reports the ICMP answer to one.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import socket
from asyncio.log import logger
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from invariants.aio.net.sockets import SimSocket
from invariants.aio.net.wire import Flight, Route, Wire

if TYPE_CHECKING:
    from invariants.aio.net.hosts import Host

Address = tuple[str, int]
_CONNLOST_WRITES_LOGGED = 5


class Datagram:
    __slots__ = ("data", "dst", "sender", "src", "src_host")

    def __init__(self, data: bytes, src: Address, dst: Address, src_host: Host,
                 sender: Endpoint | None) -> None:
        self.data = data
        self.src, self.dst = src, dst
        self.src_host = src_host
        self.sender = sender  # a connected endpoint told of a refusal


class Endpoint:
    """A bound UDP (ip, port) on a host, connected to `remote` or not."""

    def __init__(self, host: Host, local: Address, remote: Address | None,
                 context: contextvars.Context) -> None:
        self.host = host
        self.incarnation = host.incarnation
        self.local, self.remote = local, remote
        self.context = context
        self.transport: DatagramTransport | None = None

    @property
    def alive(self) -> bool:
        return self.host.up and self.host.incarnation == self.incarnation


class Post:
    """How datagrams travel: routing an address to its host, and the wire."""

    def __init__(self, wire: Wire, route: Callable[[str, Host], Host | None]) -> None:
        self.wire = wire
        self.route = route  # the host an IPv4 address reaches from a host (None: none)
        # Per (from host, to host): the way datagrams take, and the way a refusal takes.
        self._routes: dict[tuple[str, str, bool], Route] = {}

    def send(self, endpoint: Endpoint, data: bytes, dst: Address) -> None:
        src_host = endpoint.host
        dst_host = self.route(dst[0], src_host)
        if dst_host is None:  # no host has the address: the datagram goes nowhere
            return
        src = src_host.name, dst_host.name
        what = f"datagram {src[0]}→{src[1]} ({len(data)} bytes)"
        sender = endpoint if endpoint.remote is not None else None
        datagram = Datagram(data, _source(endpoint, dst, dst_host), dst, src_host, sender)
        self.wire.send(Flight(self._route(*src), what, datagram))

    def _route(self, src: str, dst: str, refusal: bool = False) -> Route:
        route = self._routes.get((src, dst, refusal))
        if route is None:
            arrive: Callable[[Any], None] = _unreachable if refusal else self._arrive
            route = self._routes[src, dst, refusal] = Route(self.wire, src, dst, arrive,
                                                             stream=False)
        return route

    def _arrive(self, datagram: Datagram) -> None:
        host = self.route(datagram.dst[0], datagram.src_host)
        assert host is not None
        ip, port = datagram.dst
        endpoint = host.endpoints.get((ip, port)) or host.endpoints.get(("0.0.0.0", port))
        if endpoint is None or not endpoint.alive or endpoint.transport is None:
            self._refused(datagram, host)
            return
        if endpoint.remote is not None and endpoint.remote != datagram.src:
            return  # a connected socket takes only its peer's datagrams
        endpoint.context.run(endpoint.transport.received, datagram.data, datagram.src)

    def _refused(self, datagram: Datagram, host: Host) -> None:
        sender = datagram.sender
        if sender is None:
            return
        what = f"port unreachable {host.name}→{sender.host.name}"
        answer = Flight(self._route(host.name, sender.host.name, refusal=True), what, sender,
                        judged=True)
        self.wire.send(answer)


def _source(endpoint: Endpoint, dst: Address, dst_host: Host) -> Address:
    """The address a datagram comes from: the endpoint's, with the host's own address for
    an endpoint bound to every address."""
    ip, port = endpoint.local
    if ip == "0.0.0.0":
        ip = "127.0.0.1" if dst[0] == "127.0.0.1" else endpoint.host.address
    return ip, port


def _unreachable(sender: Endpoint) -> None:
    transport = sender.transport
    if sender.alive and transport is not None:
        sender.context.run(transport.refused)


class DatagramTransport(asyncio.DatagramTransport):
    """A simulated UDP endpoint, as asyncio's datagram protocols see it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, endpoint: Endpoint, post: Post,
                 protocol: asyncio.BaseProtocol,
                 resolve: Callable[[Any], Address]) -> None:
        super().__init__({
            "sockname": endpoint.local, "peername": endpoint.remote,
            "socket": SimSocket(socket.SOCK_DGRAM, endpoint.local, endpoint.remote),
        })
        self._loop = loop
        self._endpoint = endpoint
        self._post = post
        self._protocol: Any = protocol
        self._resolve = resolve
        self._closing = False
        self._conn_lost = 0
        self._started = False
        self._early: list[tuple[bytes, Address]] = []  # arrived before connection_made
        endpoint.transport = self
        self._serial = endpoint.host.hold(self)

    def __repr__(self) -> str:
        return f"<DatagramTransport {self._endpoint.local}>"

    def start(self) -> None:
        self._protocol.connection_made(self)
        self._started = True
        early, self._early = self._early, []
        for data, address in early:
            self.received(data, address)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._protocol = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        protocol: asyncio.BaseProtocol = self._protocol
        return protocol

    def get_write_buffer_size(self) -> int:
        return 0  # a datagram goes on the wire at once

    def is_closing(self) -> bool:
        return self._closing

    def sendto(self, data: bytes | bytearray | memoryview, addr: Any = None) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"data argument must be a bytes-like object, "
                            f"not {type(data).__name__!r}")
        if not data:
            return
        remote = self._endpoint.remote
        if remote is not None:
            if addr not in (None, remote):
                raise ValueError(f"Invalid address: must be None or {remote}")
            addr = remote
        if self._conn_lost:
            if self._conn_lost >= _CONNLOST_WRITES_LOGGED:
                logger.warning("socket.send() raised exception.")
            self._conn_lost += 1
            return
        if addr is None:
            self._fatal_error(TypeError("sendto(): AF_INET address must be tuple, not NoneType"))
            return
        try:
            address = self._resolve(addr)
        except OSError as exc:
            self._protocol.error_received(exc)
            return
        self._post.send(self._endpoint, bytes(data), address)

    def received(self, data: bytes, address: Address) -> None:
        if not self._started:
            self._early.append((data, address))
        elif not self._closing:
            self._protocol.datagram_received(data, address)

    def refused(self) -> None:
        if not self._closing:
            self._protocol.error_received(
                ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"))

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._conn_lost += 1
        self._loop.call_soon(self._call_connection_lost, None,
                             context=self._endpoint.context)

    def abort(self) -> None:
        self.close()

    def crashed(self) -> None:
        self._closing = True
        if not self._conn_lost:
            self._conn_lost += 1
            self._loop.call_soon(
                self._call_connection_lost,
                ConnectionAbortedError(errno.ECONNABORTED,
                                       f"host {self._endpoint.host.name!r} crashed"),
                context=self._endpoint.context)

    def _fatal_error(self, exc: BaseException) -> None:
        self._loop.call_exception_handler({
            "message": "Fatal write error on datagram transport", "exception": exc,
            "transport": self, "protocol": self._protocol,
        })
        self._closing = True
        self._conn_lost += 1
        self._loop.call_soon(self._call_connection_lost, exc, context=self._endpoint.context)

    def _call_connection_lost(self, exc: BaseException | None) -> None:
        try:
            self._protocol.connection_lost(exc)
        finally:
            endpoint = self._endpoint
            host = endpoint.host
            host.release(self._serial)
            if endpoint.alive and host.endpoints.get(endpoint.local) is endpoint:
                del host.endpoints[endpoint.local]
