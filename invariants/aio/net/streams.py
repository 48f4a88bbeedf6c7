"""`StreamTransport`: asyncio's `Transport` over one end of a simulated TCP connection.

It behaves as asyncio's socket transport does on a real socket: `write` puts what the
window takes in flight at once and buffers the rest (pausing the protocol past the
high-water mark); `close` flushes the buffer, then closes the socket (an end of stream to
the peer) and calls `connection_lost(None)`; `abort` drops the buffer and closes; an end
of stream read is `eof_received()`, after which a protocol that keeps the transport open
reads no more (asyncio removes its reader), so a reset then shows at the next write. A
reset is `ConnectionResetError` (`BrokenPipeError` after the peer's end of stream), given
to `connection_lost` as asyncio's transports give the error a real socket raises.
"""

from __future__ import annotations

import asyncio
import errno
import socket
from asyncio.log import logger
from typing import TYPE_CHECKING, Any

from invariants.aio.net.flow import WriteLimits
from invariants.aio.net.sockets import SimSocket

if TYPE_CHECKING:
    from invariants.aio.net.servers import Server
    from invariants.aio.net.tcp import End

# asyncio's: bytes handed to a protocol per read, and how many writes to a lost
# connection pass silently before each further one logs a warning.
MAX_READ = 256 * 1024
_CONNLOST_WRITES_LOGGED = 5


class StreamTransport(asyncio.Transport):
    """One end of a simulated TCP connection, as asyncio's protocols see it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, end: End,
                 protocol: asyncio.BaseProtocol, server: Server | None = None) -> None:
        super().__init__({
            "peername": end.remote, "sockname": end.local,
            "socket": SimSocket(socket.SOCK_STREAM, end.local, end.remote),
        })
        self._loop = loop
        self._end = end
        self._protocol: Any = protocol
        self._buffered = isinstance(protocol, asyncio.BufferedProtocol)
        self._server = server
        self._buffer = bytearray()
        self._limits = WriteLimits()
        self._started = False  # connection_made was called
        self._closing = False
        self._conn_lost = 0
        self._paused = False  # pause_reading
        self._eof = False  # write_eof
        self._at_eof = False  # the end of stream was read: no more reading
        self._pump_due = False
        end.transport = self
        self._serial = end.host.hold(self)
        if server is not None:
            server.attach(self)

    def __repr__(self) -> str:
        state = " closing" if self._closing else ""
        return f"<StreamTransport {self._end.local}→{self._end.remote}{state}>"

    def start(self) -> None:
        """Scheduled as the transport is made: `connection_made`, then reading."""
        self._protocol.connection_made(self)
        self._started = True
        self.readable()

    # Protocol.

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._protocol = protocol
        self._buffered = isinstance(protocol, asyncio.BufferedProtocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        protocol: asyncio.BaseProtocol = self._protocol
        return protocol

    # Reading.

    def is_reading(self) -> bool:
        return not self._closing and not self._paused

    def pause_reading(self) -> None:
        if self.is_reading():
            self._paused = True

    def resume_reading(self) -> None:
        if self._closing or not self._paused:
            return
        self._paused = False
        self._loop.call_soon(self.readable, context=self._end.context)

    def readable(self) -> None:
        """Hand the protocol what arrived while it reads: bytes, then an end of stream or
        a reset."""
        if not self._started or self._conn_lost or self._at_eof:
            return
        end = self._end
        # `is_reading()`, spelt out: this runs for every segment.
        while end.rx and not (self._closing or self._paused):
            if not self._hand_over(end):
                return
        if self._closing or self._paused:
            return
        if end.error is not None:
            self._fatal_error(end.error, "Fatal read error on socket transport")
        elif end.fin_received:
            self._at_eof = True
            try:
                keep_open = self._protocol.eof_received()
            except (SystemExit, KeyboardInterrupt):
                raise
            except BaseException as exc:
                self._fatal_error(exc, "Fatal error: protocol.eof_received() call failed.")
                return
            if not keep_open:
                self.close()

    def received(self, data: bytes) -> None:
        """`data` arrived with nothing unread before it (`End.receive`): handed to a
        protocol that reads now as it is, not copied into `rx` and out again (what a
        segment brings is one read's worth, and nothing follows it in this step: an end
        of stream or a reset is a segment of its own); else kept in `rx` for `readable`."""
        end = self._end
        if (not self._started or self._conn_lost or self._at_eof or self._closing
                or self._paused or self._buffered or len(data) > MAX_READ):
            end.rx += data
            self.readable()
            return
        end.consumed(len(data))
        try:
            self._protocol.data_received(data)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            self._fatal_error(exc, "Fatal error: protocol.data_received() call failed.")

    def _hand_over(self, end: End) -> bool:
        """One read's worth of `end.rx` to the protocol; False if that failed."""
        rx, protocol = end.rx, self._protocol
        try:
            if self._buffered:
                buffer = protocol.get_buffer(-1)
                if not len(buffer):
                    raise RuntimeError("get_buffer() returned an empty buffer")
                count = min(len(buffer), len(rx))
                memoryview(buffer)[:count] = rx[:count]
                del rx[:count]
                end.consumed(count)
                protocol.buffer_updated(count)
            else:
                if len(rx) <= MAX_READ:  # one read takes it all: one copy
                    data = bytes(rx)
                    rx.clear()
                else:
                    data = bytes(rx[:MAX_READ])
                    del rx[:MAX_READ]
                end.consumed(len(data))
                protocol.data_received(data)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:
            call = "buffer_updated" if self._buffered else "data_received"
            self._fatal_error(exc, f"Fatal error: protocol.{call}() call failed.")
            return False
        return True

    # Writing.

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):  # a tuple: faster than a union
            raise TypeError(f"data argument must be a bytes-like object, "
                            f"not {type(data).__name__!r}")
        if self._eof:
            raise RuntimeError("Cannot call write() after write_eof()")
        if not data:
            return
        if self._conn_lost:
            if self._conn_lost >= _CONNLOST_WRITES_LOGGED:
                logger.warning("socket.send() raised exception.")
            self._conn_lost += 1
            return
        end = self._end
        if end.error is not None:
            self._fatal_error(end.error, "Fatal write error on socket transport")
            return
        if not self._buffer and data.__class__ is bytes and len(data) <= end.room():
            end.send(data)  # all of it goes at once (the common case): no view, no copy
            return
        view = memoryview(data).cast("B")
        if not self._buffer:
            view = view[self._send(view):]
            if not view:
                return
        self._buffer += view
        self._limits.grew(len(self._buffer), self, self._protocol, self._loop)

    def _send(self, data: memoryview | bytearray) -> int:
        """Put what the window takes of `data` in flight; how many bytes that was."""
        count = min(self._end.room(), len(data))
        if count <= 0:
            return 0
        self._end.send(bytes(data[:count]))
        return count

    def window_opened(self) -> None:
        """The peer read: buffered bytes may go (at a later step, as a socket turning
        writable wakes asyncio's transport)."""
        if self._buffer and not self._pump_due and not self._conn_lost:
            self._pump_due = True
            self._loop.call_soon(self._pump, context=self._end.context)

    def _pump(self) -> None:
        self._pump_due = False
        if self._conn_lost or not self._buffer:
            return
        end = self._end
        if end.error is not None:
            self._fatal_error(end.error, "Fatal write error on socket transport")
            return
        del self._buffer[:self._send(self._buffer)]
        self._limits.shrank(len(self._buffer), self, self._protocol, self._loop)
        if not self._buffer:
            if self._closing:
                self._conn_lost += 1
                self._call_connection_lost(None)
            elif self._eof:
                end.shutdown()

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def write_eof(self) -> None:
        if self._closing or self._eof:
            return
        self._eof = True
        if not self._buffer:
            self._end.shutdown()

    def can_write_eof(self) -> bool:
        return True

    def get_write_buffer_size(self) -> int:
        return len(self._buffer)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return (self._limits.low, self._limits.high)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._limits.set(high, low)
        self._limits.grew(len(self._buffer), self, self._protocol, self._loop)

    # Closing.

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        if not self._buffer:
            self._conn_lost += 1
            self._loop.call_soon(self._call_connection_lost, None, context=self._end.context)

    def abort(self) -> None:
        self._force_close(None)

    def crashed(self) -> None:
        """The host crashed: the connection is gone, and nothing goes to the peer."""
        self._force_close(ConnectionAbortedError(
            errno.ECONNABORTED, f"host {self._end.host.name!r} crashed"))

    def _fatal_error(self, exc: BaseException, message: str) -> None:
        if isinstance(exc, OSError):
            if self._loop.get_debug():
                logger.debug("%r: %s", self, message, exc_info=True)
        else:
            self._loop.call_exception_handler({
                "message": message, "exception": exc, "transport": self,
                "protocol": self._protocol,
            })
        self._force_close(exc)

    def _force_close(self, exc: BaseException | None) -> None:
        if self._conn_lost:
            return
        self._buffer.clear()
        self._closing = True
        self._conn_lost += 1
        self._loop.call_soon(self._call_connection_lost, exc, context=self._end.context)

    def _call_connection_lost(self, exc: BaseException | None) -> None:
        try:
            self._protocol.connection_lost(exc)
        finally:
            end = self._end
            end.close()
            end.host.release(self._serial)
            server, self._server = self._server, None
            if server is not None:
                server.detach(self)
