"""The loop's networking methods on the simulated network: `create_connection`,
`create_server`, `create_datagram_endpoint`, `getaddrinfo`, `getnameinfo` (and so
`asyncio.open_connection` and `start_server`), as a loop with a network attached has them.

Each takes the arguments asyncio's does. What the network does not simulate (TLS, a socket
of the program's own, Unix or IPv6 addresses) is a `FencedCall` naming it, as the loop's
fences are; so is a call from code on no host, which has nowhere to connect from.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
import socket
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NoReturn

from invariants.aio import outside
from invariants.aio.fences import fenced_call
from invariants.aio.net.hosts import Host, current_host
from invariants.aio.net.resolve import ANY, LOOPBACK, Address, AddrInfo, Names, port_number
from invariants.aio.net.servers import Listener, Server
from invariants.aio.net.streams import StreamTransport
from invariants.aio.net.tcp import Connection, Kind
from invariants.aio.net.udp import DatagramTransport, Endpoint, Post

if TYPE_CHECKING:
    from invariants.aio.loop import VirtualLoop
    from invariants.aio.net.wire import Wire

Factory = Callable[[], asyncio.BaseProtocol]


class Calls:
    """The network's half of a loop: its methods, bound to one loop and one network."""

    def __init__(self, loop: VirtualLoop, wire: Wire, names: Names, window: int) -> None:
        self.loop = loop
        self.wire = wire
        self.names = names
        self.window = window
        self.post = Post(wire, names.route)

    # Where the call comes from.

    def _refuse(self, call: str, what: str) -> NoReturn:
        site = outside.call_site(sys._getframe(2))
        raise fenced_call(self.loop, call, f"{what} (called in {site})")

    def _here(self, call: str) -> Host:
        host = current_host()
        if host is None:
            self._refuse(call, "a network call from code on no host of the simulated network, "
                               "which has nowhere to connect or bind from: run it on a host "
                               "(net.host('n1').create_task(...))")
        if not host.up:
            raise OSError(errno.ENETDOWN, f"Network is down: host {host.name!r} is down")
        return host

    def _not_simulated(self, call: str, **given: Any) -> None:
        for name, value in given.items():
            if value is not None and value is not False:
                self._refuse(call, f"{name}= is not simulated by the network "
                                   "(plain TCP and UDP over IPv4 only)")

    # Names.

    async def getaddrinfo(self, host: Any, port: Any, *, family: int = 0, type: int = 0,
                          proto: int = 0, flags: int = 0) -> list[AddrInfo]:
        return self.names.addrinfo(host, port, family, type, proto, flags)

    async def getnameinfo(self, sockaddr: Any, flags: int = 0) -> tuple[str, str]:
        return self.names.nameinfo(sockaddr, flags)

    # Streams.

    async def create_connection(
        self, protocol_factory: Factory, host: Any = None, port: Any = None, *,
        ssl: Any = None, family: int = 0, proto: int = 0, flags: int = 0, sock: Any = None,
        local_addr: Any = None, server_hostname: Any = None, **options: Any,
    ) -> tuple[asyncio.Transport, asyncio.BaseProtocol]:
        """Connect from the host the caller runs on; returns once `connection_made` ran,
        as asyncio's does. A refusal is `ConnectionRefusedError`; an unknown name
        `socket.gaierror`; an address no host has `OSError` (EHOSTUNREACH)."""
        call = "create_connection"
        self._not_simulated(call, ssl=ssl, sock=sock, server_hostname=server_hostname)
        here = self._here(call)
        _family(self, call, family)
        if host is None or port is None:
            raise ValueError("host and port was not specified and no sock specified")
        ip, number = self.names.address(host), port_number(port)
        target = self.names.route(ip, here)
        if target is None:
            raise OSError(errno.EHOSTUNREACH, f"Connect call failed {(ip, number)}: no host "
                                              "of the simulated network has this address")
        local_ip = LOOPBACK if ip == LOOPBACK else here.address
        local_port = 0
        if local_addr is not None:
            local_ip, local_port = self._bind_address(call, here, local_addr, stream=True)
        if not local_port:
            local_port = here.port("tcp", here.listeners)
        context = contextvars.copy_context()
        conn = Connection(self.wire, self.window, here, (local_ip, local_port), target,
                          (ip, number), context)
        end = conn.client
        end.waiter = self.loop.create_future()
        conn.up.send(Kind.SYN)
        try:
            await end.waiter
        except BaseException:
            end.close()  # a connect given up: its answer, if any, meets no socket
            raise
        protocol = protocol_factory()
        transport = StreamTransport(self.loop, end, protocol)
        await self._started(transport.start, end.context, transport)
        return transport, protocol

    async def _started(self, start: Callable[[], None], context: contextvars.Context,
                       transport: asyncio.BaseTransport) -> None:
        """`connection_made` at the next step, and the caller on at the one after, as
        asyncio's loops do; a caller cancelled meanwhile closes the transport."""
        self.loop.call_soon(start, context=context)
        waiter: asyncio.Future[None] = self.loop.create_future()
        self.loop.call_soon(_set_unless_cancelled, waiter)
        try:
            await waiter
        except BaseException:
            transport.close()
            raise

    async def create_server(
        self, protocol_factory: Factory, host: Any = None, port: Any = None, *,
        family: int = socket.AF_UNSPEC, flags: int = socket.AI_PASSIVE, sock: Any = None,
        backlog: int = 100, ssl: Any = None, reuse_address: Any = None,
        reuse_port: Any = None, start_serving: bool = True, **options: Any,
    ) -> Server:
        """Listen on the host the caller runs on: on every address for `host` None or
        "0.0.0.0", else on the address(es) given, each of which must be this host's."""
        call = "create_server"
        self._not_simulated(call, ssl=ssl, sock=sock)
        here = self._here(call)
        _family(self, call, family)
        hosts: Iterable[Any] = [host] if host is None or isinstance(host, str) else host
        number = port_number(port)
        context = contextvars.copy_context()
        listeners: list[Listener] = []
        try:
            for name in hosts:
                ip = self._own_address(here, name, number)
                bound = number or here.port("tcp", here.listeners)
                if _in_use(here.listeners, ip, bound):
                    raise OSError(errno.EADDRINUSE, f"error while attempting to bind on "
                                                    f"address {(ip, bound)!r}: address "
                                                    "already in use")
                listener = Listener(self.loop, here, ip, bound, protocol_factory, context)
                here.listeners[ip, bound] = listener
                listeners.append(listener)
        except BaseException:
            for listener in listeners:
                listener.unbind()
            raise
        server = Server(self.loop, listeners)
        if start_serving:
            server.start()
            await asyncio.sleep(0)
        return server

    def _own_address(self, here: Host, name: Any, port: int) -> str:
        """The address `name` stands for, which must be one of `here`'s to bind to."""
        ip = self.names.address(name, passive=True)
        if ip not in (ANY, LOOPBACK, here.address):
            raise OSError(errno.EADDRNOTAVAIL, f"error while attempting to bind on address "
                                                f"{(ip, port)!r}: cannot assign requested "
                                                "address")
        return ip

    def _bind_address(self, call: str, here: Host, address: Any, *, stream: bool
                      ) -> Address:
        if not (isinstance(address, tuple) and len(address) == 2):
            self._refuse(call, f"a local address {address!r} that is no (host, port) pair")
        port = port_number(address[1])
        return self._own_address(here, address[0], port), port

    # Datagrams.

    async def create_datagram_endpoint(
        self, protocol_factory: Factory, local_addr: Any = None, remote_addr: Any = None, *,
        family: int = 0, proto: int = 0, flags: int = 0, reuse_address: Any = None,
        reuse_port: Any = None, allow_broadcast: Any = None, sock: Any = None,
    ) -> tuple[asyncio.DatagramTransport, asyncio.BaseProtocol]:
        call = "create_datagram_endpoint"
        self._not_simulated(call, sock=sock, allow_broadcast=allow_broadcast)
        here = self._here(call)
        _family(self, call, family)
        remote: Address | None = None
        if remote_addr is not None:
            remote = self._address_of(call, remote_addr)
        if local_addr is not None:
            ip, port = self._bind_address(call, here, local_addr, stream=False)
        else:
            ip, port = ANY, 0
            if remote is not None:
                ip = LOOPBACK if remote[0] == LOOPBACK else here.address
        port = port or here.port("udp", here.endpoints)
        if _in_use(here.endpoints, ip, port):
            raise OSError(errno.EADDRINUSE, f"error while attempting to bind on address "
                                            f"{(ip, port)!r}: address already in use")
        context = contextvars.copy_context()
        endpoint = Endpoint(here, (ip, port), remote, context)
        here.endpoints[ip, port] = endpoint
        protocol = protocol_factory()
        transport = DatagramTransport(
            self.loop, endpoint, self.post, protocol,
            lambda address: self._address_of("sendto", address),
        )
        await self._started(transport.start, context, transport)
        return transport, protocol

    def _address_of(self, call: str, address: Any) -> Address:
        if not (isinstance(address, tuple) and len(address) == 2):
            self._refuse(call, f"an address {address!r} that is no (host, port) pair")
        return self.names.address(address[0]), port_number(address[1])


def _family(calls: Calls, call: str, family: int) -> None:
    if family not in (0, socket.AF_UNSPEC, socket.AF_INET):
        calls._refuse(call, f"address family {family!r} is not simulated by the network "
                            "(IPv4 only)")


def _in_use(bound: dict[tuple[str, int], Any], ip: str, port: int) -> bool:
    """Whether (`ip`, `port`) overlaps something bound: the same address, or either one
    every address."""
    return any(p == port and (i == ip or ANY in (i, ip)) for i, p in bound)


def _set_unless_cancelled(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.set_result(None)
