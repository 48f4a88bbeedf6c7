"""The hosts of a simulated network, and which one the code running now is on.

Code runs on a host when the context it runs in says so (`Host.create_task`, or
`with host.entered():` for synchronous code): what it binds, it binds there, and what it
connects, it connects from there. The tasks it starts run there too, since asyncio copies
the context into every task.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from invariants.aio.net.resolve import ANY

if TYPE_CHECKING:
    from invariants.aio.net.servers import Listener
    from invariants.aio.net.udp import Endpoint

_T = TypeVar("_T")

_CURRENT: ContextVar[Host | None] = ContextVar("invariants_aio_net_host", default=None)

# Ports the hosts hand out for port 0 and for a connection's own end: the IANA dynamic range.
EPHEMERAL_FIRST, PORT_LAST = 49152, 65535
# How many tasks a host keeps before it forgets the finished ones.
_TASKS_KEPT = 64


def current_host() -> Host | None:
    """The host the code running now is on (None: none)."""
    return _CURRENT.get()


def host_of(context: contextvars.Context | None) -> Host | None:
    """The host `context` runs on (None: the current context)."""
    return _CURRENT.get() if context is None else context.get(_CURRENT)


class Crashable(Protocol):
    """A socket a host holds: when the host crashes it is gone."""

    def crashed(self) -> None: ...


class Host:
    """A named machine with one address. `up` until it crashes; each restart is a new
    `incarnation`, and sockets of an older one are gone (a segment for one is answered
    with a reset)."""

    def __init__(self, name: str, address: str, loop: Callable[[], asyncio.AbstractEventLoop]
                 ) -> None:
        self.name = name
        self.address = address
        self.up = True
        self.incarnation = 0
        self.listeners: dict[tuple[str, int], Listener] = {}  # bound TCP (ip, port)
        self.endpoints: dict[tuple[str, int], Endpoint] = {}  # bound UDP (ip, port)
        # The sockets alive on this incarnation, in the order they were made (a crash
        # closes them in that order: deterministic).
        self.sockets: dict[int, Crashable] = {}
        self.tasks: list[asyncio.Task[Any]] = []
        self._serial = itertools.count()
        self._ports = {"tcp": EPHEMERAL_FIRST, "udp": EPHEMERAL_FIRST}
        self._loop = loop

    def __repr__(self) -> str:
        state = "up" if self.up else "down"
        return f"<Host {self.name} {self.address} {state}>"

    # Code on this host.

    def create_task(self, coro: Coroutine[Any, Any, _T], *, name: str | None = None
                    ) -> asyncio.Task[_T]:
        """Run `coro` as a task on this host (on the loop the network is attached to)."""
        try:
            if not self.up:
                raise ValueError(f"create_task: host {self.name!r} is down (restart it first)")
            loop = self._loop()
        except (RuntimeError, ValueError):
            coro.close()  # it will never run: no "never awaited" warning either
            raise
        context = contextvars.copy_context()
        context.run(_CURRENT.set, self)
        return loop.create_task(coro, name=name, context=context)

    @contextmanager
    def entered(self) -> Iterator[Host]:
        """Synchronous code in this block runs on this host (and the tasks it creates)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    def track(self, task: asyncio.Task[Any]) -> None:
        """`task` runs on this host: a crash cancels it."""
        tasks = self.tasks
        tasks.append(task)
        if len(tasks) > _TASKS_KEPT and len(tasks) & (len(tasks) - 1) == 0:
            tasks[:] = [t for t in tasks if not t.done()]

    # Sockets.

    def hold(self, socket: Crashable) -> int:
        """Register a socket; the number to `release` it by."""
        serial = next(self._serial)
        self.sockets[serial] = socket
        return serial

    def release(self, serial: int) -> None:
        self.sockets.pop(serial, None)

    def listener_for(self, ip: str, port: int) -> Listener | None:
        """The serving listener a connection to (`ip`, `port`) reaches: one bound to that
        address, else one bound to every address."""
        for key in ((ip, port), (ANY, port)):
            listener = self.listeners.get(key)
            if listener is not None and listener.serving:
                return listener
        return None

    def port(self, protocol: str, bound: dict[tuple[str, int], Any]) -> int:
        """A free ephemeral port for `protocol` ("tcp" or "udp"), none of `bound`'s."""
        taken = {port for _ip, port in bound}
        port = self._ports[protocol]
        for _ in range(PORT_LAST - EPHEMERAL_FIRST + 1):
            if port > PORT_LAST:
                port = EPHEMERAL_FIRST
            if port not in taken:
                self._ports[protocol] = port + 1
                return port
            port += 1
        raise OSError(98, f"host {self.name!r} has no free {protocol} port left")

    # Faults.

    def crash(self) -> None:
        """Down, every socket gone without a word to its peer, every task cancelled."""
        self.up = False
        self.incarnation += 1
        sockets = list(self.sockets.values())
        self.sockets.clear()
        self.listeners.clear()
        self.endpoints.clear()
        for socket in sockets:
            socket.crashed()
        tasks, self.tasks = self.tasks, []
        for task in tasks:
            if not task.done():
                task.cancel()

    def restart(self) -> None:
        self.up = True
