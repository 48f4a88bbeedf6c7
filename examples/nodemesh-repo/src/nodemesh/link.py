"""A link: this node's own connection to one peer, for the requests it sends there.

Dialled on first use and dialled again on the first use after a loss (so a peer that
restarts is reached again). Replies come back on the same connection and are matched to
their requests by correlation id. When the connection dies, every request still waiting
on it fails with `LinkLost`: whether the peer took it is unknown, so nothing is re-sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from .frames import Frame, FrameError, encode, read_frame
from .observer import Observer
from .settings import Roster, Settings


class LinkError(Exception):
    """An attempt that could not be made ('Unreachable': never sent) or whose connection
    died before the reply ('LinkLost': the peer may hold it)."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


@dataclass(eq=False)
class _Connection:
    writer: asyncio.StreamWriter
    pending: dict[str, asyncio.Future[Frame]] = field(default_factory=dict)
    reading: asyncio.Task[None] | None = None
    lost: bool = False
    outbox: list[bytes] = field(default_factory=list)  # written together, once a turn


class Link:
    def __init__(self, node: str, peer: str, *, roster: Roster, settings: Settings,
                 observer: Observer,
                 on_late: Callable[[str, Frame], None] | None = None) -> None:
        self.node = node
        self.peer = peer
        self._roster = roster
        self._settings = settings
        self._observer = observer
        self._connection: _Connection | None = None
        self._dialling = asyncio.Lock()
        self._closed = False
        self._on_late = on_late  # told of each reply that came after its caller gave up

    async def request(self, correlation: str, frame: Frame) -> asyncio.Future[Frame]:
        """Send `frame`; the future resolves with the reply carrying `correlation`."""
        connection = await self._connected()
        reply: asyncio.Future[Frame] = asyncio.get_running_loop().create_future()
        connection.pending[correlation] = reply
        if "n05" in self._settings.bugs:
            # Requests made in one turn of the loop leave together, in one write.
            connection.outbox.append(encode(frame, self._settings.max_frame_bytes))
            if len(connection.outbox) == 1:
                asyncio.get_running_loop().call_soon(self._flush, connection)
            return reply
        try:
            connection.writer.write(encode(frame, self._settings.max_frame_bytes))
            await connection.writer.drain()
        except OSError:
            self._lose(connection, "LinkLost")  # fails `reply` with the rest
        return reply

    def forget(self, correlation: str) -> None:
        """The caller gave up on `correlation`: a reply to it is late."""
        if self._connection is not None:
            self._connection.pending.pop(correlation, None)
            if "n05" in self._settings.bugs:
                # Still unwritten, it never left: nobody waits for it now, so drop it.
                self._connection.outbox.clear()

    def _flush(self, connection: _Connection) -> None:
        data = b"".join(connection.outbox)
        connection.outbox.clear()
        if data and not connection.lost:
            try:
                connection.writer.write(data)
            except OSError:
                self._lose(connection, "LinkLost")

    async def _connected(self) -> _Connection:
        async with self._dialling:
            if self._closed:
                raise LinkError("Unreachable")
            if self._connection is not None:
                return self._connection
            host, port = self._roster.address(self.peer)
            if port == 0:  # the peer has never bound its port
                raise LinkError("Unreachable")
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(host, port),
                    self._settings.connect_timeout_ms / 1000)
            except (OSError, TimeoutError) as exc:
                raise LinkError("Unreachable") from exc
            connection = _Connection(writer)
            connection.reading = asyncio.get_running_loop().create_task(
                self._read(connection, reader), name=f"link {self.node}->{self.peer}")
            self._connection = connection
            self._observer.link_up(self.node, self.peer)
            return connection

    async def _read(self, connection: _Connection, reader: asyncio.StreamReader) -> None:
        error = "LinkLost"
        try:
            limit = self._settings.max_frame_bytes
            while (frame := await read_frame(reader, limit)) is not None:
                correlation = str(frame.get("cid"))
                reply = connection.pending.pop(correlation, None)
                if reply is None or reply.done():
                    self._observer.late_reply(self.node, correlation)
                    if self._on_late is not None:
                        self._on_late(correlation, frame)
                else:
                    reply.set_result(frame)
        except (OSError, FrameError) as exc:
            error = "LinkLost" if isinstance(exc, OSError) else "BadFrame"
        finally:
            self._lose(connection, error)

    def _lose(self, connection: _Connection, error: str) -> None:
        if connection.lost:
            return
        connection.lost = True
        if self._connection is connection:
            self._connection = None  # the next request dials again
        waiting = [reply for reply in connection.pending.values() if not reply.done()]
        connection.pending.clear()
        for reply in waiting:
            reply.set_exception(LinkError("LinkLost"))
        connection.writer.close()
        self._observer.link_lost(self.node, self.peer, error=error, pending=len(waiting))

    async def close(self) -> None:
        self._closed = True
        connection = self._connection
        if connection is None:
            return
        self._lose(connection, "Closed")
        if connection.reading is not None:
            connection.reading.cancel()
            await asyncio.gather(connection.reading, return_exceptions=True)
        with contextlib.suppress(OSError):
            await connection.writer.wait_closed()
