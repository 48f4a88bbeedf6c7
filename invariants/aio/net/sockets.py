"""What stands for a socket on the simulated network: its addresses, and no descriptor.

`Server.sockets` and a transport's `get_extra_info('socket')` give one, as asyncio gives a
`TransportSocket`: code that reads the port a server bound, or sets an option, works.
"""

from __future__ import annotations

import errno
import socket

Address = tuple[str, int]


class SimSocket:
    """A simulated socket's addresses. `setsockopt` has no effect (the network has no
    options to set); there is no file descriptor to read or write."""

    family = socket.AF_INET

    def __init__(self, kind: socket.SocketKind, local: Address, remote: Address | None = None
                 ) -> None:
        self.type = kind
        self.proto = socket.IPPROTO_TCP if kind == socket.SOCK_STREAM else socket.IPPROTO_UDP
        self._local = local
        self._remote = remote

    def __repr__(self) -> str:
        remote = f", raddr={self._remote}" if self._remote is not None else ""
        return (f"<SimSocket family={self.family.name}, type={self.type.name}, "
                f"laddr={self._local}{remote}>")

    def getsockname(self) -> Address:
        return self._local

    def getpeername(self) -> Address:
        if self._remote is None:
            raise OSError(errno.ENOTCONN, "Transport endpoint is not connected")
        return self._remote

    def fileno(self) -> int:
        return -1

    def setsockopt(self, *args: object) -> None:
        """No effect: the simulated network has no socket options."""
