"""TCP on the simulated network: connections, their two directions, and each end's kernel
state.

What TCP promises is kept by construction: each direction numbers its segments as sent
and hands them to the receiver in that order, however the network delays them (a held
segment holds back the ones behind it, as a receiver's reassembly does), each exactly
once. Window: a sender puts at most `window` bytes in flight or unread at the receiver;
reading frees it. A segment for a socket that does not exist (a closed one, one of a host
that crashed and restarted, a port nobody listens on) is answered with a reset, as a real
host answers.
"""

from __future__ import annotations

import asyncio
import contextvars
import errno
from enum import Enum
from typing import TYPE_CHECKING

from invariants.aio.net.wire import Flight, Route, Wire

if TYPE_CHECKING:
    from invariants.aio.net.hosts import Host
    from invariants.aio.net.streams import StreamTransport

Address = tuple[str, int]


class Kind(Enum):
    SYN = "connection request"
    SYNACK = "connection accept"
    DATA = "segment"
    FIN = "end of stream"
    RST = "reset"


# The kinds under module names: reading a member off an Enum class costs a descriptor call
# (3.11+), and each segment's kind is compared several times on its way.
SYN, SYNACK, DATA, FIN, RST = Kind.SYN, Kind.SYNACK, Kind.DATA, Kind.FIN, Kind.RST


# A segment: its number in its direction, its kind, its bytes (a tuple: one is made for
# every write).
Segment = tuple[int, Kind, bytes]


class Pipe:
    """One direction of a connection, host `src` to host `dst`: segments numbered as sent,
    handed over in that order however they arrive. `in_window`: bytes sent and not yet
    read at the other end."""

    __slots__ = ("conn", "data_what", "dst", "early", "expected", "in_window", "route",
                 "sent", "src")

    def __init__(self, conn: Connection, src: Host, dst: Host) -> None:
        self.conn = conn
        self.src, self.dst = src, dst
        self.sent = 0
        self.expected = 0
        self.early: dict[int, Segment] = {}
        self.in_window = 0
        self.route = Route(conn.wire, src.name, dst.name, self.arrive, stream=True)
        # The last data segment's size and how verdicts name it: a stream's segments
        # mostly repeat a size, and the name is asked for every one.
        self.data_what = (-1, "")

    def send(self, kind: Kind, data: bytes = b"") -> None:
        route = self.route
        if kind is DATA:
            size, what = self.data_what
            if size != len(data):
                what = f"segment {route.src}→{route.dst} ({len(data)} bytes)"
                self.data_what = (len(data), what)
        else:
            what = f"{kind.value} {route.src}→{route.dst}"
        segment = (self.sent, kind, data)
        self.sent += 1
        route.wire.send(Flight(route, what, segment))

    def arrive(self, segment: Segment) -> None:
        seq = segment[0]
        if seq != self.expected:
            self.early[seq] = segment
            return
        self.expected += 1
        self.conn.receive(self, segment)
        early = self.early
        while early:
            following = early.pop(self.expected, None)
            if following is None:
                break
            self.expected += 1
            self.conn.receive(self, following)


class Connection:
    """A client end and, once its request reached a listener, a server end."""

    def __init__(
        self, wire: Wire, window: int, client: Host, local: Address, server: Host,
        remote: Address, context: contextvars.Context,
    ) -> None:
        self.wire = wire
        self.window = window
        self.up = Pipe(self, client, server)  # client to server
        self.down = Pipe(self, server, client)
        self.client = End(self, client, local, remote, self.up, context, connecting=True)
        self.server: End | None = None
        self.remote = remote

    def receive(self, pipe: Pipe, segment: Segment) -> None:
        _seq, kind, data = segment
        if pipe is self.up:
            if kind is SYN:
                self._request()
                return
            end = self.server
        else:
            end = self.client
        if end is None:
            if kind is not RST:
                self._reverse(pipe).send(RST)
            return
        end.receive(kind, data)

    def _reverse(self, pipe: Pipe) -> Pipe:
        return self.down if pipe is self.up else self.up

    def _request(self) -> None:
        """The client's request reached the server's host: a listener accepts it (its
        protocol is made as the server's loop would), or the host resets it."""
        host, (ip, port) = self.down.src, self.remote
        listener = host.listener_for(ip, port) if host.up else None
        if listener is None:
            self.down.send(RST)
            return
        server = End(self, host, self.remote, self.client.local, self.down,
                     listener.context.copy(), connecting=False)
        self.server = server
        self.down.send(SYNACK)
        listener.accept(server)


class End:
    """One side of a connection as its host's kernel holds it: the state, the bytes
    received and not yet read (`rx`), an end of stream or a reset waiting to be read."""

    __slots__ = ("conn", "context", "error", "fin_received", "fin_sent", "host",
                 "incarnation", "local", "out", "remote", "rx", "state", "transport",
                 "waiter")

    # States: CONNECTING, then OPEN; CLOSED once the program closed it (it still takes an
    # end of stream); GONE once no socket is left (a reset sent or received).
    CONNECTING, OPEN, CLOSED, GONE = range(4)

    def __init__(
        self, conn: Connection, host: Host, local: Address, remote: Address, out: Pipe,
        context: contextvars.Context, *, connecting: bool,
    ) -> None:
        self.conn = conn
        self.host = host
        self.incarnation = host.incarnation
        self.local, self.remote = local, remote
        self.out = out
        self.context = context
        self.state = End.CONNECTING if connecting else End.OPEN
        self.rx = bytearray()
        self.fin_received = False
        self.fin_sent = False
        self.error: OSError | None = None  # a reset, waiting for a read or a write
        self.transport: StreamTransport | None = None
        self.waiter: asyncio.Future[None] | None = None  # a connect waiting for its answer

    @property
    def alive(self) -> bool:
        """The socket's host is up and has not crashed since it was made."""
        host = self.host
        return host.up and host.incarnation == self.incarnation

    # Sending.

    def room(self) -> int:
        """How many bytes the window takes now."""
        return self.conn.window - self.out.in_window

    def send(self, data: bytes) -> None:
        self.out.in_window += len(data)
        self.out.send(DATA, data)

    def shutdown(self) -> None:
        """No more data from this side: an end of stream, after what was sent."""
        if self.state == End.OPEN and not self.fin_sent and self.alive:
            self.fin_sent = True
            self.out.send(FIN)

    def close(self) -> None:
        """The program closed the socket: an end of stream, or a reset when bytes
        received were never read (as Linux does); a connect under way is abandoned."""
        if self.state in (End.CLOSED, End.GONE):
            return
        if not self.alive:  # its host crashed: nothing is sent
            self.state = End.GONE
            return
        if self.state == End.CONNECTING:
            self.state = End.GONE  # its answer, if any, meets no socket: a reset
            return
        if self.rx:
            self.rx.clear()
            self.out.send(RST)
            self.state = End.GONE
            return
        if not self.fin_sent:
            self.fin_sent = True
            self.out.send(FIN)
        self.state = End.CLOSED

    # Receiving.

    def receive(self, kind: Kind, data: bytes) -> None:
        """A segment of `kind` (with `data`) arrived, in order."""
        state = self.state
        if state == End.GONE or not self.alive:
            if kind is not RST:
                self.out.send(RST)
            return
        if kind is RST:
            self._reset()
        elif state == End.CLOSED:
            if kind is not FIN:  # data for a closed socket: a reset
                self.out.send(RST)
                self.state = End.GONE
        elif kind is DATA:
            transport = self.transport
            if transport is not None and not self.rx:  # nothing unread before it
                self.context.run(transport.received, data)
            else:
                self.rx += data
                self._readable()
        elif kind is FIN:
            self.fin_received = True
            self._readable()
        elif kind is SYNACK and state == End.CONNECTING:
            self.state = End.OPEN
            waiter = self.waiter
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def _reset(self) -> None:
        state, self.state = self.state, End.GONE
        if state == End.CONNECTING:
            waiter = self.waiter
            if waiter is not None and not waiter.done():
                waiter.set_exception(ConnectionRefusedError(
                    errno.ECONNREFUSED, f"Connect call failed {self.remote}"))
            return
        if state == End.CLOSED:
            return
        # Linux reports a reset after the peer's end of stream as a broken pipe.
        self.error = (BrokenPipeError(errno.EPIPE, "Broken pipe") if self.fin_received
                      else ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"))
        self.rx.clear()
        self._readable()
        transport = self.transport
        if transport is not None:
            # A reset turns a socket writable too, its next write failing: bytes still
            # buffered (a closing transport's, which reads no more) meet the error there.
            self.context.run(transport.window_opened)

    def _readable(self) -> None:
        transport = self.transport
        if transport is not None:
            self.context.run(transport.readable)

    def consumed(self, count: int) -> None:
        """The program read `count` bytes: the window opens for the other end."""
        conn = self.conn
        if self is conn.client:
            pipe, other = conn.down, conn.server
        else:
            pipe, other = conn.up, conn.client
        pipe.in_window -= count
        if other is not None and other.transport is not None:
            other.transport.window_opened()
