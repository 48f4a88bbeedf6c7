"""`Network`: named hosts on a simulated IPv4 network, carried by a virtual loop.

`net.attach(loop)` gives the loop the network's `create_connection`, `create_server`,
`create_datagram_endpoint`, `getaddrinfo` and `getnameinfo` in place of its fences (so
`asyncio.open_connection` and `start_server` work) and has it note which host each task
runs on; a loop without a network is unchanged. The faults are plain calls the harness
makes between steps, or the program makes in a step: `partition`, `heal`, `slow`, `hold`,
`release`, `crash`, `restart`.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from contextvars import Context
from typing import Any, TypeVar

from invariants.aio import arguments
from invariants.aio.lanes import JudgedTimer
from invariants.aio.loop import VirtualLoop
from invariants.aio.net.calls import Calls
from invariants.aio.net.hosts import Host, host_of
from invariants.aio.net.resolve import Names
from invariants.aio.net.wire import Link, Links, Wire

_T = TypeVar("_T")

DEFAULT_LATENCY_MS = 1
# What a hold of a segment (or a delay of a datagram) may take: one a little longer than a
# hop, which reorders it against other connections' traffic, and one longer than a short
# timeout.
DEFAULT_HOLDS_MS = (5, 3000)
DEFAULT_WINDOW = 64 * 1024  # bytes a sender may have in flight or unread at the receiver

# The loop methods the network takes over from the fences.
_CALLS = ("create_connection", "create_server", "create_datagram_endpoint", "getaddrinfo",
          "getnameinfo")


class Network:
    """Hosts with addresses from `subnet`; every link `latency_ms` long unless slowed;
    `holds_ms`, the holds a verdict may give a segment; `window`, TCP's window in bytes."""

    def __init__(
        self, *, latency_ms: int = DEFAULT_LATENCY_MS,
        holds_ms: Sequence[int] = DEFAULT_HOLDS_MS, window: int = DEFAULT_WINDOW,
        subnet: str = "10.0.0.0/16",
    ) -> None:
        latency = arguments.whole("Network", "latency_ms", latency_ms, "milliseconds")
        self.holds_ms = tuple(arguments.whole("Network", "holds_ms", ms, "milliseconds")
                              for ms in holds_ms)
        if not self.holds_ms or any(ms == 0 for ms in self.holds_ms):
            raise ValueError(f"Network: holds_ms must be one or more holds > 0 ms, "
                             f"got {holds_ms!r}")
        if arguments.whole("Network", "window", window, "bytes") == 0:
            raise ValueError("Network: window must be > 0 bytes, got 0")
        self.window = window
        try:
            self._addresses = ipaddress.IPv4Network(subnet).hosts()
        except ValueError as error:
            raise ValueError(f"Network: subnet {subnet!r} is no IPv4 network: {error}") from None
        self._hosts: dict[str, Host] = {}
        self.links = Links(latency * 1000)
        self._loop: VirtualLoop | None = None
        self._wire: Wire | None = None

    def __repr__(self) -> str:
        return f"<Network hosts={list(self._hosts)}>"

    # Hosts.

    def host(self, name: str) -> Host:
        """The host named `name`, made with the next address on first use."""
        host = self._hosts.get(name)
        if host is not None:
            return host
        if not isinstance(name, str) or not name or name != name.strip() or " " in name:
            raise ValueError(f"host: a host name is a non-empty string without spaces, "
                             f"got {name!r}")
        if name == "localhost" or _is_address(name):
            raise ValueError(f"host: {name!r} is an address, not a host name")
        address = str(next(self._addresses, None) or "")
        if not address:
            raise ValueError(f"host: the subnet has no address left for {name!r}")
        host = self._hosts[name] = Host(name, address, lambda: self.loop)
        return host

    @property
    def hosts(self) -> Mapping[str, Host]:
        return self._hosts

    def _named(self, call: str, name: str) -> Host:
        host = self._hosts.get(name)
        if host is None:
            raise ValueError(f"{call}: no host named {name!r} (hosts: "
                             f"{', '.join(self._hosts) or 'none'})")
        return host

    # The loop.

    @property
    def loop(self) -> VirtualLoop:
        if self._loop is None:
            raise RuntimeError("the network is attached to no loop: net.attach(loop) first")
        return self._loop

    def attach(self, loop: VirtualLoop) -> None:
        """Carry this network on `loop` (one loop per network, for good)."""
        if self._loop is loop:
            return
        if self._loop is not None:
            raise ValueError("attach: the network is attached to another loop already")
        if not isinstance(loop, VirtualLoop):
            raise TypeError(f"attach: the network needs a VirtualLoop, got {loop!r}")
        if getattr(loop, "network", None) is not None:
            raise ValueError("attach: the loop carries another network already")
        self._loop = loop
        self._wire = Wire(loop, self.links, self._hosts, self.holds_ms)
        self._wire.refresh()  # faults made before the loop came
        calls = Calls(loop, self._wire, Names(self._hosts), self.window)
        for name in _CALLS:
            setattr(loop, name, getattr(calls, name))
        loop.create_task = _tracking(loop.create_task)  # type: ignore[method-assign]
        loop.network = self  # type: ignore[attr-defined]

    # Faults.

    def partition(self, side: Iterable[str], other: Iterable[str], *, one_way: bool = False
                  ) -> None:
        """Nothing crosses between `side` and `other` (with `one_way`, nothing from
        `side` to `other`) until `heal`: segments wait (TCP retransmits), datagrams are
        lost."""
        left = [self._named("partition", name).name for name in side]
        right = [self._named("partition", name).name for name in other]
        if set(left) & set(right):
            raise ValueError(f"partition: {sorted(set(left) & set(right))} on both sides")
        for a in left:
            for b in right:
                self.links.cut.add((a, b))
                if not one_way:
                    self.links.cut.add((b, a))
        self._refresh()

    def heal(self) -> None:
        """Every partition ends; what waited is sent again."""
        self.links.cut.clear()
        self._unpark()

    def slow(self, link: Link, ms: int, *, one_way: bool = False) -> None:
        """Packets sent on `link` from now on take `ms` (both ways unless `one_way`)."""
        latency = arguments.whole("slow", "ms", ms, "milliseconds") * 1000
        for way in self._ways("slow", link, one_way):
            self.links.latency[way] = latency

    def hold(self, link: Link, *, one_way: bool = False) -> None:
        """Nothing on `link` arrives (both ways unless `one_way`) until `release`: every
        packet waits, datagrams too."""
        for way in self._ways("hold", link, one_way):
            self.links.held.add(way)
        self._refresh()

    def release(self, link: Link, *, one_way: bool = False) -> None:
        for way in self._ways("release", link, one_way):
            self.links.held.discard(way)
        self._unpark()

    def crash(self, name: str) -> None:
        """`name` goes down as a machine does: its connections die without a word to
        their peers (a peer learns at its next segment once the host is back, by a reset,
        or by its own timeout), its tasks are cancelled, its ports freed."""
        host = self._named("crash", name)
        if not host.up:
            raise ValueError(f"crash: host {name!r} is down already")
        # A crashed machine runs nothing more: the timers its code armed go with it (a
        # packet it sent is on the wire already, and lands: the network's timers stay).
        for timer in self._loop.timers_armed() if self._loop is not None else ():
            context = getattr(timer, "_context", None)
            if context is not None and not isinstance(timer, JudgedTimer) \
                    and host_of(context) is host:
                timer.cancel()
        host.crash()
        self._refresh()

    def restart(self, name: str) -> None:
        """`name` is up again with nothing running (the adapter rebuilds the node)."""
        host = self._named("restart", name)
        if host.up:
            raise ValueError(f"restart: host {name!r} is up (crash it first)")
        host.restart()
        self._unpark()

    def _ways(self, call: str, link: Link, one_way: bool) -> list[Link]:
        if not (isinstance(link, tuple) and len(link) == 2):
            raise ValueError(f"{call}: a link is a pair of host names, got {link!r}")
        a, b = (self._named(call, name).name for name in link)
        return [(a, b)] if one_way else [(a, b), (b, a)]

    def _unpark(self) -> None:
        if self._wire is not None:
            self._wire.refresh()
            self._wire.unpark()

    def _refresh(self) -> None:
        if self._wire is not None:
            self._wire.refresh()


def _tracking(create_task: Any) -> Any:
    """`loop.create_task` that notes a task made on a host, so a crash cancels it."""

    def tracked(coro: Coroutine[Any, Any, _T], *, name: str | None = None,
                context: Context | None = None, **kwargs: Any) -> asyncio.Task[_T]:
        task: asyncio.Task[_T] = create_task(coro, name=name, context=context, **kwargs)
        host = host_of(context)
        if host is not None:
            host.track(task)
        return task

    return tracked


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
