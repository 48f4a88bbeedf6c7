"""Names and addresses on the simulated network: what `getaddrinfo` and `getnameinfo`
answer, and which host an address reaches.

A host's name resolves to its address; `localhost` to 127.0.0.1, the host a connection is
made from; an IPv4 literal to itself. Any other name is `socket.gaierror` (EAI_NONAME, as
for a name no DNS knows), whose message names the simulated hosts; IPv6 is not simulated.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from invariants.aio.net.hosts import Host

LOOPBACK = "127.0.0.1"
ANY = "0.0.0.0"
Address = tuple[str, int]
AddrInfo = tuple[socket.AddressFamily, socket.SocketKind, int, str, Address]

_KINDS = {
    socket.SOCK_STREAM: socket.IPPROTO_TCP,
    socket.SOCK_DGRAM: socket.IPPROTO_UDP,
    socket.SOCK_RAW: 0,
}


class Names:
    """The hosts by name and by address."""

    def __init__(self, hosts: Mapping[str, Host]) -> None:
        self.hosts = hosts

    def by_address(self, ip: str) -> Host | None:
        for host in self.hosts.values():
            if host.address == ip:
                return host
        return None

    def address(self, name: object, *, passive: bool = False) -> str:
        """The IPv4 address `name` stands for; `socket.gaierror` if none."""
        if name is None or name == "":
            return ANY if passive else LOOPBACK
        if isinstance(name, bytes):
            name = name.decode("idna")
        if not isinstance(name, str):
            raise TypeError(f"getaddrinfo() argument 1 must be string or None, got {name!r}")
        host = self.hosts.get(name)
        if host is not None:
            return host.address
        if name == "localhost":
            return LOOPBACK
        try:
            ip = ipaddress.ip_address(name)
        except ValueError:
            known = ", ".join(self.hosts) or "none"
            raise socket.gaierror(
                socket.EAI_NONAME,
                f"Name or service not known: {name!r} is no host of the simulated network "
                f"(its hosts: {known})",
            ) from None
        if ip.version != 4:
            raise socket.gaierror(
                socket.EAI_FAMILY,
                f"Address family for hostname not supported: {name!r} (the simulated "
                "network is IPv4 only)",
            )
        return str(ip)

    def route(self, ip: str, here: Host) -> Host | None:
        """The host a packet to `ip` from `here` reaches (None: no host has it)."""
        if ip == LOOPBACK or ip == here.address:
            return here
        return self.by_address(ip)

    def addrinfo(self, host: object, port: object, family: int = 0, type: int = 0,
                 proto: int = 0, flags: int = 0) -> list[AddrInfo]:
        if family not in (0, socket.AF_INET):
            raise socket.gaierror(
                socket.EAI_FAMILY,
                f"Address family for hostname not supported: family {family} (the simulated "
                "network is IPv4 only)",
            )
        ip = self.address(host, passive=bool(flags & socket.AI_PASSIVE))
        number = port_number(port)
        kinds = [socket.SocketKind(type)] if type else list(_KINDS)
        return [
            (socket.AF_INET, kind, proto or _KINDS.get(kind, 0), "", (ip, number))
            for kind in kinds
            if not proto or proto == _KINDS.get(kind)
        ]

    def nameinfo(self, sockaddr: Any, flags: int = 0) -> tuple[str, str]:
        """(host, port) for `sockaddr`: a simulated host's name (`localhost` for
        127.0.0.1), else the numeric address; the port is always numeric."""
        if not (isinstance(sockaddr, tuple) and len(sockaddr) >= 2):
            raise TypeError("getnameinfo() argument 1 must be a tuple")
        ip, port = self.address(sockaddr[0]), port_number(sockaddr[1])
        name = ip
        if not flags & socket.NI_NUMERICHOST:
            host = self.by_address(ip)
            name = host.name if host is not None else "localhost" if ip == LOOPBACK else ip
        if name == ip and flags & socket.NI_NAMEREQD:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return name, str(port)


def port_number(port: object) -> int:
    """A port given as an int, a string of digits or None (0)."""
    if port is None:
        return 0
    if isinstance(port, bytes):
        port = port.decode()
    if isinstance(port, str) and port.isdigit():
        port = int(port)
    if isinstance(port, int) and not isinstance(port, bool) and 0 <= port <= 65535:
        return port
    raise socket.gaierror(
        socket.EAI_SERVICE,
        f"Servname not supported for ai_socktype: {port!r} (the simulated network takes "
        "port numbers only)",
    )
