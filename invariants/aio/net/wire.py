"""The wire: every segment and datagram in flight, and what the network decides about it.

A packet is sent as a timer the loop arms for its link's latency (`VirtualLoop.call_judged`)
and is judged as that timer lands (`lanes.Verdict`): option 0 delivers it after the
nominal latency, so all-zero choices are a healthy network; the others hold a segment (TCP
retransmits: it arrives later, never lost) or drop, duplicate or delay a datagram. A packet
whose link a partition cuts or a hold holds, or whose destination is down, has no choice:
a segment is parked until the way is clear again (`unpark`), a datagram is lost (a held
one is parked too).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from invariants.aio.schedule import format_time

if TYPE_CHECKING:
    from invariants.aio.loop import VirtualLoop
    from invariants.aio.net.hosts import Host

Link = tuple[str, str]  # (from host, to host), by name

# Why a packet cannot arrive now.
CUT, HELD, DOWN = "partitioned", "held", "down"
# A held link buffers this many datagrams; later ones are lost, as a router's full queue
# drops them. Unbounded, a mesh that retransmits every 100 ms under an 8 s hold had
# thousands of copies released at once (20 CPU seconds to settle one run).
HELD_DATAGRAMS_PER_LINK = 256


class Links:
    """Per directed link: its latency, and whether a partition cuts it or a hold holds it."""

    def __init__(self, latency_us: int) -> None:
        self.default_us = latency_us
        self.latency: dict[Link, int] = {}
        self.cut: set[Link] = set()
        self.held: set[Link] = set()

    def latency_us(self, link: Link) -> int:
        latency = self.latency  # mostly empty: no link slowed
        return latency.get(link, self.default_us) if latency else self.default_us


class Route:
    """The way packets take from host `src` to host `dst` on `wire`, and what they reach
    there: `arrive(payload)` is called as one gets there. What every packet on the way
    shares, made once (a TCP connection's direction, a pair of hosts' datagrams)."""

    __slots__ = ("arrive", "dst", "link", "src", "stream", "timer", "wire")

    def __init__(self, wire: Wire, src: str, dst: str, arrive: Callable[[Any], None], *,
                 stream: bool) -> None:
        self.wire = wire
        self.src, self.dst = src, dst
        self.link = (src, dst)
        self.arrive = arrive
        self.stream = stream  # TCP (a segment is held, never lost) or UDP
        # The loop's callback for the packets' timers, named for its labels.
        self.timer = named(f"{'tcp' if stream else 'udp'} {src}→{dst}")


class Flight:
    """One packet on its way along `route`: `route.arrive(payload)` is called when it
    gets there (twice for a duplicated datagram)."""

    __slots__ = ("copies", "judged", "latency_us", "payload", "route", "what")

    def __init__(self, route: Route, what: str, payload: Any, *, judged: bool = False
                 ) -> None:
        self.route = route
        self.what = what  # "segment n1→n2 (5 bytes)": how verdicts name it
        self.payload = payload
        self.judged = judged  # a verdict was given (a held segment is not judged again)
        self.copies = 1
        self.latency_us = 0

    # lanes.Verdict

    # `wire.clear` is tested before `wire.obstacle` is called: these run for every packet,
    # and nothing stands in any packet's way in the common case.

    def options(self) -> Sequence[str]:
        wire = self.route.wire
        if self.judged or (not wire.clear and wire.obstacle(self) is not None):
            return _ONE
        return wire.options(self)

    def apply(self, pick: int) -> bool:
        wire = self.route.wire
        if not wire.clear and wire.obstacle(self) is not None:
            wire.stopped(self)
            return False
        if self.judged or pick == 0:
            self.judged = True
            return True
        self.judged = True
        return wire.judged(self, pick)

    def fire(self) -> None:
        """The timer's callback: the packet arrives (if the way is still clear: a crash or
        a partition may have come in this instant, after it landed)."""
        route = self.route
        wire = route.wire
        if not wire.clear and wire.obstacle(self) is not None:
            wire.stopped(self)
            return
        route.arrive(self.payload)
        if self.copies == 2:  # a duplicated datagram
            route.arrive(self.payload)


_ONE = ("arrives",)
_OPTIONS_KEPT = 4096  # verdict texts kept for reuse (a burst of same-sized segments)


def named(label: str) -> Callable[[Flight], None]:
    """A packet's timer callback (`Flight.fire`) under the name the loop's labels show for
    its timers (`timer:tcp n1→n2`)."""

    def fire(flight: Flight) -> None:
        flight.fire()

    fire.__qualname__ = fire.__name__ = label
    return fire


class Wire:
    """The packets in flight on one loop, the links they take and the hosts they reach."""

    def __init__(
        self, loop: VirtualLoop, links: Links, hosts: Mapping[str, Host],
        holds_ms: Sequence[int],
    ) -> None:
        self.loop = loop
        self.links = links
        self.hosts = hosts
        self.holds_ms = tuple(holds_ms)
        self.parked: list[Flight] = []
        self._held_datagrams: dict[Link, int] = {}  # parked datagrams per held link
        # No partition, hold or host down anywhere: nothing stands in any packet's way
        # (the common case, checked first; `Network` refreshes it with every fault).
        self.clear = True
        self._options: dict[tuple[str, int, bool], tuple[str, ...]] = {}
        # Every delivery runs in the network's own context; each socket's protocol is then
        # called in the socket's context (its host's).
        self.context = contextvars.Context()

    def send(self, flight: Flight) -> None:
        """Put `flight` on the wire: it lands after its link's latency."""
        route = flight.route
        flight.latency_us = latency = self.links.latency_us(route.link)
        self.loop.call_judged(latency, flight, route.timer, flight, context=self.context)

    def refresh(self) -> None:
        """A fault was made or ended: whether the way is clear everywhere."""
        self.clear = not (self.links.cut or self.links.held
                          or any(not host.up for host in self.hosts.values()))

    def obstacle(self, flight: Flight) -> str | None:
        """Why `flight` cannot arrive now (None: it can)."""
        if self.clear:
            return None
        route = flight.route
        if not self.hosts[route.dst].up:
            return DOWN
        link = route.link
        if link in self.links.cut:
            return CUT
        if link in self.links.held:
            return HELD
        return None

    def options(self, flight: Flight) -> tuple[str, ...]:
        key = (flight.what, flight.latency_us, flight.route.stream)
        options = self._options.get(key)
        if options is None:
            if len(self._options) > _OPTIONS_KEPT:
                self._options.clear()
            options = self._options[key] = self._name_options(*key)
        return options

    def _name_options(self, what: str, latency_us: int, stream: bool) -> tuple[str, ...]:
        first = f"delivered {what} after {format_time(latency_us)}"
        if stream:
            return (first, *(f"held {what} for {ms} ms" for ms in self.holds_ms))
        return (first, f"dropped {what}", f"duplicated {what}",
                *(f"delayed {what} by {ms} ms" for ms in self.holds_ms))

    def judged(self, flight: Flight, pick: int) -> bool:
        """Carry out verdict `pick` (> 0) on `flight`: whether it lands now."""
        if not flight.route.stream:
            if pick == 1:  # dropped
                return False
            if pick == 2:  # duplicated
                flight.copies = 2
                return True
            pick -= 2
        self.loop.call_judged(self.holds_ms[pick - 1] * 1000, flight, flight.route.timer,
                              flight, context=self.context)
        return False

    def stopped(self, flight: Flight) -> None:
        """`flight` cannot arrive now: a segment waits for the way to clear (TCP
        retransmits), a datagram is lost unless only a hold keeps it (and its link's
        buffer, `HELD_DATAGRAMS_PER_LINK`, has room)."""
        if flight.route.stream:
            self.parked.append(flight)
        elif self.obstacle(flight) == HELD:
            link = flight.route.link
            held = self._held_datagrams.get(link, 0)
            if held < HELD_DATAGRAMS_PER_LINK:
                self._held_datagrams[link] = held + 1
                self.parked.append(flight)

    def unpark(self) -> None:
        """Send again, afresh, every parked packet whose way is clear now, in the order
        they were parked."""
        parked, self.parked = self.parked, []
        self._held_datagrams.clear()
        for flight in parked:
            if self.obstacle(flight) is None:
                flight.judged = False
                flight.copies = 1
                self.send(flight)
            else:
                self.parked.append(flight)
                if not flight.route.stream:
                    link = flight.route.link
                    self._held_datagrams[link] = self._held_datagrams.get(link, 0) + 1
